"""SDM with the pooling run as a covariate (``_covariate``): the calibrated count of unseen top documents is
unbiased where the regression line is wrong, the pooling system itself is corrected exactly, nothing unseen gives
trec_eval, the Poisson-binomial is exact, and the measures inside pt.Experiment equal ``sdm.evaluate``."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import pytrec_eval
from conftest import bm25_single_and_sharded, needs_data
from helpers import simulated_pool_corpus, system_run_over_pool
from scipy import stats

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import _covariate, sdm
from pyterrier_sparse_eval._covariate import TOP_MIN, TOP_SHARE, _TopFit
from pyterrier_sparse_eval.cli import build_parser, main
from pyterrier_sparse_eval.measures._prepare import prepare
from pyterrier_sparse_eval.measures._sdm import (
    UnseenAbove,
    correctable,
    corrected,
    poisson_binomial,
    survival_of_rows,
)


def _pytrec(run, qrels, ks):
    names = {f"{m}_{k}" for k in ks for m in ("recall", "ndcg_cut")}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(zip(g.docno, g.label)) for q, g in qrels.groupby("qid")}, names
    )
    return evaluator.evaluate({q: dict(zip(g.docno, g.score.astype(float))) for q, g in run.groupby("qid")})


@pytest.mark.parametrize("stratified", [False, True])
def test_calibrated_count_is_unbiased_where_the_line_is_wrong(stratified):
    """A query's 1000 top documents: the system's score is quadratic in the pooling score, with noise growing
    with it, so the fitted line is wrong. Over 2000 samples of 80 (uniform, or 40 from the 200 highest pooling
    scores and 40 from the rest, with their weights), the calibrated count of unseen documents scoring >= t is
    on target, the line's own count far off (with the stratified sample, below the highest threshold)."""
    rng = np.random.default_rng(0)
    x = rng.lognormal(0.0, 0.5, 1000)
    y = 2 * x**2 + rng.normal(0.0, 0.3, 1000) * x
    thresholds = np.quantile(y, [0.99, 0.95, 0.8])
    order = np.argsort(-x)
    calibrated, line_only, truth = [], [], []
    for _ in range(2000):
        if stratified:
            picks = np.r_[
                rng.choice(order[:200], 40, replace=False), rng.choice(order[200:], 40, replace=False)
            ]
            w = np.r_[np.full(40, 160 / 40), np.full(40, 760 / 40)]
        else:
            picks, w = rng.choice(1000, 80, replace=False), np.ones(80)
        unseen = np.setdiff1d(np.arange(1000), picks)
        fit = _TopFit.fit(x[unseen], x[picks], y[picks], w)
        assert fit is not None
        true = np.array([np.sum(y[unseen] >= t) for t in thresholds])
        truth.append(true)
        calibrated.append(fit.probs(thresholds).sum(axis=1) - true)
        line_only.append(
            fit._share_at_least(thresholds[:, None] - fit.pred_unseen[None, :]).sum(axis=1) - true
        )
    calibrated, line_only = np.array(calibrated), np.array(line_only)
    se = calibrated.std(axis=0, ddof=1) / np.sqrt(len(calibrated))
    bias, line_bias = np.abs(calibrated.mean(axis=0)), np.abs(line_only.mean(axis=0))
    # on target: within 4 standard errors, or 1.5% of the count (the fitted line's O(1/n) bias in the
    # stratified case, where the weights are unequal)
    assert (bias < np.maximum(4 * se, 0.015 * np.mean(truth, axis=0))).all(), (bias, se)
    # what calibration is for: the line's own count is off, by 10% of the count and more, at every threshold
    # (but the highest in the stratified sample, whose 40 documents in the top 200 put the line, fitted on the
    # top half, close there)
    wrong = (line_bias > 10 * bias) & (line_bias > 0.1 * np.mean(truth, axis=0))
    assert wrong[1:].all() and (wrong[0] or stratified), line_bias


def test_poisson_binomial_equals_enumeration():
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 1, (4, 9))
    p[0, :3] = [0.0, 1.0, 1.0]
    p[1, :2] = 1.0
    p[2] = 0.0
    got = poisson_binomial(p, 7)
    for r in range(p.shape[0]):
        expected = np.zeros(10)
        for bits in itertools.product([0, 1], repeat=9):
            b = np.array(bits)
            expected[b.sum()] += np.prod(np.where(b == 1, p[r], 1 - p[r]))
        np.testing.assert_allclose(got[r], expected[:7], atol=1e-15)


