"""Stratified background samples (a tail stratum oversampled from the pooling runs' high ranks, Horvitz-Thompson
weights): unbiased on a simulated corpus whose every score is known, lower variance in the tail, identical to
trec_eval when nothing is unseen, and the same as the uniform fit when the weights are equal."""

from __future__ import annotations

import json

import numpy as np
import pytest
import pytrec_eval
from conftest import needs_data
from helpers import simulated_pool_corpus as _corpus
from helpers import system_run_over_pool as _system_run

from pyterrier_sparse_eval import sdm
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.measures import fit_background


def _errors(docnos, truth, first, qrels, thresholds, *, seeds, run_depth=None, **pool_args):
    """Per seed and threshold: estimated minus true number of unseen documents scoring >= threshold (q0)."""
    out = []
    for seed in range(seeds):
        pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, seed=seed, **pool_args)
        model = sdm.background_from_run(_system_run(pool, docnos, truth, run_depth), pool)["q0"].fit(
            "empirical"
        )
        unseen = ~np.isin(docnos, pool.docnos)
        true = np.array([np.sum(truth["q0"][unseen] >= t) for t in thresholds])
        out.append(pool.n_unseen * model.sf(np.array(thresholds)) - true)
    return np.array(out)


def test_stratified_estimate_is_unbiased_and_sharper_in_the_tail():
    """Two tail bands (best pooling rank in [10, 60) and [60, 200)) and the rest, against a uniform sample of
    the same size: 200 pools each."""
    docnos, truth, first, qrels = _corpus(10_000, 2)
    s = np.sort(truth["q0"])[::-1]
    thresholds = [s[40], s[200], s[2000]]  # tail (just below the distractors), mid, body
    strat = _errors(
        docnos,
        truth,
        first,
        qrels,
        thresholds,
        seeds=200,
        sample=200,
        tail_sample=[50, 50],
        tail_depth=[60, 200],
    )
    uniform = _errors(docnos, truth, first, qrels, thresholds, seeds=200, sample=300)
    for errors in (strat, uniform):  # unbiased: the mean error is within 4 standard errors of 0
        se = errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
        assert (np.abs(errors.mean(axis=0)) < 4 * se + 1e-9).all(), (errors.mean(axis=0), se)
    # the point of the tail stratum: in the tail the stratified estimate varies far less than the uniform one
    assert strat[:, 0].std() < 0.5 * uniform[:, 0].std(), (strat[:, 0].std(), uniform[:, 0].std())


def test_censored_run_keeps_the_estimate_exact_above_its_lowest_score():
    """A run listing only its top 100 of the pool's documents: the sampled documents it does not list are
    censored, each weighing its stratum's Horvitz-Thompson weight, so above the run's lowest score the estimate
    equals the full run's. (A run of 200, deeper than the 175-document pool, had censored nothing.)"""
    docnos, truth, first, qrels = _corpus(5_000, 1, seed=3)
    s = np.sort(truth["q0"])[::-1]
    thresholds = [s[40], s[150]]
    args = dict(sample=100, tail_sample=60, tail_depth=200, seeds=1)
    pool = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=10, seed=0, sample=100, tail_sample=60, tail_depth=200
    )
    cut = sdm.background_from_run(_system_run(pool, docnos, truth, 100), pool)["q0"]
    assert cut.below_by is not None and cut.weight_by is not None
    # censored documents (75, all in the rest stratum), each standing for many unseen ones (weight 47, not 1)
    assert cut.n_below > 0 and (cut.weight_by[cut.below_by > 0] > 10).all()
    full = _errors(docnos, truth, first, qrels, thresholds, **args)
    top = _errors(docnos, truth, first, qrels, thresholds, run_depth=100, **args)  # the rest censored
    np.testing.assert_allclose(full, top, rtol=0, atol=1e-6)


