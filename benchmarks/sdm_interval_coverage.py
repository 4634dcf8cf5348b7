"""How often SDM's bootstrap interval holds the full-corpus value, and whether a bias-corrected one would.

``sdm.evaluate(..., bootstrap=B)`` refits each query's background on resamples of its sample and reports the
percentile interval of the B corrected means. Over pools of one corpus (``bench_sdm_scale``'s corpus, pooling run,
uniform pools and systems; SDM alone, ``auto``) this prints, per budget, system and measure:

- *percentile*: the share of pools whose 95% percentile interval holds the exact full-corpus value;
- *basic*: the same for the basic (bias-corrected) bootstrap interval [2 est - q97.5, 2 est - q2.5] (A. C. Davison
  and D. V. Hinkley, Bootstrap Methods and their Application, Cambridge, 1997, eq. 5.6), which shifts the interval
  by the bias the bootstrap sees (the resamples' mean minus the estimate): the noise of p through the convex
  discount of nDCG@k overstates it, and the resamples overstate it again by about as much;
- *error*: the estimate's mean signed error (x 1000); *boot bias*: the resamples' mean minus the estimate (x 1000);
  *boot SD*: the resamples' standard deviation (x 1000), what the interval's width is made of.

    python benchmarks/sdm_interval_coverage.py                       # SciFact, 15% and 30%, 6 pools, 100 rounds
    python benchmarks/sdm_interval_coverage.py --from-csv /tmp/sdm-calibration/coverage.csv
    python benchmarks/sdm_interval_coverage.py --noise-correction      # the estimate and rounds corrected

Rows go to ``--output`` (default WORK/coverage.csv) pool by pool.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from _report import positive_int  # noqa: E402
from sdm_calibration import add_pool_arguments, open_study, pool_designs  # noqa: E402
from sdm_reference import add_csv_arguments  # noqa: E402

K_VALUES = (10, 100, 1000)


def main() -> None:
    from pyterrier_sparse_eval._pool import _UNRETRIEVED, judged_with_backgrounds, models_for
    from pyterrier_sparse_eval.measures._sdm import correctable, corrected, rows_view

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_pool_arguments(parser, seeds=6, designs=["uniform"])
    parser.add_argument("--systems", nargs="+", default=["MiniLM-L6 (dense)", "BM25 k1=1.2 b=0.75"])
    parser.add_argument(
        "--rounds", type=positive_int, default=100, help="bootstrap rounds per pool and system"
    )
    parser.add_argument(
        "--noise-correction", action="store_true", help="sdm.evaluate(..., noise_correction=True)'s estimates"
    )
    add_csv_arguments(parser, "coverage.csv")
    args = parser.parse_args()
    if args.from_csv is not None:
        report(pd.concat([pd.read_csv(f) for f in args.from_csv]))
        return
    st = open_study(parser, args)
    out = args.output or args.work / "coverage.csv"
    out.unlink(missing_ok=True)
    pool_run, all_docnos = st.full_run["BM25 (pooling)"], st.index["BM25 (pooling)"].docnos
    measures = correctable(K_VALUES)
    for budget in args.budgets:
        depth, designs = pool_designs(budget, st, pool_run, all_docnos)
        for design in args.designs:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                pool = study.make_pool(st.qrels, pool_run, all_docnos, depth, seed, designs[design])
                for name in args.systems:
                    run = study.run_over_pool(
                        pool, name, st.sparse, st.index, st.dense, st.topics, args.work / f"pool-{args.size}"
                    )
                    j, samples = judged_with_backgrounds(run, st.qrels, pool)
                    qids = j.qids.tolist()
                    p = rows_view(j, models_for(j, samples, "auto"), args.noise_correction)
                    est = {str(m.standard()): corrected(m, j, p, pool.n_unseen).mean() for m in measures}
                    rng = np.random.default_rng(seed)
                    draws: dict[str, list[float]] = {key: [] for key in est}
                    for _ in range(args.rounds):
                        again = [samples.get(q, _UNRETRIEVED).resample(rng).fit("auto") for q in qids]
                        p_again = rows_view(j, again, args.noise_correction, warn=False)
                        for m in measures:
                            draws[str(m.standard())].append(corrected(m, j, p_again, pool.n_unseen).mean())
                    rows = []
                    for key, values in draws.items():
                        v = np.array(values)
                        lo, hi = np.percentile(v, [2.5, 97.5])
                        rows.append(
                            {
                                "budget": budget,
                                "design": design,
                                "seed": seed,
                                "system": name,
                                "measure": key,
                                "est": est[key],
                                "full": st.full[name][key],
                                "lo": lo,
                                "hi": hi,
                                "mean": v.mean(),
                                "sd": v.std(ddof=1),
                            }
                        )
                    pd.DataFrame(rows).to_csv(out, mode="a", header=not out.exists(), index=False)
                    print(f"{budget:g} {design} seed {seed} {name} done", flush=True)
    report(pd.read_csv(out))


def report(t: pd.DataFrame) -> None:
    """Per budget, design, system and measure over the pools: each interval's coverage, and the error next to
    the bias and spread the bootstrap sees (x 1000)."""
    t = t.assign(
        percentile=(t["lo"] <= t["full"]) & (t["full"] <= t["hi"]),
        basic=(2 * t["est"] - t["hi"] <= t["full"]) & (t["full"] <= 2 * t["est"] - t["lo"]),
        error=(t["est"] - t["full"]) * 1000,
        boot_bias=(t["mean"] - t["est"]) * 1000,
        boot_sd=t["sd"] * 1000,
    )
    cells = t.groupby(["budget", "design", "system", "measure"], sort=False)
    table = cells[["percentile", "basic", "error", "boot_bias", "boot_sd"]].mean()
    table[["percentile", "basic"]] = (table[["percentile", "basic"]] * 100).round(0)
    print(f"over {t['seed'].nunique()} pools per cell; coverage in %, the rest x 1000")
    print(table.round(1).to_string())


if __name__ == "__main__":
    main()
