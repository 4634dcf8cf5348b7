"""The README's summary of the SDM-at-scale study, from the CSV ``bench_sdm_scale.py`` writes.

    python benchmarks/sdm_scale_summary.py                    # reads /tmp/sdm-scale/sdm-scale.csv
    python benchmarks/sdm_scale_summary.py --csv A/sdm-scale.csv B/sdm-scale.csv --systems bm25

Per corpus, pool budget and design: the share of the pooled-to-full gap closed, minimum (median) over the systems
and over R@k and nDCG@k, at k = 10 and at k >= 100, for SDM and for SDM with the pooling run as covariate. On the
real collection (several pools per budget and design) a cell is 1 - mean |estimate - full| / mean |pooled - full|
over the pools; elsewhere the one pool's. Gaps under 0.01 are not counted (as in the study's tables).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def closed(g: pd.DataFrame, column: str) -> float:
    gap = float((g["pooled"] - g["full"]).abs().mean())
    return 1 - float((g[column] - g["full"]).abs().mean()) / gap if gap >= 0.01 else float("nan")


def cell(values: list[float]) -> str:
    v = np.array([x for x in values if np.isfinite(x)])
    return f"{v.min():.0%} ({np.median(v):.0%})" if len(v) else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--csv",
        type=Path,
        nargs="+",
        default=[Path("/tmp/sdm-scale/sdm-scale.csv")],
        help="one or more (merged)",
    )
    parser.add_argument(
        "--systems", choices=("all", "bm25"), default="all", help="every system, or the four BM25 ones"
    )
    args = parser.parse_args()
    missing = [str(path) for path in args.csv if not path.is_file()]
    if missing:
        parser.error(
            f"no file {', '.join(missing)}: run benchmarks/bench_sdm_scale.py first (it writes WORK/sdm-scale.csv), "
            "or give --csv WORK/sdm-scale.csv"
        )
    table = pd.concat([pd.read_csv(path) for path in args.csv], ignore_index=True)
    if args.systems == "bm25":
        table = table[table["system"].str.startswith("BM25")]
    table = table.assign(budget=table["pool"].round(3), k=table["measure"].str.split("@").str[1].astype(int))
    print(
        "| corpus | pool | design | systems | SDM, k = 10 | SDM + covariate, k = 10 | SDM, k >= 100 | "
        "SDM + covariate, k >= 100 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (docs, budget, design), g in table.groupby(["docs", "budget", "design"], sort=False):
        cells = []
        for small in (True, False):
            part = g[(g["k"] == 10) == small]
            per = part.groupby(["system", "measure"], sort=False)
            cells.append((cell([closed(x, "sdm") for _, x in per]), cell([closed(x, "cov") for _, x in per])))
        pools = g["seed"].nunique()
        print(
            f"| {docs:,} | {budget:.1%} | {design}{f' ({pools} pools)' if pools > 1 else ''} | "
            f"{g['system'].nunique()} | {cells[0][0]} | {cells[0][1]} | {cells[1][0]} | {cells[1][1]} |"
        )


if __name__ == "__main__":
    main()
