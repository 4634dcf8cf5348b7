"""The scipy backend's memory against ``memory_budget``: the peak of a search, traced, over the budget.

    python benchmarks/bench_memory_budget.py                    # 200k documents, budgets 4, 16 and 64 MiB
    python benchmarks/bench_memory_budget.py --docs 50000 --budgets 1 4

A BM25 index of the synthetic Zipfian corpus of ``bench_retrieval.py`` (Lucene's postings, the default), and
one of the same documents with ``lucene_scores=False`` (a plain product over stored BM25 weights, scipy's
``q @ postings``). Two query loads of 200 queries: ``mid`` (5 mid-frequency terms, ``bench_retrieval.py``'s)
and ``frequent`` (20 terms, 5 of them among the 100 most frequent: long queries touching a large share of the
corpus). The peak is what ``tracemalloc`` sees allocated during ``search_matrix`` (numpy's and scipy's arrays
included), above what was allocated before. Side by side on the Lucene index: this checkout's product and the
one before 2026-11-30 (rows kept with their row ids, joined as COO, converted to CSR), read from git at
``--baseline``.
The budget charges 16 bytes per posting a batch's queries touch (capped at the corpus size per query); a single
query whose temporaries exceed the budget is searched alone, so a tiny budget is exceeded by one query's
temporaries (about 40 bytes per posting it touches).

Writes the "memory budget" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, module_at, positive_int, today, write_section  # noqa: E402
from bench_retrieval import K1, WORDS, B, iter_text_docs, text_queries  # noqa: E402

import pyterrier_sparse_eval as pse  # noqa: E402
from pyterrier_sparse_eval import _lucene, _retriever  # noqa: E402


def query_loads(n: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(7)
    mid = [" ".join(WORDS[t]) for t in text_queries(n)]
    frequent = [
        " ".join(
            WORDS[np.concatenate([rng.choice(100, 5, replace=False), rng.choice(np.arange(100, 20_000), 15)])]
        )
        for _ in range(n)
    ]
    return {
        name: pd.DataFrame({"qid": [str(i) for i in range(n)], "query": texts})
        for name, texts in (("mid", mid), ("frequent", frequent))
    }


def traced_peak(search, q) -> tuple[float, float, tuple]:
    """(peak bytes above the start, seconds, result arrays) of one search, traced."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    result = search(q)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=positive_int, default=200_000)
    parser.add_argument("--queries", type=positive_int, default=200)
    parser.add_argument("--budgets", type=positive_int, nargs="+", default=[4, 16, 64], help="MiB")
    parser.add_argument("--baseline", default="12bef6c", help="git revision of the product before")
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()
    before = module_at(args.baseline, "_lucene").lucene_product
    loads = query_loads(args.queries)
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-budget-") as work:
        indexes = {}
        for lucene in (True, False):
            index = pse.SparseIndex(Path(work) / f"lucene-{lucene}")
            bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None, lucene_scores=lucene)
            bm25.indexer(index, verbose=False).index(iter_text_docs(args.docs))
            indexes[lucene] = (bm25, index)
        for load, topics in loads.items():
            for lucene, (bm25, index) in indexes.items():
                for mib in args.budgets:
                    budget = mib * 2**20
                    r = bm25.retriever(index, num_results=1000, backend="scipy", memory_budget=budget)
                    q = r.query_matrix(r._query_weights(topics))
                    r.search_matrix(q[:1])  # the retriever's caches (tie order, idf: O(corpus), once) made
                    batches = len(r._batches(q))
                    peers = [("this checkout", r.search_matrix)]
                    if lucene:
                        peers.append(("before 2026-11-30", lambda q, r=r: _with_product(r, q, before)))
                    measured = [(name, *traced_peak(search, q)) for name, search in peers]
                    for m in measured[1:]:  # the same run, to the bit
                        for a, b in zip(measured[0][3], m[3]):
                            np.testing.assert_array_equal(a, b)
                    for name, peak, seconds, _ in measured:
                        lines.append(
                            f"| {load} | {'Lucene' if lucene else 'plain'} | {name} | {mib} | {batches} | "
                            f"{peak / 2**20:,.1f} | {peak / budget:.2f} | {seconds:.2f} |"
                        )
                        print(lines[-1], flush=True)
    body = "\n".join(
        [
            f"## Memory of the scipy backend against memory_budget ({today()})",
            "",
            f"`{command_line()}`: {machine_facts()}. {args.docs:,} documents, {args.queries} queries per load, "
            "1,000 results; peak: traced allocations during one `search_matrix` call (see the script's docstring).",
            "",
            "| queries | postings | product | budget (MiB) | batches | peak (MiB) | peak / budget | seconds |",
            "|---|---|---|---:|---:|---:|---:|---:|",
            *lines,
        ]
    )
    print(body)
    if args.write:
        write_section("memory budget", body)


def _with_product(r, q, product):
    """A search with ``product`` in place of this checkout's."""
    original = _retriever.lucene_product
    _retriever.lucene_product = product
    try:
        return r.search_matrix(q)
    finally:
        _retriever.lucene_product = original


assert _lucene.lucene_product is _retriever.lucene_product  # the retriever calls the product it imported

if __name__ == "__main__":
    main()
