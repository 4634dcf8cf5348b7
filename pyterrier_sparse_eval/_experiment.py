"""``pt.Experiment`` with an optional cross-check of every run against trec_eval."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyterrier as pt

from .measures import crosscheck as _crosscheck
from .measures import parse_measures

__all__ = ["Experiment"]


def _parse(measure: Any) -> Any:
    """Measure names as ir_measures (or this package, ``pse.nDCG@10``) spell them; others are left to pt."""
    if not isinstance(measure, str):
        return measure
    import ir_measures

    from .measures import by_name

    try:
        return by_name(measure) or ir_measures.parse_measure(measure)
    except Exception:
        return measure


def Experiment(  # noqa: N802 - mirrors pt.Experiment
    retr_systems: Sequence[Any],
    topics: pd.DataFrame,
    qrels: pd.DataFrame,
    eval_metrics: Sequence[Any],
    *,
    crosscheck: bool = False,
    names: Sequence[str] | None = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """``pt.Experiment``, plus ``crosscheck=True``: each system's run is also evaluated in-house and with
    pytrec_eval, query by query, for every measure both can compute; any disagreement raises an error that
    shows the differing queries. Runs are computed once and shared by both."""
    eval_metrics = [_parse(m) for m in eval_metrics]
    if not crosscheck:
        return pt.Experiment(retr_systems, topics, qrels, eval_metrics, names=names, **kwargs)
    runs = [s if isinstance(s, pd.DataFrame) else s.transform(topics) for s in retr_systems]
    names = list(names) if names is not None else [str(s) if not isinstance(s, pd.DataFrame) else f"run{i}" for i, s in enumerate(retr_systems)]
    checkable = []
    for m in eval_metrics:
        try:
            checkable.extend(parse_measures([m]))
        except (ValueError, AttributeError):  # not computed in-house: nothing to compare
            continue
    for name, run in zip(names, runs):
        report = _crosscheck(run, qrels[qrels["qid"].isin(topics["qid"])], checkable)
        if not report.ok:
            raise AssertionError(f"In-house and trec_eval values differ for {name}:\n{report.summary()}")
    if not checkable:
        warnings.warn("crosscheck=True, but no requested measure has an in-house counterpart.", stacklevel=2)
    return pt.Experiment(runs, topics, qrels, eval_metrics, names=names, **kwargs)