def test_a_weighted_kde_takes_silverman_s_rule_with_kish_s_effective_size():
    """Unequal weights (a stratified sample's): the bandwidth is 0.9 * sd * n_eff^(-1/5), the weighted sd and
    Kish's n_eff = (sum w)^2 / sum w^2 worked here with numpy, and the survival the weighted mean of the kernels'.
    (Equal weights, the only case tested before, cannot tell n_eff from n, nor a weighted kernel from another.)"""
    from scipy.stats import norm

    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 200)  # light tails: sd < IQR / 1.34, so the rule takes the sd
    w = np.where(np.arange(200) < 100, 200.0, 1.0)
    model = fit_background(x, "kde", weights=w, weight_below=0.0)
    n_eff = w.sum() ** 2 / (w**2).sum()
    mean = np.average(x, weights=w)
    sd = np.sqrt(np.average((x - mean) ** 2, weights=w) * n_eff / (n_eff - 1))
    assert sd < (np.quantile(x, 0.75) - np.quantile(x, 0.25)) / 1.34 * 0.9
    assert model.diagnostics["n_eff"] == pytest.approx(n_eff, rel=1e-12)
    h = 0.9 * sd * n_eff**-0.2
    assert model.params["bandwidth"] == pytest.approx(h, rel=1e-12)
    grid = np.linspace(-0.2, 1.2, 15)
    expected = [np.sum(w * norm.sf((t - x) / h)) / w.sum() for t in grid]
    np.testing.assert_allclose(model.sf(grid), expected, rtol=1e-9, atol=1e-12)


def test_a_weighted_kde_of_heavy_tailed_scores_takes_the_iqr_at_the_midpoint_quantiles():
    """Where the IQR sets the bandwidth (a heavy right tail, as retrieval scores have), the weighted quartiles are
    the midpoint rule's: with equal weights, numpy's Hazen quantiles."""
    x = np.random.default_rng(5).gamma(2.0, size=301)
    model = fit_background(x, "kde", weights=np.full(301, 7.0), weight_below=0.0)
    q25, q75 = np.quantile(x, [0.25, 0.75], method="hazen")
    assert (q75 - q25) / 1.34 < x.std(ddof=1)
    assert model.params["bandwidth"] == pytest.approx(0.9 * (q75 - q25) / 1.34 * 301**-0.2, rel=1e-12)


def test_a_weighted_kde_s_survival_variance_is_its_docstring_s_formula():
    """sf_variance of a stratified sample's kde with censored weight: sum_i (w_i / W)^2 (K_i(s) - p(s))^2, W the
    observed weights plus the censored weight, worked here with scipy's normal survival (the weights had been
    taken without the censored share, 5-6x too wide, and no test saw it)."""
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, 100), rng.normal(1.5, 1, 100)])
    w = np.concatenate([np.full(100, 200.0), np.full(100, 1.0)])
    model = fit_background(x, "kde", weights=w, n_below=150, below=float(x.min()), weight_below=30_000.0)
    s, h, total = np.array([1.0, 2.5, 4.0]), model.params["bandwidth"], w.sum() + 30_000.0
    kernels = norm.sf((s[:, None] - x[None, :]) / h)
    p = kernels @ (w / total)
    np.testing.assert_allclose(model.sf(s), p, rtol=1e-9)
    want = (((w / total)[None, :] * (kernels - p[:, None])) ** 2).sum(axis=1)
    np.testing.assert_allclose(model.sf_variance(s), want, rtol=1e-9)


