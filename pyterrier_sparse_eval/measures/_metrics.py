"""In-house metrics as pure array functions over a :class:`JudgedRun`, with trec_eval's semantics.

Conventions shared by every function (they are trec_eval's, and ``tests/test_metrics_property.py`` checks each
against pytrec_eval on thousands of random runs):

- Order: documents are ranked by score descending, then docno descending; any rank column is ignored.
  Scores are compared in single precision, as trec_eval stores them (closer scores are ties).
- Relevance: a document is relevant when its label is >= ``rel`` (``JudgedRun.rel``, trec_eval's ``-l``,
  default 1), so labels 0 and below (MIRACL-style judged negatives) are never relevant; unjudged documents
  are not relevant.
- Queries: one value per query that is both in the run and in the qrels. A query whose judgments hold no
  relevant document scores 0 on every measure here. Queries with judgments but no retrieved document are
  in ``JudgedRun.missing``: trec_eval leaves them out unless ``-c``, which counts them as 0 (see ``evaluate``).
- Cut-offs: ``k`` counts ranks 1..k; ``k=None`` means the whole ranking.

Each function returns a float64 array with one value per query of ``j.qids``.
"""

from __future__ import annotations

import numpy as np

from ._prepare import JudgedRun

__all__ = [
    "GAINS",
    "gain_values",
    "ideal_dcg",
    "ndcg",
    "dcg",
    "recall",
    "precision",
    "average_precision",
    "reciprocal_rank",
    "r_precision",
    "success",
    "judged_at",
    "num_relevant_retrieved",
]

GAINS = ("linear", "exp")


def _within(j: JudgedRun, k: int | None) -> np.ndarray:
    """Which judged rows rank within the top k."""
    if k is None:
        return np.ones(len(j.rank), dtype=bool)
    if k < 1:
        raise ValueError(f"cut-off k must be >= 1, got {k}.")
    return j.rank < k


def gain_values(labels: np.ndarray, gain: str) -> np.ndarray:
    """Each label's gain: the label itself (``linear``, trec_eval) or 2^label - 1 (``exp``); 0 for labels <= 0."""
    if gain == "linear":
        return np.where(labels > 0, labels, 0.0)
    if gain == "exp":
        # 2^1024 is beyond a float64: the gain would be inf and nDCG inf / inf, NaN
        if len(labels) and labels.max() >= 1024:
            raise ValueError(
                f"gain='exp' takes 2^label - 1, which overflows for the label {labels.max():g} of these qrels "
                "(labels must be below 1024): use gain='linear', or map the labels to a small scale first."
            )
        return np.where(labels > 0, np.exp2(labels) - 1.0, 0.0)
    raise ValueError(f"gain must be one of {GAINS}, got {gain!r}.")


def dcg(j: JudgedRun, k: int | None = None, *, gain: str = "linear") -> np.ndarray:
    """Discounted cumulative gain: sum over ranks i = 1..k of gain_i / log2(i + 1).

    Gain ``"linear"`` (trec_eval): the label itself for labels > 0, else 0. Gain ``"exp"``: 2^label - 1
    (Burges et al. 2005), not what trec_eval computes. Unjudged documents gain 0.
    """
    within = _within(j, k)
    values = gain_values(j.label, gain) / np.log2(j.rank + 2.0)
    return j.total(np.where(within, values, 0.0))


def ideal_dcg(j: JudgedRun, k: int | None, gain: str) -> np.ndarray:
    """DCG@k of the ideal ranking: all the query's positive judgments, labels descending."""
    keep = np.ones(len(j.ideal_pos), bool) if k is None else j.ideal_pos < k
    values = gain_values(j.ideal_label, gain) / np.log2(j.ideal_pos + 2.0)
    return np.bincount(j.ideal_group[keep], weights=values[keep], minlength=j.num_queries).astype(np.float64)


