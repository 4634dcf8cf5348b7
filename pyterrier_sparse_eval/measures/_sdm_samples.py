"""SDM from per-query background samples given directly (``pse.sdm.evaluate(run, qrels, background=...)``):
each query's sampled scores, or a fitted model, and the number of unseen documents."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._evaluate import warn_overlap
from ._prepare import prepare, single_precision
from ._score_dist import BackgroundModel, fit_background
from ._sdm import _unseen, sdm_report

__all__ = ["evaluate_backgrounds"]


def evaluate_backgrounds(
    run: Any,
    qrels: Any,
    background: dict[str, Any],
    n_unseen: int | dict[str, int],
    k_values: Sequence[int] = (10, 100, 1000),
    *,
    family: str = "auto",
    gain: str = "linear",
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress: Callable[[range], Iterable[int]] | None = None,
    noise_correction: bool = False,
) -> dict[str, Any]:
    """Pooled and SDM-corrected R@k and nDCG@k of a run, from per-query background samples or models.

    ``background[qid]`` holds the scores the system gives a random sample of non-relevant background
    documents (an array) or an already fitted :class:`BackgroundModel`; ``n_unseen`` is the number of
    documents of the full corpus outside the pooled one (one number or per query). Public entry point:
    ``pse.sdm.evaluate(run, qrels, background=..., n_unseen=...)``.
    """
    j = prepare(run, qrels)
    warn_overlap(j)  # judged queries the run lacks are left out of the mean: said, as on a pool
    qids = j.qids.tolist()
    if not isinstance(background, (Mapping, pd.Series)):
        raise TypeError(
            f"background is a {{qid: scores}} mapping (a dict, or a Series indexed by qid), not "
            f"{type(background).__name__}: one array of the system's scores of sampled background documents per "
            "query, keyed by its query id as the run has it."
        )
    for name, given in (("background", background), ("n_unseen", n_unseen)):
        lacking = [q for q in qids if q not in given] if isinstance(given, (Mapping, pd.Series)) else []
        if lacking:
            raise ValueError(
                f"{name} has no entry for {len(lacking)} evaluated queries, e.g. {lacking[:3]}: give one per query "
                "of the run that has judgments, keyed by its query id as the run has it."
            )
    if not isinstance(n_unseen, dict) and np.ndim(n_unseen) != 0:
        raise ValueError(
            "n_unseen is one number, or a {qid: count} dict (a list's query order is not defined)."
        )
    unseen = _unseen(j, np.array([n_unseen[q] for q in qids]) if isinstance(n_unseen, dict) else n_unseen)
    fitted = [q for q in qids if isinstance(background[q], BackgroundModel)]
    if bootstrap and fitted:
        raise ValueError(
            f"bootstrap resamples each query's background sample, but {len(fitted)} queries have a fitted model "
            f"(e.g. {fitted[:3]}): give their sampled scores as arrays, or bootstrap=0."
        )
    # at trec_eval's precision, as the run's scores are ranked and compared with them (equal scores stay equal)
    samples = {q: _sampled_scores(q, background[q]) for q in qids if q not in fitted}
    models = {q: background[q] if q in fitted else fit_background(samples[q], family) for q in qids}

    def refit(rng: np.random.Generator) -> dict[str, Any]:
        return {
            q: fit_background(rng.choice(x, size=len(x), replace=True), family) for q, x in samples.items()
        }

    per_query, aggregate = sdm_report(
        j,
        models,
        unseen,
        k_values,
        gain=gain,
        refit=refit,
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
        progress=progress,
        noise_correction=noise_correction,
    )
    return {"per_query": per_query, "aggregate": aggregate, "models": models}


def _sampled_scores(qid: str, given: Any) -> np.ndarray:
    """One query's ``background=`` scores: finite, rounded to the single precision the run is ranked at."""
    try:
        x = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        fit = (
            " (a BackgroundSample of sdm.background_from_run: pass its .fit(family))"
            if hasattr(given, "fit")
            else ""
        )
        raise ValueError(
            f"background[{qid!r}] is a {type(given).__name__}{fit}: give each query's sampled scores as a 1-d array, "
            "or a fitted BackgroundModel."
        ) from None
    if x.ndim != 1:
        raise ValueError(
            f"background[{qid!r}] has shape {x.shape}: give each query's sampled scores as a 1-d array (or a "
            "fitted BackgroundModel)."
        )
    if len(x) < 2:
        raise ValueError(
            f"background[{qid!r}] has {len(x)} sampled score(s): a background model needs at least 2 (the scores "
            "the system gives the sampled documents, for each query)."
        )
    bad = ~np.isfinite(x)
    if bad.any():
        raise ValueError(
            f"background[{qid!r}] has {int(bad.sum())} scores that are not finite (NaN or +-inf): SDM fits the "
            "distribution of the sampled documents' scores. Give every sampled document a finite score; one the "
            "system gives no score (-inf: no query term) can take one below every relevant document's."
        )
    return single_precision(x)
