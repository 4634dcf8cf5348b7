"""SDM against the SDM paper's reference estimator, pool by pool: a paired comparison of their errors on R@k.

The reference (``sdm.threshold_recall``: a skew-normal background and the score threshold at which the pooled
run plus the expected unseen documents hold k, found by bisection) and SDM (``sdm.evaluate``, alone and with the
pooling run as covariate) estimate the same full-corpus R@k from the same pool. ``bench_sdm_scale`` reports each
one's mean |error| over 5 pools; at that count a cell's difference is often within the noise of the pools. Here
each (budget, design, system, R@k) cell is measured over ``--seeds`` pools (``bench_sdm_scale``'s corpus, pooling
run, pools and systems: pool seeds 0-4 are its pools) and compared pool by pool: d = |reference - full| - |SDM -
full| (positive: SDM closer), its mean over the pools and that mean's standard error (SE). A cell is *SDM
closer* / *reference closer* when the mean d is more than 2 SE from 0, else *within noise*.

    python benchmarks/sdm_reference.py                          # SciFact, 15% and 30% uniform pools, 15 each
    python benchmarks/sdm_reference.py --family skewnorm --systems "MiniLM-L6 (dense)"   # the reference's family
    python benchmarks/sdm_reference.py --from-csv /tmp/sdm-calibration/reference-0-auto.csv
    python benchmarks/sdm_reference.py --terms        # also the covariate with the matched query terms ("terms")

Each pool's rows are appended to ``--output`` (default ``--work``/reference-SIZE-FAMILY.csv) as soon as they are
computed, so an interrupted run keeps its pools (a rerun starts the file over). Two runs side by side (e.g. one
budget each, each with its ``--output``) are summarised together with ``--from-csv A B``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from sdm_calibration import add_pool_arguments, open_study, pool_designs  # noqa: E402

K_VALUES = (10, 100, 1000)
METHODS = ("SDM", "covariate", "terms", "reference")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_pool_arguments(parser, seeds=15, designs=["uniform"])
    parser.add_argument("--family", default="auto", help="SDM's background family (sdm.FAMILIES)")
    parser.add_argument("--systems", nargs="+", help="only these systems (names as printed; default: all)")
    parser.add_argument(
        "--terms",
        action="store_true",
        help="also SDM with the pooling run and its matched query terms as covariate (sdm.MatchedTerms)",
    )
    add_csv_arguments(parser, "reference-SIZE-FAMILY.csv")
    args = parser.parse_args()
    if args.from_csv is not None:
        summarize(pd.concat([pd.read_csv(f) for f in args.from_csv]))
        return
    if args.seeds < 2:
        parser.error("--seeds must be at least 2: the comparison needs a standard error over pools")
    from pyterrier_sparse_eval import sdm

    if args.family not in sdm.FAMILIES:
        parser.error(f"--family must be one of {', '.join(sdm.FAMILIES)}")
    st = open_study(parser, args)
    pool_run, all_docnos = st.full_run["BM25 (pooling)"], st.index["BM25 (pooling)"].docnos
    names = args.systems or list(st.full_run)
    matched = (
        sdm.MatchedTerms(st.index["BM25 (pooling)"], st.sparse["BM25 (pooling)"][0]).transform(pool_run)
        if args.terms
        else None
    )
    out = args.output or args.work / f"reference-{args.size}-{args.family}.csv"
    out.unlink(missing_ok=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for budget in args.budgets:
        depth, designs = pool_designs(budget, st, pool_run, all_docnos)
        for design, seed in itertools.product(args.designs, seeds):
            pool = study.make_pool(st.qrels, pool_run, all_docnos, depth, seed, designs[design])
            methods: list[tuple[str, Any]] = [
                ("SDM", None),
                ("covariate", sdm.Covariate.from_run(pool_run, pool)),
            ]
            if matched is not None:
                methods.append(("terms", sdm.Covariate.from_run(matched, pool)))
            rows = []
            for name in names:
                run = study.run_over_pool(
                    pool, name, st.sparse, st.index, st.dense, st.topics, args.work / f"pool-{args.size}"
                )
                for method, cov in methods:
                    est = sdm.evaluate(run, st.qrels, pool, K_VALUES, covariate=cov, family=args.family)
                    rows += [
                        (budget, design, seed, name, f"R@{k}", method, est["aggregate"][f"R@{k}"]["sdm"])
                        for k in K_VALUES
                    ]
                models = sdm.fit_run_backgrounds(run, pool, "skewnorm")  # the reference's family, fitted once
                for k in K_VALUES:
                    ref = sdm.threshold_recall(run, st.qrels, pool, k, models=models)  # per query
                    rows.append(
                        (
                            budget,
                            design,
                            seed,
                            name,
                            f"R@{k}",
                            "reference",
                            np.mean([ref.get(q, 0.0) for q in st.qids]),
                        )
                    )
            frame = pd.DataFrame(
                rows, columns=["budget", "design", "seed", "system", "measure", "method", "est"]
            )
            frame["full"] = [st.full[s][m] for s, m in zip(frame["system"], frame["measure"])]
            frame.to_csv(out, mode="a", header=not out.exists(), index=False)
            print(f"pool {pool.fraction:.2%} {design} seed {seed} done", flush=True)
    print(
        f"{args.dataset} + {args.size} distractors, {args.seeds} pools per budget and design, SDM family {args.family}"
    )
    summarize(pd.read_csv(out))


def add_csv_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """--work, --output (default: WORK/``default``) and --from-csv."""
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-calibration"))
    parser.add_argument("--output", type=Path, help=f"the CSV (default: WORK/{default})")
    parser.add_argument(
        "--from-csv", type=Path, nargs="+", help="only print the summary of earlier runs' CSVs"
    )


def methods(table: pd.DataFrame) -> list[str]:
    """The methods a table holds, in :data:`METHODS` order (the reference last; ``terms`` only with --terms)."""
    return [m for m in METHODS if m in set(table["method"])]


def paired(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell: each method's mean |error| (x 1000) and, for each SDM method (SDM, the covariate, the terms when
    measured), the paired difference d = |reference error| - |method error| over the pools (mean, SE, x 1000) and
    the verdict."""
    table = table.assign(err=(table["est"] - table["full"]).abs() * 1000)
    wide = table.pivot_table(
        index=["budget", "design", "system", "measure", "seed"], columns="method", values="err"
    ).reset_index()
    present = methods(table)
    out = []
    for cell, x in wide.groupby(["budget", "design", "system", "measure"]):
        row = dict(zip(["budget", "design", "system", "measure"], cell), pools=len(x))
        for method in present:
            row[method] = x[method].mean()
        for method in present[:-1]:
            d = (x["reference"] - x[method]).dropna()  # a merged run without --terms has no terms rows
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            row[f"{method} d"], row[f"{method} se"] = d.mean(), se
            row[f"{method} verdict"] = (
                "not measured"
                if d.empty
                else "closer"
                if d.mean() > 2 * se
                else "reference closer"
                if d.mean() < -2 * se
                else "within noise"
            )
        out.append(row)
    return pd.DataFrame(out)


