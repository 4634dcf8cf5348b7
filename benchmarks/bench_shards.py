"""Sharded indexes on one machine: build and retrieval throughput for 1, 2 and 4 shards, local and on Ray.

Corpus: bench_retrieval.py's synthetic Zipfian text corpus (vocabulary 200k, Poisson(60) tokens per document). Queries:
bench_workloads.py's ``frequent`` workload (3-7 terms drawn by corpus frequency, frequent terms included). Every
system is exact and returns the same run (checked here against the single index: documents, order, scores).

Measured, in one run: the build of a single index and of 2 and 4 shards, locally (one process: one analysis pass,
the shards spilled and finished one after the other) and on Ray (batches analysed by Ray tasks, one per CPU, the
shards finished by one task each; the files are checked equal to the local build's); retrieval of the whole query set at k = 100 as a PyTerrier
transformer with one thread per shard searcher, locally (shards searched in parallel threads of this process)
and on a Ray instance started on this machine (one actor per shard, searched in parallel); and Ray's overhead
per query batch (a batch of one query, Ray minus local). This machine has 2 cores: expect at most 2x from
parallel shards.

Writes the "shards" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, publish, today  # noqa: E402
from bench_retrieval import K1, WORDS, B, iter_tsv, write_text_corpus  # noqa: E402
from bench_workloads import frequency_queries  # noqa: E402


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _same_files(a: Path, b: Path) -> bool:
    """Two index folders hold the same files byte for byte, but the metadata (build ids and times)."""
    import filecmp

    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all(f.name == "pt_meta.json" or filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--queries", type=positive_int, default=300)
    parser.add_argument("--shards", type=positive_int, nargs="+", default=[2, 4])
    parser.add_argument("--k", type=positive_int, default=100)
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the corpus and indexes, kept (default: a temporary one, removed)",
    )
    parser.add_argument("--no-ray", action="store_true", help="local shards only")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="bench-shards-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        run(args, work)
    finally:  # the corpus and indexes of 1M documents are GBs: a temporary folder goes whatever stopped the run
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path) -> None:
    import pyterrier_sparse_eval as pse

    corpus = write_text_corpus(args.docs, work / f"corpus-{args.docs}.tsv")
    bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
    qs = frequency_queries(args.queries, 3, 7, seed=11)
    topics = pd.DataFrame(
        {"qid": [str(i) for i in range(len(qs))], "query": [" ".join(WORDS[q]) for q in qs]}
    )
    one = topics.iloc[:1]

    rows, builds, same_files = [], {}, {}
    path = work / f"single-{args.docs}"
    shutil.rmtree(path, ignore_errors=True)
    t = time.perf_counter()
    single = pse.SparseIndex(path)
    bm25.indexer(single, verbose=False).index(iter_tsv(corpus))
    builds["single index"] = time.perf_counter() - t
    reference = bm25.retriever(single, num_results=args.k).transform(topics)
    retr = bm25.retriever(single, num_results=args.k)
    s = _median(lambda: retr.transform(topics), args.runs)
    rows.append(
        ("single index", "local", len(topics) / s, _median(lambda: retr.transform(one), 20) * 1e3, True)
    )
    for n in args.shards:
        path = work / f"shards{n}-{args.docs}"
        shutil.rmtree(path, ignore_errors=True)
        t = time.perf_counter()
        sharded = pse.ShardedIndex(path, num_shards=n)
        bm25.indexer(sharded, verbose=False).index(iter_tsv(corpus))
        builds[f"{n} shards"] = time.perf_counter() - t
        if not args.no_ray:
            ray_path = work / f"shards{n}-ray-{args.docs}"
            shutil.rmtree(ray_path, ignore_errors=True)
            import ray

            if not ray.is_initialized():  # started before the clock: its start-up is not the build's
                ray.init(log_to_driver=False, include_dashboard=False)
            t = time.perf_counter()
            on_ray = pse.ShardedIndex(ray_path, num_shards=n)
            bm25.indexer(on_ray, verbose=False, engine="ray").index(iter_tsv(corpus))
            builds[f"{n} shards on Ray"] = time.perf_counter() - t
            same_files[n] = _same_files(path, ray_path)
            shutil.rmtree(ray_path)
            print(
                f"{n} shards: local build {builds[f'{n} shards']:.1f} s, on Ray {builds[f'{n} shards on Ray']:.1f} s"
            )
        for engine in ("local",) if args.no_ray else ("local", "ray"):
            r = bm25.retriever(sharded, num_results=args.k, engine=engine)
            got = r.transform(topics)
            same = (
                got["docno"].tolist() == reference["docno"].tolist()
                and (got["score"].to_numpy() == reference["score"].to_numpy()).all()
            )
            s = _median(lambda r=r: r.transform(topics), args.runs)
            latency = _median(lambda r=r: r.transform(one), 20) * 1e3
            rows.append((f"{n} shards", engine, len(topics) / s, latency, same))
            print(
                f"{n} shards {engine}: {len(topics) / s:,.0f} q/s, one query {latency:.2f} ms, same run: {same}"
            )
            if engine == "ray":
                r._searchers.close()

    base_qps, base_lat = rows[0][2], rows[0][3]
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.docs:,} synthetic documents "
        f"(bench_retrieval.py's corpus), {len(topics)} `frequent` queries (bench_workloads.py), k = {args.k}, BM25 as "
        "a PyTerrier transformer, one thread per shard searcher. *same run*: documents, order and scores equal the "
        "single index's. Ray: a local instance on this machine (one actor per shard); its overhead per batch is the "
        "one-query latency minus the single index's.\n",
        "| index | engine | q/s | vs single | one query (ms) | overhead per batch (ms) | same run |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, engine, qps, lat, same in rows:
        lines.append(
            f"| {name} | {engine} | {qps:,.0f} | {qps / base_qps:.2f} | {lat:.2f} | {lat - base_lat:+.2f} | "
            f"{'yes' if same else 'NO'} |"
        )
    lines.append(
        "\nBuild, seconds (documents/s): "
        + ", ".join(f"{k} {v:.1f} ({args.docs / v:,.0f})" for k, v in builds.items())
        + ". Local: one process"
        + (
            ""
            if args.no_ray
            else ". On Ray: a local Ray instance, one analysis task per CPU, one finishing task per shard"
        )
        + (
            "; the files of the Ray build equal the local build's (all but the metadata's build ids and times): "
            + ", ".join(f"{n} shards {'yes' if same else 'NO'}" for n, same in same_files.items())
            if same_files
            else ""
        )
        + "."
    )
    publish(lines, "shards", "Sharded indexes, local and on Ray", not args.no_write)


if __name__ == "__main__":
    main()
