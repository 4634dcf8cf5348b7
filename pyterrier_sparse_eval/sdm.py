"""SDM: evaluate on a pooled subsample of a corpus, report what the full corpus would give.

The one public face of Score Distribution Modeling in this package (the maths lives in
:mod:`pyterrier_sparse_eval.measures`, the pooled corpora in ``_pool``). The workflow::

    from pyterrier_sparse_eval import sdm
    pool = sdm.build_pool(qrels, [bm25_run], all_docnos=full_index.docnos, depth=20, sample=1000, seed=0)
    pooled_index = pool.index(full_index, "pooled.idx")        # or index pool.corpus_iter(dataset) yourself
    bm25 = pse.BM25().retriever(pooled_index, num_results=pool.size)
    pt.Experiment([bm25], topics, qrels,
                  [pse.measures.R @ 100, sdm.SDM_R(pool=pool) @ 100, sdm.SDM_nDCG(pool=pool) @ 100])
    sdm.evaluate(bm25(topics), qrels, pool, [10, 100, 1000], bootstrap=200)   # the same, with intervals

A run only shows the sampled documents it retrieved; the others score below its lowest score and are treated
as censored there, so retrieve deep (``num_results=pool.size`` is cheap on a pooled corpus).
:func:`three_way` (``sparse-eval sdm``) checks the estimate against the exact full-corpus values on a
collection where those are cheap to compute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from ir_measures import Metric
from ir_measures.measures import Measure, ParamInfo

from ._covariate import Covariate, covariate_above, evaluate_with_covariate
from ._covariate_run import check_pool
from ._features import MatchedTerms
from ._pool import (
    BackgroundSample,
    Pool,
    background_from_run,
    build_pool,
    evaluate_on_pool,
    fit_run_backgrounds,
    judged_run_on_pool,
    models_for,
    tail_band_sizes,
)
from ._sample import (
    check_noise_correction,
    check_run_on_pool,
    check_sdm_options,
    pooled_run,
    run_queries,
    str_qrels,
    warn_if_cut,
    whole,
)
from ._sdm_report import ThreeWay, bootstrap_bar, three_way
from ._shared_run import SharedRun, ir_measures_evaluator
from .measures import FAMILIES, REGISTRY, BackgroundModel, fit_background, prepare
from .measures._evaluate import warn_overlap
from .measures._metrics import GAINS
from .measures._prepare import to_qrels_frame, to_run_frame
from .measures._score_dist import WEIGHTED_FAMILIES
from .measures._sdm import corrected, rows_view
from .measures._sdm_samples import evaluate_backgrounds

__all__ = [
    "FAMILIES",
    "WEIGHTED_FAMILIES",
    "BackgroundModel",
    "BackgroundSample",
    "Covariate",
    "MatchedTerms",
    "Pool",
    "SDM_R",
    "SDM_nDCG",
    "ThreeWay",
    "background_from_run",
    "build_pool",
    "evaluate",
    "fit_background",
    "fit_run_backgrounds",
    "three_way",
    "tail_band_sizes",
    "threshold_recall",
]


def evaluate(
    run: Any,
    qrels: Any,
    pool: Pool | None = None,
    k_values: Sequence[int] = (10, 100, 1000),
    *,
    background: dict[str, Any] | None = None,
    n_unseen: int | dict[str, int] | None = None,
    covariate: Any = None,
    family: str = "auto",
    gain: str = "linear",
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    noise_correction: bool = False,
    verbose: bool = True,
) -> dict[str, Any]:
    """Pooled and SDM-corrected R@k and nDCG@k of a run over a pooled corpus.

    Args:
        run: the system's run over the pooled corpus (frame or dicts, as :func:`pse.evaluate` takes), over the
            pool's documents only (a document outside the pool is refused: a full-corpus run or another pool's
            would count it twice). Ids are read as strings, the pool's (int ids work); a document listed twice
            for a query keeps its highest score, with a warning; judged queries without results are left out,
            with a warning (as in :func:`pse.evaluate`).
        qrels: judgments.
        pool: the :class:`Pool` the run was retrieved from: each query's background sample is read off the
            run (sampled documents it did not retrieve are censored below its lowest score).
        k_values: cut-offs.
        background, n_unseen: instead of ``pool``, per query id the scores the system gives a random sample of
            non-relevant background documents (an array) or a fitted :class:`BackgroundModel`, and the number
            of documents of the full corpus outside the pooled corpus (one number or per query).
        covariate: the full-corpus pooling run (or a :class:`Covariate` built from it with the pool), deep
            (1000 per query): the unseen documents it ranks in each query's top are then modelled one by one from
            their pooling scores (regression calibrated on the sample, GREG); the rest of the corpus keeps the
            fitted background (see ``_covariate``'s docstring). Measured to correct nDCG@k and small k better on
            SciFact's uniform pools and large corpora, even with SDM alone on Vaswani and where a stratified sample
            already holds the top (README, "When to trust it"). A
            ``features`` column (e.g. from :class:`MatchedTerms`: each document's count of the query's terms) is
            used beside the score.
        family: background score family (see :data:`FAMILIES`).
        gain: nDCG gain, ``linear`` (trec_eval) or ``exp``.
        bootstrap: resamples of each query's background sample (refitted each time) for percentile
            intervals; 0 skips them. The interval reflects the uncertainty of the fit, not the sampling of
            queries.
        confidence: coverage of the intervals.
        seed: seed of the bootstrap (None: a fresh one each call).
        noise_correction: correct each relevant document's term for the noise of its fitted survival p (a
            second-order correction from the kernel background's own variance estimate: a noisy p overstates
            nDCG@k through its convex discount). Off by default; it lowered every nDCG@k error on SciFact's 15%
            and 30% pools, and is mixed on Vaswani's and on a 1M-document corpus's (README, "SDM"). Needs the
            kernel background (``family`` ``auto`` or ``kde``) and no covariate; a query ``auto`` fits another
            way (fewer than 50 observed scores) is left as it is.
        verbose: a progress bar over the bootstrap rounds (shown on a terminal only).

    Returns ``{"aggregate": {measure: {"pooled": x, "sdm": y[, "sdm_ci": [lo, hi]]}}, "per_query": {measure:
    {qid: {...}}}, "models": {qid: BackgroundModel}}`` with measures named ``R@k`` and ``nDCG@k`` (with a
    covariate, ``"covariate"`` in place of ``"models"``); with a pool, query ids are strings.
    """
    k_values, bootstrap = check_sdm_options(k_values, family, bootstrap, confidence, seed)
    _check_pool(pool)
    if covariate is not None and pool is None:
        raise ValueError(
            "covariate= needs the pool the run was retrieved from (the covariate is read off the pool's sample): "
            "pass pool=, or drop covariate= to evaluate from background= and n_unseen=."
        )
    check_noise_correction(noise_correction, family, covariate)
    options: dict[str, Any] = {
        "family": family,
        "gain": gain,
        "bootstrap": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "progress": bootstrap_bar if verbose else None,
    }
    if isinstance(n_unseen, pd.Series):
        n_unseen = n_unseen.to_dict()
    if pool is None:
        if background is None or n_unseen is None:
            raise ValueError("Pass the pool the run was retrieved from, or background= and n_unseen=.")
        return evaluate_backgrounds(
            run, qrels, background, n_unseen, k_values, noise_correction=noise_correction, **options
        )
    if background is not None or n_unseen is not None:
        raise ValueError("Pass either a pool or background= and n_unseen=, not both.")
    if covariate is not None:
        return evaluate_with_covariate(run, qrels, pool, covariate, k_values, **options)
    return evaluate_on_pool(run, qrels, pool, k_values, noise_correction=noise_correction, **options)


def _check_pool(pool: Any) -> None:
    if pool is not None:
        check_pool(pool)


def threshold_recall(
    run: Any,
    qrels: Any,
    pool: Pool,
    k: int,
    *,
    family: str = "skewnorm",
    models: dict[str, BackgroundModel] | None = None,
    tol: float = 1e-10,
) -> dict[str, float]:
    """The published reference's Recall@k estimator, per query, for parity.

    Solves ``pooled(tau) + N_unseen * p(tau) = k`` for the score threshold tau by bisection, where pooled(tau)
    counts the run's documents scoring >= tau (the reference's R * alpha_r + D * alpha_d) and p is the
    background survival; Recall@k is the share of relevant documents scoring >= tau. Unlike the reference,
    the bracket is the run's own score range widened until it holds the root, not a fixed [-1, 1].
    Prefer :func:`evaluate` (an exact expectation); this is a plug-in approximation.
    """
    if not whole(k) or k < 1:
        raise ValueError(f"k={k!r}: give one cut-off, an integer >= 1 (call once per k).")
    k = int(k)
    _check_pool(pool)
    frame = pooled_run(run, pool)
    q = str_qrels(qrels)
    check_run_on_pool(frame, q, pool, k)
    judged = prepare(frame, q, rel=pool.rel, queries=run_queries(run))
    warn_overlap(judged)  # judged queries it lacks are left out, as in evaluate
    relevant = q[q["label"] >= pool.rel].groupby("qid")["docno"].apply(set).to_dict()
    if models is None:
        models = fit_run_backgrounds(frame, pool, family)
    missing = [str(qid) for qid in frame["qid"].unique() if str(qid) in relevant and str(qid) not in models]
    if missing:
        raise ValueError(
            f"models has no background for {len(missing)} of the run's queries (e.g. {missing[:3]}): give one per "
            "query keyed by its string query id, as sdm.fit_run_backgrounds(run, pool, family) returns them."
        )
    out: dict[str, float] = {}
    for qid, rows in frame.groupby("qid", sort=False):
        rel_docs = relevant.get(qid)
        if not rel_docs:
            continue
        # at trec_eval's single precision (pooled_run's frame), as the background's scores
        scores = np.sort(rows["score"].to_numpy(dtype=np.float64))
        rel_scores = rows.loc[rows["docno"].isin(rel_docs), "score"].to_numpy(dtype=np.float64)
        model = models[str(qid)]

        def excess(tau: float, scores: np.ndarray = scores, model: BackgroundModel = model) -> float:
            pooled_above = len(scores) - np.searchsorted(scores, tau, side="left")
            return float(pooled_above + pool.n_unseen * model.sf(tau)) - k

        span = max(float(scores[-1] - scores[0]), 1.0)
        lo, hi = float(scores[0]) - span, float(scores[-1]) + span
        # each bracket widened geometrically: a fixed step can be below the scores' resolution (|score| >= 2^53)
        up = span
        while excess(hi) > 0 and hi < np.inf:
            hi += up
            up *= 2
        while excess(lo) < 0 and lo > -1e300:
            lo -= span
            span *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            if excess(mid) > 0:
                lo = mid
            else:
                hi = mid
            if hi - lo <= tol * max(1.0, abs(mid)):
                break
        out[str(qid)] = float(np.sum(rel_scores >= hi)) / len(rel_docs)
    for qid in judged.qids.tolist():  # an empty ranking ({qid: {}}) retrieves none of its relevant documents
        if relevant.get(qid) and qid not in out:
            out[qid] = 0.0
    return out


# ------------------------------------------------------------------------------------------------------------
# ir_measures measures for pt.Experiment
# ------------------------------------------------------------------------------------------------------------


class _SDMMeasure(Measure):
    """SDM-corrected twin of an in-house measure (``POOLED``) over a pooled corpus; each run gets its own
    per-query background fits."""

    POOLED: str  # the in-house measure corrected (a key of measures.REGISTRY)

    def __init__(self, **params: Any) -> None:
        # a parameter given as None is its default, as in sdm.evaluate (covariate=None: no covariate)
        super().__init__(**{name: value for name, value in params.items() if value is not None})
        # refused here: ir_measures' repr of the measure (printing it, pt.Experiment) would raise KeyError
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(f"{self.NAME} takes no parameter(s) {unknown}; {self._takes()}.")

    def _takes(self) -> str:
        return "it takes " + ", ".join(
            f"{name} ({'/'.join(map(str, info.choices))})" if isinstance(info.choices, tuple) else name
            for name, info in self.SUPPORTED_PARAMS.items()
        )

    def validate_params(self) -> None:
        """ir_measures' check, after the mistakes it would only report as an assertion, each named with its fix."""
        if not self.validated:
            pool, covariate = self.params.get("pool"), self.params.get("covariate")
            usage = f"sdm.{self.NAME}(pool=pool) @ 100"
            if pool is None:
                raise ValueError(f"{self.NAME} needs the pool the run was retrieved from: {usage}.")
            _check_pool(pool)
            if "cutoff" not in self.params:
                raise ValueError(f"{self.NAME} needs a cut-off: {usage}.")
            family = self.params.get("family", "auto")
            if family not in FAMILIES:
                raise ValueError(
                    f"Unknown background family {family!r}; choose one of {', '.join(FAMILIES)}."
                )
            if covariate is not None and not isinstance(covariate, Covariate):
                raise TypeError(
                    f"covariate must be a Covariate, not {type(covariate).__name__}: pass "
                    "sdm.Covariate.from_run(pooling_run, pool)."
                )
            check_noise_correction(self.params.get("noise_correction", False), family, covariate)
        try:
            super().validate_params()
        except AssertionError as e:  # ir_measures' bare assertion, with the parameters the measure takes
            raise ValueError(
                f"{self.NAME}: {e}; {self._takes()} (a cut-off as a Python int: @ 10)."
            ) from None

    def runtime_impl(self, qrels: Any, run: Any) -> Iterator[Metric]:
        self.validate_params()
        pool: Pool = self.params["pool"]
        rel = self.params.get("rel")
        if rel is not None and rel != pool.rel:
            raise ValueError(
                f"{self.NAME}(rel={rel}) on a pool built with rel={pool.rel}: the pool's relevant documents and its "
                f"sample depend on rel; build the pool with sdm.build_pool(..., rel={rel})."
            )
        family = self.params.get("family") or "auto"
        # rel is the pool's (checked above); nDCG's gains are the labels themselves, so it takes none
        sdm_only = {"pool", "family", "covariate", "noise_correction"}
        if "rel" not in REGISTRY[self.POOLED].SUPPORTED_PARAMS:
            sdm_only.add("rel")
        pooled = REGISTRY[self.POOLED](**{k: v for k, v in self.params.items() if k not in sdm_only})
        covariate, k = self.params.get("covariate"), self.params["cutoff"]
        noise = self.params.get("noise_correction", False)  # a bool: validate_params checked it

        evaluator = ir_measures_evaluator()
        # the covariate's count distributions are cut at the cut-off: made once for the largest this evaluation
        # asks of the same pool and covariate (a larger one than any made needs them again)
        width = max(
            [k]
            + [
                int(m.params["cutoff"])
                for m in getattr(evaluator, "measures", ())
                if isinstance(m, _SDMMeasure)
                and m.params.get("pool") is pool
                and m.params.get("covariate") is covariate
            ]
        )

        def view() -> tuple[Any, Any, np.ndarray | None, dict[str, Any]]:
            depths = None  # with the covariate, the cut is checked at the largest cut-off asked (``width``)
            if covariate is not None:
                j, p, _ = covariate_above(run, qrels, pool, covariate, width, family, batch=True)
            else:  # the cut is checked per measure, below (k=0: not here)
                j, samples, depths = judged_run_on_pool(run, qrels, pool)
                p = rows_view(j, models_for(j, samples, family), noise)
            if not j.num_queries and len(j.missing) and len(j.unjudged_queries):
                warn_overlap(j)  # no query id in common (a batch of unjudged queries has no missing ones)
            # SDM keys queries by string (as the pool's docnos); reported as the qrels name them, else as the run:
            # ir_measures adds a 0 for each qrels query it is not given (pt.Experiment turns the run's int qids
            # into str, not the qrels': given under the run's, every query would count twice, once as 0)
            native = {str(q): q for q in _qids(run, to_run_frame)}
            native.update({str(q): q for q in _qids(qrels, to_qrels_frame)})
            return j, p, depths, native

        uses = (pool, family, covariate, noise)
        j, p, depths, native = _SHARED.view(run, evaluator is not None, uses, width if covariate else 0, view)
        if depths is not None:
            _SHARED.replayed(lambda: warn_if_cut(depths, pool, k))
        values = corrected(pooled.check(), j, p, pool.n_unseen)
        for qid, value in zip(j.qids.tolist(), values.tolist()):
            yield Metric(native.get(qid, qid), self, value)
        # every judged query the run lacks too, at 0 (what ir_measures would add after all measures): pt.Experiment
        # names each row's means in the order of its first query's values (see the in-house measures' runtime_impl)
        for qid in sorted({str(q) for q in _qids(qrels, to_qrels_frame)} - set(j.qids.tolist())):
            yield Metric(native.get(qid, qid), self, 0.0)


