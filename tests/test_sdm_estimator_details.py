"""Details of the SDM estimators that the other tests leave loose: ties and boundaries of the background fits
(point mass, empirical body and generalized-Pareto tail, the 1% zero share, the 5 scores a shape needs), the
kde's variance, the covariate's line (3 points, the upper half, weights, leave-one-out, ties with s), the count
distribution's length, the reference threshold estimator with nothing unseen, and the report's gap closed.
Every expected value is computed here independently (by hand, scipy or numpy.polyfit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pyterrier_sparse_eval import sdm
from pyterrier_sparse_eval._covariate import _TopFit
from pyterrier_sparse_eval._sdm_report import ThreeWay
from pyterrier_sparse_eval.measures import prepare
from pyterrier_sparse_eval.measures._score_dist import fit_background
from pyterrier_sparse_eval.measures._sdm import UnseenAbove, correctable, corrected

# --- background fits ---


def test_a_point_mass_background_counts_a_score_equal_to_it_as_above():
    """Every sampled score is 2.0: P(S >= 2.0) = 1 (a tie counts above, as everywhere in SDM), P(S >= 2.0 + ulp)
    = 0; with 2 of 5 sampled documents censored below, P(S >= 2.0) = 3 / 5."""
    model = fit_background([2.0, 2.0, 2.0])
    assert model.family == "point-mass"
    above = np.nextafter(2.0, np.inf)
    np.testing.assert_array_equal(model.sf([1.0, 2.0, above]), [1.0, 1.0, 0.0])
    censored = fit_background([2.0, 2.0, 2.0], n_below=2, below=1.0)
    assert float(censored.sf(2.0)) == pytest.approx(3 / 5, abs=1e-15)
    assert float(censored.sf(above)) == 0.0


def test_empirical_gpd_is_the_data_at_a_repeated_maximum():
    """Up to and at the largest sampled score the empirical-gpd model is the sample's own survival: with the
    maximum sampled twice out of 40, P(S >= max) = 2 / 40 (the tail beyond starts at 1 / 40 and falls)."""
    rng = np.random.default_rng(11)
    sample = np.sort(rng.normal(0.0, 1.0, 40))
    sample[-2] = sample[-1]
    model = fit_background(sample, "empirical-gpd")
    top = sample[-1]
    assert float(model.sf(top)) == pytest.approx(2 / 40, abs=1e-15)
    # below the maximum: the share of sampled scores >= s, counted here
    s = np.r_[sample[[0, 5, 20, 37]], sample[10] + 1e-9]
    np.testing.assert_allclose(model.sf(s), [(sample >= v).mean() for v in s], atol=1e-15)
    beyond = model.sf(top + np.array([1e-9, 0.5, 1.0]))
    assert np.all(beyond <= 1 / 40) and np.all(np.diff(beyond) < 0) and beyond[-1] > 0


def _silverman_bandwidth(x):
    """0.9 * min(sd, IQR / 1.34) * n^(-1/5): Silverman's rule of thumb (Density Estimation, 1986, eq. 3.31)."""
    iqr = np.percentile(x, 75) - np.percentile(x, 25)
    return 0.9 * min(np.std(x, ddof=1), iqr / 1.34) * len(x) ** -0.2


def _silverman_kde_sf(x, s):
    """A Gaussian kde's survival at each s, with Silverman's bandwidth."""
    return stats.norm.sf(s, x[:, None], _silverman_bandwidth(x)).mean(axis=0)


def test_kde_survival_variance_is_the_sample_variance_of_kernel_terms_over_n():
    """The kde's p(s) is a mean of the n sampled documents' kernel terms K_i(s) = P(x_i + hZ >= s) (0 for a
    censored one); its estimated variance is var(K, ddof=1) / n, computed here over all n = 45 + 15, the 15
    censored documents as zeros, h by Silverman's rule on the 45 observed scores."""
    rng = np.random.default_rng(5)
    observed = rng.normal(1.0, 0.5, 45)
    model = fit_background(observed, "kde", n_below=15, below=observed.min())
    h = _silverman_bandwidth(observed)
    assert model.params["bandwidth"] == pytest.approx(h, rel=1e-12)
    s = np.array([observed.min(), 0.8, 1.0, 1.6, 2.2])
    for value, got in zip(s, model.sf_variance(s)):
        terms = np.r_[stats.norm.sf(value, observed, h), np.zeros(15)]
        assert got == pytest.approx(np.var(terms, ddof=1) / 60, rel=1e-9)
        # the same mean the model's survival is
        assert float(model.sf(value)) == pytest.approx(terms.mean(), rel=1e-9)