def test_poisson_binomial_long_products():
    """Products long enough to go by FFT equal the one-factor-at-a-time recursion (P_m <- P_m (1 - p) +
    P_{m-1} p, the textbook dynamic programme, written out here) to 1e-14, at every width; no rows, no live
    factors and certain documents included."""

    def recursion(p: np.ndarray, width: int) -> np.ndarray:
        out = np.zeros((p.shape[0], width + p.shape[1] + 1))
        out[:, 0] = 1.0
        for i in range(p.shape[1]):
            q = p[:, i : i + 1]
            out[:, 1:] = out[:, 1:] * (1.0 - q) + out[:, :-1] * q
            out[:, :1] *= 1.0 - q
        return out[:, :width]

    rng = np.random.default_rng(4)
    for trial in range(60):
        rows, cols = int(rng.integers(1, 4)), int(rng.integers(0, 1200))
        width = int(rng.choice([1, 2, 10, 100, 1000]))
        p = rng.uniform(size=(rows, cols)) ** rng.uniform(0.2, 8.0)
        if cols > 5:
            p[:, : int(rng.integers(0, 4))] = 1.0
            p[0, 4] = 0.0
        got = poisson_binomial(p, width)
        np.testing.assert_allclose(
            got, recursion(p, width), rtol=0, atol=1e-14, err_msg=str((trial, cols, width))
        )
        assert got.min() >= 0.0
    assert poisson_binomial(np.zeros((0, 5)), 3).shape == (0, 3)
    np.testing.assert_array_equal(poisson_binomial(np.zeros((2, 0)), 3), [[1, 0, 0], [1, 0, 0]])
    # one live factor, or one beside a certain document, at widths 1 and 2
    np.testing.assert_allclose(
        poisson_binomial(np.array([[0.3, 0.0], [0.2, 0.4], [0.3, 1.0]]), 1), [[0.7], [0.48], [0]]
    )
    np.testing.assert_allclose(poisson_binomial(np.array([[0.3], [0.0]]), 2), [[0.7, 0.3], [1.0, 0.0]])
    # many rows whose live factors (0 < p < 1) number from none to all, at scattered places, some certain: the
    # rows are packed and grouped by that count, each row's result the recursion's on the row alone
    for trial in range(10):
        rows, cols, width = 60, int(rng.integers(1, 700)), int(rng.choice([5, 100, 1000]))
        p = rng.uniform(size=(rows, cols)) ** rng.uniform(0.2, 8.0)
        for r in range(rows):
            p[r, rng.permutation(cols)[: int(rng.integers(0, cols + 1))]] = 0.0
            p[r, rng.permutation(cols)[: int(rng.integers(0, 3))]] = 1.0
        got = poisson_binomial(p, width)
        expected = np.vstack([recursion(p[r : r + 1], width) for r in range(rows)])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14, err_msg=str((trial, cols, width)))


