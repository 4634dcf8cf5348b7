"""SDM's cost at a realistic query load: the pooled evaluation, SDM alone, its bootstrap and its noise correction,
the covariate, the reference estimator and a stratified pool, side by side.

    python benchmarks/bench_sdm_speed.py                       # 7,000 queries (MS MARCO dev's size), 1M corpus
    python benchmarks/bench_sdm_speed.py --queries 1000 --no-write

``pt.Experiment`` lines: the six measures as ``sdm.SDM_R`` / ``sdm.SDM_nDCG`` in one experiment (one system, the
run as a transformer), the way most users call SDM; their values must equal ``sdm.evaluate``'s.

The workload is synthetic, shaped like a passage-retrieval evaluation: N documents, Q queries with one or two
relevant documents each, a pooling run listing 1,000 documents per query (BM25-like right-skewed scores: the top
of a gamma background whose scale varies by query), and two pools of the judged documents, the pooling run's top
``--depth`` and a sample of ``--sample`` documents (1% of the corpus by default; with 7,000 queries the pool is
about 9% of the corpus, their top 10s and relevant documents included): uniform, or stratified (half of it from
the documents the pooling run ranks in some query's top 100, the design recommended at this scale). The evaluated
system's run is 1,000 deep per query over each pool; it agrees with the pooling run on the documents that run
lists, up to noise, and scores the rest from the gamma background (:func:`make_corpus`). What the times depend on
is the number of queries, the run's depth and the sample size; the scores' shape matters to the fits and the
reference's bisection (how many steps they take). Values are checked, not timed: SDM's estimate must lie between 0
and the pooled value (R@k cannot rise when documents are added), and the pooled value must equal
``pse.evaluate``'s. The full corpus's expected R@k is known by construction (:func:`expected_recall`) and printed
beside the estimates, with the number of queries the covariate's model is fitted for.

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
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402

from pyterrier_sparse_eval._sample import in_set  # noqa: E402

K_VALUES = (10, 100, 1000)


SHIFT = (6.0, 14.0)  # a relevant document's score: the background's plus this many times the query's scale


def make_corpus(n_docs: int, n_queries: int, seed: int = 0, shift: tuple[float, float] = SHIFT):
    """(qrels, pooling run, every docno, each query's background scale, each query's listed documents).

    Per query q with scale c: the pooling run lists its relevant documents (score c * (gamma(2) + U(shift))) and
    1,000 other documents drawn at random, scored as the top of N gamma(2) draws would be (c times the gamma's
    quantile at a uniform share of the top 1,000 / N). The evaluated system agrees with the pooling run on those
    listed documents, up to noise: its score for one is the pooling score + c * N(0, 1). Every other
    non-relevant document scores c * gamma(2) for the system, drawn afresh; a relevant one c * (gamma(2) +
    U(shift)). ``listed[qid]``: the listed non-relevant docnos and the system's scores for them.
    """
    from scipy import stats

    rng = np.random.default_rng(seed)
    docnos = np.array([f"d{i}" for i in range(n_docs)])
    qids = np.array([f"q{i}" for i in range(n_queries)])
    n_rel = rng.integers(1, 3, size=n_queries)
    rel_docs = rng.choice(n_docs, int(n_rel.sum()), replace=False)
    qrels = pd.DataFrame({"qid": np.repeat(qids, n_rel), "docno": docnos[rel_docs], "label": 1})
    scale = rng.uniform(0.5, 2.0, size=n_queries)
    relevant = np.sort(rel_docs)
    frames, listed = [], {}
    starts = np.concatenate([[0], np.cumsum(n_rel)[:-1]])
    for q, qid in enumerate(qids):
        c, mine = scale[q], rel_docs[starts[q] : starts[q] + n_rel[q]]
        others = np.unique(rng.integers(0, n_docs, size=1000))
        others = others[~np.isin(others, relevant)]
        top = c * stats.gamma.isf(rng.uniform(0, min(1000 / n_docs, 1.0), size=len(others)), 2.0)
        rel_scores = c * (rng.gamma(2.0, size=len(mine)) + rng.uniform(*shift, size=len(mine)))
        frames.append(
            pd.DataFrame(
                {
                    "qid": qid,
                    "docno": docnos[np.concatenate([mine, others])],
                    "score": np.concatenate([rel_scores, top]),
                }
            )
        )
        listed[qid] = (docnos[others], top + c * rng.normal(size=len(others)))
    pooling = pd.concat(frames, ignore_index=True)
    return qrels, pooling, docnos, dict(zip(qids, scale)), listed


def run_over(
    pool, qrels: pd.DataFrame, scale: dict[str, float], listed: dict, seed: int = 1, shift: tuple = SHIFT
) -> pd.DataFrame:
    """The evaluated system's run over the pool, 1,000 deep per query (scores as :func:`make_corpus` says)."""
    rng = np.random.default_rng(seed)
    in_pool = np.array(sorted(pool.docno_set))
    relevant = qrels.groupby("qid")["docno"].apply(set).to_dict()
    parts = []
    for qid, c in scale.items():
        s = rng.gamma(2.0, size=len(in_pool)) * c
        mine = np.isin(in_pool, list(relevant[qid]))
        s[mine] += rng.uniform(*shift, size=int(mine.sum())) * c
        names, scores = listed[qid]
        at = np.searchsorted(in_pool, names)
        found = (at < len(in_pool)) & (in_pool[np.minimum(at, len(in_pool) - 1)] == names)
        s[at[found]] = scores[found]
        top = np.argpartition(-s, 1000)[:1000]
        parts.append(pd.DataFrame({"qid": qid, "docno": in_pool[top], "score": s[top]}))
    return pd.concat(parts, ignore_index=True)


