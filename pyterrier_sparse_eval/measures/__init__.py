"""In-house evaluation measures with trec_eval's semantics, and a cross-check against pytrec_eval.

This subpackage depends on numpy, pandas, ir_measures and pytrec_eval only (never on the index or the
encoders), so evaluation works on any run from any system.

- ``nDCG``, ``R``, ``P``, ``AP``, ``RR``, ``Rprec``, ``Success``, ``Judged``: ir_measures measures
  (named ``pse.nDCG@10`` etc.) for ``pt.Experiment``;
- :func:`evaluate` / :func:`evaluate_retrieval`: the same numbers from DataFrames or dicts;
- :func:`crosscheck`: every value compared with trec_eval's, query by query;
- :func:`sdm_evaluate`, :func:`fit_background`: SDM-corrected R@k / nDCG@k for runs on pooled corpora;
- the pure array functions behind them live in ``_metrics``.
"""

from ._crosscheck import CrossCheck, MeasureCheck, crosscheck, trec_eval_name
from ._evaluate import Evaluation, evaluate, evaluate_retrieval, parse_measures
from ._ir_measures import ALL, AP, RR, Judged, P, R, Rprec, Success, by_name, nDCG
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
from ._prepare import Judged as JudgedRun
from ._prepare import prepare
from ._score_dist import BackgroundModel, fit_background
from ._sdm import sdm_evaluate, sdm_ndcg, sdm_recall, survival_of_rows

__all__ = [
    "ALL",
    "AP",
    "BackgroundModel",
    "CrossCheck",
    "Evaluation",
    "Judged",
    "JudgedRun",
    "MeasureCheck",
    "P",
    "R",
    "RR",
    "Rprec",
    "Success",
    "average_precision",
    "by_name",
    "crosscheck",
    "dcg",
    "evaluate",
    "evaluate_retrieval",
    "fit_background",
    "judged_at",
    "nDCG",
    "ndcg",
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
]