@pytest.mark.parametrize("chunk", [3, 12])
def test_rows_batched_across_queries_equal_each_query_alone(monkeypatch, chunk):
    """``_above`` computes every query's relevant rows in batches of rows (the rest's binomials, the top parts'
    Poisson-binomials padded to the batch's widest query, then their sum); each row equals the same distribution
    computed for its query alone. Each query has 5 relevant rows: batches of at most 12 rows hold two queries of
    different widths, batches of 3 are outgrown by every query (one query a batch)."""
    docnos, truth, first, qrels = simulated_pool_corpus(6000, 12, seed=21)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=400, seed=3)
    run = system_run_over_pool(pool, docnos, truth)
    # 1000 deep (a rest outside it), and one query left out (it keeps SDM's background alone); in it and in one
    # that keeps its line, the best relevant document scores far above anything (no rest document can score
    # above it: a point mass at 0, alone or under the top part's count)
    ranked = first.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(1000)
    alone, lined = ranked["qid"].unique()[:2]
    covariate = sdm.Covariate.from_run(ranked[ranked["qid"] != alone], pool)
    for qid in (alone, lined):
        relevant = run.merge(qrels[(qrels["qid"] == qid) & (qrels["label"] > 0)], on=["qid", "docno"])
        best = (run["qid"] == qid) & (run["docno"] == relevant.sort_values("score")["docno"].iloc[-1])
        run.loc[best, "score"] += 1e3
    monkeypatch.setattr(_covariate, "_CHUNK", chunk)
    batches: list[np.ndarray] = []
    monkeypatch.setattr(
        _covariate, "poisson_binomial", lambda p, w: batches.append(p) or poisson_binomial(p, w)
    )
    with pytest.warns(UserWarning, match="keep SDM's fitted background alone"):
        j, above, _ = _covariate.covariate_above(run, qrels, pool, covariate, 100)
    frame = _covariate.pooled_run(run, pool)
    parts = _covariate._parts(frame, j, pool, covariate)
    rows_all, groups = _covariate.relevant_groups(j, 100)
    np.testing.assert_array_equal(above.rows, rows_all)
    tops = 0
    for q, at, s in groups:
        rest = _covariate.rest_pmf(parts[q], "auto", s, 100)
        top = parts[q].top
        own = rest if top is None else _covariate.added(poisson_binomial(top.probs(s), 100), rest)
        tops += top is not None
        np.testing.assert_allclose(above.pmf[at], own, rtol=0, atol=1e-14, err_msg=q)
    assert len(groups) - 1 == tops >= 6 and {len(at) for _, at, _ in groups} == {5}
    # the batches: two queries each (of different widths), or one each
    sizes = [len(b) for b in batches]
    assert sizes == ([10] * (tops // 2) + [5] * (tops % 2) if chunk == 12 else [5] * tops), sizes
    widths = {len(parts[q].top.pred_unseen) for q, _, _ in groups if parts[q].top is not None}
    assert len(widths) > 1
    # rows with a rest that can score above them and rows without one, with and without a top part
    p_rest = {q: _covariate.rest_sf(parts[q], "auto", s) for q, _, s in groups}
    assert (p_rest[alone] == 0).sum() == 1 and (p_rest[lined] == 0).sum() >= 1
    assert (np.concatenate(list(p_rest.values())) > 0).mean() > 0.8
    assert (above.pmf.sum(axis=1) <= 1 + 1e-12).all()


def test_the_top_and_rest_counts_add_as_independent_counts():
    """``added``: the distribution of the sum of the top's and the rest's counts is their convolution, row by row
    (numpy's, truncated at the width); a rest that can add documents moves mass upwards."""
    rng = np.random.default_rng(4)
    top, rest = rng.dirichlet(np.ones(6), size=3), rng.dirichlet(np.ones(6), size=3)
    want = np.array([np.convolve(a, b)[:6] for a, b in zip(top, rest)])
    np.testing.assert_allclose(_covariate.added(top, rest), want, atol=1e-12)
    assert not np.allclose(want, top)


@pytest.mark.parametrize("stratified", [False, True])
def test_sampled_documents_left_to_the_top_are_not_censored_in_the_rest(stratified):
    """The sampled documents the covariate's top D holds are modelled by its line, so the rest's sample is the
    others: with a run listing every pooled document, none is censored, and a run cut short censors exactly the
    kept ones it does not list (counted here by hand)."""
    from pyterrier_sparse_eval._sample import background_from_run

    docnos, truth, first, qrels = simulated_pool_corpus(6000, 4, seed=3)
    cov = first.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(1000)
    extra = dict(tail_sample=40, tail_depth=200) if stratified else {}
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=150, seed=0, **extra)
    sampled = set(pool.sample) | set(pool.tail)
    exclude = {q: set(g.docno) & sampled for q, g in cov.groupby("qid")}
    for depth in (None, 80):
        run = system_run_over_pool(pool, docnos, truth, depth)
        listed = {q: set(g.docno) for q, g in run.groupby("qid")}
        censored = 0
        for qid, got in background_from_run(run, pool, exclude).items():
            kept = sampled - exclude[qid]
            assert 0 < len(exclude[qid]) < len(sampled)
            assert len(got.observed) == len(kept & listed[qid])
            assert got.n_below == len(kept - listed[qid])
            censored += got.n_below
        assert (censored == 0) if depth is None else (censored > 0)


def test_binomial_distributions_reproduce_sdm():
    """The distribution path (UnseenAbove) with each row's binomial pmf gives SDM's closed forms exactly."""
    docnos, truth, first, qrels = simulated_pool_corpus(3000, 3, seed=2)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=300)
    run = system_run_over_pool(pool, docnos, truth)
    j = prepare(run, qrels)
    p = survival_of_rows(j, sdm.fit_run_backgrounds(run, pool))
    rows = np.flatnonzero((j.label > 0) & (j.rank < 100))
    pmf = stats.binom.pmf(np.arange(100)[None, :], pool.n_unseen, p[rows][:, None])
    above = UnseenAbove(rows, pmf)
    for measure in correctable([1, 10, 100]):
        np.testing.assert_allclose(
            corrected(measure, j, above, pool.n_unseen), corrected(measure, j, p, pool.n_unseen), atol=1e-12
        )
    with pytest.raises(ValueError, match="stops at 100 terms"):
        corrected(correctable([200])[0], j, above, pool.n_unseen)


def _distinct_float32(first):
    scores = first.score.to_numpy().astype(np.float32)
    return all(len(np.unique(scores[g])) == len(g) for g in first.groupby("qid").indices.values())