def test_a_bootstrap_resample_redraws_every_member_censored_ones_included():
    """sdm's bootstrap rounds: each resample draws, with replacement, as many members as the sample has (within
    each stratum for a stratified one), censored members included, so a round keeps the sizes, its censored
    count averages the sample's, every member is drawn once per round on average, and rounds differ."""
    rng = np.random.default_rng(0)
    observed = np.arange(30, dtype=np.float64) + 1.0
    uniform = sdm.BackgroundSample(observed, n_below=10, below=0.5)
    stratum = np.repeat([0, 1], 15).astype(np.int64)
    strat = sdm.BackgroundSample(observed, 6, 0.5, stratum, np.array([6, 0]), np.array([9.0, 2.0]))
    rounds = 4000
    for sample, sizes in ((uniform, None), (strat, [21, 15])):
        censored, counts, seen = [], np.zeros(30), set()
        for _ in range(rounds):
            r = sample.resample(rng)
            assert len(r.observed) + r.n_below == (40 if sizes is None else 36)
            if sizes is not None:
                assert r.stratum is not None and r.below_by is not None
                kept = [int(np.sum(r.stratum == h)) + int(r.below_by[h]) for h in (0, 1)]
                assert kept == sizes and r.below_by[1] == 0 and (r.weight_by == sample.weight_by).all()
            censored.append(r.n_below)
            counts += np.bincount((r.observed - 1).astype(int), minlength=30)
            seen.add(tuple(np.sort(r.observed)))
        se = np.std(censored) / np.sqrt(rounds)
        assert abs(np.mean(censored) - sample.n_below) < 4 * se
        assert np.abs(counts / rounds - 1).max() < 0.1  # each member drawn once per round on average
        assert len(seen) > rounds * 0.9  # rounds differ


