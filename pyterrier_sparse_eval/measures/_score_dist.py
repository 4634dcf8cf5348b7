"""Background score distributions: how a query scores the documents nobody judged or pooled.

Score Distribution Modeling (SDM) needs, per query and system, the survival function p(s) = P(S >= s) of the
scores of random non-relevant ("background") documents, fitted on a small random sample of them. Families:

- ``empirical``: the sample's own survival function (the share of sampled scores >= s), exact within the
  sample's range and 0 above its largest score. No shape is assumed;
- ``kde``: a Gaussian kernel density estimate of the sample, bandwidth by Silverman's rule of thumb;
- ``empirical-gpd``: the same body with a generalized-Pareto tail beyond the largest sampled score, for
  extrapolating when the unseen documents outnumber the sample by orders of magnitude;
- ``normal`` and ``skewnorm``: continuous fits (the skew-normal is what the published SDM reference uses for
  dense retrieval's cosine scores); ``lognormal`` for positive scores;
- ``zero-inflated``: an exact point mass at 0 plus a log-normal for the positive scores. Sparse retrieval gives
  every document that shares no term with the query a score of exactly 0, often most of the corpus, which no
  continuous family can represent.

Censoring: a run only shows the scores of the sampled documents it retrieved. The others are known only to
score below the run's lowest score c. ``fit_background(observed, n_below=m, below=c)`` fits the family to the
observed scores and puts the mass w = m / (n + m) below c: p(s) = (1 - w) * p_fit(s) for s >= c. Zeros of a
sparse run are the same case (``zero-inflated`` is "mass at 0, log-normal above"). SDM only ever evaluates
p(s) at scores of retrieved documents, which are all >= c, so the censored part is never guessed.

``fit_background(sample, family="auto")`` uses ``kde`` (a Gaussian kernel density estimate with Silverman's
bandwidth, smooth where the empirical survival steps) when at least 50 scores are observed, else picks the
parametric family by AIC among normal, skew-normal and (positive scores) log-normal, with zeros as a point
mass when at least 1% of the sample is 0. On the real collections this closes the pooled-vs-full gap best
(README, "SDM"). Every fit carries its diagnostics (KS statistic and log-likelihood on the observed part, ``below_share``,
``zero_share``, sample sizes). Degenerate samples (nothing observed, all equal, fewer than 5 observed scores)
get explicit models, named in ``family``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special, stats

__all__ = ["BackgroundModel", "fit_background", "FAMILIES", "WEIGHTED_FAMILIES"]

FAMILIES = ("auto", "empirical", "kde", "empirical-gpd", "normal", "skewnorm", "lognormal", "zero-inflated")
_ZERO_SHARE_FOR_AUTO = 0.01
_TAIL_SHARE = 0.05
_MIN_OBSERVED = 5
_KDE_FOR_AUTO = 50


@dataclass
class BackgroundModel:
    """A fitted background score distribution; ``sf(s)`` = P(background score >= s).

    Attributes:
        family: the family of the observed part (``"point-mass"`` or ``"empirical"`` for degenerate samples;
            ``"zero-inflated"`` for a log-normal above a point mass at 0).
        params: the fitted parameters; ``below_share`` (w) and ``below`` (c) describe the mass below c.
        diagnostics: ``ks`` (Kolmogorov-Smirnov statistic on the observed part), ``loglik`` (of the observed
            part), ``below_share``, ``zero_share``, ``n`` (sample size, censored included), ``observed``.
    """

    family: str
    params: dict[str, Any]
    diagnostics: dict[str, float] = field(default_factory=dict)
    _sample: np.ndarray | None = field(default=None, repr=False)
    #: weights of the sorted ``_sample`` (a stratified sample; None: every score weighs the same)
    _weights: np.ndarray | None = field(default=None, repr=False)

    def sf(self, s: Any) -> np.ndarray:
        """P(S >= s), vectorised (exact only for s >= ``params['below']`` when part of the sample is censored)."""
        s = np.asarray(s, dtype=np.float64)
        w, c = self.params.get("below_share", 0.0), self.params.get("below", -np.inf)
        return np.where(s < c, 1.0, (1.0 - w) * self._sf_observed(s))

    def _sf_observed(self, s: np.ndarray) -> np.ndarray:
        p, fam = self.params, self.family
        if fam == "point-mass":
            return (s <= p["value"]).astype(np.float64)
        if fam == "normal":
            return stats.norm.sf(s, p["loc"], p["scale"])
        if fam == "skewnorm":
            return stats.skewnorm.sf(s, p["a"], p["loc"], p["scale"])
        if fam in ("lognormal", "zero-inflated"):
            return stats.lognorm.sf(s, p["sigma"], 0, np.exp(p["mu"]))
        if fam in ("empirical", "empirical-gpd", "kde"):
            sample, weights = self._sample, self._weights
            assert sample is not None
            if weights is None:
                body = 1.0 - np.searchsorted(sample, s, side="left") / len(sample)
            else:  # the weight of the sampled scores >= s
                above = np.append(np.cumsum(weights[::-1])[::-1], 0.0) / weights.sum()
                body = above[np.searchsorted(sample, s, side="left")]
            if fam == "empirical":
                return body
            if fam == "kde":
                out = np.empty(s.size)
                share = None if weights is None else weights / weights.sum()
                for rows, kernels in self._kernels(s):
                    out[rows] = kernels.mean(axis=1) if share is None else kernels @ share
                return out.reshape(s.shape)
            top, tail_p = p["max"], p["tail_share"]
            tail = tail_p * stats.genpareto.sf(s - top, p["shape"], 0, p["scale"])
            return np.where(s <= top, body, tail)
        raise ValueError(f"unknown family {fam!r}")

    def sf_variance(self, s: Any) -> np.ndarray:
        """The estimated sampling variance of ``sf(s)``, for ``kde``: its p(s) is a mean over the sampled documents
        of their kernel terms K_i(s) (0 for a censored one), whose variance is estimated from those terms: the
        sample variance over n; for a weighted (stratified) sample the linearized variance of the weighted mean,
        sum_i (w_i / W)^2 (K_i - p)^2 over the observed documents (a censored one adds O(p^2 / n); its weight
        is not kept). 0 for the other families (a fitted shape's noise is not a mean's) and below the censoring
        point."""
        s = np.asarray(s, dtype=np.float64)
        out = np.zeros(s.shape)
        if self.family != "kde" or self._sample is None:
            return out
        x = self._sample
        w, c = self.params.get("below_share", 0.0), self.params.get("below", -np.inf)
        var = out.ravel()
        if self._weights is None:
            n = float(self.diagnostics.get("n") or (len(x) / (1.0 - w) if w < 1 else len(x)))
        else:
            share = self._weights * (1.0 - w) / self._weights.sum()  # w_i / W, W with the censored weight
        for rows, kernels in self._kernels(s):
            if self._weights is None:
                p = kernels.sum(axis=1) / n
                var[rows] = np.maximum((kernels**2).sum(axis=1) / n - p**2, 0.0) / max(n - 1.0, 1.0)
            else:
                p = kernels @ share
                var[rows] = ((share[None, :] * (kernels - p[:, None])) ** 2).sum(axis=1)
        return np.where(s < c, 0.0, var.reshape(s.shape))

    def _kernels(self, s: np.ndarray, chunk: int = 256) -> Iterator[tuple[slice, np.ndarray]]:
        """The ``kde``'s kernel terms K_i(s) = P(x_i + hZ >= s), 256 scores of ``s`` (flattened) at a time:
        (the chunk's positions, its scores x the sampled scores)."""
        flat, x, h = s.ravel(), self._sample, self.params["bandwidth"]
        assert x is not None
        for i in range(0, len(flat), chunk):
            # stats.norm.sf(u) is special.ndtr(-u), called here without the distribution's per-call checks
            yield slice(i, i + chunk), special.ndtr((x[None, :] - flat[i : i + chunk, None]) / h)

    def cdf_observed(self, s: Any) -> np.ndarray:
        """CDF of the observed (uncensored) part alone, for plots and goodness of fit."""
        return 1.0 - self._sf_observed(np.asarray(s, dtype=np.float64))


def _ks(x: np.ndarray, cdf: Any) -> float:
    return float(stats.kstest(x, cdf).statistic) if len(x) else float("nan")


def _fit_normal(x: np.ndarray) -> BackgroundModel:
    loc, scale = float(x.mean()), float(x.std(ddof=1))
    return BackgroundModel(
        "normal",
        {"loc": loc, "scale": scale},
        {"ks": _ks(x, stats.norm(loc, scale).cdf), "loglik": float(stats.norm.logpdf(x, loc, scale).sum())},
    )


_LOG2, _LOG_SQRT_2PI, _LOG_XMAX = np.log(2), np.log(np.sqrt(2 * np.pi)), np.log(np.finfo(float).max)


def _skewnorm_nnlf(theta: np.ndarray, x: np.ndarray) -> float:
    """scipy's penalized negative log-likelihood of a skew-normal (``rv_continuous._penalized_nnlf``), the same
    operations in the same order without its generic machinery (most of a small sample's fit time)."""
    a, loc, scale = theta
    if not np.isfinite(a) or scale <= 0:
        return np.inf
    z = (x - loc) / scale
    log_phi = -(z**2) / 2.0 - _LOG_SQRT_2PI
    logpdf = log_phi if a == 0 else _LOG2 + log_phi + special.log_ndtr(a * z)
    finite = np.isfinite(logpdf)
    n_bad = finite.size - np.count_nonzero(finite)
    return float(-np.sum(logpdf[finite]) + n_bad * _LOG_XMAX * 100 + len(z) * np.log(scale))


def skewnorm_mle(x: np.ndarray) -> tuple[float, float, float]:
    """``scipy.stats.skewnorm.fit(x)`` (maximum likelihood), to the last bit and ~3x faster: the same
    method-of-moments start and Nelder-Mead (``optimize.fmin``) on :func:`_skewnorm_nnlf` (tested against
    scipy's own fit)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    s = np.clip(stats.skew(x), -0.99, 0.99)
    s_23 = np.abs(s) ** (2 / 3)
    d = np.sign(s) * np.sqrt(np.pi / 2 * s_23 / (s_23 + ((4 - np.pi) / 2) ** (2 / 3)))
    with np.errstate(divide="ignore"):
        a0 = np.sqrt(np.divide(d**2, (1 - d**2))) * np.sign(s)
    scale0 = np.sqrt(np.var(x) / (1 - 2 * d**2 / np.pi))
    loc0 = np.mean(x) - scale0 * d * np.sqrt(2 / np.pi)
    a, loc, scale = optimize.fmin(_skewnorm_nnlf, [a0, loc0, scale0], args=(x,), disp=0)
    if not (np.isfinite(a) and scale > 0):
        raise stats.FitError("Optimization converged to parameters that are outside the range allowed.")
    return float(a), float(loc), float(scale)


def _fit_skewnorm(x: np.ndarray) -> BackgroundModel:
    a, loc, scale = skewnorm_mle(x)
    return BackgroundModel(
        "skewnorm",
        {"a": float(a), "loc": float(loc), "scale": float(scale)},
        {
            "ks": _ks(x, stats.skewnorm(a, loc, scale).cdf),
            "loglik": float(stats.skewnorm.logpdf(x, a, loc, scale).sum()),
        },
    )


def _fit_lognormal(x: np.ndarray, name: str = "lognormal") -> BackgroundModel:
    logs = np.log(x)
    mu, sigma = float(logs.mean()), float(max(logs.std(ddof=1), 1e-12))
    dist = stats.lognorm(sigma, 0, np.exp(mu))
    return BackgroundModel(
        name, {"mu": mu, "sigma": sigma}, {"ks": _ks(x, dist.cdf), "loglik": float(dist.logpdf(x).sum())}
    )


def _fit_empirical(x: np.ndarray) -> BackgroundModel:
    return BackgroundModel(
        "empirical", {"max": float(np.max(x))}, {"ks": 0.0, "loglik": float("nan")}, np.sort(x)
    )


def sorted_quantile(sample: np.ndarray, q: float) -> float:
    """``np.percentile(sample, 100 * q)`` (numpy's default linear method, the same float operations) of a sorted,
    finite, non-empty sample (as the fits receive it), without its per-call overhead (a third of a KDE fit's time
    on bootstrap rounds)."""
    n = len(sample)
    virtual = (n - 1) * q
    if virtual >= n - 1:
        return float(sample[-1])
    i = int(np.floor(virtual))
    gamma, a, b = virtual - i, sample[i], sample[i + 1]
    diff = b - a
    return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)


def _fit_kde(x: np.ndarray) -> BackgroundModel:
    """Gaussian kernels on every sampled score, bandwidth h = 0.9 * min(sd, IQR / 1.34) * n^(-1/5):
    Silverman's rule of thumb (B. W. Silverman, Density Estimation for Statistics and Data Analysis,
    Chapman & Hall, 1986, eq. 3.31), robust to the heavy right tail of retrieval scores through the IQR."""
    sample = np.sort(x)
    iqr = sorted_quantile(sample, 0.75) - sorted_quantile(sample, 0.25)
    sd = float(sample.std(ddof=1))
    h = 0.9 * min(sd, iqr / 1.34 if iqr > 0 else sd) * len(sample) ** -0.2
    return BackgroundModel(
        "kde", {"bandwidth": max(h, 1e-12)}, {"ks": float("nan"), "loglik": float("nan")}, sample
    )


def _fit_empirical_gpd(x: np.ndarray) -> BackgroundModel:
    """The sample's own survival function up to its largest score, a generalized-Pareto tail beyond it.

    The tail's shape is fitted (maximum likelihood) to the exceedances over the sample's 95% quantile u
    (peaks over threshold; Pickands-Balkema-de Haan). By the GPD's threshold stability, exceedances over any
    higher threshold v follow a GPD with the same shape and scale + shape * (v - u) (S. Coles, An
    Introduction to Statistical Modeling of Extreme Values, Springer, 2001, section 4.2), so the excess over
    the maximum uses v = max; the tail starts at the empirical mass 1/n of the maximum. Below the maximum
    the model is the data.
    """
    sample = np.sort(x)
    u = float(np.quantile(sample, 1 - _TAIL_SHARE))
    exceed = sample[sample > u] - u
    if len(exceed) >= 20:
        shape, _, scale = stats.genpareto.fit(exceed, floc=0)
    else:  # exponential tail from the mean excess
        shape, scale = 0.0, float(exceed.mean()) if len(exceed) else 0.0
    top = float(sample[-1])
    scale_top = float(scale + shape * (top - u))
    model = BackgroundModel(
        "empirical-gpd",
        {
            "max": top,
            "tail_share": 1.0 / len(sample),
            "shape": float(shape),
            "scale": max(scale_top, 1e-12),
            "u": u,
        },
        {},
        sample,
    )
    model.diagnostics.update({"ks": 0.0, "loglik": float("nan"), "tail_exceedances": float(len(exceed))})
    return model


def _fit_parametric(x: np.ndarray) -> BackgroundModel:
    fits = [(2, _fit_normal(x)), (3, _fit_skewnorm(x))]
    if np.all(x > 0):
        fits.append((2, _fit_lognormal(x)))
    aic = [2 * k - 2 * m.diagnostics["loglik"] for k, m in fits]
    return fits[int(np.nanargmin(aic))][1]


def _check_finite(sample: Any) -> None:
    bad = ~np.isfinite(np.asarray(sample, dtype=np.float64))
    if bad.any():
        raise ValueError(
            f"The background sample has {int(bad.sum())} scores that are not finite (NaN or +-inf): give finite "
            "scores. Sampled documents the system does not score (-inf: no query term) are censored: leave them "
            "out of the sample and count them in n_below, below the lowest score the run returned."
        )


def fit_background(
    sample: Any,
    family: str = "auto",
    *,
    n_below: int = 0,
    below: float | None = None,
    weights: Any = None,
    weight_below: float | None = None,
) -> BackgroundModel:
    """Fit a background score model to one query's sample of background document scores.

    Args:
        sample: the observed scores of sampled background documents.
        family: one of :data:`FAMILIES`.
        n_below: sampled documents whose score was not observed and is known to be below ``below`` (e.g.
            sampled documents a run did not retrieve).
        below: the censoring point c (default: the lowest observed score).
        weights, weight_below: for a stratified sample, each observed score's weight (the unseen documents
            it stands for: (N_h - n_h) / n_h in its stratum h) and the censored documents' total weight. The
            model is then the Horvitz-Thompson estimate: p(s) = (weight of sampled scores >= s) / (total
            weight), unbiased for the share of unseen documents scoring >= s with ``empirical``; ``kde``,
            ``normal``, ``skewnorm`` and ``auto`` fit the weighted sample (weighted kernels, weighted maximum
            likelihood).
    """
    if family not in FAMILIES:
        raise ValueError(f"Unknown background family {family!r}; choose one of {', '.join(FAMILIES)}.")
    if n_below < 0:
        raise ValueError("n_below must be >= 0.")
    _check_finite(sample)
    if weights is not None:
        return _fit_weighted(sample, weights, family, n_below, below, weight_below or 0.0)
    x = np.asarray(sample, dtype=np.float64).ravel()
    n_total = len(x) + int(n_below)
    if n_total < 2:
        raise ValueError(f"A background model needs at least 2 sampled documents, got {n_total}.")
    zero_share = float(np.sum(x == 0)) / n_total
    if family == "zero-inflated" and np.any(x < 0):
        raise ValueError("zero-inflated needs non-negative scores; use normal, skewnorm or empirical-gpd.")
    # a point mass at 0 (sparse scores) is censoring at 0: p(s) = (1 - w) * p_fit(s) for s > 0
    if family == "zero-inflated" or (
        family in ("auto", "lognormal") and zero_share >= _ZERO_SHARE_FOR_AUTO and np.all(x >= 0)
    ):
        zeros = int(np.sum(x == 0))
        x = x[x > 0]
        n_below += zeros
        tiny = float(np.nextafter(0.0, 1.0))
        below = tiny if below is None else max(below, tiny)
        if family == "auto" and len(x) < _KDE_FOR_AUTO:
            family = "zero-inflated"
    if below is None:
        below = float(x.min()) if len(x) else 0.0
    if len(x) == 0:
        model = BackgroundModel("point-mass", {"value": -np.inf})  # nothing observed at or above c
    elif np.all(x == x[0]):
        model = BackgroundModel("point-mass", {"value": float(x[0])})
    elif len(x) < _MIN_OBSERVED or family == "empirical":
        model = _fit_empirical(x)  # the data itself (also: too few observed scores for a shape)
    elif family == "kde" or (family == "auto" and len(x) >= _KDE_FOR_AUTO):
        model = _fit_kde(x)
    elif family == "auto":
        model = _fit_parametric(x)
    elif family == "normal":
        model = _fit_normal(x)
    elif family == "skewnorm":
        model = _fit_skewnorm(x)
    elif family in ("lognormal", "zero-inflated"):
        if np.any(x <= 0):
            raise ValueError("lognormal needs positive scores; use normal, skewnorm or empirical-gpd.")
        model = _fit_lognormal(x, family)
    else:
        model = _fit_empirical_gpd(x)
    model.params["below_share"] = n_below / n_total
    model.params["below"] = float(below) if n_below else -np.inf
    model.diagnostics.update(
        {
            "below_share": n_below / n_total,
            "zero_share": zero_share,
            "n": float(n_total),
            "observed": float(len(x)),
        }
    )
    return model


WEIGHTED_FAMILIES = ("auto", "empirical", "kde", "normal", "skewnorm")


def _weighted_quantiles(x: np.ndarray, w: np.ndarray, q: Any) -> np.ndarray:
    """Quantiles of sorted ``x`` with weights ``w`` (midpoint rule)."""
    cum = (np.cumsum(w) - 0.5 * w) / w.sum()
    return np.interp(q, cum, x)


def _fit_weighted(
    sample: Any, weights: Any, family: str, n_below: int, below: float | None, weight_below: float
) -> BackgroundModel:
    """:func:`fit_background` for a stratified sample: weighted fits (see there)."""
    if family not in WEIGHTED_FAMILIES:
        raise ValueError(
            f"A stratified background sample is fitted with {', '.join(WEIGHTED_FAMILIES)}, not {family!r}."
        )
    x = np.asarray(sample, dtype=np.float64).ravel()
    w = np.asarray(weights, dtype=np.float64).ravel()
    if len(w) != len(x):
        raise ValueError(f"{len(w)} weights for {len(x)} sampled scores.")
    if (w < 0).any() or weight_below < 0:
        raise ValueError("Sample weights must be >= 0.")
    if n_below + len(x) < 2:
        raise ValueError(f"A background model needs at least 2 sampled documents, got {n_below + len(x)}.")
    keep = w > 0  # a weight of 0 stands for no unseen document (its stratum was sampled whole)
    x, w = x[keep], w[keep]
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    total = float(w.sum()) + float(weight_below)
    if below is None:
        below = float(x[0]) if len(x) else 0.0
    n_eff = float(w.sum() ** 2 / (w**2).sum()) if len(x) else 0.0
    if family == "auto":
        family = "kde" if len(x) >= _KDE_FOR_AUTO else "parametric"
    if len(x) == 0 or total == 0:
        model = BackgroundModel("point-mass", {"value": -np.inf})
    elif np.all(x == x[0]):
        model = BackgroundModel("point-mass", {"value": float(x[0])})
    elif len(x) < _MIN_OBSERVED or family == "empirical":
        model = BackgroundModel("empirical", {"max": float(x[-1])}, {"ks": 0.0, "loglik": float("nan")}, x, w)
    elif family == "kde":
        mean, sd = _weighted_moments(x, w, n_eff)
        q75, q25 = _weighted_quantiles(x, w, [0.75, 0.25])
        iqr = float(q75 - q25)
        h = 0.9 * min(sd, iqr / 1.34 if iqr > 0 else sd) * n_eff**-0.2
        model = BackgroundModel(
            "kde", {"bandwidth": max(h, 1e-12)}, {"ks": float("nan"), "loglik": float("nan")}, x, w
        )
    else:
        fits = []
        if family in ("parametric", "normal"):
            mean, sd = _weighted_moments(x, w, n_eff)
            fits.append((2, BackgroundModel("normal", {"loc": mean, "scale": max(sd, 1e-12)})))
        if family in ("parametric", "skewnorm"):
            fits.append((3, _fit_weighted_skewnorm(x, w)))
        share = w / w.sum()
        for _, m in fits:
            m.diagnostics["loglik"] = float(n_eff * np.sum(share * np.log(np.maximum(_pdf(m, x), 1e-300))))
        aic = [2 * k - 2 * m.diagnostics["loglik"] for k, m in fits]
        model = fits[int(np.argmin(aic))][1]
    below_share = float(weight_below) / total if total > 0 else 0.0  # total 0: nothing unseen, p = 0
    model.params["below_share"] = below_share
    model.params["below"] = float(below) if weight_below > 0 else -np.inf
    model.diagnostics.update(
        {
            "below_share": below_share,
            "zero_share": float(np.sum(w[x == 0])) / total if total > 0 else 0.0,
            "n": float(n_below + len(x)),
            "observed": float(len(x)),
            "n_eff": n_eff,
            "weighted": 1.0,
        }
    )
    return model


def _weighted_moments(x: np.ndarray, w: np.ndarray, n_eff: float) -> tuple[float, float]:
    """Weighted mean and standard deviation (with the effective sample size's Bessel correction)."""
    mean = float(np.average(x, weights=w))
    return mean, float(np.sqrt(np.average((x - mean) ** 2, weights=w) * n_eff / max(n_eff - 1, 1e-12)))


def _pdf(model: BackgroundModel, x: np.ndarray) -> np.ndarray:
    p = model.params
    if model.family == "normal":
        return stats.norm.pdf(x, p["loc"], p["scale"])
    return stats.skewnorm.pdf(x, p["a"], p["loc"], p["scale"])


def _fit_weighted_skewnorm(x: np.ndarray, w: np.ndarray) -> BackgroundModel:
    """Weighted maximum likelihood of a skew-normal (Nelder-Mead from the unweighted fit)."""
    share = w / w.sum()
    a0, loc0, scale0 = skewnorm_mle(x)

    def nll(theta: np.ndarray) -> float:
        a, loc, log_scale = theta
        return -float(np.sum(share * stats.skewnorm.logpdf(x, a, loc, np.exp(log_scale))))

    best = optimize.minimize(nll, [a0, loc0, np.log(max(scale0, 1e-12))], method="Nelder-Mead")
    a, loc, log_scale = best.x
    return BackgroundModel("skewnorm", {"a": float(a), "loc": float(loc), "scale": float(np.exp(log_scale))})
