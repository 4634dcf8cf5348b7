"""Cross-checking the in-house metrics against trec_eval (through pytrec_eval), query by query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._inhouse import inhouse, parse_measures
from ._json import json_ready
from ._prepare import JudgedRun, prepare, to_qrels_frame, to_run_frame

__all__ = ["CrossCheck", "MeasureCheck", "crosscheck", "trec_eval_name"]

TOLERANCE = 1e-9
#: the largest label crosscheck passes to pytrec_eval, whose time grows with its square (10,000: 0.04 s a query)
MAX_LABEL = 10_000


def trec_eval_name(measure: Any) -> str | None:
    """The trec_eval measure computing ``measure`` (``None`` if trec_eval has no counterpart, or the measure is
    not computed in-house).

    RR@k has no cut variant in trec_eval: its counterpart is ``recip_rank``, on the run cut to its top k.
    """
    try:
        counterpart = inhouse(measure).trec_eval()
    except ValueError:
        return None
    return None if counterpart is None else counterpart[0]


@dataclass
class MeasureCheck:
    """The comparison for one measure: the largest difference and every query that differs."""

    measure: str
    trec_eval: str | None
    queries: int
    max_diff: float
    differing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.trec_eval is None or not self.differing


@dataclass
class CrossCheck:
    """Result of :func:`crosscheck`; ``ok`` is True when every checked measure agrees within the tolerance."""

    checks: list[MeasureCheck]
    tolerance: float

    @property
    def compared(self) -> int:
        """Queries compared (the most over the measures that have a trec_eval counterpart)."""
        return max((c.queries for c in self.checks if c.trec_eval is not None), default=0)

    @property
    def ok(self) -> bool:
        """Every measure agrees within the tolerance, on at least one query: comparing nothing is no agreement."""
        return self.compared > 0 and all(c.ok for c in self.checks)

    def summary(self) -> str:
        # columns as wide as their longest entry, at least the header's
        wm = max([22, *(len(str(c.measure)) for c in self.checks)])
        wt = max([14, *(len(c.trec_eval or "-") for c in self.checks)])
        lines = [f"{'measure':<{wm}} {'trec_eval':<{wt}} {'queries':>7} {'max |diff|':>11}  status"]
        for c in self.checks:
            status = (
                "no trec_eval counterpart"
                if c.trec_eval is None
                else ("nothing compared" if not c.queries else "ok" if c.ok else f"{len(c.differing)} differ")
            )
            lines.append(
                f"{c.measure!s:<{wm}} {c.trec_eval or '-':<{wt}} {c.queries:>7} {c.max_diff:>11.3g}  {status}"
            )
            for d in c.differing[:10]:
                lines.append(
                    f"    qid {d['qid']}: in-house {d['ours']:.12g} vs trec_eval {d['trec_eval']:.12g} ({_cause(d)})"
                )
        if not any(c.trec_eval is not None for c in self.checks):
            lines.append("NOTHING COMPARED: none of these measures has a trec_eval counterpart")
        elif self.compared == 0:
            lines.append(
                "NOTHING COMPARED: no query of the run has judgments (an empty run, or qrels of another split?)"
            )
        else:
            lines.append("all measures agree" if self.ok else f"DISAGREEMENT above {self.tolerance:g}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """A dict for ``json.dumps``: a value that is NaN is ``None``."""
        return json_ready(
            {
                "ok": self.ok,
                "compared": self.compared,
                "tolerance": self.tolerance,
                "measures": {
                    c.measure: {
                        "trec_eval": c.trec_eval,
                        "queries": c.queries,
                        "max_diff": c.max_diff,
                        "differing": c.differing,
                    }
                    for c in self.checks
                },
            }
        )


def _cause(d: dict[str, Any]) -> str:
    """What explains a query's disagreement, if anything does."""
    if d.get("duplicates"):
        return (
            "the run retrieves a document twice for this query: in-house counts its best-ranked copy, pytrec_eval "
            "its last one; deduplicate the run"
        )
    return "score ties at the cut-off explain it" if d["ties"] else "not explained by ties"


