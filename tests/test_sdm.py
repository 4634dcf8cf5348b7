"""SDM-corrected measures: identity with trec_eval, Monte Carlo ground truth, numerical range, model fits."""

import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from pyterrier_sparse_eval.measures import prepare
from pyterrier_sparse_eval.measures._score_dist import BackgroundModel, fit_background
from pyterrier_sparse_eval.measures._sdm import sdm_ndcg, sdm_recall, survival_of_rows, variance_of_rows


def _random_case(seed, queries=30):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(queries):
        docs = [f"d{i}" for i in rng.choice(300, size=int(rng.integers(1, 120)), replace=False)]
        run[str(q)] = {d: float(rng.choice([rng.random(), 0.5])) for d in docs}  # with ties
        judged = rng.choice(300, size=int(rng.integers(1, 15)), replace=False)
        qrels[str(q)] = {f"d{i}": int(rng.integers(0, 4)) for i in judged}
    return run, qrels


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [1, 5, 10, 100])
def test_identity_with_trec_eval_when_nothing_is_unseen(seed, k):
    run, qrels = _random_case(seed)
    j = prepare(run, qrels)
    models = {q: fit_background(np.random.default_rng(1).normal(size=50)) for q in j.qids.tolist()}
    p = survival_of_rows(j, models)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {f"recall_{k}", f"ndcg_cut_{k}"}).evaluate(run)
    for name, values in ((f"recall_{k}", sdm_recall(j, k, p, 0)), (f"ndcg_cut_{k}", sdm_ndcg(j, k, p, 0))):
        for qid, v in zip(j.qids.tolist(), values.tolist()):
            assert abs(v - ref[qid][name]) <= 1e-9, (name, qid)


def _monte_carlo(rel_scores, labels, pooled_rank, n_unseen, sf, k, trials, rng):
    """Ground truth by simulation: unseen counts between consecutive relevant scores are multinomial."""
    order = np.argsort(rel_scores)[::-1]
    s = np.asarray(rel_scores)[order]
    p_above = sf(s)  # P(S >= s), increasing along the descending scores
    bins = np.diff(np.concatenate([[0.0], p_above]))
    counts = rng.multinomial(n_unseen, np.append(bins, 1 - p_above[-1]), size=trials)[:, :-1]
    above = np.cumsum(counts, axis=1)  # unseen documents scoring >= each relevant score
    ranks = np.asarray(pooled_rank)[order][None, :] + above  # 0-based full-corpus ranks
    gains = np.asarray(labels, dtype=float)[order]
    in_top = ranks < k
    recall = in_top.sum(axis=1) / len(s)
    dcg = (np.where(in_top, gains / np.log2(ranks + 2.0), 0.0)).sum(axis=1)
    ideal = sum(g / np.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)[:k]))
    return recall.mean(), (dcg / ideal).mean()


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_expectations_match_monte_carlo_at_ten_million_documents(k):
    rng = np.random.default_rng(7)
    n_unseen = 10**7
    background = stats.norm(0.0, 1.0)
    # three relevant documents far in the tail, at pooled ranks 0, 2, 5, graded 1..3
    rel_scores, labels, ranks = [5.2, 4.6, 4.3], [3, 1, 2], [0, 2, 5]
    run = {"q": {f"r{i}": s for i, s in enumerate(rel_scores)}}
    for i, r in enumerate(ranks):  # pooled non-relevant documents between them
        for extra in range(r - (ranks[i - 1] + 1 if i else 0)):
            run["q"][f"n{i}{extra}"] = rel_scores[i] + 0.001 * (extra + 1)
    qrels = {"q": {f"r{i}": lab for i, lab in enumerate(labels)}}
    j = prepare(run, qrels)
    assert sorted(j.rank.tolist()) == ranks
    # the known distribution itself: this checks the expectation, not the fit (test_background_families does)
    model = BackgroundModel("normal", {"loc": 0.0, "scale": 1.0})
    p = survival_of_rows(j, {"q": model})
    got_r, got_n = sdm_recall(j, k, p, n_unseen)[0], sdm_ndcg(j, k, p, n_unseen)[0]
    true_r, true_n = _monte_carlo(rel_scores, labels, ranks, n_unseen, background.sf, k, 40_000, rng)
    assert abs(got_r - true_r) <= 0.005 and abs(got_n - true_n) <= 0.005, (got_r, true_r, got_n, true_n)
    from pyterrier_sparse_eval.measures import ndcg

    assert (
        got_n < ndcg(j, k)[0] - 0.01
    )  # the case really is corrected: unseen documents push relevant ones down
    if k < 1000:
        assert 0 < got_r < 1


