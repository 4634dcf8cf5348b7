"""SDM-corrected Recall@k and nDCG@k: expected full-corpus values from a run on a pooled subsample.

Score Distribution Modeling (SIGIR 2026, "Bridging the Gap Between Subsampled and Full-Corpus Evaluation";
ECIR 2026, "Predicting Recall@k ... via Score Distribution Modeling"). A run over a pooled corpus (relevant
documents, distractors, a random background sample) misses the N_unseen documents of the full corpus that
were never scored. Under a background score model with survival p(s) = P(S >= s), a relevant document with
score s and 0-based pooled rank a has full-corpus rank 1 + a + X, X ~ Binomial(N_unseen, p(s)) (unseen
documents are non-relevant; one scoring exactly s is counted above it). Hence, exactly in expectation:

    SDM-R@k    = (1/R) * sum_r P(X_r <= k - 1 - a_r)
    SDM-nDCG@k = (1/IDCG@k) * sum_r g_r * sum_{m=0}^{k-1-a_r} P(X_r = m) / log2(a_r + m + 2)

with trec_eval's linear gain g_r (the label) and ideal DCG over all judged documents. The binomial terms come
from scipy's incomplete-beta machinery (log-space, no underflow for N up to 10^9 and beyond), not from
(1 - p)^N recurrences. With N_unseen = 0 both reduce to trec_eval's recall_k and ndcg_cut_k.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import signal, stats

from ._inhouse import REGISTRY, InHouseMeasure
from ._metrics import gain_values, ideal_dcg
from ._prepare import JudgedRun

__all__ = [
    "sdm_report",
    "sdm_recall",
    "sdm_ndcg",
    "survival_of_rows",
    "variance_of_rows",
    "second_order",
    "CORRECTIONS",
    "corrected",
    "correctable",
    "sdm_table",
    "add_bootstrap",
    "UnseenAbove",
    "NoisySurvival",
    "rows_view",
    "poisson_binomial",
]

_P_FLOOR = 1e-280


def _per_relevant_row(
    j: JudgedRun, models: Sequence[Any] | dict[str, Any], of: Callable[[Any, np.ndarray], np.ndarray]
) -> np.ndarray:
    """``of(model, scores)`` for every relevant row (label > 0), each with its own query's model (``models`` per
    query id, or in the order of ``j.qids``); 0 for the other rows, which R@k and nDCG@k never read."""
    if isinstance(models, dict):
        missing = [q for q in j.qids.tolist() if q not in models]
        if missing:
            raise KeyError(f"No background model for queries {missing[:5]}; fit one per evaluated query.")
        models = [models[q] for q in j.qids.tolist()]
    out = np.zeros(len(j.rank))
    judged = j.label > 0
    for g in np.unique(j.group[judged]):
        rows = judged & (j.group == g)
        out[rows] = of(models[g], j.score[rows])
    return out


def survival_of_rows(j: JudgedRun, models: Sequence[Any] | dict[str, Any]) -> np.ndarray:
    """p(s) = P(background >= s) for every relevant row (label > 0), each with its own query's model; 0 for the
    other rows, which R@k and nDCG@k never read."""
    p = _per_relevant_row(j, models, lambda model, s: np.clip(model.sf(s), 0.0, 1.0))
    # scipy's binomial raises OverflowError for p in about [1e-308, 1e-303]; any p < 1e-280 changes no
    # probability by more than N * p < 1e-270, so it is exactly 0 here
    p[p < _P_FLOOR] = 0.0
    return p


def variance_of_rows(j: JudgedRun, models: Sequence[Any] | dict[str, Any]) -> np.ndarray:
    """The estimated variance of each relevant row's survival (``BackgroundModel.sf_variance``; 0 for a model
    without one), ``models`` as for :func:`survival_of_rows`: the ``variance`` of :func:`sdm_recall`."""
    return _per_relevant_row(
        j,
        models,
        lambda model, s: model.sf_variance(s) if hasattr(model, "sf_variance") else np.zeros(len(s)),
    )


def _unseen(j: JudgedRun, n_unseen: Any) -> np.ndarray:
    given = np.asarray(n_unseen)
    if given.ndim > 1 or (given.ndim == 1 and len(given) != j.num_queries):
        raise ValueError(
            f"n_unseen has shape {given.shape} for {j.num_queries} evaluated queries: give one number, or one per "
            "query as a {qid: count} dict."
        )
    if (
        given.dtype == bool
        or not np.issubdtype(given.dtype, np.number)
        or not np.isfinite(given).all()
        or np.any(given != np.round(given))
    ):
        raise ValueError(
            f"n_unseen={n_unseen!r} counts documents (N - documents in the pooled corpus): give a whole number, "
            "not a share or a fraction."
        )
    if (given < 0).any():
        raise ValueError("n_unseen must be >= 0 (N - documents in the pooled corpus).")
    if (given >= 2**53).any():  # a count of documents; beyond it the int64 cast (and float64) loses units
        raise ValueError(f"n_unseen={n_unseen!r} is no corpus's number of unseen documents: give N - pooled.")
    n = np.broadcast_to(given.astype(np.int64), (j.num_queries,))
    return n


def _recall_hits(j: JudgedRun, k: int, p: np.ndarray, n: np.ndarray) -> np.ndarray:
    room = k - 1 - j.rank  # unseen documents a relevant row can afford above it and stay in the top k
    prob = np.where(room >= 0, stats.binom.cdf(np.maximum(room, 0), n, p), 0.0)
    return np.where(j.is_rel, prob, 0.0)


def _ndcg_gains(j: JudgedRun, k: int, p: np.ndarray, n: np.ndarray, gain: str) -> np.ndarray:
    gains = gain_values(j.label, gain)
    rows = np.flatnonzero((gains > 0) & (j.rank < k))
    # unseen documents above the row: at most k - 1 - rank count, and at most n_unseen can be
    width = int(min(k - j.rank[rows].min(), n[rows].max() + 1)) if len(rows) else 1
    m = np.arange(width)[None, :]
    a = j.rank[rows][:, None]
    pmf = stats.binom.pmf(m, n[rows][:, None], p[rows][:, None])
    discount = np.where(a + m < k, 1.0 / np.log2(a + m + 2.0), 0.0)
    expected = np.zeros(len(j.rank))
    expected[rows] = gains[rows] * (pmf * discount).sum(axis=1)
    return expected


def second_order(term: Callable[[np.ndarray], np.ndarray], p: np.ndarray, variance: Any) -> np.ndarray:
    """Each row's ``term(p)`` corrected for the noise of its estimated survival p (variance v) to second order:
    an unbiased but noisy p gives E term(p^) = term(p) + term''(p) v / 2, so the plug-in's bias is removed by
    2 term(p^) - E term(P'), P' two points with p^'s mean and variance (p^ -+ sd; where sd > p^, 0 and p^ + v / p^,
    so that P' >= 0), kept within the term's range, 0 to its value with nothing unseen above (a term falls as p
    grows). ``variance`` 0 leaves the term as it is."""
    v = np.broadcast_to(np.asarray(variance, dtype=np.float64), p.shape)
    low = np.maximum(p - np.sqrt(v), 0.0)
    below = p - low
    above = np.divide(v, below, out=np.zeros_like(p), where=below > 0)
    w_low = np.divide(above, below + above, out=np.zeros_like(p), where=below + above > 0)
    at = term(p)
    fixed = 2.0 * at - w_low * term(low) - (1.0 - w_low) * term(np.minimum(p + above, 1.0))
    return np.clip(fixed, 0.0, term(np.zeros_like(p)))


def sdm_recall(j: JudgedRun, k: int, p: np.ndarray, n_unseen: Any, *, variance: Any = None) -> np.ndarray:
    """Expected Recall@k over the full corpus (see module docstring); ``p`` from :func:`survival_of_rows`;
    ``variance`` (per row, e.g. :meth:`BackgroundModel.sf_variance`): corrected for p's noise (:func:`second_order`)."""
    n = _unseen(j, n_unseen)[j.group]
    if variance is None:
        hits = j.total(_recall_hits(j, k, p, n))
    else:
        hits = j.total(second_order(lambda q: _recall_hits(j, k, q, n), p, variance))
    return np.divide(hits, j.num_rel, out=np.zeros(j.num_queries), where=j.num_rel > 0)


def sdm_ndcg(
    j: JudgedRun, k: int, p: np.ndarray, n_unseen: Any, *, gain: str = "linear", variance: Any = None
) -> np.ndarray:
    """Expected nDCG@k over the full corpus (see module docstring), graded gains, exact expectation; ``variance``
    as in :func:`sdm_recall`."""
    n = _unseen(j, n_unseen)[j.group]
    if variance is None:
        dcg = j.total(_ndcg_gains(j, k, p, n, gain))
    else:
        dcg = j.total(second_order(lambda q: _ndcg_gains(j, k, q, n, gain), p, variance))
    ideal = ideal_dcg(j, k, gain)
    return np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)