@pytest.mark.parametrize("tail", [False, True])
def test_pooling_system_itself_is_corrected_exactly(tail):
    """The system is the pooling run: its line is exact, so every unseen document in its top 1000 is counted
    where it belongs, and with the empirical rest (all below the 1000th score) SDM gives the full-corpus values
    per query at k <= 100 (pytrec_eval on the full run)."""
    docnos, _, first, qrels = simulated_pool_corpus(8000, 3, seed=11)
    # the same order with scores 1/8000 apart: no ties in single precision, so the order is the scores' alone
    first["score"] = first.groupby("qid")["score"].rank(method="first") / 8000
    assert _distinct_float32(first)
    extra = {"tail_sample": 150, "tail_depth": 400} if tail else {}
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=200, seed=1, **extra)
    assert pool.stratified == tail
    scores = dict(zip(zip(first.qid, first.docno), first.score))
    pooled = pd.DataFrame(
        [(q, d, scores[(q, d)]) for q in first.qid.unique() for d in pool.docnos],
        columns=["qid", "docno", "score"],
    )
    covariate = first.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(1000)
    got = sdm.evaluate(pooled, qrels, pool, [10, 100], covariate=covariate, family="empirical")["per_query"]
    plain = sdm.evaluate(pooled, qrels, pool, [10, 100], family="empirical")["aggregate"]
    ref = _pytrec(covariate, qrels, [10, 100])
    for k in (10, 100):
        for ours, theirs in ((f"R@{k}", f"recall_{k}"), (f"nDCG@{k}", f"ndcg_cut_{k}")):
            for qid, v in got[ours].items():
                assert v["sdm"] == pytest.approx(ref[qid][theirs], abs=1e-9), (ours, qid)
    full = np.mean([ref[q]["ndcg_cut_10"] for q in ref])
    assert abs(plain["nDCG@10"]["sdm"] - full) > 1e-3  # without the covariate it is only an estimate


def test_nothing_unseen_gives_trec_eval():
    docnos, truth, first, qrels = simulated_pool_corpus(400, 2, seed=5)
    probe = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=0)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=probe.n_unseen)
    assert pool.n_unseen == 0
    run = system_run_over_pool(pool, docnos, truth)
    featured = first.assign(features=list(np.random.default_rng(0).integers(0, 4, (len(first), 1))))
    ref = _pytrec(run, qrels, [5, 20, 100])
    for covariate in (first, featured):
        got = sdm.evaluate(run, qrels, pool, [5, 20, 100], covariate=covariate)["per_query"]
        for k in (5, 20, 100):
            for ours, theirs in ((f"R@{k}", f"recall_{k}"), (f"nDCG@{k}", f"ndcg_cut_{k}")):
                for qid, v in got[ours].items():
                    assert v["sdm"] == pytest.approx(ref[qid][theirs], abs=1e-12)
                    assert v["pooled"] == pytest.approx(ref[qid][theirs], abs=1e-12)


def test_measures_in_pt_experiment_equal_evaluate_and_bootstrap():
    docnos, truth, first, qrels = simulated_pool_corpus(4000, 4, seed=8)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=300, seed=2)
    covariate = sdm.Covariate.from_run(first, pool)
    assert "depth 4000" in repr(covariate) and pool.fingerprint in repr(covariate)
    run = system_run_over_pool(pool, docnos, truth)
    topics = pd.DataFrame({"qid": sorted(truth), "query": "unused"})
    measures = [
        sdm.SDM_R(pool=pool, covariate=covariate) @ 10,
        sdm.SDM_nDCG(pool=pool, covariate=covariate) @ 10,
    ]
    table = pt.Experiment([run], topics, qrels, measures, names=["truth"])
    direct = sdm.evaluate(run, qrels, pool, [10], covariate=covariate, bootstrap=30)["aggregate"]
    assert table.loc[0, str(measures[0])] == pytest.approx(direct["R@10"]["sdm"], abs=1e-12)
    assert table.loc[0, str(measures[1])] == pytest.approx(direct["nDCG@10"]["sdm"], abs=1e-12)
    plain = sdm.evaluate(run, qrels, pool, [10])["aggregate"]
    assert direct["nDCG@10"]["sdm"] != pytest.approx(plain["nDCG@10"]["sdm"], abs=1e-6)
    lo, hi = direct["nDCG@10"]["sdm_ci"]
    assert lo <= hi and lo - 0.05 <= direct["nDCG@10"]["sdm"] <= hi + 0.05
    # a covariate with features, the same way
    features = first.assign(features=list(np.random.default_rng(1).integers(0, 4, (len(first), 1))))
    featured = sdm.Covariate.from_run(features, pool)
    measure = sdm.SDM_nDCG(pool=pool, covariate=featured) @ 10
    table = pt.Experiment([run], topics, qrels, [measure], names=["truth"])
    direct = sdm.evaluate(run, qrels, pool, [10], covariate=featured)["aggregate"]
    assert table.loc[0, str(measure)] == pytest.approx(direct["nDCG@10"]["sdm"], abs=1e-12)