def expected_recall(
    run: pd.DataFrame, qrels: pd.DataFrame, pool, scale: dict[str, float], listed: dict
) -> dict[int, float]:
    """The full corpus's expected R@k, known here. Outside the pool, query q's listed documents have known
    system scores (C(s) of them score >= s) and the other unseen documents score c * gamma(2), so a relevant
    row at pooled rank r (0-based) with score s is in the full top k with probability
    P(r + C(s) + Binomial(N_unseen - L_q, p) < k), p = P(c * gamma(2) >= s), L_q the unseen listed documents."""
    from scipy import stats

    ranked = run.sort_values(["qid", "score"], ascending=[True, False]).copy()
    ranked["rank"] = ranked.groupby("qid").cumcount()
    rel = ranked.merge(qrels[qrels["label"] > 0], on=["qid", "docno"])
    qid = rel["qid"].to_numpy()
    score = rel["score"].to_numpy()
    p = stats.gamma.sf(score / rel["qid"].map(scale).to_numpy(), 2.0)
    # per query, the system's scores of its listed documents outside the pool, sorted
    queries = list(listed)
    names = pd.Series(np.concatenate([listed[q][0] for q in queries]))
    outside = np.split(~in_set(names, pool.docno_set), np.cumsum([len(listed[q][0]) for q in queries])[:-1])
    unseen_of = {q: np.sort(listed[q][1][out]) for q, out in zip(queries, outside)}
    n_listed = np.array([len(unseen_of[q]) for q in qid], dtype=np.float64)
    above = n_listed - np.array([np.searchsorted(unseen_of[q], sc, side="left") for q, sc in zip(qid, score)])
    n_rel = qrels[qrels["label"] > 0].groupby("qid").size()
    out = {}
    for k in K_VALUES:
        room = k - 1 - rel["rank"].to_numpy() - above
        hit = np.where(room >= 0, stats.binom.cdf(np.maximum(room, 0), pool.n_unseen - n_listed, p), 0.0)
        per_query = pd.Series(hit).groupby(qid).sum() / n_rel
        out[k] = float(per_query.reindex(n_rel.index, fill_value=0.0).mean())
    return out


def covariate_fits(run: pd.DataFrame, pooling: pd.DataFrame, pool) -> int:
    """Queries whose run retrieves at least MIN_FIT sampled documents of the pooling run's ranking: those the
    covariate's model is fitted for (the others keep SDM's background)."""
    from pyterrier_sparse_eval._covariate import MIN_FIT

    sampled = set(pool.sample) | set(pool.tail)
    both = run.merge(pooling[["qid", "docno"]], on=["qid", "docno"])
    both = both[both["docno"].isin(sampled)]
    return int((both.groupby("qid").size() >= MIN_FIT).sum())


def main() -> None:
    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=positive_int, default=7000)
    ap.add_argument("--docs", type=positive_int, default=1_000_000)
    ap.add_argument(
        "--depth", type=positive_int, default=10, help="pool depth: the pooling run's top documents per query"
    )
    ap.add_argument("--sample", type=positive_int, default=10_000, help="background sample (1%% of 1M)")
    ap.add_argument("--bootstrap", type=int, default=20, help="bootstrap rounds timed (cost grows linearly)")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    qrels, pooling, docnos, scale, listed = make_corpus(args.docs, args.queries)
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
    runs = {design: run_over(pool, qrels, scale, listed) for design, pool in pools.items()}
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
    timed(
        "SDM alone, noise_correction=True",
        lambda: sdm.evaluate(run, qrels, pool, K_VALUES, noise_correction=True, verbose=False),
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

    import pyterrier as pt

    topics = pd.DataFrame({"qid": pd.unique(run["qid"]), "query": "x"})
    system, cov = pt.Transformer.from_df(run), sdm.Covariate.from_run(pooling, pool)

    def experiment(**params: Any) -> pd.DataFrame:
        """The six measures (R@k and nDCG@k at each k) as SDM measures in one pt.Experiment."""
        measures = [m(pool=pool, **params) @ k for m in (sdm.SDM_R, sdm.SDM_nDCG) for k in K_VALUES]
        return pt.Experiment([system], topics, qrels, measures, names=["system"])

    in_experiment = {
        "alone": timed("SDM alone, its six measures in pt.Experiment", experiment),
        "covariate": timed(
            "the covariate, its six measures in pt.Experiment", lambda: experiment(covariate=cov)
        ),
    }

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
    for label, table in in_experiment.items():  # the same values as sdm.evaluate's
        direct = (alone if label == "alone" else covariate)["aggregate"]
        for m in (m for m in table.columns if m.startswith("SDM_")):
            k = int(m.rsplit("@", 1)[1])
            got, want = table[m].iloc[0], direct[f"{'R' if m.startswith('SDM_R(') else 'nDCG'}@{k}"]["sdm"]
            assert abs(got - want) < 1e-9, (label, m, got, want)
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
    truth = {design: expected_recall(runs[design], qrels, pools[design], scale, listed) for design in runs}
    fitted = covariate_fits(run, pooling, pool)
    cov, strat = covariate["aggregate"], stratified["aggregate"]
    out += [
        "",
        "R@k against the full corpus's expectation, known here by construction (the script's `expected_recall`)."
        " A sanity check of one synthetic draw, not an accuracy study (that is `bench_sdm_scale.py`). The system"
        " agrees with the pooling run on the documents it lists (up to noise); the covariate's model is fitted"
        f" for {fitted:,} of the {args.queries:,} queries (at least 3 sampled documents in both rankings). A"
        f" uniform sample of {args.sample / args.docs:.1%} holds few of the documents above a system's top 10, so R@10"
        " is where the uniform"
        ' pool\'s estimates are furthest off (README, "SDM").',
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