def _pytrec_inputs(run: Any, qrels: Any) -> tuple[dict, dict, set[str]]:
    """pytrec_eval's run and qrels (str ids, as trec_eval reads them), and the queries whose run retrieves a
    document twice (pytrec_eval keeps its last copy, the in-house measures its best-ranked one)."""
    run_f, qrels_f = to_run_frame(run), to_qrels_frame(qrels)
    run_d: dict[str, dict[str, float]] = {}
    if isinstance(run, dict):
        run_d = {str(q): {} for q in run}
    repeated: set[str] = set()
    for q, d, s in zip(run_f["qid"].astype(str), run_f["docno"].astype(str), run_f["score"]):
        docs = run_d.setdefault(q, {})
        if d in docs:
            repeated.add(q)
        docs[d] = float(s)
    largest = qrels_f["label"].max() if len(qrels_f) else 0
    if largest > MAX_LABEL:
        raise ValueError(
            f"these qrels hold the label {largest:g}: pytrec_eval (trec_eval) takes time growing with the square "
            f"of the largest label (a label of 300,000 takes a minute, one of 2^31 or more never ends or is read "
            f"as another number), so crosscheck takes labels up to {MAX_LABEL:,}. Map the labels to a small "
            "scale first; pse.evaluate computes the measures with any label."
        )
    qrels_d: dict[str, dict[str, int]] = {}
    # pytrec_eval corrupts memory (and can hang) on negative labels; every trec_eval measure treats a
    # negative label exactly like 0 (not relevant, no gain), so they are passed as 0.
    for q, d, r in zip(qrels_f["qid"].astype(str), qrels_f["docno"].astype(str), qrels_f["label"]):
        qrels_d.setdefault(q, {})[d] = max(int(r), 0)
    return run_d, qrels_d, repeated


def _cut(run_d: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """Each query's top ``depth`` in trec_eval order (score as float32, then docno, both descending).

    Deliberately a plain Python sort and not the package's ordering code (``_order``): the cross-check must
    not share the code it checks.
    """
    out = {}
    for q, docs in run_d.items():
        ranked = sorted(docs.items(), key=lambda x: (np.float32(x[1]), x[0]), reverse=True)[:depth]
        out[q] = dict(ranked)
    return out


def _tied_at_boundary(docs: dict[str, float], k: int | None) -> bool:
    scores = np.sort(np.array(list(docs.values()), dtype=np.float32))[::-1]
    if len(scores) < 2:
        return False
    if k is None or k >= len(scores):
        return bool((np.diff(scores) == 0).any())
    return bool((scores[: k + 1] == scores[k]).sum() > 1 or (np.diff(scores[: k + 1]) == 0).any())


def crosscheck(
    run: Any,
    qrels: Any,
    measures: Sequence[Any] = ("nDCG@10", "R@100", "AP", "RR"),
    *,
    tolerance: float = TOLERANCE,
) -> CrossCheck:
    """Compute every measure in-house and with pytrec_eval, per query, and compare.

    Returns a :class:`CrossCheck` with, per measure, the largest absolute difference, each query whose values
    differ by more than ``tolerance`` and whether score ties at the cut-off could explain it. Measures with no
    trec_eval counterpart (Judged@k, nDCG with exponential gain) are listed as such and not compared.
    """
    import pytrec_eval

    measures = parse_measures(measures)
    run_d, qrels_d, repeated = _pytrec_inputs(run, qrels)
    checks = []
    prepared: dict[int, JudgedRun] = {}  # one join and sort per relevance threshold, as in evaluate()
    for m in measures:
        computed = inhouse(m)
        rel, k = computed.rel, computed.cutoff
        if rel not in prepared:
            prepared[rel] = prepare(run, qrels, rel=rel)
        j = prepared[rel]
        # keyed by str qids, as pytrec_eval's values are (int qids are compared as trec_eval reads them)
        ours = {str(q): v for q, v in zip(j.qids.tolist(), computed.values(j).tolist())}
        counterpart = computed.trec_eval()
        if counterpart is None:
            checks.append(MeasureCheck(str(m), None, len(ours), float("nan")))
            continue
        te, cut_at = counterpart
        scored = _cut(run_d, cut_at) if cut_at is not None else run_d
        theirs = {
            q: v[te]
            for q, v in pytrec_eval.RelevanceEvaluator(qrels_d, {te}, relevance_level=rel)
            .evaluate(scored)
            .items()
        }
        differing, max_diff = [], 0.0
        for q in sorted(set(ours) | set(theirs)):
            a, b = ours.get(q), theirs.get(q)
            if a is None or b is None:
                differing.append(
                    {
                        "qid": q,
                        "ours": a if a is not None else float("nan"),
                        "trec_eval": b if b is not None else float("nan"),
                        "ties": False,
                        "duplicates": q in repeated,
                    }
                )
                max_diff = float("inf")
                continue
            diff = abs(a - b)
            max_diff = max(max_diff, diff)
            if diff > tolerance:
                ties = _tied_at_boundary(run_d.get(q, {}), k)
                differing.append(
                    {"qid": q, "ours": a, "trec_eval": b, "ties": ties, "duplicates": q in repeated}
                )
        checks.append(MeasureCheck(str(m), te, len(ours), max_diff, differing))
    return CrossCheck(checks, tolerance)
