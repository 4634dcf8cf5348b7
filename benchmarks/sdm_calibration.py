"""The covariate's calibration per query (the package's) against calibrations pooled over queries.

``sdm.evaluate(..., covariate=pooling_run)`` calibrates each query's count of unseen top documents scoring >= s on
its own sample (GREG: the line's count M(s) plus the Horvitz-Thompson estimate E(s) of its error; see
``_covariate``). At the scores of a query's top relevant documents E(s) rests on the rare sampled document above
s, so one query's count is noisy, and nDCG@k, convex in the count, is overstated by the noise alone. This study
measures two ways of pooling the calibration over the evaluated queries, each row's count becoming
M(s) * sum(M + E) / sum(M) (the ratio at most 10):

- *banded*: the sums over the rows in the same band of the line's tail share M(s) / U_T ([0, 0.001), [0.001,
  0.01), [0.01, 0.1), [0.1, 1]);
- *single*: the sums over all rows;
- *ranked*: the sums over the rows whose relevant document the pooling run ranks in the same band of its full
  ranking ([0, 3), [3, 10), [10, 100), 100 or lower or unranked).

*banded* chooses the band from M(s), which the sample also sets, so a band's total is no longer design-unbiased
(a query whose sample holds no document near s gets a small M(s) and no error to add); *single* and *ranked*
have no such selection (the pooling run's ranking does not depend on the sample), *single* one ratio for every
depth. Corpus: ``bench_sdm_scale``'s (SciFact alone, or plus synthetic
distractors), pooling run BM25 k1=0.9 b=0.4, the same pools, designs and systems; *closed* = 1 - mean |estimate
- full| / mean |pooled - full| over the pools (seeds); printed, minimum and median over systems and R@k / nDCG@k.

    python benchmarks/sdm_calibration.py                       # SciFact alone, 15% and 30% pools, 5 seeds
    python benchmarks/sdm_calibration.py --size 100000 --budgets 0.01 0.02 0.05 --seeds 1
    python benchmarks/sdm_calibration.py --modes per-query --top-share 0.5     # the line on another share of the top

``--top-share`` sets the share of each query's sampled top-D documents (those of highest pooling score) its line
is fitted on (``_covariate.TOP_SHARE``; 1: all of them, as before the line moved to the top).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import signal, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from semisynthetic import iter_corpus, real_docs, use_shared_data, write_corpus  # noqa: E402

K_VALUES = (10, 100, 1000)
BANDS = np.array([1e-3, 1e-2, 1e-1])
RANK_BANDS = np.array([3, 10, 100])
MODES = ("per-query", "banded", "single", "ranked")
MAX_RATIO = 10.0


def pooling_ranks(run: pd.DataFrame, qrels: pd.DataFrame, pool_run: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per query, the pooling run's rank (1000: unranked) of each relevant document the system retrieved, in the
    system's order (trec_eval's: score as ranked, in single precision, descending, then docno descending)."""
    rank_of = {
        str(q): dict(zip(g.sort_values("score", ascending=False)["docno"].astype(str), range(len(g))))
        for q, g in pool_run.groupby("qid")
    }
    relevant = set(
        zip(
            qrels.loc[qrels["label"] > 0, "qid"].astype(str),
            qrels.loc[qrels["label"] > 0, "docno"].astype(str),
        )
    )
    frame = pd.DataFrame({"qid": run["qid"].astype(str), "docno": run["docno"].astype(str)})
    frame["score"] = run["score"].to_numpy().astype(np.float32)
    frame = frame[[key in relevant for key in zip(frame["qid"], frame["docno"])]]
    frame = frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
    return {
        q: np.array([rank_of.get(q, {}).get(d, 1000) for d in g["docno"]])
        for q, g in frame.groupby("qid", sort=False)
    }


def pooled_above(kind: str, ranks: dict[str, np.ndarray]):
    """A replacement for ``_covariate._above`` whose calibration is pooled over queries (``kind``: the bands)."""
    from pyterrier_sparse_eval import _covariate

    def above(j, parts, family, width):
        rows_all = np.flatnonzero((j.label > 0) & (j.rank < width))
        groups = j.group[rows_all]
        qids = j.qids.tolist()
        at_of = {int(g): np.flatnonzero(groups == g) for g in np.unique(groups)}
        score = {g: j.score[rows_all[at]].astype(np.float64) for g, at in at_of.items()}
        line = {g: fit.terms(score[g]) for g in at_of if (fit := parts[qids[g]].top) is not None}
        band = {}
        for g, (p, _) in line.items():
            if kind == "banded":
                band[g] = np.searchsorted(BANDS, p.sum(1) / p.shape[1], side="right")
            elif kind == "ranked":  # the relevant rows (rank < width) come first, in the system's order
                band[g] = np.searchsorted(RANK_BANDS, ranks[qids[g]][: len(at_of[g])], side="right")
            else:
                band[g] = np.zeros(len(p), dtype=int)
        total, model = np.zeros(len(BANDS) + 1), np.zeros(len(BANDS) + 1)
        for g, (p, e) in line.items():
            np.add.at(total, band[g], p.sum(1) + e)
            np.add.at(model, band[g], p.sum(1))
        ratio = np.clip(np.divide(total, model, out=np.ones_like(total), where=model > 0), 0.0, MAX_RATIO)
        pmf = np.zeros((len(rows_all), width))
        m = np.arange(width)
        for g, at in at_of.items():
            part = parts[qids[g]]
            rest_model = part.fit_rest(family)
            p_rest = np.clip(rest_model.sf(score[g]), 0, 1) if rest_model is not None else np.zeros(len(at))
            p_rest[p_rest < 1e-280] = 0.0
            rest = stats.binom.pmf(m[None, :], part.n_rest, p_rest[:, None])
            if g not in line:
                pmf[at] = rest
                continue
            p = line[g][0]
            count = np.clip(p.sum(1) * ratio[band[g]], 0.0, p.shape[1])
            top = _covariate._poisson_binomial(_covariate.scaled_to(p, count), width)
            pmf[at] = np.clip(signal.fftconvolve(top, rest, axes=1)[:, :width], 0.0, 1.0)
        return _covariate.UnseenAbove(rows_all, pmf)

    return above