def summarize(table: pd.DataFrame) -> None:
    """The per-cell comparison (mean |error| x 1000 over the pools; d and its SE), then the verdicts' counts."""
    cells = paired(table)
    pd.set_option("display.width", 200)
    shown = cells.copy()
    present = methods(table)
    estimators = present[:-1]
    for method in estimators:
        shown[f"{method} d"] = [
            f"{d:+.2f} ({se:.2f})" for d, se in zip(cells[f"{method} d"], cells[f"{method} se"])
        ]
    print(
        shown[
            [
                "budget",
                "design",
                "system",
                "measure",
                "pools",
                *present,
                *(f"{m} d" for m in estimators),
            ]
        ]
        .round(2)
        .to_string(index=False)
    )
    # a cell where every method is exact in every pool (nothing to estimate) is left out of the counts (errors x
    # 1000 up to 1e-6: float rounding of an exact value)
    measured = cells[cells[present].max(axis=1) > 1e-6]
    for method in estimators:
        live = measured[measured[f"{method} verdict"] != "not measured"]  # (terms: only with --terms)
        verdicts = live[f"{method} verdict"].value_counts()
        print(
            f"{method} against the reference, {len(live)} cells: closer on average in "
            f"{int((live[f'{method} d'] > 0).sum())}; by more than 2 SE in {verdicts.get('closer', 0)}, "
            f"reference closer by more than 2 SE in {verdicts.get('reference closer', 0)}, "
            f"within noise in {verdicts.get('within noise', 0)}"
        )
        worse = live[live[f"{method} verdict"] == "reference closer"]
        for _, r in worse.iterrows():
            print(
                f"  reference closer: {r['budget']:.0%} {r['design']} {r['system']} {r['measure']}: "
                f"{r['reference']:.2f} against {r[method]:.2f}"
            )


if __name__ == "__main__":
    main()
