"""Two threads against one: this project's retriever on bench_workloads.py's BM25 workloads, the settings alternated.

    python benchmarks/bench_threads.py                      # 1M documents, 30 passes per setting (~3 minutes)
    python benchmarks/bench_threads.py --docs 100000 --passes 5 --no-write   # a quick look

bench_workloads.py reports two threads against one from the median of a few passes per system. On a shared machine
a burst of noise that takes one core away costs a two-thread pass its second thread and a one-thread pass nothing,
so a few passes say as much about the machine as about the kernel. Here the four settings of a cell (one and two
threads, as a PyTerrier transformer and on arrays with ``search_matrix``) take ``--passes`` passes each in turn, in
one process, and the report gives the ratio of their best passes and the median ratio of a round's two passes (one
thread, then two, or the reverse, back to back: a burst of noise lasting seconds falls on both), next to a
calibration: a compiled loop with no memory traffic, one chunk per thread, on one and on two threads.

The corpus and queries are bench_workloads.py's (``light``, ``frequent``, ``long``); the index is built in
``--work`` (reused when it is there; without it, in a temporary folder). Writes the "threads" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402
from bench_retrieval import K1, B, index_in_child, write_text_corpus  # noqa: E402
from bench_workloads import text_workloads, topics_frame  # noqa: E402


def calibration(passes: int) -> tuple[float, float]:
    """Seconds of the best pass of a compute-only loop, two chunks of it, on one and on two threads."""
    from numba import njit, prange, set_num_threads

    @njit(nogil=True)
    def work(n, seed):
        a, b, x = 1.0 + seed, 2.0, 0
        for i in range(n):
            a = a * 1.0000001 + 0.5
            b = b * 0.9999999 + 0.25
            x += (i * 2654435761) & 1023
        return a + b + x

    @njit(parallel=True)
    def both(n):
        out = np.zeros(2)
        for c in prange(2):
            out[c] = work(n, c)
        return out.sum()

    both(10)
    best = []
    for threads in (1, 2):
        set_num_threads(threads)
        times = []
        for _ in range(max(3, passes // 5)):
            t = time.perf_counter()
            both(20_000_000)
            times.append(time.perf_counter() - t)
        best.append(min(times))
    return best[0], best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--queries", type=positive_int, default=300)
    parser.add_argument("--passes", type=positive_int, default=30)
    parser.add_argument("--ks", type=positive_int, nargs="+", default=[10, 1000])
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpus and index (kept)")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()
    if args.passes < 1 or args.queries < 1:
        parser.error("--passes and --queries must be at least 1")

    import pyterrier_sparse_eval as pse

    work = args.work or Path(tempfile.mkdtemp(prefix="pse-threads-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"ours-{args.docs}"
    if not pse.SparseIndex(path).built():
        print(f"indexing {args.docs:,} documents in {path}", flush=True)
        corpus = write_text_corpus(args.docs, work / f"corpus-{args.docs}.tsv")
        index_in_child("ours-text", args.docs, path, corpus)
    index = pse.SparseIndex(path)
    n = args.queries
    # as bench_workloads.py: the Lucene contributions computed before the timing, so light queries add them too
    index.lucene_impacts  # noqa: B018
    one, two = calibration(args.passes)
    rows = []
    for name, q_ids in text_workloads(n).items():
        topics = topics_frame(q_ids)
        for k in args.ks:
            bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
            retr = {t: bm25.retriever(index, num_results=k, backend="numba", threads=t) for t in (1, 2)}
            qmat = retr[1].query_matrix(retr[1]._query_weights(topics))
            fns = {}
            for t in (1, 2):
                fns[("transformer", t)] = lambda r=retr[t], x=topics: r.transform(x)
                fns[("arrays", t)] = lambda r=retr[t], x=qmat: r.search_matrix(x)
            order = [("transformer", 1), ("transformer", 2), ("arrays", 1), ("arrays", 2)]
            for fn in fns.values():  # warm-up: compilation, page cache
                fn()
            times: dict[tuple[str, int], list[float]] = {key: [] for key in fns}
            for p in range(args.passes):
                for key in order if p % 2 == 0 else order[::-1]:
                    t = time.perf_counter()
                    fns[key]()
                    times[key].append(time.perf_counter() - t)
            row = {"workload": name, "k": k}
            for how in ("transformer", "arrays"):
                a, b = times[(how, 1)], times[(how, 2)]
                row[how] = (n / min(a), min(a) / min(b), statistics.median(x / y for x, y in zip(a, b)))
            rows.append(row)
            print(
                f"{name} k={k}: "
                + "  ".join(
                    f"{h} best {row[h][1]:.2f}x median round {row[h][2]:.2f}x"
                    for h in ("transformer", "arrays")
                ),
                flush=True,
            )
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.docs:,} documents, {n} queries "
        f"(bench_workloads.py's), {args.passes} passes per setting, the four settings of a line taking their passes "
        f"in turn in one process. Two threads against one: the best passes' ratio, and the median over rounds of a "
        f"round's ratio (its one- and two-thread passes back to back). Calibration: a compiled "
        f"loop with no memory traffic, two chunks, {one / two:.2f}x on two threads.",
        "",
        "| workload | k | q/s, 1 thread (transformer) | transformer, best | transformer, median round | arrays, best | "
        "arrays, median round |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t, a = r["transformer"], r["arrays"]
        lines.append(
            f"| {r['workload']} | {r['k']} | {t[0]:,.0f} | {t[1]:.2f} | {t[2]:.2f} | {a[1]:.2f} | {a[2]:.2f} |"
        )
    report = "\n".join(lines)
    print("\n" + report)
    if not args.no_write:
        write_section("threads", report)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