def test_auto_takes_zeros_as_a_point_mass_from_one_percent_of_the_sample():
    """1 zero among 100 sparse scores is 1% of the sample: ``auto`` puts it in a point mass at 0 and fits its
    kde to the 99 positive scores alone: p(0) = 1, p(s > 0) = 0.99 * kde_99(s)."""
    rng = np.random.default_rng(2)
    positive = rng.lognormal(1.0, 0.5, 99)
    model = fit_background(np.r_[0.0, positive])
    assert model.params["below_share"] == 0.01
    assert float(model.sf(0.0)) == 1.0
    s = np.array([0.5, 2.0, 3.0, 6.0])
    np.testing.assert_allclose(model.sf(s), 0.99 * _silverman_kde_sf(positive, s), rtol=1e-9)


def test_five_observed_scores_get_the_family_asked_for_and_four_the_empirical_model():
    """A shape needs at least 5 observed scores: 5 get the normal asked for (mean, sd with ddof=1); 4 get the
    sample's own survival (share of scores >= s)."""
    five = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    model = fit_background(five, "normal")
    assert model.family == "normal"
    s = np.array([0.0, 3.0, 5.0, 12.0])
    # mean 5, sd sqrt(((-4)^2 + (-3)^2 + (-1)^2 + 2^2 + 6^2) / 4) = sqrt(66 / 4)
    np.testing.assert_allclose(model.sf(s), stats.norm.sf(s, 5.0, np.sqrt(66 / 4)), rtol=1e-12)
    four = fit_background(five[:4], "normal")
    assert four.family == "empirical"
    np.testing.assert_array_equal(four.sf([1.0, 2.0, 3.0, 7.0, 7.5]), [1.0, 0.75, 0.5, 0.25, 0.0])


# --- the covariate's line (one query's top part) ---


def test_covariate_line_needs_three_sampled_documents_of_positive_weight():
    """Three retrieved sampled documents on y = 2 + 3x fit the line (the unseen top documents are predicted on
    it); two, or three with one of weight 0 (a stratum sampled whole), give no line."""
    x = np.array([1.0, 2.0, 4.0])
    unseen = np.array([0.5, 3.0, 5.0])
    fit = _TopFit.fit(unseen, x, 2 + 3 * x, np.ones(3))
    assert fit is not None
    np.testing.assert_allclose(fit.pred_unseen, 2 + 3 * unseen, atol=1e-9)
    assert _TopFit.fit(unseen, x[:2], 2 + 3 * x[:2], np.ones(2)) is None
    assert _TopFit.fit(unseen, x, 2 + 3 * x, np.array([1.0, 1.0, 0.0])) is None


@pytest.mark.parametrize(("n", "kept"), [(21, 11), (12, 8)])
def test_covariate_line_is_fitted_on_the_upper_half_of_the_sampled_top(n, kept):
    """The line is the least-squares fit through the sampled documents of highest pooling score: half of them,
    rounded up (21 -> 11), and at least 8 (12 -> 8); numpy.polyfit on those gives the same predictions."""
    rng = np.random.default_rng(n)
    x = np.sort(rng.uniform(0.0, 10.0, n))[::-1]
    y = 1.0 + 0.5 * x**1.5 + rng.normal(0.0, 0.3, n)
    unseen = np.array([2.0, 7.5, 9.5])
    fit = _TopFit.fit(unseen, x, y, np.ones(n))
    assert fit is not None
    slope, intercept = np.polyfit(x[:kept], y[:kept], 1)
    np.testing.assert_allclose(fit.pred_unseen, intercept + slope * unseen, rtol=1e-9)