def test_no_underflow_at_a_billion_documents():
    # N * p = 1000 unseen documents expected above: (1 - p)^N = exp(-1000) underflows to 0 in a naive
    # recurrence, which would zero every term; scipy's binomial stays exact (Poisson is the reference here)
    n, p_above = 10**9, 1e-6
    assert (1 - p_above) ** n == 0.0
    j = prepare({"q": {"r": 1.0}}, {"q": {"r": 1}})
    p = np.array([p_above])
    for k in (900, 1000, 1100):
        assert sdm_recall(j, k, p, n)[0] == pytest.approx(stats.poisson.cdf(k - 1, n * p_above), abs=1e-4)
    expected_dcg = sum(stats.poisson.pmf(m, 1000) / np.log2(m + 2) for m in range(1100))
    assert sdm_ndcg(j, 1100, p, n)[0] == pytest.approx(expected_dcg, rel=1e-4)


def test_skewnorm_fit_is_scipys_to_the_last_bit():
    """The package's skew-normal maximum likelihood (the reference estimator's family, and auto's for small
    samples) is scipy.stats.skewnorm.fit's, faster: the same parameters exactly, on samples of every shape."""
    from pyterrier_sparse_eval.measures._score_dist import skewnorm_mle

    rng = np.random.default_rng(11)
    for i, size in enumerate([6, 12, 30, 49, 200, 800] * 4):
        draw = (rng.normal, rng.lognormal, lambda size: 5 + 3 * rng.gamma(2.0, size=size))[i % 3]
        x = draw(size=size) if i % 4 else stats.skewnorm.rvs(-5, size=size, random_state=rng)
        assert skewnorm_mle(x) == tuple(float(v) for v in stats.skewnorm.fit(x)), (i, size)


def test_kde_quantiles_are_numpys_to_the_last_bit():
    """The KDE's bandwidth reads the sample's quartiles with sorted_quantile, which must be np.percentile's
    (default linear method) exactly: on samples of every size from 1, with ties, integers and negative scores."""
    from pyterrier_sparse_eval.measures._score_dist import sorted_quantile

    rng = np.random.default_rng(12)
    for i in range(600):
        size = int(rng.integers(1, 60)) if i % 2 else int(rng.integers(60, 5000))
        x = rng.normal(size=size) * 10 ** rng.uniform(-3, 3)
        if i % 3 == 0:
            x = np.round(x)  # ties
        x = np.sort(x)
        for q in (0.25, 0.75, 0.5, 0.1, 0.0, 1.0):
            assert sorted_quantile(x, q) == float(np.percentile(x, q * 100)), (i, size, q)


def test_kde_survival_is_the_mean_of_normal_kernels():
    """The KDE's survival, computed with special.ndtr, is the mean of scipy.stats.norm.sf's kernels exactly."""
    rng = np.random.default_rng(13)
    x = rng.gamma(2.0, size=700)
    model = fit_background(x, "kde")
    s = np.concatenate([np.linspace(-1, 15, 600), x[:50]])
    h = model.params["bandwidth"]
    # Silverman's rule (eq. 3.31) by hand with numpy: 0.9 * min(sd, IQR / 1.34) * n^(-1/5); a gamma sample's
    # heavy right tail makes the IQR term the smaller, as retrieval scores do
    iqr = np.percentile(x, 75) - np.percentile(x, 25)
    assert iqr / 1.34 < x.std(ddof=1)
    assert h == pytest.approx(0.9 * iqr / 1.34 * len(x) ** -0.2, rel=1e-12)
    want = stats.norm.sf((s[:, None] - np.sort(x)[None, :]) / h).mean(axis=1)
    assert np.array_equal(model.sf(s), want)


