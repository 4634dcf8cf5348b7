"""A local build of ``toks`` documents (SPLADE's output given precomputed): this checkout against an earlier one.

    python benchmarks/bench_toks_build.py                     # 200,000 documents, 5 rounds
    python benchmarks/bench_toks_build.py --baseline 68737d2 --runs 7

Documents: bench_build_driver.py's SPLADE-like ``toks`` corpus (120 terms each from a 30,522-term vocabulary,
Zipfian). A build turns each batch's {term: weight} dicts into arrays (``_toks.flatten_toks``, which ``_build``
imports and calls), gives the terms their ids and spills the postings. Measured side by side in one process: whole builds with this checkout's
``flatten_toks`` and with the one at ``--baseline`` (its module's source read from git), in alternating order
round by round, the driver's CPU seconds of each (``time.process_time``); and ``flatten_toks`` alone on the
corpus's batches. The two builds' index files are checked equal (every file but the metadata's build id and time).

Writes the "toks-build" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, module_at, positive_int, publish, today  # noqa: E402
from bench_build_driver import toks_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=200_000)
    parser.add_argument("--runs", type=positive_int, default=5)
    parser.add_argument(
        "--baseline", default="68737d2", help="git revision of the flatten_toks measured against"
    )
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import _build

    flatten = {f"at {args.baseline}": module_at(args.baseline, "_build").flatten_toks}
    flatten["this checkout"] = _build.flatten_toks
    docs = toks_corpus(args.docs)
    batches = [[d["toks"] for d in docs[i : i + 10_000]] for i in range(0, len(docs), 10_000)]
    work = Path(tempfile.mkdtemp(prefix="bench-toks-"))
    build_cpu: dict[str, list[float]] = {name: [] for name in flatten}
    alone_cpu: dict[str, list[float]] = {name: [] for name in flatten}
    same = True
    try:
        for round_ in range(args.runs):
            names = list(flatten) if round_ % 2 == 0 else list(flatten)[::-1]
            for name in names:
                _build.flatten_toks = flatten[name]
                start = time.process_time()
                pse.SparseIndex(work / name).indexer(verbose=False).index(docs)
                build_cpu[name].append(time.process_time() - start)
                start = time.process_time()
                for batch in batches:
                    flatten[name](["d"] * len(batch), batch)
                alone_cpu[name].append(time.process_time() - start)
            compared = filecmp.dircmp(*(work / name for name in flatten), ignore=["pt_meta.json"])
            same = same and not (compared.diff_files or compared.left_only or compared.right_only)
            for name in flatten:
                shutil.rmtree(work / name)
    finally:
        _build.flatten_toks = flatten["this checkout"]
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(build_cpu["this checkout"])
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. A local build of {args.docs:,} "
        f"`toks` documents (120 terms each), median CPU seconds of {args.runs} rounds in one process, the two in "
        f"alternating order. The two builds' index files are equal: {'yes' if same else 'NO'}.\n",
        "| flatten_toks | build CPU (s) | vs this checkout | flatten_toks alone (s) | documents/s (build) |",
        "|---|---|---|---|---|",
    ]
    for name in flatten:
        seconds = statistics.median(build_cpu[name])
        lines.append(
            f"| {name} | {seconds:.2f} | {seconds / base:.2f}x | {statistics.median(alone_cpu[name]):.2f} | "
            f"{args.docs / seconds:,.0f} |"
        )
    publish(lines, "toks-build", "A local build of `toks` documents", not args.no_write)


if __name__ == "__main__":
    main()
