"""Queries whose matching documents tie by the hundred thousand, side by side with bm25s.

    python benchmarks/bench_ties.py                  # 1M documents (about 2 minutes here)
    python benchmarks/bench_ties.py --docs 200000    # smaller

Short documents over a small vocabulary (titles, tags, entity names, categories) tie in BM25: every document
holding a query word once, at the same length, gets the same score, so the k-th best score is shared by most of
the matching documents. The corpus: --docs documents of 3 distinct words each out of 100 (seeded; words drawn in
proportion to 1/rank, so the most frequent word is in about half the documents). Queries: one word at frequency
ranks 1, 2, 6, 21 and 51, and two words (ranks 1+2, 6+21). Systems, one thread, exact: this project's BM25
retriever as a PyTerrier transformer (the default kernel, with its running threshold: *pruned*; and prune=False,
the exhaustive kernel) and bm25s (numba backend on arrays, k1=0.9 b=0.4 as here; its own idf and no length
quantisation, so its scores differ from Lucene's, the work does not). Each figure is the best of --runs calls of one
query, ms; the pruned run is checked against the exhaustive one (the same documents, order and scores).

Writes the "ties" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402

WORDS = [f"word{chr(97 + i // 10)}{chr(97 + i % 10)}" for i in range(100)]
QUERIES = [[0], [1], [5], [20], [50], [0, 1], [5, 20]]


def corpus(n: int, seed: int = 1) -> list[str]:
    """``n`` texts of 3 distinct words each, drawn in proportion to 1 / rank."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, len(WORDS) + 1)
    drawn = rng.choice(len(WORDS), size=(n, 12), p=p / p.sum())
    texts = []
    for row in drawn.tolist():
        seen = list(dict.fromkeys(row))[:3]
        while len(seen) < 3:
            x = int(rng.integers(len(WORDS)))
            if x not in seen:
                seen.append(x)
        texts.append(" ".join(WORDS[x] for x in seen))
    return texts


def best_ms(fn, runs: int) -> float:
    fn()
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return 1e3 * best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--ks", type=positive_int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()

    import pyterrier_sparse_eval as pse

    texts = corpus(args.docs)
    work = Path(tempfile.mkdtemp(prefix="bench-ties-"))
    try:
        bm25 = pse.BM25()
        index = pse.SparseIndex(work / "index")
        print(f"[{args.docs:,} docs] indexing", flush=True)
        bm25.indexer(index, verbose=False).index(
            pd.DataFrame({"docno": [f"d{i}" for i in range(args.docs)], "text": texts})
        )
        df = dict(zip(index.vocab, np.diff(index.postings.indptr)))
        peer = None
        try:
            import bm25s

            tokens = bm25s.tokenize(texts, stopwords=None, stemmer=None, show_progress=False)
            peer = bm25s.BM25(k1=0.9, b=0.4, backend="numba")
            peer.index(tokens, show_progress=False)
        except ImportError:
            print("bm25s not installed: its column is left empty", flush=True)
        rows = []
        for words in QUERIES:
            text = " ".join(WORDS[w] for w in words)
            topics = pd.DataFrame({"qid": ["1"], "query": [text]})
            for k in args.ks:
                pruned = bm25.retriever(index, num_results=k, threads=1)
                exhaustive = bm25.retriever(index, num_results=k, threads=1, prune=False)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    same = pruned(topics)[["docno", "score"]].equals(exhaustive(topics)[["docno", "score"]])
                row = {
                    "query": text,
                    "postings": sum(int(df.get(WORDS[w], 0)) for w in words),
                    "k": k,
                    "pruned": best_ms(lambda r=pruned, t=topics: r(t), args.runs),
                    "exhaustive": best_ms(lambda r=exhaustive, t=topics: r(t), args.runs),
                    "same": same,
                }
                if peer is not None:
                    q = bm25s.tokenize([text], stopwords=None, stemmer=None, show_progress=False)
                    row["bm25s"] = best_ms(
                        lambda q=q, k=k: peer.retrieve(q, k=k, show_progress=False, n_threads=1), args.runs
                    )
                rows.append(row)
                print(row, flush=True)
        text = report(rows, args)
        print(text)
        if not args.no_write:
            write_section("ties", text)
        if not all(r["same"] for r in rows):
            sys.exit("the pruned run differs from the exhaustive one")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows: list[dict], args: argparse.Namespace) -> str:
    lines = [
        f"## Queries on massively tied scores ({today()})",
        "",
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.docs:,} documents of 3 "
        "distinct words out of 100 (titles, tags: most matching documents tie at the k-th score), one query per "
        "call, best of "
        f"{args.runs}, ms; *pruned* is the default retriever, *exhaustive* prune=False, both this project's "
        "PyTerrier transformers on one thread; bm25s on arrays (numba). Every pruned run equals the exhaustive one.",
        "",
        "| query | postings | k | pruned | exhaustive | bm25s | pruned / exhaustive | pruned / bm25s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peer = r.get("bm25s")
        lines.append(
            f"| {r['query']} | {r['postings']:,} | {r['k']} | {r['pruned']:.1f} | {r['exhaustive']:.1f} | "
            + (f"{peer:.1f}" if peer else "-")
            + f" | {r['pruned'] / r['exhaustive']:.2f}x | "
            + (f"{r['pruned'] / peer:.1f}x" if peer else "-")
            + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
