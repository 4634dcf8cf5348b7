"""SDM's cost at a realistic query load: the pooled evaluation, SDM alone, its bootstrap, the covariate, the
reference estimator and a stratified pool, side by side.

    python benchmarks/bench_sdm_speed.py                       # 7,000 queries (MS MARCO dev's size), 1M corpus
    python benchmarks/bench_sdm_speed.py --queries 1000 --no-write

The workload is synthetic, shaped like a passage-retrieval evaluation: N documents, Q queries with one or two
relevant documents each, a pooling run 1,000 deep per query (BM25-like right-skewed scores: a gamma
background whose scale varies by query), and two pools of the judged documents, the pooling run's top
``--depth`` and a sample of ``--sample`` documents (1% of the corpus by default; with 7,000 queries the pool is
about 9% of the corpus, their top 10s and relevant documents included): uniform, or stratified (half of
it from the documents the pooling run ranks in some query's top 100, the design recommended at this scale). The
evaluated system's run is 1,000 deep per query over each pool, scored from the same kind of background with each relevant document shifted up by
6-14 times the query's scale (so that its full-corpus rank ranges from the top 10 to beyond 1,000).
What the times depend on is the number of queries, the run's depth and the sample size; the scores' shape
matters only to the fits and the reference's bisection (how many steps they take). Values are checked, not timed:
SDM's estimate must lie between 0 and the pooled value (R@k cannot rise when documents are added), and the pooled
value must equal ``pse.evaluate``'s. Since every non-relevant score is a gamma draw by construction, the full
corpus's expected R@k is known exactly (:func:`expected_recall`) and printed beside the estimates; with a uniform
sample, R@10 is the design's weak cell (README, "SDM"), so the table is not an accuracy study
(``bench_sdm_scale.py`` is).

Each line is timed once in the same process (the first ``sdm.evaluate`` also warms caches, so it runs once
untimed first). *x pooled*: time over the pooled evaluation's (``pse.evaluate`` of the same run: R@k and nDCG@k
for the same cut-offs).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, today, write_section  # noqa: E402

K_VALUES = (10, 100, 1000)


def make_corpus(n_docs: int, n_queries: int, seed: int = 0):
    """(qrels, pooling run, every docno, each query's background scale)."""
    rng = np.random.default_rng(seed)
    docnos = np.array([f"d{i}" for i in range(n_docs)])
    qids = np.array([f"q{i}" for i in range(n_queries)])
    n_rel = rng.integers(1, 3, size=n_queries)
    rel_docs = rng.choice(n_docs, int(n_rel.sum()), replace=False)
    qrels = pd.DataFrame({"qid": np.repeat(qids, n_rel), "docno": docnos[rel_docs], "label": 1})
    scale = rng.uniform(0.5, 2.0, size=n_queries)
    # the pooling run: 1,000 documents per query, the relevant ones among them at boosted scores
    picks = rng.integers(0, n_docs, size=(n_queries, 1000))
    starts = np.concatenate([[0], np.cumsum(n_rel)[:-1]])
    for q in range(n_queries):
        picks[q, : n_rel[q]] = rel_docs[starts[q] : starts[q] + n_rel[q]]
    scores = rng.gamma(2.0, size=(n_queries, 1000)) * scale[:, None]
    scores[:, :2] += rng.uniform(6.0, 14.0, size=(n_queries, 2)) * scale[:, None]
    pooling = pd.DataFrame(
        {"qid": np.repeat(qids, 1000), "docno": docnos[picks.ravel()], "score": scores.ravel()}
    ).drop_duplicates(["qid", "docno"])
    return qrels, pooling, docnos, dict(zip(qids, scale))


def run_over(pool, qrels: pd.DataFrame, scale: dict[str, float], seed: int = 1) -> pd.DataFrame:
    """The evaluated system's run over the pool, 1,000 deep per query."""
    rng = np.random.default_rng(seed)
    in_pool = np.array(sorted(pool.docno_set))
    relevant = qrels.groupby("qid")["docno"].apply(set).to_dict()
    parts = []
    for qid, sc in scale.items():
        s = rng.gamma(2.0, size=len(in_pool)) * sc
        mine = np.isin(in_pool, list(relevant[qid]))
        s[mine] += rng.uniform(6.0, 14.0, size=int(mine.sum())) * sc
        top = np.argpartition(-s, 1000)[:1000]
        parts.append(pd.DataFrame({"qid": qid, "docno": in_pool[top], "score": s[top]}))
    return pd.concat(parts, ignore_index=True)


def expected_recall(
    run: pd.DataFrame, qrels: pd.DataFrame, pool, scale: dict[str, float]
) -> dict[int, float]:
    """The full corpus's expected R@k, known here: every non-relevant document outside the pool scores a
    gamma(2) times the query's scale, so a relevant row at pooled rank r (0-based) with score s is in the full
    top k with probability P(r + Binomial(N_unseen, p) < k), p = P(gamma(2) * scale >= s)."""
    from scipy import stats

    ranked = run.sort_values(["qid", "score"], ascending=[True, False]).copy()
    ranked["rank"] = ranked.groupby("qid").cumcount()
    rel = ranked.merge(qrels[qrels["label"] > 0], on=["qid", "docno"])
    p = stats.gamma.sf(rel["score"].to_numpy() / rel["qid"].map(scale).to_numpy(), 2.0)
    n_rel = qrels[qrels["label"] > 0].groupby("qid").size()
    out = {}
    for k in K_VALUES:
        room = k - 1 - rel["rank"].to_numpy()
        hit = np.where(room >= 0, stats.binom.cdf(np.maximum(room, 0), pool.n_unseen, p), 0.0)
        per_query = pd.Series(hit).groupby(rel["qid"].to_numpy()).sum() / n_rel
        out[k] = float(per_query.reindex(n_rel.index, fill_value=0.0).mean())
    return out


def main() -> None:
    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument(
        "--depth", type=int, default=10, help="pool depth: the pooling run's top documents per query"
    )
    ap.add_argument("--sample", type=int, default=10_000, help="background sample (1%% of 1M)")
    ap.add_argument("--bootstrap", type=int, default=20, help="bootstrap rounds timed (cost grows linearly)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    qrels, pooling, docnos, scale = make_corpus(args.docs, args.queries)
    tail = args.sample // 2
    pools = {
        "uniform": sdm.build_pool(qrels, [pooling], all_docnos=docnos, depth=args.depth, sample=args.sample),
        "stratified": sdm.build_pool(
            qrels,
            [pooling],
            all_docnos=docnos,
            depth=args.depth,
            sample=args.sample - tail,
            tail_sample=tail,
            tail_depth=100,
        ),
    }
    runs = {design: run_over(pool, qrels, scale) for design, pool in pools.items()}
    run, pool = runs["uniform"], pools["uniform"]
    print(
        f"data in {time.perf_counter() - t0:.0f} s: runs of {len(run):,} rows, pools of {pool.size:,} documents "
        f"({pool.fraction:.1%}), qrels {len(qrels):,} rows",
        flush=True,
    )
    measures = [f"R@{k}" for k in K_VALUES] + [f"nDCG@{k}" for k in K_VALUES]
    sdm.evaluate(run, qrels, pool, K_VALUES, verbose=False)  # warm-up, untimed
    lines: list[tuple[str, float]] = []

    def timed(name: str, fn: Any) -> Any:
        t = time.perf_counter()
        out = fn()
        lines.append((name, time.perf_counter() - t))
        print(f"{name}: {lines[-1][1]:.1f} s", flush=True)
        return out

    pooled = timed(
        "pooled R@k and nDCG@k (pse.evaluate)",
        lambda: pse.evaluate(run, qrels, measures, warn=False).aggregate,
    )
    alone = timed("SDM alone (sdm.evaluate)", lambda: sdm.evaluate(run, qrels, pool, K_VALUES, verbose=False))
    timed(
        f"SDM alone, {args.bootstrap} bootstrap rounds",
        lambda: sdm.evaluate(run, qrels, pool, K_VALUES, bootstrap=args.bootstrap, verbose=False),
    )
    covariate = timed(
        "SDM with the covariate (the pooling run, 1,000 deep)",
        lambda: sdm.evaluate(run, qrels, pool, K_VALUES, covariate=pooling, verbose=False),
    )
    timed(
        f"the covariate, {args.bootstrap} bootstrap rounds",
        lambda: sdm.evaluate(
            run, qrels, pool, K_VALUES, covariate=pooling, bootstrap=args.bootstrap, verbose=False
        ),
    )

    def reference_estimates() -> dict[int, dict[str, float]]:
        models = sdm.fit_run_backgrounds(run, pool, "skewnorm")  # fitted once for the three cut-offs
        return {k: sdm.threshold_recall(run, qrels, pool, k, models=models) for k in K_VALUES}

    reference = timed(
        "the reference estimator (skew-normal fits, then sdm.threshold_recall at each k)", reference_estimates
    )
    s_run, s_pool = runs["stratified"], pools["stratified"]
    stratified = timed(
        "SDM alone, stratified pool (weighted fits)",
        lambda: sdm.evaluate(s_run, qrels, s_pool, K_VALUES, verbose=False),
    )
    timed(
        f"SDM alone, stratified pool, {args.bootstrap} bootstrap rounds",
        lambda: sdm.evaluate(s_run, qrels, s_pool, K_VALUES, bootstrap=args.bootstrap, verbose=False),
    )
    agg = alone["aggregate"]
    for k in K_VALUES:
        est, pool_value = agg[f"R@{k}"]["sdm"], agg[f"R@{k}"]["pooled"]
        assert 0.0 <= est <= pool_value + 1e-12, (k, est, pool_value)
        assert abs(pool_value - pooled[f"R@{k}"]) < 1e-12
    ref_means = {k: float(np.mean(list(v.values()))) for k, v in reference.items()}
    base = lines[0][1]
    out = [
        f"## SDM at a realistic query load ({today()})",
        "",
        f"`{command_line()}` on {machine_facts()}. Synthetic (see the script's docstring): {args.docs:,} documents,"
        f" {args.queries:,} queries, {len(qrels):,} relevant documents, runs of {len(run):,} rows over pools of"
        f" {pool.size:,} documents ({pool.fraction:.1%}): the pooling run's top {args.depth} and a sample of"
        f" {args.sample:,}, uniform, or stratified ({tail:,} of them from the pooling run's top 100);"
        f" cut-offs {', '.join(map(str, K_VALUES))}; each line timed once.",
        "",
        "| evaluation | seconds | x pooled |",
        "|---|---:|---:|",
    ]
    out += [f"| {name} | {t:.1f} | {t / base:.1f}x |" for name, t in lines]
    truth = {design: expected_recall(runs[design], qrels, pools[design], scale) for design in runs}
    cov, strat = covariate["aggregate"], stratified["aggregate"]
    out += [
        "",
        "R@k against the full corpus's expectation, known here since every non-relevant score is a gamma draw by"
        " construction. A sanity check, not an accuracy study (that is `bench_sdm_scale.py`): the system's scores"
        " are drawn independently of the pooling run's, so neither the stratified sample nor the covariate can"
        " help it here, as they do for systems that agree with the pooling run.",
        "",
        "| measure | pooled | SDM alone | covariate | reference | full (expected) | stratified: pooled | SDM alone"
        " | full (expected) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    out += [
        f"| R@{k} | {agg[f'R@{k}']['pooled']:.4f} | {agg[f'R@{k}']['sdm']:.4f} | {cov[f'R@{k}']['sdm']:.4f} |"
        f" {ref_means[k]:.4f} | {truth['uniform'][k]:.4f} | {strat[f'R@{k}']['pooled']:.4f} |"
        f" {strat[f'R@{k}']['sdm']:.4f} | {truth['stratified'][k]:.4f} |"
        for k in K_VALUES
    ]
    report = "\n".join(out)
    print(report)
    if not args.no_write:
        write_section("sdm-speed", report)


if __name__ == "__main__":
    main()
