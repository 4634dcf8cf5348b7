"""The Lucene-exact default BM25 against the BM25 of releases before Lucene parity: indexing and retrieval.

Both are built side by side in one run, alternating, on SciFact (real text; about a third of its documents are
not pure ASCII) and on a synthetic ASCII corpus, and the ratio printed; then both indexes of the synthetic corpus
answer the same queries (3-7 terms drawn by corpus frequency, so frequent terms are in; k = 10 and 1000), which
compares Lucene's scoring kernel (w - w / (1 + x) per posting, float64 sums) with the plain product. The earlier
BM25 is still available as ``BM25(tokenizer="word", stemmer="snowball:porter", exact_lengths=True,
lucene_scores=False)``.

    python benchmarks/bench_analysis.py [--repeats 3] [--synthetic-docs 200000]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import positive_int  # the scripts' folder is on sys.path when run

import pyterrier_sparse_eval as pse

PEERS = {
    "before parity (word tokenizer, Snowball porter, classic)": dict(
        tokenizer="word", stemmer="snowball:porter", exact_lengths=True, lucene_scores=False
    ),
    "default (Lucene: UAX #29, Lucene's Porter, norms)": {},
}


def frequency_queries(docs: list[dict[str, str]], n: int, seed: int = 1) -> list[str]:
    """Queries of 3-7 distinct terms drawn by their frequency in the corpus (frequent terms included)."""
    rng = np.random.default_rng(seed)
    sample = " ".join(d["text"] for d in docs[:20_000]).split()
    return [" ".join(rng.choice(sample, rng.integers(3, 8))) for _ in range(n)]


def synthetic(n: int, seed: int = 0) -> list[dict[str, str]]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"term{i}" for i in range(50_000)] + ["the", "of", "1,000", "U.S.", "don't", "e.g."])
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    lengths = rng.integers(20, 90, n)
    words = rng.choice(vocab, size=int(lengths.sum()), p=p)
    out, at = [], 0
    for i, k in enumerate(lengths):
        out.append({"docno": f"d{i}", "text": " ".join(words[at : at + k])})
        at += k
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=positive_int, default=3)
    ap.add_argument("--synthetic-docs", type=positive_int, default=200_000)
    args = ap.parse_args()
    corpora = {f"synthetic ASCII, {args.synthetic_docs} docs": synthetic(args.synthetic_docs)}
    if os.environ.get("IR_DATASETS_HOME") or Path("../shared/data/irds-cache").is_dir():
        if not os.environ.get("IR_DATASETS_HOME"):  # a copy of its own, removed at the end
            os.environ["IR_DATASETS_HOME"] = tempfile.mkdtemp(prefix="irds-")
            atexit.register(shutil.rmtree, os.environ["IR_DATASETS_HOME"], True)
        if not any(Path(os.environ["IR_DATASETS_HOME"]).iterdir()):
            shutil.copytree("../shared/data/irds-cache", os.environ["IR_DATASETS_HOME"], dirs_exist_ok=True)
        corpora["SciFact, 5,183 docs"] = list(pse.datasets.corpus_iter("irds:beir/scifact/test"))
    work = Path(tempfile.mkdtemp(prefix="bench-analysis-"))
    atexit.register(shutil.rmtree, work, True)  # the indexes go when the script ends, however it ends
    print(f"{'corpus':32} {'analysis':58} {'median s':>9} {'ratio':>6}")
    for cname, docs in corpora.items():
        times: dict[str, list[float]] = {p: [] for p in PEERS}
        for r in range(args.repeats + 1):  # the first round warms numba's cache and the file system
            for pname, kwargs in PEERS.items():
                bm25 = pse.BM25(**kwargs)
                index = pse.SparseIndex(work / f"{len(times[pname])}-{abs(hash(pname))}")
                t = time.perf_counter()
                bm25.indexer(index, mode="overwrite", verbose=False).index(docs)
                if r:
                    times[pname].append(time.perf_counter() - t)
        base = statistics.median(times[next(iter(PEERS))])
        for pname in PEERS:
            med = statistics.median(times[pname])
            print(f"{cname:32} {pname:58} {med:9.2f} {med / base:6.2f}")
    retrieval(corpora[next(iter(corpora))], work, args.repeats)


def retrieval(docs: list[dict[str, str]], work: Path, repeats: int) -> None:
    import pandas as pd

    topics = pd.DataFrame({"qid": [str(i) for i in range(1000)], "query": frequency_queries(docs, 1000)})
    prepared = {}
    for pname, kwargs in PEERS.items():
        bm25 = pse.BM25(**kwargs)
        index = pse.SparseIndex(work / f"retrieval-{abs(hash(pname))}")
        bm25.indexer(index, mode="overwrite", verbose=False).index(docs)
        retriever = bm25.retriever(index)
        prepared[pname] = (retriever, retriever.query_matrix(retriever._query_weights(topics)))
        retriever.search_matrix(prepared[pname][1][:5])  # compile
    print(f"\n{'retrieval, 1000 queries, one thread':32} {'BM25':58} {'q/s':>9} {'ratio':>6}")
    for k in (10, 1000):
        rates: dict[str, list[float]] = {p: [] for p in PEERS}
        for retriever, q in prepared.values():  # warmed at this k (another heap size) before the clock
            retriever.num_results = k
            retriever.search_matrix(q)
        for _ in range(repeats):
            for pname, (retriever, q) in prepared.items():
                retriever.num_results = k
                t = time.perf_counter()
                retriever.search_matrix(q)
                rates[pname].append(q.shape[0] / (time.perf_counter() - t))
        base = statistics.median(rates[next(iter(PEERS))])
        for pname in PEERS:
            rate = statistics.median(rates[pname])
            print(f"{'k = ' + str(k):32} {pname:58} {rate:9.0f} {rate / base:6.2f}")


if __name__ == "__main__":
    main()