@contextlib.contextmanager
def calibration(mode: str, ranks: dict[str, np.ndarray]):
    from pyterrier_sparse_eval import _covariate

    keep = _covariate._above
    if mode != "per-query":
        _covariate._above = pooled_above(mode, ranks)
    try:
        yield
    finally:
        _covariate._above = keep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="irds:beir/scifact/test")
    parser.add_argument(
        "--size", type=int, default=0, help="synthetic distractors (0: the real corpus alone)"
    )
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.15, 0.3])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-calibration"))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--top-share",
        type=float,
        help="share of a query's sampled top-D documents, those of highest pooling score, its line is fitted on "
        "(default: the package's _covariate.TOP_SHARE; 1: all of them)",
    )
    args = parser.parse_args()
    if args.top_share is not None:
        if not 0 < args.top_share <= 1:
            parser.error("--top-share must be in (0, 1]")
        from pyterrier_sparse_eval import _covariate

        _covariate.TOP_SHARE = args.top_share
    args.work.mkdir(parents=True, exist_ok=True)
    use_shared_data(args.work)

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm

    ds = pse.datasets.load_dataset(args.dataset)
    topics = pse.datasets.align_topics_qrels(
        pse.datasets.get_topics(ds, verbose=False), qrels := pse.datasets.get_qrels(ds)
    )
    qids = [str(q) for q in topics["qid"]]
    docs = real_docs(args.dataset)
    corpus = write_corpus(docs, args.size, args.work / f"corpus-{args.size}.tsv", seed=0)
    n_total = len(docs) + args.size
    sparse = study.systems(with_splade=n_total <= 10_000)
    index, full_run = {}, {}
    for name, (enc, retr) in sparse.items():
        index[name] = pse.SparseIndex(args.work / f"index-{args.size}-{pse.files.slug(name)}")
        if not index[name].built():
            enc.indexer(index[name], verbose=False).index(iter_corpus(corpus))
        full_run[name] = retr(index[name], 1000).transform(topics)
    dense = study.Dense(corpus, args.work / f"dense-{args.size}.npz") if n_total <= 10_000 else None
    if dense:
        full_run["MiniLM-L6 (dense)"] = dense.run(topics, 1000)
    full = {}
    for name, run in full_run.items():
        values = pse.measures.evaluate(
            run, qrels, [f"{m}@{k}" for k in K_VALUES for m in ("R", "nDCG")], warn=False
        )
        full[name] = {
            key: float(np.mean([values.per_query[key].get(q, 0.0) for q in qids])) for key in values.per_query
        }
    pool_run, all_docnos = full_run["BM25 (pooling)"], index["BM25 (pooling)"].docnos
    rows = []
    for budget in args.budgets:
        total = int(budget * n_total)
        depth = int(np.clip(0.3 * total / len(topics), 1, 50))
        room = total - sdm.build_pool(qrels, [pool_run], all_docnos=all_docnos, depth=depth, sample=0).size
        designs = {
            "uniform": {"sample": room},
            "stratified": study.stratified_design(room, depth, n_total, len(topics)),
        }
        for design, seed in itertools.product(designs, range(args.seeds)):
            pool = study.make_pool(qrels, pool_run, all_docnos, depth, seed, designs[design])
            covariate = sdm.Covariate.from_run(pool_run, pool)
            for name in full_run:
                run = study.run_over_pool(
                    pool, name, sparse, index, dense, topics, args.work / f"pool-{args.size}"
                )
                ranks = pooling_ranks(run, qrels, pool_run)
                for mode in args.modes:
                    with calibration(mode, ranks):
                        est = sdm.evaluate(run, qrels, pool, K_VALUES, covariate=covariate)["aggregate"]
                    for key, v in est.items():
                        rows.append(
                            (budget, design, seed, name, key, mode, v["pooled"], v["sdm"], full[name][key])
                        )
            print(f"pool {pool.fraction:.2%} {design} seed {seed} done", flush=True)
    table = pd.DataFrame(
        rows, columns=["budget", "design", "seed", "system", "measure", "mode", "pooled", "est", "full"]
    )
    table.to_csv(args.work / f"calibration-{args.size}.csv", index=False)

    def closed(x: pd.DataFrame) -> float:
        gap = (x["pooled"] - x["full"]).abs().mean()
        return 1 - (x["est"] - x["full"]).abs().mean() / gap if gap >= 0.01 else float("nan")

    cells = (
        table.groupby(["budget", "design", "mode", "system", "measure"])
        .apply(closed)
        .rename("closed")
        .reset_index()
    )
    cells["k"] = np.where(cells["measure"].str.endswith("@10"), "k = 10", "k >= 100")
    summary = cells.groupby(["budget", "design", "mode", "k"])["closed"].agg(["min", "median"]).unstack("k")
    print(
        f"{args.dataset} + {args.size} distractors, {args.seeds} pools per budget and design; share of the gap closed"
    )
    print(summary.round(2).to_string())


if __name__ == "__main__":
    main()
