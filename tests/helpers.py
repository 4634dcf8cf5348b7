"""Independent reference computations used by several tests (dense numpy, no project code), the readers of
Lucene's reference outputs the language tests share, the fault drills two test files share (SIGTERM mid-build,
a fault made while a Ray search runs), and a BEIR folder writer."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
#: committed goldens made with Lucene (tests/goldens/make_*.py)
GOLDENS = REPO / "tests" / "goldens" / "lucene"
#: real text and Lucene's tokens of it, per language (../shared/data/lucene/tokens)
SHARED_TOKENS = (
    Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
)


def standard_goldens(lang: str) -> list[tuple[str, str, list[list]]]:
    """(id, text, Lucene's StandardTokenizer tokens [text, type, start, end]) of ``goldens/lucene/LANG.standard.tsv``."""
    rows = []
    for line in (GOLDENS / f"{lang}.standard.tsv").read_text("utf-8").splitlines():
        doc_id, rest = line.split("\t", 1)
        text, tokens = rest.rsplit("\t", 1)
        rows.append((doc_id, text, json.loads(tokens)))
    return rows


def lucene_tokens(lang: str) -> dict[str, list[str]]:
    """Lucene's analyzer output per text id, from the shared ``LANG.lucene.tsv``."""
    out = {}
    for line in (SHARED_TOKENS / f"{lang}.lucene.tsv").read_text("utf-8").splitlines():
        doc_id, _, tokens = line.partition("\t")
        out[doc_id] = tokens.split()
    return out


def utf16_slice(text: str, start: int, end: int) -> str:
    """``text[start:end]`` in UTF-16 units (the offsets Java gives)."""
    b = text.encode("utf-16-le")
    return b[2 * start : 2 * end].decode("utf-16-le")


def random_toks_corpus(
    rng: np.random.Generator, num_docs: int, vocab: int, dups: int = 0, integer: bool = True
):
    """Documents with {term: weight} dicts; ``dups`` exact copies of earlier documents create score ties."""
    docs = []
    for i in range(num_docs):
        n = int(rng.integers(1, 8))
        terms = rng.choice(vocab, size=n, replace=False)
        w = rng.integers(1, 4, size=n).astype(float) if integer else rng.random(n) + 0.01
        docs.append({"docno": f"d{i:04d}", "toks": {f"t{t}": float(x) for t, x in zip(terms, w)}})
    for j in range(dups):
        src = docs[int(rng.integers(0, num_docs))]
        docs.append({"docno": f"x{j:03d}", "toks": dict(src["toks"])})
    return docs


def random_queries(rng: np.random.Generator, num_queries: int, vocab: int, terms: int = 3) -> pd.DataFrame:
    """Queries of ``terms`` distinct random terms ``t<i>`` (i < vocab) with weights in (0.1, 1.1)."""
    return pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(num_queries)],
            "query_toks": [
                {
                    f"t{t}": float(w)
                    for t, w in zip(rng.choice(vocab, terms, replace=False), rng.random(terms) + 0.1)
                }
                for _ in range(num_queries)
            ],
        }
    )


def brute_force_run(docs, queries, *, idf: bool, k: int):
    """Dense scoring of every document, ranked by score desc then docno desc (trec_eval's order)."""
    terms = sorted({t for d in docs for t in d["toks"]})
    tid = {t: i for i, t in enumerate(terms)}
    mat = np.zeros((len(docs), len(terms)))
    for i, d in enumerate(docs):
        for t, w in d["toks"].items():
            mat[i, tid[t]] = w
    n = len(docs)
    df = (mat != 0).sum(axis=0)
    idf_vec = np.array([math.log(1 + (n - x + 0.5) / (x + 0.5)) for x in df])
    out = {}
    for qid, qt in queries.items():
        q = np.zeros(len(terms))
        for t, w in qt.items():
            if t in tid:
                q[tid[t]] = w * (idf_vec[tid[t]] if idf else 1.0)
        scores = mat @ q
        touched = [(float(s), d["docno"]) for s, d, row in zip(scores, docs, mat) if (row[q != 0] != 0).any()]
        touched.sort(key=lambda x: (-x[0], tuple(-ord(c) for c in x[1])))
        out[qid] = touched[:k]
    return out


# SDM: a simulated corpus whose every score is known


