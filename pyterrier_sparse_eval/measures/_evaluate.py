"""Evaluating runs in-house: measures named as ir_measures names them, computed by ``_metrics``."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _metrics as M
from ._inhouse import inhouse, parse_measures
from ._json import json_ready
from ._prepare import JudgedRun, prepare, user_stacklevel
from ._warn import each_once

__all__ = ["Evaluation", "evaluate", "evaluate_retrieval"]


@dataclass
class Evaluation:
    """Per-query and aggregate values of several measures.

    ``per_query[measure_name][qid]``, the qid a string whatever the run's type (``missing`` and ``unjudged`` too,
    as ``sdm.evaluate``'s); ``aggregate[measure_name]`` is the mean over the evaluated queries (with
    ``missing_as_zero``, judged queries absent from the run are included as 0, trec_eval's ``-c``).
    ``missing`` lists judged queries absent from the run; ``unjudged`` lists run queries without judgments;
    ``num_queries`` counts the queries in both (with ``missing_as_zero`` the means are over these and ``missing``).
    """

    aggregate: dict[str, float]
    per_query: dict[str, dict[str, float]]
    missing: list[str] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)
    num_queries: int = 0

    def to_json(self, per_query: bool = True) -> dict[str, Any]:
        """A dict for ``json.dumps``: a value that is NaN (a mean over no query) is ``None``."""
        out: dict[str, Any] = {"aggregate": self.aggregate}
        if per_query:
            out["per_query"] = self.per_query
        out["missing_queries"] = self.missing
        out["unjudged_queries"] = self.unjudged
        return json_ready(out)


def evaluate(
    run: Any,
    qrels: Any,
    measures: Sequence[Any] = ("nDCG@10", "R@100", "AP", "RR"),
    *,
    missing_as_zero: bool = False,
    warn: bool = True,
) -> Evaluation:
    """Evaluate a run in-house with trec_eval's semantics.

    Args:
        run: DataFrame (``qid, docno, score`` or ir_measures columns), ``{qid: {docno: score}}`` or
            ``{qid: [(docno, score), ...]}``. Order and any rank column are ignored: ranking is by score, then docno.
        qrels: DataFrame (``qid, docno, label``) or ``{qid: {docno: label}}``.
        measures: ir_measures measures or names (``nDCG@10``, ``R@100``, ``P(rel=2)@10``, ``AP``, ...).
        missing_as_zero: count judged queries that the run does not retrieve for as 0 (trec_eval ``-c``).
        warn: warn when run and qrels only partly overlap (wrong split, id types).
    """
    measures = parse_measures(measures)
    by_rel: dict[int, JudgedRun] = {}  # one join and sort per relevance threshold
    per_query: dict[str, dict[str, float]] = {}
    aggregate: dict[str, float] = {}
    j = None
    with each_once():  # the run's and qrels' warnings once, not once per relevance threshold
        for m in measures:
            computed = inhouse(m)
            if computed.rel not in by_rel:
                by_rel[computed.rel] = prepare(run, qrels, rel=computed.rel)
            j = by_rel[computed.rel]
            values = computed.values(j)
            # str ids whatever the run's and qrels' type (the README's "string ids everywhere", sdm.evaluate's)
            pq = dict(zip(map(str, j.qids.tolist()), values.tolist()))
            if missing_as_zero:
                pq.update({str(q): 0.0 for q in j.missing.tolist()})
            per_query[str(m)] = pq
            aggregate[str(m)] = float(np.mean(list(pq.values()))) if pq else float("nan")
    if j is None:
        j = prepare(run, qrels)
    if warn:
        warn_overlap(j, missing_as_zero)
    return Evaluation(
        aggregate,
        per_query,
        [str(q) for q in j.missing.tolist()],
        [str(q) for q in j.unjudged_queries.tolist()],
        j.num_queries,
    )


def warn_overlap(j: JudgedRun, missing_as_zero: bool = False) -> None:
    """Warn when run and qrels only partly overlap (wrong split, id types), with the counts."""
    evaluated, missing, unjudged = j.num_queries, len(j.missing), len(j.unjudged_queries)
    if missing or unjudged:
        if missing_as_zero and missing:  # the mean is over every judged query
            msg = (
                f"{missing} of {evaluated + missing} judged queries have no results in the run (counted as 0)"
            )
        else:
            msg = f"evaluating {evaluated} of {evaluated + missing} judged queries: " + ", ".join(
                part
                for n, part in (
                    (missing, f"{missing} judged queries have no results in the run"),
                    (unjudged, f"{unjudged} run queries have no judgments"),
                )
                if n
            )
        if missing_as_zero and missing and unjudged:
            msg += f", {unjudged} run queries have no judgments"
        if evaluated == 0:
            msg += " (no query id in common: are run and qrels from the same split?)"
        warnings.warn(msg + "." + _id_hint(j), stacklevel=user_stacklevel())


def _id_hint(j: JudgedRun) -> str:
    """A hint when unmatched ids differ only by a trailing ".0" (a float id column read as str against int ids)
    or by leading zeros."""
    for side, ids, others, other_side in (
        ("run", j.unjudged_queries, j.missing, "qrels'"),
        ("qrels", j.missing, j.unjudged_queries, "run's"),
    ):
        plain = {str(q) for q in others.tolist()}
        floats = [str(q) for q in ids.tolist() if str(q).endswith(".0") and str(q)[:-2] in plain]
        if floats:
            return (
                f" {len(floats)} of the {side} query ids are the {other_side} with '.0' (e.g. {floats[0]!r} for "
                f"{floats[0][:-2]!r}): its qid column was float. Cast it to int first, e.g. "
                f"{side}['qid'] = {side}['qid'].astype(float).astype(int).astype(str)."
            )
        # ids compared as text, as trec_eval compares them: '001' is not '1'
        padded = [
            str(q) for q in ids.tolist() if str(q) != str(q).lstrip("0") and str(q).lstrip("0") in plain
        ]
        if padded:
            return (
                f" {len(padded)} of the {side} query ids are the {other_side} with leading zeros (e.g. {padded[0]!r} "
                f"for {padded[0].lstrip('0')!r}); ids are compared as text, as trec_eval compares them: write them "
                "alike in both."
            )
    return ""


def evaluate_retrieval(
    all_retrieved: Any,
    all_qrels: Any,
    k_values: Sequence[int] = (1, 5, 10, 100),
    *,
    gain: str = "linear",
) -> dict[str, float]:
    """Mean nDCG@k, Recall@k and P@k for each k, plus MAP and MRR (whole ranking), trec_eval-exact.

    Takes ``{qid: [(docno, score), ...]}`` (sorting is done here) and ``{qid: {docno: label}}``; labels <= 0
    are not relevant. nDCG uses trec_eval's linear gain unless ``gain="exp"`` (2^rel - 1). Means are over the
    queries present in both (a warning reports any mismatch).

    >>> evaluate_retrieval({"q": [("a", 0.2), ("b", 0.9)]}, {"q": {"a": 1, "c": 1}}, k_values=[1, 2])
    {'nDCG@1': 0.0, 'Recall@1': 0.0, 'P@1': 0.0, 'nDCG@2': 0.38685280723454163, 'Recall@2': 0.5, 'P@2': 0.5, 'MAP': 0.25, 'MRR': 0.5}
    """
    if isinstance(k_values, (str, bytes)) or not isinstance(k_values, Iterable):
        raise TypeError(f"k_values={k_values!r}: give a list of cut-offs, e.g. k_values=[10, 100].")
    if bad := [k for k in k_values if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1]:
        raise ValueError(
            f"k_values: {bad[0]!r} is not a cut-off; give whole numbers >= 1, e.g. k_values=[10, 100]."
        )
    j = prepare(all_retrieved, all_qrels)
    warn_overlap(j)
    out: dict[str, float] = {}

    def mean(v: np.ndarray) -> float:
        return float(v.mean()) if len(v) else float("nan")

    for k in k_values:
        out[f"nDCG@{k}"] = mean(M.ndcg(j, k, gain=gain))
        out[f"Recall@{k}"] = mean(M.recall(j, k))
        out[f"P@{k}"] = mean(M.precision(j, k))
    out["MAP"] = mean(M.average_precision(j))
    out["MRR"] = mean(M.reciprocal_rank(j))
    return out