def _qids(given: Any, as_frame: Callable[[Any], pd.DataFrame]) -> Any:
    return list(given) if isinstance(given, Mapping) else pd.unique(as_frame(given)["qid"])


_SHARED = SharedRun()


_SDM_PARAMS = {
    "cutoff": ParamInfo(dtype=int, required=True, desc="ranking cut-off in the full corpus"),
    "pool": ParamInfo(dtype=Pool, required=True, desc="the pooled corpus the run was retrieved from"),
    "family": ParamInfo(dtype=str, choices=FAMILIES, default="auto", desc="background score family"),
    "rel": ParamInfo(dtype=int, desc="minimum relevance level (the pool's, given to build_pool)"),
    "covariate": ParamInfo(
        dtype=Covariate, desc="the pooling run's view of the pool (Covariate.from_run), see sdm.evaluate"
    ),
    "noise_correction": ParamInfo(
        dtype=bool, default=False, desc="correct for the noise of the fitted survival, see sdm.evaluate"
    ),
}


class _SDM_R(_SDMMeasure):
    """Expected full-corpus Recall@k (trec_eval's recall_k) of a run over a pooled corpus (SDM)."""

    __name__ = "SDM_R"
    NAME = "SDM_R"
    POOLED = "R"
    SUPPORTED_PARAMS = _SDM_PARAMS


class _SDM_nDCG(_SDMMeasure):
    """Expected full-corpus nDCG@k (trec_eval's ndcg_cut_k; linear gain, or ``gain="exp"``) of a run over a
    pooled corpus (SDM)."""

    __name__ = "SDM_nDCG"
    NAME = "SDM_nDCG"
    POOLED = "nDCG"
    SUPPORTED_PARAMS = {
        **_SDM_PARAMS,
        "gain": ParamInfo(dtype=str, choices=GAINS, default="linear", desc="gain"),
    }


SDM_R = _SDM_R()
SDM_nDCG = _SDM_nDCG()