def test_bad_covariates_are_refused():
    docnos, truth, first, qrels = simulated_pool_corpus(1000, 2, seed=4)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=100, seed=0)
    other = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=100, seed=1)
    run = system_run_over_pool(pool, docnos, truth)
    with pytest.raises(ValueError, match="built for pool #.* Covariate.from_run"):
        sdm.evaluate(run, qrels, pool, [10], covariate=sdm.Covariate.from_run(first, other))
    with pytest.raises(ValueError, match="looks like a run over the pooled corpus"):
        sdm.Covariate.from_run(run, pool)
    # within the pool's depth (5)
    shallow = first.sort_values("score", ascending=False).groupby("qid").head(3)
    with pytest.raises(ValueError, match=r"\(3 per query at most\).*cut at the pool's depth.*1000 deep"):
        sdm.Covariate.from_run(shallow, pool)
    with pytest.raises(ValueError, match="twice"):
        sdm.Covariate.from_run(pd.concat([first, first.head(3)]), pool)
    corpus = sorted(set(docnos[:500]) | set(qrels.docno))  # a smaller corpus than the run's
    with pytest.raises(ValueError, match="not in the corpus.*same dataset"):
        sdm.build_pool(qrels, [first], all_docnos=corpus, depth=5, sample=10)
    small = sdm.build_pool(qrels, [first[first.docno.isin(corpus)]], all_docnos=corpus, depth=5, sample=10)
    with pytest.raises(ValueError, match="pass the full-corpus run the pool was built from"):
        sdm.Covariate.from_run(first, small)
    with pytest.raises(ValueError, match="ranks no document of Pool"):
        sdm.Covariate.from_run(first.assign(docno="z" + first.docno), pool)
    with pytest.raises(ValueError, match="covariate run is empty"):
        sdm.Covariate.from_run(first.head(0), pool)
    with pytest.raises(ValueError, match="no ranking for 2 of the 2 evaluated queries"):
        sdm.evaluate(run, qrels, pool, [10], covariate=first.assign(qid="other" + first.qid))
    with pytest.warns(UserWarning, match="no ranking for 1 of the 2 .* keep SDM's fitted background"):
        partial = sdm.evaluate(run, qrels, pool, [10], covariate=first[first.qid == first.qid.iloc[0]])
    alone = sdm.evaluate(run, qrels, pool, [10])["per_query"]["R@10"]
    missing = [q for q in alone if q != str(first.qid.iloc[0])]
    # the same binomial, summed term by term there and as its cdf here: equal to rounding
    assert [partial["per_query"]["R@10"][q]["sdm"] for q in missing] == pytest.approx(
        [alone[q]["sdm"] for q in missing], abs=1e-12
    )
    with pytest.raises(ValueError, match="covariate= needs the pool"):
        sdm.evaluate(
            run, qrels, background={q: np.arange(9.0) for q in qrels.qid}, n_unseen=10, covariate=first
        )


@needs_data
def test_covariate_closes_more_of_the_gap_on_scifact(scifact, scifact_bm25_index, tmp_path):
    """A real collection: a 15% pool of SciFact mined by BM25; the system evaluated is BM25 without idf. With the pooling run as covariate SDM closes most of the gap at nDCG@10 and @100,
    and more of it than without."""
    topics = pse.datasets.get_topics(scifact, verbose=False)
    qrels = pse.datasets.get_qrels(scifact)
    topics = pse.datasets.align_topics_qrels(topics, qrels)
    first = pse.BM25().retriever(scifact_bm25_index, num_results=1000).transform(topics)
    probe = sdm.build_pool(qrels, [first], all_docnos=scifact_bm25_index.docnos, depth=1, sample=0)
    pool = sdm.build_pool(
        qrels, [first], all_docnos=scifact_bm25_index.docnos, depth=1, sample=777 - probe.size, seed=0
    )
    enc = pse.BM25(lucene_scores=False)  # BM25 weights summed without idf: the classic formula's tf part
    full_index = pse.SparseIndex(tmp_path / "no-idf")
    enc.indexer(full_index, verbose=False).index(pse.datasets.corpus_iter(scifact))
    pooled = pool.index(full_index, tmp_path / "pooled")

    def no_idf(index, k):
        retriever = pse.SparseRetriever(index, num_results=k, idf=False, analyzer=enc.analyzer, verbose=False)
        return retriever.transform(topics)

    run, full = no_idf(pooled, pool.size), no_idf(full_index, 1000)
    exact = pse.measures.evaluate(full, qrels, ["nDCG@10", "nDCG@100"], warn=False).aggregate
    with_cov = sdm.evaluate(run, qrels, pool, [10, 100], covariate=first)["aggregate"]
    without = sdm.evaluate(run, qrels, pool, [10, 100])["aggregate"]
    for m in ("nDCG@10", "nDCG@100"):
        gap = with_cov[m]["pooled"] - exact[m]
        closed = 1 - abs(with_cov[m]["sdm"] - exact[m]) / abs(gap)
        closed_before = 1 - abs(without[m]["sdm"] - exact[m]) / abs(gap)
        assert gap > 0.05 and closed >= 0.7 and closed > closed_before + 0.1, (m, closed, closed_before)


