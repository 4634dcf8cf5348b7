"""One query per call: the latency of a PyTerrier retriever asked for one topic at a time, side by side with
pyterrier-pisa.

    python benchmarks/bench_latency.py                    # SciFact and Vaswani, k = 10, 100, 1000 (minutes)
    python benchmarks/bench_latency.py --work /tmp/wl18   # reuse bench_workloads.py's indexes of the real topics

bench_workloads.py gives each system the whole query set in one call, which is how ``pt.Experiment`` runs; an
interactive search, a demo or a pipeline fed one query at a time instead pays each call's fixed cost (checking
the input, analysing the query, building the result frame) on every query, and on these small collections that
cost is most of the time. Each system is a PyTerrier transformer called with one-row topic frames, every topic in
turn (this project: BM25 on its own index, one thread; pyterrier-pisa: BM25 with block-max WAND and with
MaxScore, one thread, its own analyzer). Figures are microseconds per call, the median (p50) and p95 of every
call in --runs passes over the topics, the systems taking their passes in turn (a burst of noise on this shared
machine then falls on all of them, and moves a median less than a mean). *batch* is this project's time per query
when the whole set comes in one call (median of passes), for scale. Each of this project's one-query results is checked against its batch result (the same documents,
order and scores).

Writes the "latency" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402
from bench_workloads import REAL, real_indexes, shared_irds  # noqa: E402


def call_times(systems: dict, singles: list, runs: int) -> dict[str, np.ndarray]:
    """Each system's seconds per call over ``runs`` passes through the topics, one call each, the systems taking
    their passes in turn (the order rotated every pass), after a warm-up pass each."""
    for retriever in systems.values():
        for one in singles:
            retriever.transform(one)
    times: dict[str, list[float]] = {name: [] for name in systems}
    names = list(systems)
    for r in range(runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            retriever, got = systems[name], times[name]
            for one in singles:
                t = time.perf_counter()
                retriever.transform(one)
                got.append(time.perf_counter() - t)
    return {name: np.asarray(got) for name, got in times.items()}


def check_same(ours, topics, singles) -> None:
    """Each one-query call returns what the batch call returns for that query."""
    import pandas as pd

    batch = ours.transform(topics)
    for one in singles:
        got = ours.transform(one).reset_index(drop=True)
        want = batch[batch["qid"] == one["qid"].iloc[0]].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def bench(work: Path, ks: list[int], runs: int) -> list[dict]:
    import pyterrier_sparse_eval as pse

    rows = []
    for name, irds in REAL:
        index, pisa, topics = real_indexes(work, name, irds)
        singles = [topics.iloc[i : i + 1] for i in range(len(topics))]
        n = len(topics)
        for k in ks:
            ours = pse.BM25().retriever(index, num_results=k, backend="numba", threads=1)
            check_same(ours, topics, singles)
            systems = {
                "ours": ours,
                "PISA block-max WAND": pisa.bm25(num_results=k, threads=1, query_algorithm="block_max_wand"),
                "PISA MaxScore": pisa.bm25(num_results=k, threads=1, query_algorithm="maxscore"),
            }
            times = call_times(systems, singles, runs)
            row = {"collection": name, "k": k, "topics": n}
            for s, t in times.items():
                row[s], row[f"{s} p95"] = np.median(t) * 1e6, np.percentile(t, 95) * 1e6
            batch = []
            for _ in range(max(3, runs)):
                t0 = time.perf_counter()
                ours.transform(topics)
                batch.append(time.perf_counter() - t0)
            row["batch"] = float(np.median(batch)) / n * 1e6
            rows.append(row)
            print(
                f"  {name} k={k}: "
                + ", ".join(f"{s} {row[s]:.0f} us (p95 {row[f'{s} p95']:.0f})" for s in systems)
                + f", ours batch {row['batch']:.0f} us/query",
                flush=True,
            )
    return rows


def report(rows: list[dict]) -> str:
    out = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. One query per call (a one-row topic "
        "frame), every topic in turn, the systems taking their passes in turn; microseconds per call, median "
        "(p50) and p95 over every call of the passes; *fastest peer* is PISA's faster algorithm (by p50) on that "
        "line; ratios above 1 mean this project is faster. *batch*: this project's time per query with the whole topic set in one "
        "call. Each one-query result of this project equals its batch result.\n",
        "| collection | topics | k | ours p50 (us) | ours p95 | PISA BMW p50 | PISA MaxScore p50 | fastest peer p95 | "
        "peer / ours (p50) | ours batch (us/query) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peer = min(("PISA block-max WAND", "PISA MaxScore"), key=lambda s: r[s])
        out.append(
            f"| {r['collection']} | {r['topics']} | {r['k']} | {r['ours']:,.0f} | {r['ours p95']:,.0f} | "
            f"{r['PISA block-max WAND']:,.0f} | {r['PISA MaxScore']:,.0f} | {r[f'{peer} p95']:,.0f} | "
            f"{r[peer] / r['ours']:.2f} | {r['batch']:,.0f} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ks", type=positive_int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--runs", type=positive_int, default=7)
    parser.add_argument("--work", type=Path, default=None, help="folder for the indexes (kept)")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pse-latency-"))
    work.mkdir(parents=True, exist_ok=True)
    if not shared_irds(work):
        sys.exit(
            "needs the real collections: set IR_DATASETS_HOME, or keep ../shared/data beside the repository"
        )
    text = report(bench(work, args.ks, args.runs))
    print(text)
    if not args.no_write:
        write_section("latency", text)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