@dataclass(frozen=True)
class UnseenAbove:
    """The distribution of the number X of unseen documents above each relevant row, given directly (for a
    background that is not one binomial, e.g. :mod:`pyterrier_sparse_eval.sdm`'s covariate): ``pmf[i, m]`` =
    P(X = m) for row ``rows[i]``, m < ``pmf.shape[1]`` (enough for the largest cut-off: m <= k - 1 - rank, or
    for every count there can be: m <= ``most``)."""

    rows: np.ndarray
    pmf: np.ndarray
    most: int | None = None  # the largest count possible (the unseen documents), when known

    def reach(self, j: JudgedRun, k: int) -> int:
        """How many positions :meth:`kept` reads at cut-off ``k`` (its ``weights``' length): at most ``k``, and no
        further than the last relevant row's rank plus the count's terms (a weight array of k = 2**31 - 1 had
        taken 16 GiB)."""
        return min(k, int(j.rank[self.rows].max()) + self.pmf.shape[1] if len(self.rows) else 1)

    def kept(self, j: JudgedRun, k: int, weights: np.ndarray) -> np.ndarray:
        """Per row of ``j``: sum over m <= k - 1 - rank of P(X = m) * weights[rank + m] (0 outside ``rows``)."""
        out = np.zeros(len(j.rank))
        if not len(self.rows):  # no relevant row above the cut-offs asked (one query, a batch): nothing kept
            return out
        a = j.rank[self.rows]
        m = np.arange(self.pmf.shape[1])[None, :]
        pos = a[:, None] + m
        needed = k - a.min() if self.most is None else min(k - a.min(), self.most + 1)
        if self.pmf.shape[1] < needed:
            raise ValueError(
                f"The unseen-count distribution stops at {self.pmf.shape[1]} terms; k={k} needs more."
            )
        w = np.where(pos < k, weights[np.minimum(pos, len(weights) - 1)], 0.0)
        out[self.rows] = (self.pmf * w).sum(axis=1)
        return out


