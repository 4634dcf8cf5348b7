"""The pooling run as a covariate of the unseen documents it ranks high: SDM's tail at small k.

The unseen documents that displace a system's top results are the few that score high for the query, rarer than
1 in the background sample's size; but a full-corpus pooling run (the one the pool's distractors came from) ranks
nearly all of them within its top 1000 for that query (``benchmarks/sdm_tail_diagnostic.py``: 92-100% on SciFact,
a dense system included). Those unseen documents are known one by one, each with the pooling run's score x_i, and
so are the pool's sampled documents in the same top D, with x_j and the system's score y_j. Per query:

1. *Top part*, the U_T unseen documents in the pooling run's top D: a weighted least-squares line y = a + b x over
   the sampled top-D documents the system retrieved, the half of them with the highest x (``TOP_SHARE``, at least
   ``TOP_MIN``), and the weighted distribution of its residuals e (the smearing estimate): the model's
   p_i(s) = P(a + b x_i + e >= s). The line serves the unseen documents that outscore relevant ones, near the top
   of the pooling ranking; fitted on the whole top D, the bulk below pulls it flat there (SciFact, 15% pools:
   documents at pooling rank 1-3 scoring 10-20 above it).
   *Features*: a pooling run with PyTerrier's ``features`` column (e.g. :class:`MatchedTerms`, each document's
   count of the query's terms it holds) gives each query a second model, a plane y = a + b x + c . f through all
   of its sampled top-D documents; the query keeps the plane or the line on x through the same documents,
   whichever predicts them better left out one at a time (weighted PRESS; the plane only with two more points
   than coefficients). A lexical system's score rests on which query terms a document holds, which the pooling
   score mixes with their idf (``benchmarks/sdm_calibration.py --modes features``). A feature that does not vary
   over those documents (a one-term query) is left out, and with none left the query has the line of step 1.
2. *Calibration* (the generalised regression estimator, GREG): the unseen top documents scoring >= s number
   C(s) = sum_i p_i(s) + sum_j w_j (1[y_j >= s] - p_j(s)): the model's count plus the Horvitz-Thompson estimate of
   its error on the sample (w_j: the unseen top documents each sampled one stands for, summing to U_T; a sampled
   document the system did not retrieve has y_j = -inf). A uniform or stratified sample's top-D documents are a
   random subsample of the query's top-D candidates, so C(s) is design-consistent whatever the line: a poor fit
   costs variance, not bias (exactly unbiased for a line fixed in advance, approximately for a fitted one). The
   p_i are scaled to sum to C(s).
3. *The rest*, U_R = N_unseen - U_T documents: SDM's fitted background (``family``) over the sampled documents
   outside the top D, as without a covariate.

The number X of unseen documents above a relevant document with score s is then the sum of independent
Bernoulli(p_i) (Poisson-binomial) and Binomial(U_R, p_R(s)); R@k and nDCG@k take its first k terms exactly
(:class:`~pyterrier_sparse_eval.measures._sdm.UnseenAbove`). With nothing unseen X = 0: trec_eval's values. A
query the pooling run did not rank, or whose top D holds fewer than ``MIN_FIT`` sampled documents the system
retrieved (of positive weight), keeps SDM's background over its whole sample.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import signal, stats

from ._covariate_run import Covariate
from ._pool import _UNRETRIEVED, BackgroundSample, Pool, background_from_run
from ._sample import check_run_on_pool, in_set, pooled_run, run_queries, str_qrels, user_stacklevel
from .measures import BackgroundModel, JudgedRun, prepare
from .measures._evaluate import warn_overlap
from .measures._sdm import _P_FLOOR, UnseenAbove, poisson_binomial, sdm_report

__all__ = ["Covariate", "MIN_FIT", "covariate_above", "evaluate_with_covariate"]

#: sampled top-D documents a query needs (retrieved by the system) to fit its line
MIN_FIT = 3
#: the line is fitted on this share of them, those of highest pooling score, and on at least TOP_MIN
TOP_SHARE = 0.5
TOP_MIN = 8


@dataclass(frozen=True)
class _TopFit:
    """One query's top part (see the module docstring): the line's predictions for the unseen top documents and
    for the sampled ones, the sampled documents' scores and calibration weights, the weighted residuals."""

    x_unseen: np.ndarray  # the unseen top documents' covariates (rows: the pooling score, then any features)
    x: np.ndarray  # and the sampled ones'
    pred_unseen: np.ndarray
    pred_sampled: np.ndarray
    y: np.ndarray  # the system's scores of the sampled top documents (-inf: not retrieved)
    weight: np.ndarray  # the unseen top documents each stands for (sums to len(pred_unseen))
    resid: np.ndarray  # sorted
    resid_tail: np.ndarray  # weighted share of resid[i:], one more entry (0) at the end
    own_share: np.ndarray  # each sampled document's share of the residuals' weight (0: not among them)
    resid_own: np.ndarray  # each sampled document's own residual (-inf: not retrieved, not among them)
    columns: tuple[int, ...] = (0,)  # the covariates the query's model uses (0: the pooling score)

    @classmethod
    def fit(cls, x_unseen: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> _TopFit | None:
        """The fit of one query's top part; ``x`` and ``x_unseen``: the pooling scores, or rows of covariates
        (the score first, then the features: module docstring, step 1)."""
        x = x[:, None] if x.ndim == 1 else x
        x_unseen = x_unseen[:, None] if x_unseen.ndim == 1 else x_unseen
        ok = np.isfinite(y)
        # a sampled document of a stratum sampled whole stands for no unseen document (weight 0)
        pos = ok & (w > 0)
        if pos.sum() < MIN_FIT or not len(x_unseen):
            return None
        every, every_unseen = x, x_unseen  # kept whole: a bootstrap round chooses its model again
        # a feature that does not vary over these documents (a one-term query: each holds its term) says nothing
        varies = [0] + [c for c in range(1, x.shape[1]) if np.ptp(x[pos, c]) > 0]
        if len(varies) == 1:
            # the line where it is used: on the retrieved sampled documents of highest pooling score (TOP_SHARE of
            # those of positive weight, at least TOP_MIN), not pulled flat there by the bulk of the top D below
            keep = max(TOP_MIN, int(np.ceil(TOP_SHARE * pos.sum())))
            on = pos & (x[:, 0] >= np.sort(x[pos, 0])[::-1][keep - 1]) if keep < pos.sum() else pos
            use = [0]
        else:
            on = pos
            use = min(
                ([0], varies) if on.sum() >= len(varies) + 3 else ([0],),
                key=lambda cols: _press(x[on][:, cols], y[on], w[on]),
            )
        x, x_unseen = x[:, use], x_unseen[:, use]
        design = np.column_stack([np.ones(int(on.sum())), x[on]])
        # the line and the residuals weighted by the design too (tried unweighted: no better overall)
        mw = w[on]
        coef, leverage = _wls(design, y[on], mw)
        resid = y[on] - design @ coef
        # the sampled documents' predictions without themselves (leave-one-out, through their leverage): in
        # the calibration a fitted line would otherwise pass closer to them than to the unseen documents
        pred = coef[0] + x @ coef[1:]
        pred[on] = y[on] - resid / (1.0 - leverage)
        order = np.argsort(resid, kind="stable")
        tail = np.append(np.cumsum(mw[order][::-1])[::-1], 0.0)
        own = np.zeros(len(y))
        own[on] = mw / tail[0]
        return cls(
            every_unseen,
            every,
            coef[0] + x_unseen @ coef[1:],
            pred,
            y,
            w * len(x_unseen) / w.sum(),
            resid[order],
            tail / tail[0],
            own,
            np.where(on, y - (coef[0] + x @ coef[1:]), -np.inf),
            tuple(use),
        )

    def _share_at_least(self, t: np.ndarray) -> np.ndarray:
        return self.resid_tail[np.searchsorted(self.resid, t, side="left")]

    def terms(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The line's probabilities (rows x unseen top documents) of scoring >= s[row], and per row the
        Horvitz-Thompson estimate of its count's error on the sample (module docstring, step 2)."""
        s = s[:, None]
        p = self._share_at_least(s - self.pred_unseen[None, :])
        above = self.y[None, :] >= s
        # each sampled document's probability without its own residual among the smeared ones (with its
        # leave-one-out prediction, see ``fit``): in-sample, both would pull the correction towards 0
        t = s - self.pred_sampled[None, :]
        own = self.own_share[None, :]
        p_sampled = (self._share_at_least(t) - own * (self.resid_own[None, :] >= t)) / (1.0 - own)
        return p, (above - p_sampled) @ self.weight

    def probs(self, s: np.ndarray) -> np.ndarray:
        """rows x unseen top documents: each one's calibrated probability of scoring >= s[row]."""
        p, error = self.terms(s)
        return scaled_to(p, np.clip(p.sum(axis=1) + error, 0.0, p.shape[1]))

    def resampled(self, rng: np.random.Generator) -> _TopFit | None:
        """The fit on a bootstrap resample of the sampled top documents (the unseen ones are fixed)."""
        n = len(self.y)
        picks = rng.integers(0, n, size=n)
        return _TopFit.fit(self.x_unseen, self.x[picks], self.y[picks], self.weight[picks])


def _wls(design: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares: the coefficients and each point's leverage (clipped to 0.99)."""
    root = np.sqrt(w)
    coef = np.linalg.lstsq(design * root[:, None], y * root, rcond=None)[0]
    gram = np.linalg.pinv((design * w[:, None]).T @ design)
    leverage = np.clip(w * np.einsum("ij,jk,ik->i", design, gram, design), 0.0, 0.99)
    return coef, leverage


def _press(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The weighted sum of squared leave-one-out residuals of the least-squares fit of y on x (with intercept)."""
    design = np.column_stack([np.ones(len(y)), x])
    coef, leverage = _wls(design, y, w)
    return float(np.sum(w * ((y - design @ coef) / (1.0 - leverage)) ** 2))


def scaled_to(p: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Each row's probabilities below 1 scaled to sum to ``count[row]`` (those at 1 stay there)."""
    for _ in range(4):
        full = p >= 1.0
        free = np.where(full, 0.0, p).sum(axis=1)
        want = count - full.sum(axis=1)
        scale = np.divide(want, free, out=np.ones_like(want), where=free > 0)
        p = np.where(full, 1.0, np.minimum(p * scale[:, None], 1.0))
        # no probability to scale: the count is spread evenly over the documents not yet at 1
        stuck = (free <= 0) & (want > 0)
        if stuck.any():
            room = np.maximum((~full).sum(axis=1), 1)
            p[stuck] = np.where(full[stuck], 1.0, np.minimum(want[stuck] / room[stuck], 1.0)[:, None])
    return p


@dataclass
class _QueryParts:
    top: _TopFit | None
    rest: BackgroundSample | None  # None: nothing unseen outside the top D
    n_rest: int

    def fit_rest(self, family: str) -> BackgroundModel | None:
        return self.rest.fit(family) if self.rest is not None else None


def _parts(frame: Any, j: JudgedRun, pool: Pool, covariate: Covariate) -> dict[str, _QueryParts]:
    """Each evaluated query's top fit and rest sample (see the module docstring)."""
    weight_of = pool.weights() if pool.stratified else {}
    score_of: dict[str, dict[str, float]] = {}
    scores = frame["score"].to_numpy(dtype=np.float64)  # single precision: pooled_run's frame
    docnos = frame["docno"].to_numpy(dtype=object)
    is_sampled = in_set(frame["docno"], pool.sample_set)
    for qid, rows in frame.groupby("qid", sort=False).indices.items():
        mine = rows[is_sampled[rows]]
        score_of[str(qid)] = dict(zip(docnos[mine].tolist(), scores[mine].tolist()))
    tops: dict[str, _TopFit | None] = {}
    for q in j.qids.tolist():
        top_sampled = covariate.sampled.get(q, {})
        names = list(top_sampled)
        x, x_unseen = covariate.design(q, names, np.array([top_sampled[d] for d in names], dtype=np.float64))
        seen = score_of.get(q, {})
        y = np.array([seen.get(d, -np.inf) for d in names], dtype=np.float64)
        w = np.array([weight_of.get(d, 1.0) for d in names], dtype=np.float64)
        tops[q] = _TopFit.fit(x_unseen, x, y, w)
    exclude = {q: set(covariate.sampled.get(q, {})) for q, fit in tops.items() if fit is not None}
    rest = background_from_run(frame, pool, exclude)
    whole: dict[str, BackgroundSample] | None = None  # every query's whole sample, read if one falls back
    out = {}
    for q, fit in tops.items():
        n_rest = pool.n_unseen - (len(fit.pred_unseen) if fit is not None else 0)
        sample: BackgroundSample | None = rest.get(q, _UNRETRIEVED)
        if fit is not None and n_rest == 0:
            sample = None
        elif fit is not None and sample is not None and len(sample.observed) + sample.n_below < 2:
            # too few sampled documents left for the rest of the corpus: the query keeps SDM's background
            whole = whole if whole is not None else background_from_run(frame, pool)
            fit, n_rest, sample = None, pool.n_unseen, whole.get(q, _UNRETRIEVED)
        out[q] = _QueryParts(fit, sample, n_rest)
    return out


def rest_sf(part: _QueryParts, family: str, s: np.ndarray) -> np.ndarray:
    """P(one of the query's rest scores >= s[row]), 0 below the floor (with no rest sample, 0)."""
    model = part.fit_rest(family)
    p_rest = np.clip(model.sf(s), 0.0, 1.0) if model is not None else np.zeros(len(s))
    p_rest[p_rest < _P_FLOOR] = 0.0
    return p_rest


def rest_pmf(part: _QueryParts, family: str, s: np.ndarray, width: int) -> np.ndarray:
    """rows x width: P(m of the query's rest score >= s[row]): its U_R unseen documents outside the top D (with no
    line, every unseen document)."""
    return stats.binom.pmf(np.arange(width)[None, :], part.n_rest, rest_sf(part, family, s)[:, None])


def added(top: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """The distribution of the sum of two independent counts (rows x width each), its first width terms."""
    return np.clip(signal.fftconvolve(top, rest, axes=1)[:, : top.shape[1]], 0.0, 1.0)


def relevant_groups(j: JudgedRun, width: int) -> tuple[np.ndarray, list[tuple[str, np.ndarray, np.ndarray]]]:
    """The relevant rows ranked above ``width``, and per query: its id, its rows' positions among them, their
    scores."""
    rows_all = np.flatnonzero((j.label > 0) & (j.rank < width))
    qids = j.qids.tolist()
    groups = j.group[rows_all]
    out = []
    for g in np.unique(groups):
        at = np.flatnonzero(groups == g)
        out.append((qids[g], at, j.score[rows_all[at]].astype(np.float64)))
    return rows_all, out


#: relevant rows per batch below: a batch holds about ten arrays of rows x width or rows x the unseen top documents
_CHUNK = 2048


def _above(
    j: JudgedRun, parts: dict[str, _QueryParts], family: str, width: int, most: int | None = None
) -> UnseenAbove:
    """Every relevant row's count distribution, the queries' rows batched together (array operations per batch of
    rows, not per query): the rest's binomials, then the top parts' Poisson-binomials, each query's probabilities
    padded to its batch's widest with impossible documents (factors 1), added to their rows' rest."""
    rows_all, groups = relevant_groups(j, width)
    # counts kept: enough for the largest cut-off, or every count there can be (``most``: the unseen documents)
    width = width if most is None else min(width, most + 1)
    n_rest, p_rest = np.zeros(len(rows_all)), np.zeros(len(rows_all))
    tops: list[tuple[np.ndarray, _TopFit, np.ndarray]] = []
    for q, at, s in groups:
        part = parts[q]
        n_rest[at], p_rest[at] = part.n_rest, rest_sf(part, family, s)
        if part.top is not None:
            tops.append((at, part.top, s))
    pmf = np.zeros((len(rows_all), width))
    pmf[:, 0] = 1.0  # no rest document can score above the row: a point mass at 0
    # rows with a rest that can score above them (a NaN survival stays NaN)
    has_rest = ~(p_rest <= 0.0) & (n_rest > 0)
    some = np.flatnonzero(has_rest)
    for c in range(0, len(some), _CHUNK):
        at = some[c : c + _CHUNK]
        pmf[at] = stats.binom.pmf(np.arange(width)[None, :], n_rest[at, None], p_rest[at, None])
    first = 0
    while first < len(tops):  # batches of whole queries, at most _CHUNK rows unless one query has more
        last, used = first + 1, len(tops[first][0])
        while last < len(tops) and used + len(tops[last][0]) <= _CHUNK:
            used, last = used + len(tops[last][0]), last + 1
        batch, first = tops[first:last], last
        p = np.zeros((used, max(len(fit.pred_unseen) for _, fit, _ in batch)))
        r = 0
        for at, fit, s in batch:  # each query's probabilities made here, one batch in memory at a time
            probs = fit.probs(s)
            p[r : r + len(at), : probs.shape[1]] = probs
            r += len(at)
        at = np.concatenate([at for at, _, _ in batch])
        counts, also = poisson_binomial(p, width), has_rest[at]
        pmf[at[~also]] = counts[~also]  # the rest a point mass at 0: the top part's count alone
        if also.any():
            pmf[at[also]] = added(counts[also], pmf[at[also]])
    return UnseenAbove(rows_all, pmf, most)


def covariate_above(
    run: Any,
    qrels: Any,
    pool: Pool,
    covariate: Covariate,
    width: int,
    family: str = "auto",
    batch: bool = False,
) -> tuple[JudgedRun, UnseenAbove, Any]:
    """A run over the pool prepared for evaluation, the distribution of the unseen documents above each of its
    relevant rows (``width`` terms: the largest cut-off), and ``refit(rng)`` giving one bootstrap round's.
    ``batch``: the run may be a batch of the queries (``pt.Experiment(batch_size=)``), so a covariate without
    any of them is a warning, not an error."""
    covariate.check(pool)
    frame, q = pooled_run(run, pool), str_qrels(qrels)
    check_run_on_pool(frame, q, pool, width)
    j = prepare(frame, q, rel=pool.rel, queries=run_queries(run))
    missing = [qid for qid in j.qids.tolist() if qid not in covariate.unseen]
    if missing:
        message = (
            f"The covariate has no ranking for {len(missing)} of the {j.num_queries} evaluated queries (e.g. "
            f"{missing[:3]}): pass the pooling run for the run's queries, with their query ids."
        )
        if len(missing) == j.num_queries and not batch:
            raise ValueError(message)
        warnings.warn(
            message + " Those queries keep SDM's fitted background alone.", stacklevel=user_stacklevel()
        )
    parts = _parts(frame, j, pool, covariate)
    # served none of the queries it ranks (those it does not rank were warned about above)
    if len(missing) < len(parts) and pool.n_unseen and all(p.top is None for p in parts.values()):
        deeper = " Pass the pooling run 1000 deep (Covariate.from_run)." if covariate.depth < 1000 else ""
        warnings.warn(
            f"The covariate served none of the {len(parts)} queries (each needs unseen documents in its run, depth "
            f"{covariate.depth}, and {MIN_FIT} sampled documents that both its run and the system rank), so every "
            f"query keeps SDM's fitted background alone.{deeper}",
            stacklevel=user_stacklevel(),
        )

    def refit(rng: np.random.Generator) -> UnseenAbove:
        again = {}
        for q, p in parts.items():
            top = p.top.resampled(rng) if p.top is not None else None
            rest = p.rest.resample(rng) if p.rest is not None else None
            # a resample whose line cannot be fitted (too few retrieved) keeps the query's own line
            again[q] = _QueryParts(top if top is not None else p.top, rest, p.n_rest)
        return _above(j, again, family, width, pool.n_unseen)

    return j, _above(j, parts, family, width, pool.n_unseen), refit


def evaluate_with_covariate(
    run: Any,
    qrels: Any,
    pool: Pool,
    covariate: Covariate | Any,
    k_values: Any,
    *,
    family: str = "auto",
    **report: Any,
) -> dict[str, Any]:
    """``pse.sdm.evaluate(run, qrels, pool, covariate=pooling_run)`` (see there and the module docstring);
    ``report``: :func:`sdm_report`'s options (``gain``, ``bootstrap``, ``confidence``, ``seed``)."""
    cov = covariate if isinstance(covariate, Covariate) else Covariate.from_run(covariate, pool)
    j, above, refit = covariate_above(run, qrels, pool, cov, max(int(k) for k in k_values), family)
    warn_overlap(j)
    per_query, aggregate = sdm_report(j, above, pool.n_unseen, k_values, refit=refit, **report)
    return {"aggregate": aggregate, "per_query": per_query, "covariate": cov}
