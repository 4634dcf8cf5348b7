"""A sharded search's merge at k = 1000, where BM25's scores tie: this checkout's merge against an earlier one.

    python benchmarks/bench_merge.py                     # 1M documents in 4 shards, 2,000 queries, k = 1000
    python benchmarks/bench_merge.py --baseline 776ca9e --work /tmp/merge

Corpus: bench_retrieval.py's synthetic Zipfian text corpus; queries: bench_workloads.py's ``frequent`` workload
(3-7 terms drawn by corpus frequency). A sharded search gathers every shard's top k of each query and merges them
on the driver: score descending, ties by docno. At k = 1000 most candidate rows tie with a neighbour (BM25 over
documents of similar length), so the merge compares many docnos. Measured side by side in one process, on the
same candidate rows (captured from the search): this checkout's ``_docnos.merge_top_k`` and the one at
``--baseline`` (its module's source read from git); the positions they pick are checked equal. Beside it, the
whole search of the single index and of the sharded one (local engine, one thread per shard), whose runs are
checked equal (documents, order, scores). Median of ``--runs``.

Writes the "merge" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import (  # noqa: E402
    command_line,
    machine_facts,
    median_time,
    module_at,
    positive_int,
    publish,
    today,
)
from bench_retrieval import K1, B, iter_tsv, write_text_corpus  # noqa: E402
from bench_workloads import frequency_queries, topics_frame  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--shards", type=positive_int, default=4)
    parser.add_argument("--queries", type=positive_int, default=2000)
    parser.add_argument("--k", type=positive_int, default=1000)
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--baseline", default="776ca9e", help="git revision of the merge measured against")
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpus and indexes, kept")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import _docnos, _sharded

    before = module_at(args.baseline, "_docnos").merge_top_k
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-merge-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.work is None:  # a temporary corpus and its indexes (GBs) go when the script ends, however it ends
        atexit.register(shutil.rmtree, work, True)
    corpus = write_text_corpus(args.docs, work / f"corpus-{args.docs}.tsv")
    bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
    indexes = {"single": pse.SparseIndex(work / f"single-{args.docs}")}
    indexes["sharded"] = pse.ShardedIndex(work / f"shards{args.shards}-{args.docs}", num_shards=args.shards)
    for index in indexes.values():
        if not index.built():
            bm25.indexer(index, verbose=False).index(iter_tsv(corpus))
    topics = topics_frame(frequency_queries(args.queries, 3, 7, seed=11))
    single = bm25.retriever(indexes["single"], num_results=args.k)
    sharded = bm25.retriever(indexes["sharded"], num_results=args.k)

    captured = {}

    def capturing(*a):
        captured["args"] = a
        return _docnos.merge_top_k(*a)

    _sharded.merge_top_k = capturing
    run = sharded.transform(topics)
    _sharded.merge_top_k = _docnos.merge_top_k
    reference = single.transform(topics)
    same_run = (
        run["docno"].tolist() == reference["docno"].tolist()
        and (run["score"].to_numpy() == reference["score"].to_numpy()).all()
    )
    row, docno, score, k, ties = captured["args"]
    order = np.lexsort((-score.astype(np.float64), row))
    r, s = row[order], score[order]
    tied = int(np.sum((r[1:] == r[:-1]) & (s[1:] == s[:-1])))
    same_merge = np.array_equal(before(*captured["args"]), _docnos.merge_top_k(*captured["args"]))
    times = {
        f"merge at {args.baseline}": median_time(lambda: before(*captured["args"]), args.runs),
        "merge, this checkout": median_time(lambda: _docnos.merge_top_k(*captured["args"]), args.runs),
        "search, single index": median_time(lambda: single.transform(topics), args.runs),
        f"search, {args.shards} shards": median_time(lambda: sharded.transform(topics), args.runs),
    }
    base = times["merge, this checkout"]
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.docs:,} synthetic documents "
        f"in {args.shards} shards (bench_retrieval.py's corpus), {args.queries:,} `frequent` queries "
        f"(bench_workloads.py), k = {k}, BM25: {len(row):,} candidate rows from the shards, {tied:,} of them "
        f"with the score of the row before them. Median of {args.runs}. The two merges pick the same rows: "
        f"{'yes' if same_merge else 'NO'}; the sharded run equals the single index's: {'yes' if same_run else 'NO'}.\n",
        "| step | seconds | vs this checkout's merge | ms a query |",
        "|---|---|---|---|",
    ]
    for name, seconds in times.items():
        lines.append(
            f"| {name} | {seconds:.2f} | {seconds / base:.2f}x | {seconds / args.queries * 1e3:.2f} |"
        )
    publish(lines, "merge", f"A sharded search's merge at k = {k}", not args.no_write)


if __name__ == "__main__":
    main()