def test_nothing_unseen_gives_trec_eval():
    docnos, truth, first, qrels = _corpus(400, 2, seed=5)
    probe = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, sample=2, tail_sample=2, tail_depth=60)
    rest = probe.num_docs - len(probe.relevant) - len(probe.distractors) - probe.tail_size
    pool = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=5, sample=rest, tail_sample=probe.tail_size, tail_depth=60
    )
    assert pool.n_unseen == 0 and pool.stratified
    run = _system_run(pool, docnos, truth)
    got = sdm.evaluate(run, qrels, pool, [5, 20, 100])["aggregate"]
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(zip(g.docno, g.label)) for q, g in qrels.groupby("qid")}, {"ndcg_cut", "recall"}
    )
    ref = evaluator.evaluate({q: dict(zip(g.docno, g.score)) for q, g in run.groupby("qid")})
    for k in (5, 20, 100):
        for name, key in ((f"R@{k}", f"recall_{k}"), (f"nDCG@{k}", f"ndcg_cut_{k}")):
            expected = np.mean([v[key] for v in ref.values()])  # pytrec_eval: the independent reference
            assert got[name]["sdm"] == pytest.approx(got[name]["pooled"], abs=1e-12)
            assert got[name]["pooled"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("family", ["empirical", "normal", "kde"])
def test_equal_weights_fit_the_uniform_model(family):
    rng = np.random.default_rng(1)
    x = rng.lognormal(0, 0.5, 300)
    grid = np.linspace(x.min(), x.max() * 1.2, 50)
    plain = fit_background(x, family, n_below=40, below=float(x.min()))
    weighted = fit_background(
        x, family, n_below=40, below=float(x.min()), weights=np.full(300, 7.0), weight_below=7.0 * 40
    )
    assert weighted.family == plain.family
    # empirical and normal: the same numbers; kde: weighted quantiles interpolate the IQR slightly differently
    tol = 0.02 if family == "kde" else 1e-9
    np.testing.assert_allclose(weighted.sf(grid), plain.sf(grid), atol=tol)


def test_families_without_a_weighted_fit_are_refused():
    with pytest.raises(ValueError, match="stratified background sample is fitted with auto, empirical, kde"):
        fit_background([1.0, 2.0, 3.0], "empirical-gpd", weights=[1.0, 1.0, 1.0])


def test_pool_round_trip_and_bootstrap(tmp_path):
    docnos, truth, first, qrels = _corpus(3_000, 2, seed=7)
    pool = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=50, tail_depth=150
    )
    path = tmp_path / "pool.json"
    pool.save(path)
    again = sdm.Pool.load(path)
    assert again == pool and again.fingerprint == pool.fingerprint and again.stratified
    uniform = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=100)
    assert not uniform.stratified and uniform.fingerprint != pool.fingerprint
    assert len(set(pool.tail) & set(pool.sample)) == 0 and pool.size == len(set(pool.docnos))
    weights = pool.weights()
    rest = pool.num_docs - len(pool.relevant) - len(pool.distractors) - pool.tail_size
    assert weights[pool.sample[0]] == (rest - 100) / 100
    assert weights[pool.tail[0]] == (pool.tail_size - 50) / 50
    out = sdm.evaluate(_system_run(pool, docnos, truth), qrels, pool, [10], bootstrap=50)["aggregate"]
    lo, hi = out["R@10"]["sdm_ci"]
    assert lo <= out["R@10"]["sdm"] + 0.05 and hi >= out["R@10"]["sdm"] - 0.05 and lo <= hi
    with pytest.raises(ValueError, match="tail_depth .* must be deeper than the pool depth"):
        sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=5, tail_depth=10)
    with pytest.raises(ValueError, match="larger than the tail stratum"):
        sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=10**6)
    # the bands take their documents first: the count left for the sample, and the fix that raises it (the
    # message had counted them as outside nothing and advised a lower depth, which leaves the count as it is)
    left = rest  # outside the pool and the bands (the relevant, the distractors and the bands taken)
    with pytest.raises(
        ValueError,
        match=rf"sample of {left + 1} is larger than the {left} documents outside the pool and its tail bands; "
        r"lower sample= \(--sample\) or tail_depth= \(--tail-depth\)",
    ):
        sdm.build_pool(
            qrels, [first], all_docnos=docnos, depth=10, sample=left + 1, tail_sample=50, tail_depth=150
        )
    with pytest.raises(ValueError, match="must be deeper than the pool depth .* and increasing"):
        sdm.build_pool(
            qrels, [first], all_docnos=docnos, depth=10, sample=9, tail_sample=[1, 1], tail_depth=[50, 40]
        )
    bands = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=[20, 30], tail_depth=[40, 150]
    )
    assert [n for _, _, n in bands.bands] == [20, 30] and bands.tail_depth == 150
    from pyterrier_sparse_eval._sdm_report import _describe

    sizes = [size for _, size, _ in bands.bands]  # the second band had been said "ranked < 150"
    assert f"(20 of {sizes[0]} ranked < 40, 30 of {sizes[1]} ranked 40 to 149)" in _describe(bands)
    sizes = sdm.tail_band_sizes(qrels, [first], all_docnos=docnos, depth=10, tail_depth=[40, 150])
    assert sizes == [size for _, size, _ in bands.bands]
    with pytest.raises(ValueError, match=r"band \[10, 40\) holds .* documents but gets no sample"):
        sdm.build_pool(
            qrels, [first], all_docnos=docnos, depth=10, sample=9, tail_sample=[0, 5], tail_depth=[40, 150]
        )
    assert sdm.Pool.from_spec(json.loads(json.dumps(bands.spec()))) == bands
    # each band's documents have their best pooling rank in the band (over both queries)
    ranked = first.assign(rank=first.groupby("qid")["score"].rank(ascending=False, method="first") - 1)
    best = ranked.groupby("docno")["rank"].min()
    assert all(10 <= best[d] < 40 for d in bands.tail[:20]) and all(
        40 <= best[d] < 150 for d in bands.tail[20:]
    )


@needs_data
def test_cli_sdm_with_a_tail_sample_prints_the_pool_fraction(tmp_path, capsys):
    args = [
        "sdm",
        "--dataset",
        "irds:vaswani",
        "--pool-depth",
        "10",
        "--sample",
        "500",
        "--tail-sample",
        "300",
    ]
    args += ["--tail-depth", "100", "--k", "10", "--k", "100", "--index-dir", str(tmp_path), "--quiet"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "% of the corpus" in out and "+ 300 of the" in out and "in the tail stratum" in out
    assert "nDCG@10" in out