def simulated_pool_corpus(n: int, queries: int, seed: int = 0):
    """Every document's true score per query (what a system gives it), a noisy first-stage run over the whole
    corpus (what the pool is mined from), and qrels with 5 relevant documents per query among the top 50."""
    rng = np.random.default_rng(seed)
    docnos = np.array([f"d{i:06d}" for i in range(n)])
    truth, first, qrels = {}, [], []
    for q in range(queries):
        qid = f"q{q}"
        score = rng.lognormal(0.0, 0.6, n)
        truth[qid] = score
        noisy = score * rng.lognormal(0.0, 0.25, n)  # a cheaper model: correlated, not equal
        first.append(pd.DataFrame({"qid": qid, "docno": docnos, "score": noisy}))
        top = np.argsort(-score)[:50]
        qrels += [{"qid": qid, "docno": docnos[i], "label": 1} for i in rng.choice(top, 5, replace=False)]
    return docnos, truth, pd.concat(first, ignore_index=True), pd.DataFrame(qrels)


def system_run_over_pool(pool, docnos, truth, depth=None):
    """The system's run over the pooled corpus: each pool document with its true score (top ``depth``)."""
    position = {d: i for i, d in enumerate(docnos.tolist())}
    idx = np.array([position[d] for d in pool.docnos])
    frames = []
    for qid, score in truth.items():
        frame = pd.DataFrame({"qid": qid, "docno": docnos[idx], "score": score[idx]})
        frames.append(frame.sort_values("score", ascending=False).head(depth or len(frame)))
    return pd.concat(frames, ignore_index=True)


def sigterm_mid_build(folder: Path, *options: str, settle: float = 0.0) -> tuple[int, list[str], list[str]]:
    """``sparse-eval experiment`` on a 150,000-document local collection in ``folder`` (with ``options``), sent
    SIGTERM once its build's temporary folder exists (and ``settle`` seconds after): its exit status, its stderr
    lines, and what is left in the index cache besides lock files."""
    import signal
    import subprocess
    import sys
    import time

    lines = (f"d{i}\t" + " ".join(f"w{(i * 7 + j) % 5000}" for j in range(30)) for i in range(150_000))
    (folder / "corpus.tsv").write_text("\n".join(lines) + "\n")
    (folder / "topics.tsv").write_text("q1\tw1 w2\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    idx = folder / "idx"
    args = ["--corpus", "corpus.tsv", "--topics", "topics.tsv", "--qrels", "qrels.txt", "--index-dir", "idx"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyterrier_sparse_eval", "experiment", *args, "--quiet", *options],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    start = time.time()
    while not any(p.name.endswith(".tmp") for p in idx.glob("*/.*")) and proc.poll() is None:
        assert time.time() - start < 300, "the build never started"
        time.sleep(0.01)
    time.sleep(settle)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=180)
    left = [p.name for p in idx.glob("*/.*") if not p.name.endswith(".lock")]
    return code, proc.stderr.read().strip().splitlines(), left


def search_while(
    retriever: Any,
    queries: pd.DataFrame,
    caught: Callable[[], Any],
    act: Callable[[Any], None],
    timeout: float = 60,
) -> tuple[pd.DataFrame, list[Any]]:
    """``retriever``'s run of ``queries``, made while a thread looks every 2 ms for something to act on (``caught()``
    not None: a process searching a batch) and, the first time, calls ``act`` on it (kill it, remove its node); the
    run, and what was acted on (empty if nothing was caught within ``timeout`` seconds)."""
    acted: list[Any] = []

    def watch() -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if (found := caught()) is not None:
                act(found)
                acted.append(found)
                return
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    got = retriever.transform(queries)
    watcher.join()
    return got, acted


def slow_sharded_search(
    tmp_path: Path, num_docs: int, num_shards: int, k: int, batch_size: int
) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """Random ``toks`` documents of short lists of frequent terms (slow queries: a batch is still being searched when
    a fault is made) indexed whole and in ``num_shards`` shards: the queries, the single index's top ``k`` of them,
    and the sharded index's retriever on the Ray cluster this process is connected to."""
    import pyterrier_sparse_eval as pse

    rng = np.random.default_rng(9)
    docs = random_toks_corpus(rng, num_docs, 60, integer=False)
    single = pse.SparseIndex(tmp_path / "single")
    single.indexer(verbose=False, batch_size=batch_size).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=num_shards)
    sharded.indexer(verbose=False, batch_size=batch_size).index(docs)
    queries = random_queries(rng, num_docs, 60, terms=5)
    expected = single.retriever(num_results=k).transform(queries)
    return queries, expected, sharded.retriever(num_results=k, engine="ray")


def write_beir_folder(
    folder: Path, docs: dict[str, str], queries: dict[str, str], qrels: list[tuple[str, str, int]]
) -> Path:
    """A BEIR folder (corpus.jsonl with empty titles, queries.jsonl, qrels/test.tsv) of the given texts."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in qrels)
    )
    return folder