_DIRECT = 24  # polynomials up to this length are multiplied term by term, longer ones by FFT


def poisson_binomial(p: np.ndarray, width: int) -> np.ndarray:
    """rows x width: P(sum over i of independent Bernoulli(p[row, i]) = m), m < width.

    The product of the factors (1 - p_i + p_i z), multiplied pairwise in a tree (about log2(columns) array
    operations, not one per column) and cut at degree width - 1 (higher terms never reach the lower ones). Each
    row's live factors (0 < p < 1) are packed first and the rows grouped by their count (powers of two), so a row
    costs about its own count; the certain ones (p = 1) shift the count. Long products go by FFT: an absolute
    error of about 1e-16, clipped to [0, 1]."""
    out = np.zeros((p.shape[0], width))
    if p.shape[0] == 0:
        return out
    live = (p > 0.0) & (p < 1.0)
    n_live = live.sum(axis=1)
    packed = np.take_along_axis(np.where(live, p, 0.0), np.argsort(~live, axis=1, kind="stable"), axis=1)
    poly = np.zeros((p.shape[0], width))
    band = np.ceil(np.log2(np.maximum(n_live, 1))).astype(np.int64)
    for b in np.unique(band).tolist():
        rows = np.flatnonzero(band == b)
        part = _product(packed[rows, : n_live[rows].max()], width)
        poly[rows, : part.shape[1]] = part
    at = np.arange(width)[None, :] - (p >= 1.0).sum(axis=1)[:, None]
    keep = at >= 0
    out[keep] = poly[np.nonzero(keep)[0], at[keep]]
    return out