def test_background_families():
    from pyterrier_sparse_eval.measures._score_dist import _fit_parametric

    rng = np.random.default_rng(3)
    sparse_scores = np.where(rng.random(5000) < 0.8, 0.0, rng.lognormal(1.0, 0.5, 5000))
    zero_share = np.mean(sparse_scores == 0)
    for family in ("auto", "zero-inflated"):
        zi = fit_background(sparse_scores, family)
        assert zi.params["below_share"] == pytest.approx(zero_share)  # the exact point mass at 0
        assert zi.sf(0.0) == 1.0 and zi.sf(1e-9) == pytest.approx(1 - zero_share, rel=1e-3)
        # the positive part follows the lognormal the scores were drawn from
        qs = stats.lognorm.ppf([0.5, 0.9, 0.99], 0.5, 0, np.exp(1.0))
        np.testing.assert_allclose(zi.sf(qs) / (1 - zero_share), [0.5, 0.1, 0.01], atol=0.03)
    assert fit_background(sparse_scores).family == "kde"
    zi = fit_background(sparse_scores, "zero-inflated")
    assert zi.params["mu"] == pytest.approx(1.0, abs=0.05) and zi.diagnostics["ks"] < 0.05
    skewed = stats.skewnorm.rvs(6, size=5000, random_state=rng)
    assert _fit_parametric(skewed).family == "skewnorm"
    assert fit_background(skewed[:40]).family in ("normal", "skewnorm", "lognormal")  # too few for a KDE
    truth = stats.skewnorm(6)
    qs = truth.ppf([0.5, 0.9, 0.99])
    for family in ("kde", "empirical", "empirical-gpd", "skewnorm"):
        np.testing.assert_allclose(
            fit_background(skewed, family).sf(qs), [0.5, 0.1, 0.01], atol=0.02, err_msg=family
        )
    gpd = fit_background(skewed, "empirical-gpd")
    beyond = skewed.max() + np.array([0.0, 0.5, 1.0])
    tail = gpd.sf(beyond[1:])
    assert (
        np.all(tail > 0) and np.all(tail <= 1 / len(skewed)) and tail[0] > tail[1]
    )  # extrapolated, decreasing
    assert fit_background(skewed, "empirical").sf(beyond[1])[()] == 0.0  # the data only
    assert fit_background([2.0, 2.0, 2.0]).family == "point-mass"
    with pytest.raises(ValueError, match="at least 2"):
        fit_background([1.0])
    with pytest.raises(ValueError, match="non-negative"):
        fit_background([-1.0, 0.0, 2.0], "zero-inflated")
    with pytest.raises(ValueError, match="Unknown background family"):
        fit_background(skewed, "gamma")


def test_censored_fit_puts_the_unobserved_mass_below_the_cut():
    rng = np.random.default_rng(5)
    observed = rng.normal(3.0, 1.0, 300)
    observed = observed[observed > 2.0]
    model = fit_background(observed, "normal", n_below=700, below=2.0)
    w = 700 / (700 + len(observed))
    assert model.params["below_share"] == pytest.approx(w)
    s = np.array([2.0, 3.0, 4.5])
    expected = (1 - w) * stats.norm.sf(s, observed.mean(), observed.std(ddof=1))
    np.testing.assert_allclose(model.sf(s), expected)
    assert model.sf(1.0) == 1.0  # below the cut nothing is claimed beyond "all of it"
    # nothing observed: no background document reaches the run's lowest score
    empty = fit_background([], n_below=50, below=1.0)
    assert empty.family == "point-mass" and empty.sf(1.0) == 0.0


