"""The in-house metrics as ir_measures measures, so they go straight into ``pt.Experiment``.

Each measure is named ``pse.<ir_measures name>`` (``pse.nDCG@10``, ``pse.AP``, ``pse.R@100``) so that it can
stand next to the standard, pytrec_eval-computed one in the same experiment. They are computed by
ir_measures' runtime provider (any measure with a ``runtime_impl``), one vectorised pass over all queries.

Like pytrec_eval, a value is produced only for queries that are both in the run and in the qrels: queries
without judgments are skipped (a per-query measure that scores them breaks ``pt.Experiment``'s significance
tests with a KeyError), and judged queries without results get ir_measures' default 0, as the standard
measures do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import ir_measures
from ir_measures import Metric
from ir_measures.measures import Measure, ParamInfo

from ._evaluate import compute
from ._prepare import prepare

__all__ = ["nDCG", "R", "P", "AP", "RR", "Rprec", "Success", "Judged", "by_name", "ALL"]


class _InHouse(Measure):
    """Base of the in-house measures; subclasses set NAME and SUPPORTED_PARAMS."""

    def runtime_impl(self, qrels: Any, run: Any) -> Iterator[Metric]:
        # ir_measures hands over its own column names; any cutoff is applied here, in trec_eval's order
        rel = self.params.get("rel")
        j = prepare(run, qrels, rel=1 if rel is None else rel)
        for qid, value in zip(j.qids.tolist(), compute(self, j).tolist()):
            yield Metric(qid, self, value)

    def standard(self) -> Measure:
        """The corresponding standard ir_measures measure (computed by pytrec_eval)."""
        base = getattr(ir_measures, self.NAME.removeprefix("pse."))
        params = {k: v for k, v in self.params.items() if k != "gain"}
        return base(**params)


def _make(name: str, doc: str, params: dict[str, ParamInfo]) -> _InHouse:
    cls = type(f"_PSE_{name}", (_InHouse,), {"NAME": f"pse.{name}", "__name__": f"pse.{name}", "__doc__": doc,
                                           "SUPPORTED_PARAMS": params})
    return cls()


_CUTOFF = ParamInfo(dtype=int, required=False, desc="ranking cut-off (ranks 1..k)")
_REL = ParamInfo(dtype=int, default=1, desc="minimum label of a relevant document (trec_eval -l)")

nDCG = _make(
    "nDCG",
    "nDCG@k as trec_eval ndcg_cut_k (linear gain = label, log2 discount, ideal from all positive judgments); "
    "gain='exp' uses 2^label - 1.",
    {"cutoff": _CUTOFF, "gain": ParamInfo(dtype=str, choices=("linear", "exp"), default="linear", desc="gain")},
)
R = _make("R", "Recall@k as trec_eval recall_k.", {"cutoff": _CUTOFF, "rel": _REL})
P = _make("P", "Precision@k as trec_eval P_k.", {"cutoff": _CUTOFF, "rel": _REL})
AP = _make("AP", "Average precision as trec_eval map (map_cut_k with a cut-off).", {"cutoff": _CUTOFF, "rel": _REL})
RR = _make("RR", "Reciprocal rank as trec_eval recip_rank (only the top k with a cut-off).", {"cutoff": _CUTOFF, "rel": _REL})
Rprec = _make("Rprec", "R-Precision as trec_eval Rprec.", {"rel": _REL})
Success = _make("Success", "Success@k as trec_eval success_k.", {"cutoff": _CUTOFF, "rel": _REL})
Judged = _make("Judged", "Judged@k as ir_measures Judged@k (ties in trec_eval order).", {"cutoff": _CUTOFF})

ALL = {m.NAME: m for m in (nDCG, R, P, AP, RR, Rprec, Success, Judged)}

_NAME_RE = re.compile(r"^pse\.(\w+)(?:\((.*)\))?(?:@(\d+))?$")


def by_name(text: str) -> _InHouse | None:
    """Parse ``pse.nDCG@10`` / ``pse.P(rel=2)@5`` / ``pse.nDCG(gain='exp')@10``; None if not an in-house name."""
    m = _NAME_RE.match(text.strip())
    if not m:
        return None
    base = ALL.get(f"pse.{m.group(1)}")
    if base is None:
        raise ValueError(f"Unknown in-house measure {text!r}; available: {', '.join(ALL)}.")
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, _, value = item.partition("=")
        value = value.strip().strip("'\"")
        params[key.strip()] = int(value) if value.lstrip("-").isdigit() else value
    if m.group(3):
        params["cutoff"] = int(m.group(3))
    measure = base(**params)
    measure.validate_params()
    return measure