@needs_data
def test_cli_sdm_with_the_covariate(tmp_path, capsys):
    """``sparse-eval sdm --covariate`` on Vaswani: the pooling system is corrected to its full-corpus values (its
    own scores are the covariate), and the report says which run the covariate is."""
    out_json = tmp_path / "sdm.json"
    args = ["sdm", "--dataset", "irds:vaswani", "--system", "bm25", "--system", "bm25:k1=1.2,b=0.75"]
    args += ["--pool-depth", "5", "--sample", "1000", "--k", "10", "--k", "100", "--covariate", "terms"]
    assert main([*args, "--index-dir", str(tmp_path), "--output", str(out_json), "--quiet"]) == 0
    assert (
        "BM25(k1=0.9,b=0.4)'s full-corpus run and matched query terms as covariate" in capsys.readouterr().out
    )
    report = json.loads(out_json.read_text())
    assert report["config"]["covariate"] == "BM25(k1=0.9,b=0.4)"
    assert report["config"]["covariate_features"] == ["matched query terms"]
    for measure, v in report["results"]["BM25(k1=0.9,b=0.4)"].items():
        assert abs(v["pooled"] - v["full"]) > 0.01 and abs(v["sdm"] - v["full"]) < 2e-3, (measure, v)
    plain = build_parser().parse_args(["sdm", "--dataset", "irds:vaswani", "--covariate"])
    assert plain.covariate == "score"  # the pooling scores alone, as before
    with pytest.raises(ValueError, match="give False, True"):
        sdm.three_way("irds:vaswani", ["bm25"], covariate="tems")


def test_a_tail_band_sampled_whole_stands_for_nothing():
    """A stratified pool whose tail band is sampled whole: its documents weigh 0 (they stand for no unseen
    document), and the estimate stays finite and within [0, pooled]."""
    docnos, truth, first, qrels = simulated_pool_corpus(3000, 3, seed=6)
    size = sdm.tail_band_sizes(qrels, [first], all_docnos=docnos, depth=5, tail_depth=[60])[0]
    pool = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=5, sample=2, tail_sample=size, tail_depth=60
    )
    assert pool.stratum_weights()[1] == 0.0
    run = system_run_over_pool(pool, docnos, truth)
    top = first.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(200)
    assert not set(top.docno) & set(pool.sample)  # the top 200's sampled documents all weigh 0
    with np.errstate(all="raise"):
        out = sdm.evaluate(run, qrels, pool, [10, 100], covariate=top)["aggregate"]
    for v in out.values():
        assert np.isfinite(v["sdm"]) and 0.0 <= v["sdm"] <= v["pooled"] + 1e-12