def test_survival_floor_avoids_scipy_binomial_overflow():
    # scipy.stats.binom raises OverflowError for p in about [1e-308, 1e-303]; such p are treated as 0
    j = prepare({"q": {"r": 1.0, "s": 0.5}}, {"q": {"r": 1, "s": 2}})
    model = BackgroundModel("point-mass", {"value": 0.0})
    model.sf = lambda s: np.full(np.shape(s), 1e-305)  # type: ignore[method-assign]
    p = survival_of_rows(j, {"q": model})
    assert np.all(p == 0)
    from pyterrier_sparse_eval.measures import ndcg

    assert sdm_ndcg(j, 10, p, 10**7)[0] == pytest.approx(ndcg(j, 10)[0], abs=1e-12)


def test_sdm_evaluate_with_bootstrap_intervals():
    from pyterrier_sparse_eval.sdm import evaluate

    rng = np.random.default_rng(11)
    run = {"a": {"r1": 3.0, "n1": 2.5, "r2": 2.0}, "b": {"r3": 2.8, "n2": 1.0}}
    qrels = {"a": {"r1": 1, "r2": 2}, "b": {"r3": 1, "x": 1}}
    background = {"a": rng.normal(0, 1, 400), "b": rng.normal(0, 1, 400)}
    out = evaluate(run, qrels, k_values=[10], background=background, n_unseen=10**5, bootstrap=60)
    for name in ("R@10", "nDCG@10"):
        agg = out["aggregate"][name]
        assert agg["sdm"] < agg["pooled"]  # 10^5 unseen documents push the relevant ones down
        low, high = agg["sdm_ci"]
        assert low < high and low <= agg["sdm"] + 0.05 and agg["sdm"] - 0.05 <= high
        for q in ("a", "b"):
            lo_q, hi_q = out["per_query"][name][q]["sdm_ci"]
            assert 0 <= lo_q <= hi_q <= 1
    # with nothing unseen, SDM is the pooled value and the interval collapses onto it
    same = evaluate(run, qrels, k_values=[10], background=background, n_unseen=0, bootstrap=10)["aggregate"][
        "R@10"
    ]
    assert same["sdm"] == same["pooled"] and same["sdm_ci"] == [same["sdm"], same["sdm"]]
    with pytest.raises(ValueError, match="background has no entry for 1 evaluated queries"):
        evaluate(run, qrels, k_values=[10], background={"a": background["a"]}, n_unseen=10)
    with pytest.raises(ValueError, match="background= and n_unseen="):
        evaluate(run, qrels, k_values=[10], background=background)
    # the former entry point still works for one release, with a warning that names the new one
    from pyterrier_sparse_eval.measures import sdm_evaluate

    with pytest.warns(DeprecationWarning, match="pse.sdm.evaluate"):
        old = sdm_evaluate(run, qrels, background, 10**5, k_values=[10])
    assert (
        old["aggregate"]
        == evaluate(run, qrels, k_values=[10], background=background, n_unseen=10**5)["aggregate"]
    )


@pytest.mark.parametrize("seed", range(3))
def test_second_order_correction_with_no_noise_or_nothing_unseen_changes_nothing(seed):
    run, qrels = _random_case(seed)
    j = prepare(run, qrels)
    models = {q: fit_background(np.random.default_rng(seed).normal(size=80)) for q in j.qids.tolist()}
    p = survival_of_rows(j, models)
    v = variance_of_rows(j, [models[q] for q in j.qids.tolist()])
    assert (v[j.label > 0] > 0).all()  # the KDE's rows all have a variance
    for k in (5, 100):
        # no variance: the plug-in to the bit
        assert np.array_equal(sdm_recall(j, k, p, 1000, variance=0.0), sdm_recall(j, k, p, 1000))
        assert np.array_equal(sdm_ndcg(j, k, p, 1000, variance=0.0), sdm_ndcg(j, k, p, 1000))
        # nothing unseen: every term is constant in p, so the correction is 0 and trec_eval holds
        ref = pytrec_eval.RelevanceEvaluator(qrels, {f"recall_{k}", f"ndcg_cut_{k}"}).evaluate(run)
        for name, values in (
            (f"recall_{k}", sdm_recall(j, k, p, 0, variance=v)),
            (f"ndcg_cut_{k}", sdm_ndcg(j, k, p, 0, variance=v)),
        ):
            for qid, value in zip(j.qids.tolist(), values.tolist()):
                assert abs(value - ref[qid][name]) <= 1e-9, (name, qid)
        # the largest noise a uniform sample's kernel mean can have (v = p^2) keeps every value a measure's
        for values in (sdm_recall(j, k, p, 1000, variance=p**2), sdm_ndcg(j, k, p, 1000, variance=p**2)):
            assert np.all((values >= 0) & (values <= 1 + 1e-12))