def test_covariate_line_weighs_each_sampled_document_by_its_weight():
    """With a stratified sample's unequal weights the line is weighted least squares (numpy.polyfit weighs
    residuals, so by the square roots of the weights)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0.0, 5.0, 7)
    y = 2.0 + x + rng.normal(0.0, 1.0, 7)
    w = np.array([1.0, 9.0, 1.0, 4.0, 1.0, 16.0, 2.0])
    unseen = np.array([1.0, 4.0])
    fit = _TopFit.fit(unseen, x, y, w)
    assert fit is not None
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))
    np.testing.assert_allclose(fit.pred_unseen, intercept + slope * unseen, rtol=1e-9)


def test_covariate_predicts_each_sampled_document_from_the_line_fitted_without_it():
    """The sampled documents' predictions are leave-one-out: refitting the weighted line without each one (numpy,
    7 times) predicts it as the fit does."""
    rng = np.random.default_rng(8)
    x = rng.uniform(0.0, 5.0, 7)
    y = 2.0 + x + rng.normal(0.0, 1.0, 7)
    w = np.array([1.0, 9.0, 1.0, 4.0, 1.0, 16.0, 2.0])
    fit = _TopFit.fit(np.array([1.0]), x, y, w)
    assert fit is not None
    for i in range(7):
        others = np.arange(7) != i
        slope, intercept = np.polyfit(x[others], y[others], 1, w=np.sqrt(w[others]))
        assert fit.pred_sampled[i] == pytest.approx(intercept + slope * x[i], rel=1e-9)


def test_covariate_residual_share_counts_a_residual_equal_to_the_threshold():
    """P(e >= t) over the 7 equally weighted residuals of the line: at the i-th smallest residual, (7 - i) / 7
    (the residual itself counted), and between two residuals the share of those above."""
    rng = np.random.default_rng(9)
    x = rng.uniform(0.0, 5.0, 7)
    y = 2.0 + x + rng.normal(0.0, 1.0, 7)
    fit = _TopFit.fit(np.array([1.0]), x, y, np.ones(7))
    assert fit is not None
    slope, intercept = np.polyfit(x, y, 1)
    resid = np.sort(y - (intercept + slope * x))
    np.testing.assert_allclose(fit.resid, resid, atol=1e-12)
    np.testing.assert_allclose(fit._share_at_least(fit.resid), np.arange(7, 0, -1) / 7)
    middle = (resid[1:] + resid[:-1]) / 2
    np.testing.assert_allclose(fit._share_at_least(middle), np.arange(6, 0, -1) / 7)


def test_covariate_calibration_counts_a_sampled_document_scoring_exactly_s():
    """The calibration's Horvitz-Thompson term counts the sampled documents with y_j >= s: moving s from y_j to
    the next float above drops document j, so the term falls by its weight (30 unseen / 10 sampled = 3)."""
    rng = np.random.default_rng(10)
    x = np.sort(rng.uniform(0.0, 5.0, 10))
    y = 2.0 + x + rng.normal(0.0, 1.0, 10)
    fit = _TopFit.fit(np.linspace(0.0, 5.0, 30), x, y, np.ones(10))
    assert fit is not None
    for j in (2, 6, 9):
        _, error = fit.terms(np.array([y[j], np.nextafter(y[j], np.inf)]))
        assert error[0] - error[1] == pytest.approx(3.0, abs=1e-9)


# --- the count distribution's length ---


def _two_relevant_rows():
    """One query: relevant documents at pooled ranks 0 and 2 among 5."""
    run = {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}}
    j = prepare(run, {"q": {"a": 1, "c": 1}})
    rows = np.flatnonzero(j.label > 0)
    assert j.rank[rows].tolist() == [0, 2]
    return j, rows


def test_unseen_count_distribution_is_read_whole_and_refused_when_cut_short():
    """3 unseen documents, P(each above) 0.5 and 0.2 for the two relevant rows: at k=10 (beyond the 5 + 3
    documents) R@10 = 1 with the 4 counts 0-3; the same distribution without its count 3 is refused, not read
    as if P(X = 3) were 0."""
    j, rows = _two_relevant_rows()
    pmf = stats.binom.pmf(np.arange(4)[None, :], 3, np.array([0.5, 0.2])[:, None])
    recall_10 = correctable([10])[0]
    assert str(recall_10) == "pse.R@10"
    whole = UnseenAbove(rows, pmf, most=3)
    assert corrected(recall_10, j, whole, 3)[0] == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="stops at 3 terms"):
        corrected(recall_10, j, UnseenAbove(rows, pmf[:, :3], most=3), 3)


def test_unseen_count_distribution_must_reach_the_cut_off_from_the_highest_relevant_row():
    """Without a known most: R@4 reads P(X <= 3) at rank 0, so 4 counts are needed and 3 are refused. By hand,
    X ~ Binomial(5, 0.5) at rank 0 and Binomial(5, 0.2) at rank 2: R@4 = (P(X0 <= 3) + P(X2 <= 1)) / 2 =
    ((1 + 5 + 10 + 10) / 32 + 0.8^5 + 5 * 0.2 * 0.8^4) / 2."""
    j, rows = _two_relevant_rows()
    pmf = stats.binom.pmf(np.arange(4)[None, :], 5, np.array([0.5, 0.2])[:, None])
    recall_4 = correctable([4])[0]
    assert str(recall_4) == "pse.R@4"
    want = (26 / 32 + 0.8**5 + 5 * 0.2 * 0.8**4) / 2
    assert corrected(recall_4, j, UnseenAbove(rows, pmf), 5)[0] == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="stops at 3 terms"):
        corrected(recall_4, j, UnseenAbove(rows, pmf[:, :3]), 5)


# --- the published reference's threshold estimator ---


def test_threshold_recall_with_nothing_unseen_is_the_recall_of_the_run():
    """Every document pooled (nothing unseen): the threshold tau solves (run documents >= tau) = k, and the
    reference's Recall@k is the share of relevant documents ranked in the top k, at every k. Scores 0-10 are
    integers, so the bisection lands on some exactly (its first midpoint is 5, the 6th score): a relevant
    document there is in the top k only from k = 6."""
    docnos = [f"d{i}" for i in range(11)]
    scores = {f"d{i}": float(i) for i in range(11)}
    qrels = pd.DataFrame({"qid": "q1", "docno": ["d5", "d8", "d2"], "label": 1})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=8, seed=0)
    assert pool.n_unseen == 0
    run = pd.DataFrame({"qid": "q1", "docno": list(scores), "score": list(scores.values())})
    # ranks: d10 1st, d9 2nd, d8 3rd, d7 4th, d6 5th, d5 6th, ..., d2 9th
    for k, want in [(1, 0), (2, 0), (3, 1), (5, 1), (6, 2), (8, 2), (9, 3), (10, 3), (11, 3)]:
        got = sdm.threshold_recall(run, qrels, pool, k, family="normal")
        assert got == {"q1": pytest.approx(want / 3, abs=1e-12)}, k


# --- the three-way report's table ---


@pytest.mark.parametrize(
    ("pooled", "sdm_value", "full", "closed"),
    [
        # gap 0.1, SDM 0.02 short of the truth: 1 - 0.02 / 0.1
        (0.50, 0.42, 0.40, "80%"),
        # SDM overshoots by 0.02: the same 80%
        (0.50, 0.38, 0.40, "80%"),
        # the pool below the truth (gap -0.1): its size counts
        (0.30, 0.38, 0.40, "80%"),
        # a gap of exactly 0.01 is shown: 1 - 0.005 / 0.01
        (0.01, 0.005, 0.0, "50%"),
        # below 0.01 there is no gap to close
        (0.005, 0.004, 0.0, "-"),
    ],
)
def test_three_way_table_gives_the_share_of_the_gap_closed(pooled, sdm_value, full, closed):
    """The table's "gap closed" is 1 - |SDM - full| / |pooled - full|, given from a gap of 0.01 up."""
    docnos = [f"d{i}" for i in range(200)]
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "label": [1]})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=60, seed=0)
    report = ThreeWay({"bm25": {"R@100": {"pooled": pooled, "sdm": sdm_value, "full": full}}}, {}, {}, pool)
    row = report.table().splitlines()[-1].split()
    assert row[:2] == ["bm25", "R@100"] and row[-1] == closed
