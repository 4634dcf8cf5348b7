"""Background score distributions: how a query scores the documents nobody judged or pooled.

Score Distribution Modeling (SDM) needs, per query and system, the survival function p(s) = P(S >= s) of the
scores of random non-relevant ("background") documents, fitted on a small random sample of them. Families:

- ``normal`` and ``skewnorm``: continuous fits (the skew-normal is what the published SDM reference uses for
  dense retrieval's cosine scores);
- ``zero-inflated``: an exact point mass at 0 plus a log-normal for the positive scores. Sparse retrieval gives
  every document that shares no term with the query a score of exactly 0, often most of the corpus, which no
  continuous family can represent;
- ``empirical-gpd``: the sample's own survival function in the body and a generalized-Pareto tail fitted to the
  top 5%, for extrapolating beyond the sample's resolution (1/n).

``fit_background(sample, family="auto")`` picks ``zero-inflated`` when at least 1% of the sample is 0, else the
better of ``normal`` and ``skewnorm`` by AIC; every fit carries its diagnostics (KS statistic, log-likelihood,
share of zeros, sample size). Degenerate samples (all equal, too few positives) get explicit models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["BackgroundModel", "fit_background", "FAMILIES"]

FAMILIES = ("auto", "normal", "skewnorm", "zero-inflated", "empirical-gpd")
_ZERO_SHARE_FOR_AUTO = 0.01
_TAIL_SHARE = 0.05
_MIN_POSITIVES = 5


@dataclass
class BackgroundModel:
    """A fitted background score distribution; ``sf(s)`` = P(background score >= s).

    Attributes:
        family: the family fitted (``"point-mass"`` for a degenerate sample).
        params: the fitted parameters.
        diagnostics: ``ks`` (Kolmogorov-Smirnov statistic of the fit on the sample; on the positive part for
            zero-inflated fits), ``loglik`` (of the continuous part), ``zero_share``, ``n``.
    """

    family: str
    params: dict[str, Any]
    diagnostics: dict[str, float] = field(default_factory=dict)
    _sample: np.ndarray | None = field(default=None, repr=False)

    def sf(self, s: Any) -> np.ndarray:
        """P(S >= s), vectorised."""
        s = np.asarray(s, dtype=np.float64)
        p = self.params
        if self.family == "point-mass":
            return (s <= p["value"]).astype(np.float64)
        if self.family == "normal":
            return stats.norm.sf(s, p["loc"], p["scale"])
        if self.family == "skewnorm":
            return stats.skewnorm.sf(s, p["a"], p["loc"], p["scale"])
        if self.family == "zero-inflated":
            positive = (1 - p["zero_share"]) * (
                stats.lognorm.sf(s, p["sigma"], 0, np.exp(p["mu"])) if p["sigma"] > 0 else (s <= np.exp(p["mu"])).astype(float)
            )
            return np.where(s <= 0, 1.0, positive)
        if self.family == "empirical-gpd":
            sample = self._sample
            assert sample is not None
            body = 1.0 - np.searchsorted(sample, s, side="left") / len(sample)
            u, tail_p = p["threshold"], p["tail_share"]
            tail = tail_p * stats.genpareto.sf(s - u, p["shape"], 0, p["scale"])
            return np.where(s <= u, body, tail)
        raise ValueError(f"unknown family {self.family!r}")


def _ks(sample: np.ndarray, cdf: Any) -> float:
    return float(stats.kstest(sample, cdf).statistic) if len(sample) else float("nan")


def _fit_normal(x: np.ndarray) -> BackgroundModel:
    loc, scale = float(x.mean()), float(x.std(ddof=1))
    return BackgroundModel("normal", {"loc": loc, "scale": scale}, {
        "ks": _ks(x, stats.norm(loc, scale).cdf), "loglik": float(stats.norm.logpdf(x, loc, scale).sum())})


def _fit_skewnorm(x: np.ndarray) -> BackgroundModel:
    a, loc, scale = stats.skewnorm.fit(x)
    return BackgroundModel("skewnorm", {"a": float(a), "loc": float(loc), "scale": float(scale)}, {
        "ks": _ks(x, stats.skewnorm(a, loc, scale).cdf), "loglik": float(stats.skewnorm.logpdf(x, a, loc, scale).sum())})


def _fit_zero_inflated(x: np.ndarray) -> BackgroundModel:
    zero_share = float(np.mean(x <= 0))
    pos = x[x > 0]
    if len(pos) < _MIN_POSITIVES:
        # too few positives to fit a shape: put them at their mean (an explicit, visible simplification)
        mu, sigma = (float(np.log(pos.mean())) if len(pos) else 0.0), 0.0
        ks, ll = float("nan"), float("nan")
    else:
        logs = np.log(pos)
        mu, sigma = float(logs.mean()), float(logs.std(ddof=1))
        dist = stats.lognorm(sigma, 0, np.exp(mu)) if sigma > 0 else None
        ks = _ks(pos, dist.cdf) if dist else float("nan")
        ll = float(dist.logpdf(pos).sum()) if dist else float("nan")
    return BackgroundModel("zero-inflated", {"zero_share": zero_share, "mu": mu, "sigma": sigma},
                           {"ks": ks, "loglik": ll, "positives": float(len(pos))})


def _fit_empirical_gpd(x: np.ndarray) -> BackgroundModel:
    sample = np.sort(x)
    u = float(np.quantile(sample, 1 - _TAIL_SHARE))
    exceed = sample[sample > u] - u
    tail_share = len(exceed) / len(sample)
    if len(exceed) >= 20:
        shape, _, scale = stats.genpareto.fit(exceed, floc=0)
    else:  # exponential tail from the mean excess
        shape, scale = 0.0, float(exceed.mean()) if len(exceed) else 1e-12
    model = BackgroundModel("empirical-gpd", {"threshold": u, "tail_share": tail_share, "shape": float(shape),
                                              "scale": float(max(scale, 1e-12))}, {}, sample)
    model.diagnostics["ks"] = float(np.max(np.abs((1 - model.sf(sample)) - np.arange(len(sample)) / len(sample))))
    return model


def fit_background(sample: Any, family: str = "auto") -> BackgroundModel:
    """Fit a background score model to one query's sample of background document scores."""
    if family not in FAMILIES:
        raise ValueError(f"Unknown family {family!r}; choose one of {FAMILIES}.")
    x = np.asarray(sample, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        raise ValueError(f"A background model needs at least 2 sampled scores, got {len(x)}.")
    zero_share = float(np.mean(x == 0))
    if np.all(x == x[0]):
        model = BackgroundModel("point-mass", {"value": float(x[0])})
    elif family == "auto":
        if zero_share >= _ZERO_SHARE_FOR_AUTO and np.all(x >= 0):
            model = _fit_zero_inflated(x)
        else:
            fits = [_fit_normal(x), _fit_skewnorm(x)]
            aic = [2 * 2 - 2 * fits[0].diagnostics["loglik"], 2 * 3 - 2 * fits[1].diagnostics["loglik"]]
            model = fits[int(np.argmin(aic))]
    elif family == "normal":
        model = _fit_normal(x)
    elif family == "skewnorm":
        model = _fit_skewnorm(x)
    elif family == "zero-inflated":
        if np.any(x < 0):
            raise ValueError("zero-inflated needs non-negative scores; use normal, skewnorm or empirical-gpd.")
        model = _fit_zero_inflated(x)
    else:
        model = _fit_empirical_gpd(x)
    model.diagnostics.update({"zero_share": zero_share, "n": float(len(x))})
    return model
