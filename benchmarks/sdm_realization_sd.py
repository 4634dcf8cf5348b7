"""How far one corpus's full-corpus R@k may lie from SDM's expectation, under SDM's own model.

SDM takes the unseen documents of the corpus as draws from each query's background: a relevant row with pooled rank
a and survival p is in the full corpus's top k with probability P = P(Binomial(N_unseen, p) <= k - 1 - a) (with the
pooling run as covariate, the same probability from the covariate's count distribution). The full-corpus R@k of
the one corpus at hand is then itself random around the estimate, with variance sum_q sum_r P_r (1 - P_r) / (R_q^2
Q^2) (rows independent given the background). Its square root, the *realization SD*, is the part of an estimator's
error against one corpus that more pools of that corpus cannot average away, since every pool shares the corpus
(``sdm_realizations`` averages it away over bootstrap corpora instead). Printed per pool, x 1000, next to the full
value and each estimate, on ``bench_sdm_scale``'s corpus, pooling run and uniform pools:

    python benchmarks/sdm_realization_sd.py                    # SciFact, the dense model, 15% and 30%, 3 pools
    python benchmarks/sdm_realization_sd.py --size 1000000 --budgets 0.01 0.02 --seeds 2 \\
        --systems "BM25 k1=1.2 b=0.75" "BM25 no idf" --work /tmp/big      # the 1M corpus (built once in --work)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from sdm_calibration import add_pool_arguments, open_study, pool_designs  # noqa: E402

K_VALUES = (10, 100)


def realization(j, hit: np.ndarray) -> tuple[float, float]:
    """(mean R@k, realization SD of it) x 1000, from each row's probability ``hit`` of being in the top k."""
    hit = np.where(j.is_rel, hit, 0.0)
    rel = np.maximum(j.num_rel, 1)
    var = j.total(hit * (1 - hit)) / rel**2
    return 1000 * float(np.mean(j.total(hit) / rel)), 1000 * float(np.sqrt(var.sum())) / j.num_queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_pool_arguments(parser, seeds=3, designs=["uniform"])
    parser.add_argument("--systems", nargs="+", default=["MiniLM-L6 (dense)"], help="names as printed")
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-calibration"))
    args = parser.parse_args()
    from pyterrier_sparse_eval import sdm
    from pyterrier_sparse_eval._covariate import covariate_above
    from pyterrier_sparse_eval._pool import judged_with_backgrounds, models_for
    from pyterrier_sparse_eval.measures._sdm import _recall_hits, _unseen, survival_of_rows

    st = open_study(parser, args)
    pool_run, all_docnos = st.full_run["BM25 (pooling)"], st.index["BM25 (pooling)"].docnos
    print("pool, system, R@k: full | SDM (realization SD) | covariate (realization SD), all x 1000")
    for budget in args.budgets:
        depth, designs = pool_designs(budget, st, pool_run, all_docnos)
        for design in args.designs:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                pool = study.make_pool(st.qrels, pool_run, all_docnos, depth, seed, designs[design])
                covariate = sdm.Covariate.from_run(pool_run, pool)
                for name in args.systems:
                    run = study.run_over_pool(
                        pool, name, st.sparse, st.index, st.dense, st.topics, args.work / f"pool-{args.size}"
                    )
                    j, samples = judged_with_backgrounds(run, st.qrels, pool)
                    p = survival_of_rows(j, models_for(j, samples, "auto"))
                    n = _unseen(j, pool.n_unseen)[j.group]
                    jc, above, _ = covariate_above(run, st.qrels, pool, covariate, max(K_VALUES))
                    for k in K_VALUES:
                        alone = realization(j, _recall_hits(j, k, p, n))
                        cov = realization(jc, above.kept(jc, k, np.ones(k)))
                        print(
                            f"{pool.fraction:.2%} {design} seed {seed}, {name}, R@{k}: "
                            f"{1000 * st.full[name][f'R@{k}']:.1f} | {alone[0]:.1f} ({alone[1]:.2f}) | "
                            f"{cov[0]:.1f} ({cov[1]:.2f})",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