def test_the_line_is_fitted_on_the_top_of_the_documents_that_weigh():
    """The line is fitted on the sampled top documents of highest pooling score; those of a band sampled whole
    (weight 0), here the 20 highest, neither hold it nor crowd the others out: the fit equals the one without
    them, and is finite (a top share of weightless documents once divided by their total weight, 0)."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.lognormal(0.0, 0.5, 60))[::-1]
    y = 2 * x**2 + rng.normal(0.0, 0.3, 60)
    w = np.r_[np.zeros(20), np.full(40, 12.0)]
    x_unseen = rng.lognormal(0.0, 0.5, 480)
    s = np.quantile(y, [0.3, 0.6, 0.9])
    fit = _TopFit.fit(x_unseen, x, y, w)
    without = _TopFit.fit(x_unseen, x[20:], y[20:], w[20:])
    with np.errstate(all="raise"):
        p = fit.probs(s)
    np.testing.assert_allclose(p, without.probs(s))
    # fitted on the top TOP_SHARE of the 40 that weigh: their residuals, none of those below
    assert len(fit.resid) == max(TOP_MIN, int(np.ceil(TOP_SHARE * 40))) < 40 and np.isfinite(fit.resid).all()


def _featured_corpus(n=3000, queries=3, seed=21):
    """A corpus whose system score is a plane in the pooling score and an integer feature (e.g. the query terms
    a document holds): y = 0.4 x + 0.25 f, distinct in single precision; the pooling run ranks every document."""
    rng = np.random.default_rng(seed)
    docnos = np.array([f"d{i:05d}" for i in range(n)])
    rows, truth, qrels = [], {}, []
    for q in range(queries):
        qid = f"q{q}"
        x = rng.permutation(n) / n + rng.uniform(0, 1e-5, n)
        f = rng.integers(0, 6, n).astype(float)
        truth[qid] = (0.4 * x + 0.25 * f).astype(np.float32).astype(np.float64)
        rows.append(pd.DataFrame({"qid": qid, "docno": docnos, "score": x, "features": list(f[:, None])}))
        top = np.argsort(-truth[qid])[:60]
        qrels += [{"qid": qid, "docno": docnos[i], "label": 1} for i in rng.choice(top, 6, replace=False)]
    return docnos, truth, pd.concat(rows, ignore_index=True), pd.DataFrame(qrels)


def test_features_that_give_the_system_score_correct_it_exactly():
    """The system's score is a plane in the pooling score and a feature: with the feature the query keeps the
    plane (its leave-one-out error is 0), every unseen document is counted where it belongs, and SDM gives the
    full-corpus values per query (pytrec_eval on the system's full run); on the score alone it does not."""
    docnos, truth, first, qrels = _featured_corpus()
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=300, seed=3)
    run = system_run_over_pool(pool, docnos, truth)
    full = pd.concat([pd.DataFrame({"qid": q, "docno": docnos, "score": s}) for q, s in truth.items()])
    ref = _pytrec(full, qrels, [10, 100])
    covariate = sdm.Covariate.from_run(first, pool)
    assert covariate.n_features == 1 and "1 feature" in repr(covariate)
    got = sdm.evaluate(run, qrels, pool, [10, 100], covariate=covariate, family="empirical")["per_query"]
    plain = sdm.evaluate(run, qrels, pool, [10, 100], covariate=first.drop(columns="features"))["aggregate"]
    for k in (10, 100):
        for ours, theirs in ((f"R@{k}", f"recall_{k}"), (f"nDCG@{k}", f"ndcg_cut_{k}")):
            for qid, v in got[ours].items():
                assert v["sdm"] == pytest.approx(ref[qid][theirs], abs=1e-9), (ours, qid)
    exact = np.mean([ref[q]["ndcg_cut_10"] for q in ref])
    assert abs(plain["nDCG@10"]["sdm"] - exact) > 1e-3  # the score alone only estimates it


def test_calibrated_count_with_features_is_unbiased_where_the_plane_is_wrong():
    """As the test above the line's, with a feature: the system's score is quadratic in the pooling score and
    in the feature, so the fitted plane (or the line, whichever each sample's leave-one-out error picks) is
    wrong; over 1500 uniform samples of 80 of 1000 top documents the calibrated count of unseen documents scoring
    >= t is on target, and the selection picks the plane most of the time."""
    rng = np.random.default_rng(1)
    x = rng.lognormal(0.0, 0.5, 1000)
    f = rng.integers(0, 5, 1000).astype(float)
    y = x**2 + 0.3 * f**2 + rng.normal(0.0, 0.3, 1000)
    both = np.column_stack([x, f])
    thresholds = np.quantile(y, [0.99, 0.95, 0.8])
    errors, planes = [], 0
    for _ in range(1500):
        picks = rng.choice(1000, 80, replace=False)
        unseen = np.setdiff1d(np.arange(1000), picks)
        fit = _TopFit.fit(both[unseen], both[picks], y[picks], np.ones(80))
        assert fit is not None
        planes += fit.columns == (0, 1)
        true = np.array([np.sum(y[unseen] >= t) for t in thresholds])
        errors.append(fit.probs(thresholds).sum(axis=1) - true)
    errors = np.array(errors)
    se = errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    truth = np.array([np.sum(y >= t) for t in thresholds]) * 0.92
    assert (np.abs(errors.mean(axis=0)) < np.maximum(4 * se, 0.015 * truth)).all(), (errors.mean(axis=0), se)
    assert planes > 0.9 * 1500


def test_bad_features_are_refused():
    docnos, truth, first, qrels = _featured_corpus(600, 2, seed=2)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=60, seed=0)
    ragged = first.copy()
    ragged.loc[0, "features"] = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="same length on every row"):
        sdm.Covariate.from_run(ragged, pool)
    nan = first.copy()
    nan.loc[3, "features"] = np.array([np.nan])
    with pytest.raises(ValueError, match="NaN or infinite"):
        sdm.Covariate.from_run(nan, pool)