def ndcg(j: JudgedRun, k: int | None = None, *, gain: str = "linear") -> np.ndarray:
    """Normalised DCG (trec_eval ``ndcg_cut_k``, or ``ndcg`` with ``k=None``).

    DCG@k divided by the DCG@k of the ideal ranking of *all* the query's judged documents with label > 0
    (labels sorted descending). Discount log2(rank + 1), rank from 1. Gains as in :func:`dcg`; note that, as in
    trec_eval, gains use the labels themselves and not the ``rel`` threshold. A query with no positive
    judgment scores 0.
    """
    ideal = ideal_dcg(j, k, gain)
    actual = dcg(j, k, gain=gain)
    return np.divide(actual, ideal, out=np.zeros_like(actual), where=ideal > 0)


def num_relevant_retrieved(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """Number of relevant documents (label >= rel) in the top k."""
    return j.count(j.is_rel & _within(j, k))


def recall(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """Recall@k (trec_eval ``recall_k``): relevant documents in the top k / all relevant documents of the query.

    0 for a query with no relevant document. Not Success@k (which is 1 when any relevant document is found).
    """
    return np.divide(
        num_relevant_retrieved(j, k), j.num_rel, out=np.zeros(j.num_queries), where=j.num_rel > 0
    )


def precision(j: JudgedRun, k: int) -> np.ndarray:
    """P@k (trec_eval ``P_k``): relevant documents in the top k / k, even when fewer than k are retrieved."""
    return num_relevant_retrieved(j, k) / float(k)


def _precision_at_relevant(j: JudgedRun) -> np.ndarray:
    """For each relevant row: (relevant documents at or above its rank) / its rank; 0 for other rows."""
    rel = np.flatnonzero(j.is_rel)
    g = j.group[rel]
    # rows are sorted by query then rank, so a relevant row's count within its query is its offset
    first = np.searchsorted(g, g, side="left")
    out = np.zeros(len(j.rank))
    out[rel] = (np.arange(len(rel)) - first + 1.0) / (j.rank[rel] + 1.0)
    return out


def average_precision(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """AP (trec_eval ``map``), or AP@k (``map_cut_k``): the sum of precision at the rank of each relevant
    retrieved document (within the top k), divided by the number of relevant documents of the query
    (retrieved or not). 0 for a query with no relevant document."""
    prec = np.where(_within(j, k), _precision_at_relevant(j), 0.0)
    return np.divide(j.total(prec), j.num_rel, out=np.zeros(j.num_queries), where=j.num_rel > 0)


def reciprocal_rank(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """RR (trec_eval ``recip_rank``), or RR@k: 1 / rank of the first relevant document (0 if none in the top k)."""
    hits = j.is_rel & _within(j, k)
    groups, first = np.unique(j.group[hits], return_index=True)
    out = np.zeros(j.num_queries)
    out[groups] = 1.0 / (j.rank[hits][first] + 1.0)
    return out


def r_precision(j: JudgedRun) -> np.ndarray:
    """R-Precision (trec_eval ``Rprec``): precision at rank R, R = the query's number of relevant documents.
    0 for a query with no relevant document."""
    hits = j.count(j.is_rel & (j.rank < j.num_rel[j.group]))
    return np.divide(hits, j.num_rel, out=np.zeros(j.num_queries), where=j.num_rel > 0)


def success(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """Success@k (trec_eval ``success_k``): 1 if any relevant document is in the top k, else 0."""
    return (num_relevant_retrieved(j, k) > 0).astype(np.float64)


def judged_at(j: JudgedRun, k: int | None = None) -> np.ndarray:
    """Judged@k (ir_measures ``Judged@k``): the share of the top k documents that have any judgment (any label,
    including 0 and negative). As in ir_measures, the denominator is min(k, documents retrieved); ties are
    ordered as everywhere here (trec_eval's order). Reveals how far a run strays outside the judgment pool."""
    shown = j.num_retrieved if k is None else np.minimum(j.num_retrieved, float(k))
    return np.divide(j.count(_within(j, k)), shown, out=np.zeros(j.num_queries), where=shown > 0)
