"""In-house evaluation measures with trec_eval's semantics, and a cross-check against pytrec_eval.

This subpackage depends on numpy, scipy, pandas, ir_measures and pytrec_eval only (never on the index, the
encoders or the command line), so evaluation works on any run from any system. Its parts:

- ``_order``: trec_eval's ranking order (score, then docno, both descending), one definition for the package;
- ``_prepare``: a run joined with its qrels in that order (:class:`JudgedRun`);
- ``_metrics``: the metrics as pure array functions over a :class:`JudgedRun`;
- ``_inhouse``: each measure declared once (``nDCG``, ``R``, ``P``, ``AP``, ``RR``, ``Rprec``, ``Success``,
  ``Judged``: ir_measures measures named ``pse.nDCG@10`` etc. for ``pt.Experiment``) and the package's one
  parser of measure names (:func:`parse_measure`);
- ``_evaluate``: :func:`evaluate` / :func:`evaluate_retrieval`, the same numbers from DataFrames or dicts;
- ``_crosscheck``: :func:`crosscheck`, every value compared with trec_eval's, query by query;
- ``_json``: :func:`json_ready`, results as strict JSON (NaN and infinities as null);
- ``_score_dist`` and ``_sdm``: the maths of Score Distribution Modeling (background fits, expected R@k and
  nDCG@k); its public face is :mod:`pyterrier_sparse_eval.sdm`.
"""

from __future__ import annotations

import warnings
from typing import Any

from ._crosscheck import CrossCheck, MeasureCheck, crosscheck, trec_eval_name
from ._evaluate import Evaluation, evaluate, evaluate_retrieval
from ._inhouse import (
    ALL,
    AP,
    REGISTRY,
    RR,
    SUPPORTED,
    InHouseMeasure,
    Judged,
    P,
    R,
    Rprec,
    Success,
    by_name,
    inhouse,
    nDCG,
    parse_measure,
    parse_measures,
)
from ._json import json_ready
from ._metrics import (
    average_precision,
    dcg,
    judged_at,
    ndcg,
    precision,
    r_precision,
    recall,
    reciprocal_rank,
    success,
)
from ._order import trec_ranks
from ._prepare import JudgedRun, prepare
from ._score_dist import FAMILIES, BackgroundModel, fit_background
from ._sdm import sdm_ndcg, sdm_recall, survival_of_rows
from ._sdm_samples import evaluate_backgrounds

__all__ = [
    "ALL",
    "AP",
    "BackgroundModel",
    "CrossCheck",
    "Evaluation",
    "FAMILIES",
    "InHouseMeasure",
    "Judged",
    "JudgedRun",
    "MeasureCheck",
    "P",
    "R",
    "REGISTRY",
    "RR",
    "Rprec",
    "SUPPORTED",
    "Success",
    "average_precision",
    "by_name",
    "crosscheck",
    "dcg",
    "evaluate",
    "evaluate_retrieval",
    "fit_background",
    "inhouse",
    "json_ready",
    "judged_at",
    "nDCG",
    "ndcg",
    "parse_measure",
    "parse_measures",
    "precision",
    "prepare",
    "r_precision",
    "recall",
    "reciprocal_rank",
    "sdm_evaluate",
    "sdm_ndcg",
    "sdm_recall",
    "success",
    "survival_of_rows",
    "trec_eval_name",
    "trec_ranks",
]


def sdm_evaluate(
    run: Any,
    qrels: Any,
    background: dict[str, Any],
    n_unseen: int | dict[str, int],
    *args: Any,
    **kwargs: Any,
) -> dict[str, Any]:
    """Deprecated: use ``pse.sdm.evaluate(run, qrels, background=..., n_unseen=...)`` (same arguments, same
    result); this alias will be removed in the next release."""
    warnings.warn(
        "pse.measures.sdm_evaluate is deprecated; use pse.sdm.evaluate(run, qrels, background=..., n_unseen=...).",
        DeprecationWarning,
        stacklevel=2,
    )
    return evaluate_backgrounds(run, qrels, background, n_unseen, *args, **kwargs)