def _product(q: np.ndarray, width: int) -> np.ndarray:
    """rows x min(width, columns + 1): the coefficients of prod_i (1 - q_i + q_i z), in a tree of pairs."""
    polys = np.stack([1.0 - q, q], axis=-1)  # rows x factors x coefficients
    while polys.shape[1] > 1:
        if polys.shape[1] % 2:  # an odd factor out: pair it with the polynomial 1
            one = np.zeros((polys.shape[0], 1, polys.shape[2]))
            one[..., 0] = 1.0
            polys = np.concatenate([polys, one], axis=1)
        a, b = polys[:, 0::2], polys[:, 1::2]
        n = a.shape[-1]
        if n <= _DIRECT:
            c = np.zeros(a.shape[:2] + (2 * n - 1,))
            for k in range(n):
                c[..., k : k + n] += a[..., k : k + 1] * b
        else:
            c = np.clip(signal.fftconvolve(a, b, axes=-1), 0.0, 1.0)
        polys = c[..., :width]
    # cut at width here too: one factor (or none) never enters the loop above
    return (polys[:, 0] if polys.shape[1] else np.ones((q.shape[0], 1)))[:, :width]


def _recall_given(j: JudgedRun, k: int, above: UnseenAbove) -> np.ndarray:
    hits = j.total(np.where(j.is_rel, above.kept(j, k, np.ones(above.reach(j, k))), 0.0))
    return np.divide(hits, j.num_rel, out=np.zeros(j.num_queries), where=j.num_rel > 0)


def _ndcg_given(j: JudgedRun, k: int, above: UnseenAbove, gain: str) -> np.ndarray:
    gains = gain_values(j.label, gain)
    dcg = j.total(gains * above.kept(j, k, 1.0 / np.log2(np.arange(above.reach(j, k)) + 2.0)))
    ideal = ideal_dcg(j, k, gain)
    return np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)


@dataclass(frozen=True)
class NoisySurvival:
    """Each relevant row's survival ``p`` with its estimated variance (:func:`variance_of_rows`): SDM's terms are
    then corrected for that noise (:func:`second_order`)."""

    p: np.ndarray
    variance: np.ndarray


def _recall_of(m: InHouseMeasure, j: JudgedRun, p: Any, n: Any) -> np.ndarray:
    if isinstance(p, UnseenAbove):
        return _recall_given(j, _cutoff(m), p)
    if isinstance(p, NoisySurvival):
        return sdm_recall(j, _cutoff(m), p.p, n, variance=p.variance)
    return sdm_recall(j, _cutoff(m), p, n)


def _ndcg_of(m: InHouseMeasure, j: JudgedRun, p: Any, n: Any) -> np.ndarray:
    if isinstance(p, UnseenAbove):
        return _ndcg_given(j, _cutoff(m), p, m.gain)
    if isinstance(p, NoisySurvival):
        return sdm_ndcg(j, _cutoff(m), p.p, n, gain=m.gain, variance=p.variance)
    return sdm_ndcg(j, _cutoff(m), p, n, gain=m.gain)


#: the in-house measures SDM corrects (by ``BASE``), each with its expectation; report order
CORRECTIONS: dict[str, Callable[[InHouseMeasure, JudgedRun, Any, Any], np.ndarray]] = {
    "R": _recall_of,
    "nDCG": _ndcg_of,
}


def _cutoff(measure: InHouseMeasure) -> int:
    if measure.cutoff is None:
        raise ValueError(f"SDM corrects measures at a cut-off k (e.g. {measure.BASE}@100), not {measure}.")
    return measure.cutoff


def corrected(measure: InHouseMeasure, j: JudgedRun, p: Any, n_unseen: Any) -> np.ndarray:
    """SDM-corrected per-query values of an in-house measure (one of :data:`CORRECTIONS`, at a cut-off):
    ``p`` is each row's survival (:func:`survival_of_rows`, X binomial with ``n_unseen``), a
    :class:`NoisySurvival` or an :class:`UnseenAbove`."""
    correct = CORRECTIONS.get(measure.BASE)
    if correct is None:
        raise ValueError(f"SDM corrects {', '.join(f'{b}@k' for b in CORRECTIONS)} only, not {measure}.")
    return correct(measure, j, p, n_unseen)


def correctable(k_values: Sequence[int], gain: str = "linear") -> list[InHouseMeasure]:
    """The in-house measures SDM corrects, at each cut-off (``gain`` where the measure has one)."""
    out = []
    for k in k_values:
        for base in CORRECTIONS:
            measure = REGISTRY[base](cutoff=int(k))
            out.append(measure(gain=gain) if "gain" in measure.SUPPORTED_PARAMS else measure)
    return [m.check() for m in out]