def test_kde_variance_is_unbiased_and_the_correction_removes_the_noise_bias():
    """Monte Carlo over 3000 samples of a N(0, 1) background with a fixed bandwidth h, where E p^(s) is known
    exactly (P(X + hZ >= s)): sf_variance averages to p^'s variance over the draws, and the plug-in nDCG@10 of
    the noisy p^, biased upward (the convex discount), loses most of that bias with the second-order correction."""
    rng = np.random.default_rng(3)
    n, h, n_unseen, k = 200, 0.35, 300, 10
    run = {"q": {"r0": 2.4, "r1": 2.0, "x": 2.2}}
    j = prepare(run, {"q": {"r0": 1, "r1": 2}})
    mean_model = BackgroundModel("normal", {"loc": 0.0, "scale": float(np.sqrt(1 + h**2))})  # = E p^(s)
    target = sdm_ndcg(j, k, survival_of_rows(j, {"q": mean_model}), n_unseen)[0]
    ps, vs, plug, fixed = [], [], [], []
    for _ in range(3000):
        model = BackgroundModel("kde", {"bandwidth": h}, {"n": float(n)}, np.sort(rng.normal(size=n)))
        p, v = survival_of_rows(j, {"q": model}), variance_of_rows(j, [model])
        ps.append(p[j.label > 0])
        vs.append(v[j.label > 0])
        plug.append(sdm_ndcg(j, k, p, n_unseen)[0])
        fixed.append(sdm_ndcg(j, k, p, n_unseen, variance=v)[0])
    ratio = np.mean(vs, axis=0) / np.var(ps, axis=0, ddof=1)
    assert np.all(np.abs(ratio - 1) < 0.1), ratio
    se = np.std(plug) / np.sqrt(len(plug))
    bias_plug, bias_fixed = np.mean(plug) - target, np.mean(fixed) - target
    assert bias_plug > 8 * se  # the noise's bias is there (0.028, SE 0.002)
    assert abs(bias_fixed) < 0.35 * bias_plug  # and mostly gone (0.006)


def test_weighted_kde_variance_follows_a_stratified_sample():
    """Two strata (5% of the population drawn 60 times, 95% drawn 140 times, Horvitz-Thompson weights): the
    linearized variance of the weighted kernel mean matches its spread over 3000 draws, or errs high (it does not
    use the strata's own means)."""
    rng = np.random.default_rng(5)
    s = np.array([2.0, 2.6, 3.2])
    weights = np.concatenate([np.full(60, 0.05 / 60), np.full(140, 0.95 / 140)])
    ps, vs = [], []
    for _ in range(3000):
        x = np.concatenate([rng.normal(2.0, 0.5, 60), rng.normal(0.0, 1.0, 140)])
        order = np.argsort(x)
        model = BackgroundModel("kde", {"bandwidth": 0.3}, {}, x[order], weights[order])
        ps.append(model.sf(s))
        vs.append(model.sf_variance(s))
    ratio = np.mean(vs, axis=0) / np.var(ps, axis=0, ddof=1)
    assert np.all((ratio > 0.9) & (ratio < 1.3)), ratio
    assert np.array_equal(fit_background(np.arange(10.0), "normal").sf_variance(s), np.zeros(3))  # not a mean