def test_matched_terms_counts_the_query_terms_each_document_holds(tmp_path):
    """MatchedTerms against a count made without the index: the analyzer's terms of the query and of the
    document's text; the same from a sharded index; features already there are kept, the count appended."""
    texts = {
        "a": "the cat sat on the mat",
        "b": "dogs and cats chase mats",
        "c": "a bird sang",
        "d": "cat cat cat",
        "e": "mat dog bird cat",
    }
    bm25, single, sharded = bm25_single_and_sharded(tmp_path, texts)
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["cat on a mat", "dog birds"]})
    run = bm25.retriever(single, num_results=10, verbose=False).transform(topics)
    run = run[run["docno"] != "c"].copy()
    run["features"] = [np.array([7.0])] * len(run)
    got = sdm.MatchedTerms(single, bm25).transform(run)
    query_terms = {q: set(bm25.analyzer(t)) for q, t in zip(topics.qid, topics["query"])}
    expected = [len(query_terms[q] & set(bm25.analyzer(texts[d]))) for q, d in zip(run.qid, run.docno)]
    assert [f.tolist() for f in got["features"]] == [[7.0, float(e)] for e in expected]
    assert max(expected) >= 2 and min(expected) >= 1
    plain = run.drop(columns="features")
    assert [f.tolist() for f in sdm.MatchedTerms(sharded, bm25).transform(plain)["features"]] == [
        [float(e)] for e in expected
    ]
    # every (query, document) pair, shuffled so that queries interleave, int qids, zero counts among them
    pairs = pd.DataFrame(
        [(q, t, d, 0.0) for q, t in [(1, "cat on a mat"), (2, "dog birds"), (3, "zebra")] for d in texts],
        columns=["qid", "query", "docno", "score"],
    ).sample(frac=1.0, random_state=0)
    terms = {q: set(bm25.analyzer(t)) for q, t in zip(pairs.qid, pairs["query"])}
    expected = [len(terms[q] & set(bm25.analyzer(texts[d]))) for q, d in zip(pairs.qid, pairs.docno)]
    assert expected.count(0) >= 6 and len(set(pairs.qid.head(4))) > 1
    for index in (single, sharded):
        got = sdm.MatchedTerms(index, bm25).transform(pairs)
        assert got.qid.tolist() == pairs.qid.tolist()  # the rows as they came
        assert [f.tolist() for f in got["features"]] == [[float(e)] for e in expected]
    # a subset's index keeps the vocabulary, with terms none of its documents holds ("bird": only in c and e)
    subset = single.subset(["a", "b", "d"], tmp_path / "subset")
    kept = pairs["docno"].isin(["a", "b", "d"]).to_numpy()
    got = sdm.MatchedTerms(subset, bm25).transform(pairs[kept])
    assert [f.tolist() for f in got["features"]] == [[float(e)] for e, k in zip(expected, kept) if k]
    with pytest.raises(ValueError, match="not in .*index the run was retrieved from"):
        sdm.MatchedTerms(single, bm25).transform(
            pd.DataFrame({"qid": ["1"], "query": ["cat"], "docno": ["zz"], "score": [1.0]})
        )
    with pytest.raises(ValueError, match="lacks \\['query'\\]"):
        sdm.MatchedTerms(single, bm25).transform(run.drop(columns="query"))
    with pytest.raises(TypeError, match="encoder of the run's queries"):
        sdm.MatchedTerms(single, "bm25")


def test_a_feature_that_does_not_vary_leaves_the_line_on_the_score():
    """A one-term query: every document holds its term, so the count is constant; the fit is then the line on the
    pooling score alone (top share), to the bit, and a bootstrap round keeps choosing from every covariate."""
    rng = np.random.default_rng(4)
    x = rng.lognormal(0.0, 0.5, 300)
    y = 2 * x**2 + rng.normal(0.0, 0.3, 300)
    picks = rng.choice(300, 60, replace=False)
    unseen = np.setdiff1d(np.arange(300), picks)
    ones = np.ones(300)
    plain = _TopFit.fit(x[unseen], x[picks], y[picks], np.ones(60))
    constant = _TopFit.fit(
        np.column_stack([x, ones])[unseen], np.column_stack([x, ones])[picks], y[picks], np.ones(60)
    )
    assert constant.columns == (0,) and constant.x.shape[1] == 2
    np.testing.assert_array_equal(constant.pred_unseen, plain.pred_unseen)
    np.testing.assert_array_equal(constant.pred_sampled, plain.pred_sampled)
    again = constant.resampled(np.random.default_rng(0))
    assert again is not None and again.x.shape[1] == 2