def rows_view(j: JudgedRun, fitted: Any, noise_correction: bool = False, warn: bool = True) -> Any:
    """What :func:`corrected` takes from one round's fits (per-query models, or an :class:`UnseenAbove`): with
    ``noise_correction``, the models' survival and its variance (:class:`NoisySurvival`); a warning (``warn``)
    when no relevant row has a variance to correct for (no kernel background)."""
    if isinstance(fitted, UnseenAbove):
        return fitted
    p = survival_of_rows(j, fitted)
    if not noise_correction:
        return p
    variance = variance_of_rows(j, fitted)
    # no relevant row at all (a batch of unjudged queries): nothing to say
    if warn and j.is_rel.any() and not (variance > 0).any():
        warnings.warn(
            "noise_correction=True changed nothing: no relevant document's background is a kernel fit with a "
            "variance to correct for (family 'kde', or 'auto' with 50 observed scores or more).",
            stacklevel=3,
        )
    return NoisySurvival(p, variance)


def sdm_table(
    j: JudgedRun, p: Any, unseen: Any, measures: Sequence[InHouseMeasure]
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
    """Pooled and SDM-corrected values of ``measures`` (see :func:`correctable`), per query and as means:
    ``(per_query, aggregate)``, keyed by the standard measure names (``R@100``, ``nDCG@10``)."""
    qids = j.qids.tolist()
    per_query: dict[str, dict[str, dict[str, Any]]] = {}
    aggregate: dict[str, dict[str, Any]] = {}
    for measure in measures:
        name = str(measure.standard())
        pooled, sdm = measure.values(j), corrected(measure, j, p, unseen)
        per_query[name] = {q: {"pooled": float(a), "sdm": float(b)} for q, a, b in zip(qids, pooled, sdm)}
        aggregate[name] = {
            "pooled": float(pooled.mean()) if qids else float("nan"),
            "sdm": float(sdm.mean()) if qids else float("nan"),
        }
    return per_query, aggregate


def add_bootstrap(
    j: JudgedRun,
    refit: Any,
    unseen: Any,
    measures: Sequence[InHouseMeasure],
    rounds: int,
    confidence: float,
    seed: int | None,
    per_query: dict,
    aggregate: dict,
    progress: Callable[[range], Iterable[int]] | None = None,
    noise_correction: bool = False,
) -> None:
    """Add ``sdm_ci`` percentile intervals to a :func:`sdm_table`: ``refit(rng)`` returns one round's models
    (per query, in order or by qid) or an :class:`UnseenAbove`, fitted on resampled background samples. A
    ``progress`` wraps the rounds (e.g. in a progress bar); ``noise_correction`` as in :func:`rows_view`."""
    rng = np.random.default_rng(seed)
    draws: dict[str, list[np.ndarray]] = {str(m.standard()): [] for m in measures}
    for _ in (progress or iter)(range(rounds)):
        p = rows_view(j, refit(rng), noise_correction, warn=False)
        for measure in measures:
            draws[str(measure.standard())].append(corrected(measure, j, p, unseen))
    lo, hi = (1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100
    for name, values in draws.items():
        values_arr = np.array(values)  # rounds x queries
        low, high = np.percentile(values_arr, [lo, hi], axis=0)
        for q, a, b in zip(j.qids.tolist(), low, high):
            per_query[name][q]["sdm_ci"] = [float(a), float(b)]
        means = values_arr.mean(axis=1)
        aggregate[name]["sdm_ci"] = [float(np.percentile(means, lo)), float(np.percentile(means, hi))]


def sdm_report(
    j: JudgedRun,
    models: Any,
    unseen: Any,
    k_values: Sequence[int],
    *,
    gain: str = "linear",
    refit: Callable[[np.random.Generator], Any] | None = None,
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress: Callable[[range], Iterable[int]] | None = None,
    noise_correction: bool = False,
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]]]:
    """:func:`sdm_table` of every correctable measure at ``k_values``, with :func:`add_bootstrap` intervals
    when ``bootstrap`` rounds are asked for (``refit(rng)`` gives one round's models). ``models`` may also be
    an :class:`UnseenAbove` (and so may each round's); ``noise_correction`` as in :func:`rows_view`."""
    measures = correctable(k_values, gain)
    per_query, aggregate = sdm_table(j, rows_view(j, models, noise_correction), unseen, measures)
    if bootstrap:
        if refit is None:
            raise ValueError("bootstrap needs a way to refit the background models.")
        add_bootstrap(
            j,
            refit,
            unseen,
            measures,
            bootstrap,
            confidence,
            seed,
            per_query,
            aggregate,
            progress,
            noise_correction,
        )
    return per_query, aggregate
