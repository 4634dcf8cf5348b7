"""The in-house measures, each declared once, and the one parser of measure names for the whole package.

A declaration says everything about a measure: its name (``pse.`` + the ir_measures measure it reproduces),
its parameters, the array function that computes it (``values``), its trec_eval counterpart and, in its
docstring, its convention. Everything else is derived from the declarations: :data:`REGISTRY`,
:data:`SUPPORTED`, the names accepted by :func:`parse_measure` and its error texts, the cross-check's
trec_eval mapping, and the pooled twins of SDM's corrected measures. Adding a measure means adding one class
here (and its array function in ``_metrics``).

The declared objects are ir_measures measures: ``pse.measures.nDCG@10`` goes straight into ``pt.Experiment``
(named ``pse.nDCG@10`` so that it can stand next to the standard, pytrec_eval-computed ``nDCG@10``). They are
computed by ir_measures' runtime provider (any measure with a ``runtime_impl``), one vectorised pass over all
queries. Like pytrec_eval, a value is produced only for queries that are both in the run and in the qrels:
queries without judgments are skipped (a per-query measure that scores them breaks ``pt.Experiment``'s
significance tests with a KeyError), and judged queries without results get ir_measures' default 0, as the
standard measures do.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import ir_measures
import numpy as np
from ir_measures import Metric
from ir_measures.measures import Measure, ParamInfo

from . import _metrics as M
from ._prepare import JudgedRun, prepare
from ._spelling import did_you_mean
from ._warn import warn_once

__all__ = [
    "InHouseMeasure",
    "nDCG",
    "R",
    "P",
    "AP",
    "RR",
    "Rprec",
    "Success",
    "Judged",
    "REGISTRY",
    "SUPPORTED",
    "ALL",
    "inhouse",
    "parse_measure",
    "parse_measures",
    "by_name",
]

_CUTOFF = ParamInfo(dtype=int, required=False, desc="ranking cut-off (ranks 1..k)")
_REL = ParamInfo(dtype=int, default=1, desc="minimum label of a relevant document (trec_eval -l)")
_GAIN = ParamInfo(
    dtype=str, choices=M.GAINS, default="linear", desc="gain: the label (linear) or 2^label - 1 (exp)"
)


_LAST: list[Any] = []  # (run, qrels) weakly, and {rel: the run joined}


def _prepared(run: Any, qrels: Any, rel: int) -> JudgedRun:
    """``prepare(run, qrels, rel=rel)`` once for all the measures that ir_measures' runtime evaluator (pt.Experiment's)
    hands one run and qrels (each had joined and sorted the run again), held while both live; warned once."""
    if not ((last := _LAST[:]) and last[0][0]() is run and last[0][1]() is qrels):
        try:
            forget = _LAST.clear
            last = [(weakref.ref(run, lambda _: forget()), weakref.ref(qrels, lambda _: forget())), {}]
        except TypeError:  # an object that takes no weak reference: not held
            return prepare(run, qrels, rel=rel, once=True)
        _LAST[:] = last
    if rel not in last[1]:
        last[1][rel] = prepare(run, qrels, rel=rel, once=True)
    return last[1][rel]


class InHouseMeasure(Measure):
    """An ir_measures measure computed in-house, with trec_eval's semantics (see ``_metrics``).

    Subclasses declare ``NAME`` (``pse.`` + ``BASE``), ``BASE`` (the ir_measures measure reproduced),
    ``SUPPORTED_PARAMS``, ``EXAMPLES`` (names for help texts), :meth:`values` and :meth:`trec_eval`.
    """

    BASE: ClassVar[str]
    EXAMPLES: ClassVar[tuple[str, ...]] = ()

    # --- parameters ------------------------------------------------------------------------------------------
    @property
    def cutoff(self) -> int | None:
        cutoff: int | None = self.params.get("cutoff")
        return cutoff

    @property
    def rel(self) -> int:
        rel = self.params.get("rel")
        return 1 if rel is None else int(rel)

    @property
    def gain(self) -> str:
        return str(self.params.get("gain") or "linear")

    def check(self) -> InHouseMeasure:
        """Raise a ValueError naming the problem if the parameters are not valid; returns the measure."""
        unknown = sorted(set(self.params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise ValueError(
                f"{self.NAME} takes no parameter(s) {unknown}; it takes {sorted(self.SUPPORTED_PARAMS)}."
            )
        for name, info in self.SUPPORTED_PARAMS.items():
            value = self.params.get(name)
            if value is None:
                if info.required:
                    what = "cut-off" if name == "cutoff" else name
                    raise ValueError(f"{self.BASE} needs a {what}, e.g. {self.EXAMPLES[0]}.")
                continue
            if info.dtype is int and (not isinstance(value, (int, np.integer)) or isinstance(value, bool)):
                raise ValueError(f"{self.NAME}: {name} must be an integer, got {value!r}.")
            if name == "cutoff" and value < 1:
                raise ValueError(f"cut-off k must be >= 1, got {value}.")
            if name == "rel" and value < 1:  # trec_eval's relevance_level is positive too
                raise ValueError(f"rel must be >= 1 (labels >= rel are relevant), got {value}.")
            if name == "gain" and value not in M.GAINS:
                raise ValueError(f"gain must be one of {M.GAINS}, got {value!r}.")
        return self

    def validate_params(self) -> None:
        """ir_measures' hook (it asserts); here a ValueError that names the problem."""
        if not self.validated:
            self.check()
            self.validated = True

    # --- what the declarations provide ---------------------------------------------------------------------
    def values(self, j: JudgedRun) -> np.ndarray:
        """Per-query values on a prepared run (``j.rel`` must equal :attr:`rel`), one per ``j.qids``."""
        raise NotImplementedError

    def trec_eval(self) -> tuple[str, int | None] | None:
        """The trec_eval measure computing this one, and the depth to cut the run to first (None: as is);
        None when trec_eval has no counterpart."""
        return None

    def standard(self) -> Measure:
        """The corresponding standard ir_measures measure (computed by pytrec_eval)."""
        params = {k: v for k, v in self.params.items() if k != "gain"}
        return getattr(ir_measures, self.BASE)(**params)

    # --- ir_measures' runtime provider ---------------------------------------------------------------------
    def runtime_impl(self, qrels: Any, run: Any) -> Iterator[Metric]:
        # ir_measures hands over its own column names; any cutoff is applied here, in trec_eval's order
        self.check()
        j = _prepared(run, qrels, self.rel)
        for qid, value in zip(j.qids.tolist(), self.values(j).tolist()):
            yield Metric(qid, self, value)
        # every judged query the run lacks too, at ir_measures' default, which it would add after all measures
        # (sorted by name): pt.Experiment (PyTerrier 1.1.2) names each row's means in the order of its first
        # query's values, so a system retrieving nothing for the judged queries (of a batch) would be misnamed
        lacked = sorted(set(qrels["query_id"].unique().tolist()) - set(j.qids.tolist()), key=str)
        if lacked:  # pt.Experiment's (and trec_eval -c's) rule, said: pse.evaluate leaves them out by default
            warn_once(
                f"{len(lacked)} of {len(lacked) + len(j.qids)} judged queries have no results in the run (e.g. "
                f"{', '.join(map(str, lacked[:3]))}): each counts as {self.DEFAULT:g}, as trec_eval -c counts them "
                "(pse.evaluate leaves them out unless missing_as_zero=True).",
                (run, qrels),
            )
        for qid in lacked:
            yield Metric(qid, self, self.DEFAULT)


class _nDCG(InHouseMeasure):
    """nDCG@k as trec_eval ``ndcg_cut_k`` (``ndcg`` without a cut-off): linear gain (the label), log2
    discount, ideal ranking from all the query's positive judgments. ``gain="exp"`` uses 2^label - 1
    (Burges et al. 2005), which trec_eval does not compute."""

    __name__ = "pse.nDCG"
    NAME = "pse.nDCG"
    BASE = "nDCG"
    EXAMPLES = ("nDCG@10", "nDCG")
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF, "gain": _GAIN}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.ndcg(j, self.cutoff, gain=self.gain)

    def trec_eval(self) -> tuple[str, int | None] | None:
        if self.gain != "linear":
            return None
        return ("ndcg" if self.cutoff is None else f"ndcg_cut_{self.cutoff}", None)


class _R(InHouseMeasure):
    """Recall@k as trec_eval ``recall_k``: relevant documents in the top k / all relevant documents of the
    query (0 when it has none). Not Success@k."""

    __name__ = "pse.R"
    NAME = "pse.R"
    BASE = "R"
    EXAMPLES = ("R@100",)
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF, "rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.recall(j, self.cutoff)

    def trec_eval(self) -> tuple[str, int | None] | None:
        return None if self.cutoff is None else (f"recall_{self.cutoff}", None)


class _P(InHouseMeasure):
    """Precision@k as trec_eval ``P_k``: relevant documents in the top k / k, even when fewer are retrieved."""

    __name__ = "pse.P"
    NAME = "pse.P"
    BASE = "P"
    EXAMPLES = ("P@10",)
    SUPPORTED_PARAMS = {"cutoff": ParamInfo(dtype=int, required=True, desc="ranking cut-off"), "rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.precision(j, int(self.params["cutoff"]))  # required: check() refuses P without one

    def trec_eval(self) -> tuple[str, int | None] | None:
        return None if self.cutoff is None else (f"P_{self.cutoff}", None)


class _AP(InHouseMeasure):
    """Average precision as trec_eval ``map`` (``map_cut_k`` with a cut-off); divided by all relevant
    documents of the query, retrieved or not."""

    __name__ = "pse.AP"
    NAME = "pse.AP"
    BASE = "AP"
    EXAMPLES = ("AP", "AP@100")
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF, "rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.average_precision(j, self.cutoff)

    def trec_eval(self) -> tuple[str, int | None] | None:
        return ("map" if self.cutoff is None else f"map_cut_{self.cutoff}", None)


class _RR(InHouseMeasure):
    """Reciprocal rank as trec_eval ``recip_rank``; with a cut-off only the top k count (trec_eval has no
    cut variant: it is checked as ``recip_rank`` on the run cut to its top k)."""

    __name__ = "pse.RR"
    NAME = "pse.RR"
    BASE = "RR"
    EXAMPLES = ("RR", "RR@10")
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF, "rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.reciprocal_rank(j, self.cutoff)

    def trec_eval(self) -> tuple[str, int | None] | None:
        return ("recip_rank", self.cutoff)


class _Rprec(InHouseMeasure):
    """R-Precision as trec_eval ``Rprec``: precision at rank R, R = the query's number of relevant documents."""

    __name__ = "pse.Rprec"
    NAME = "pse.Rprec"
    BASE = "Rprec"
    EXAMPLES = ("Rprec",)
    SUPPORTED_PARAMS = {"rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.r_precision(j)

    def trec_eval(self) -> tuple[str, int | None] | None:
        return ("Rprec", None)


class _Success(InHouseMeasure):
    """Success@k as trec_eval ``success_k``: 1 if any relevant document is in the top k, else 0."""

    __name__ = "pse.Success"
    NAME = "pse.Success"
    BASE = "Success"
    EXAMPLES = ("Success@10",)
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF, "rel": _REL}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.success(j, self.cutoff)

    def trec_eval(self) -> tuple[str, int | None] | None:
        return None if self.cutoff is None else (f"success_{self.cutoff}", None)


class _Judged(InHouseMeasure):
    """Judged@k as ir_measures ``Judged@k``: the share of the top k that carry any judgment (ties in
    trec_eval's order). trec_eval has no counterpart."""

    __name__ = "pse.Judged"
    NAME = "pse.Judged"
    BASE = "Judged"
    EXAMPLES = ("Judged@10",)
    SUPPORTED_PARAMS = {"cutoff": _CUTOFF}

    def values(self, j: JudgedRun) -> np.ndarray:
        return M.judged_at(j, self.cutoff)


nDCG = _nDCG()
R = _R()
P = _P()
AP = _AP()
RR = _RR()
Rprec = _Rprec()
Success = _Success()
Judged = _Judged()

#: ir_measures name of the measure reproduced -> the in-house measure
REGISTRY: dict[str, InHouseMeasure] = {m.BASE: m for m in (nDCG, R, P, AP, RR, Rprec, Success, Judged)}
#: in-house name -> measure (``pse.nDCG`` -> nDCG)
ALL: dict[str, InHouseMeasure] = {str(m.NAME): m for m in REGISTRY.values()}
#: ir_measures name -> the parameters computed in-house
SUPPORTED: dict[str, tuple[str, ...]] = {base: tuple(m.SUPPORTED_PARAMS) for base, m in REGISTRY.items()}
_EXAMPLES = ", ".join(e for m in REGISTRY.values() for e in m.EXAMPLES)

# parameters of standard ir_measures measures that are fine at these values (trec_eval's own choices)
_STANDARD_DEFAULTS = {"dcg": "log2", "judged_only": False}


def inhouse(measure: Any) -> InHouseMeasure:
    """The in-house measure computing ``measure`` (an in-house or standard ir_measures measure, or a name).

    Raises a ValueError naming what is supported when it has no in-house counterpart.
    """
    given, measure = measure, parse_measure(measure)
    if isinstance(measure, InHouseMeasure):
        return measure.check()
    base = REGISTRY.get(str(measure.NAME))
    if base is None:
        raise ValueError(
            f"{measure} is not computed in-house; supported: {', '.join(REGISTRY)} "
            "(evaluate it with ir_measures / pt.Experiment instead)."
        )
    params = {
        k: v
        for k, v in measure.params.items()
        if v is not None and not (k in _STANDARD_DEFAULTS and v == _STANDARD_DEFAULTS[k])
    }
    extra = sorted(set(params) - set(base.SUPPORTED_PARAMS))
    if extra:
        raise ValueError(
            f"{given if isinstance(given, str) else measure}: parameters {extra} are not supported in-house "
            f"(supported: {SUPPORTED[base.BASE]}); evaluate it with ir_measures / pt.Experiment instead."
        )
    return base(**params).check()


_NAME_RE = re.compile(r"^pse\.(\w+)(?:\((.*)\))?(?:@(\d+))?$")


def by_name(text: str) -> InHouseMeasure | None:
    """Parse ``pse.nDCG@10`` / ``pse.P(rel=2)@5`` / ``pse.nDCG(gain='exp')@10``; None if not an in-house name."""
    m = _NAME_RE.match(text.strip())
    if not m:
        return None
    base = ALL.get(f"pse.{m.group(1)}")
    if base is None:
        raise ValueError(
            f"Unknown in-house measure {text!r}{did_you_mean(text, ALL)}; available: {', '.join(ALL)}."
        )
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, _, value = item.partition("=")
        value = value.strip().strip("'\"")
        params[key.strip()] = int(value) if value.lstrip("-").isdigit() else value
    if m.group(3):
        params["cutoff"] = int(m.group(3))
    return base(**params).check()


def parse_measure(spec: Any) -> Measure:
    """A measure object from a measure or a name: in-house (``pse.nDCG@10``) or any ir_measures name
    (``nDCG@10``, ``P(rel=2)@5``, ``ERR@20``). The one parser of measure names in this package.

    >>> str(parse_measure("nDCG@10")), str(parse_measure("pse.AP@100"))
    ('nDCG@10', 'pse.AP@100')
    """
    if isinstance(spec, Measure):
        if isinstance(spec, InHouseMeasure):
            return spec
        if any(isinstance(v, np.generic) for v in spec.params.values()):  # nDCG@np.int64(10): plain numbers
            spec = type(spec)(
                **{k: v.item() if isinstance(v, np.generic) else v for k, v in spec.params.items()}
            )
        try:
            name = str(spec)
        except Exception:  # ir_measures cannot print a measure with a parameter it does not take
            name = f"{spec.NAME} {spec.params}"
        return _checked(spec, name)
    if not isinstance(spec, str):
        raise TypeError(
            f"A measure is an ir_measures measure or its name, got {type(spec).__name__} {spec!r}."
        )
    found = by_name(spec)
    if found is not None:
        return found
    try:
        parsed: Measure = ir_measures.parse_measure(spec.strip())
    except Exception:
        registry = ir_measures.measures.registry  # each measure's own name first, then its aliases
        names = [*(str(m.NAME) for m in registry.values()), *registry, *ALL]
        hint = (
            did_you_mean(spec, names)
            if _inhouse_only(spec) is None
            else f" (did you mean 'pse.{spec.strip()}'?)"
        )
        raise ValueError(
            f"Unknown measure {spec!r}{hint}; use ir_measures names such as {_EXAMPLES}, "
            f"or in-house ones ({', '.join(ALL)}, e.g. pse.nDCG@10)."
        ) from None
    return _checked(parsed, spec.strip())


def _inhouse_only(spec: str) -> InHouseMeasure | None:
    """The in-house measure ``spec`` names without its ``pse.`` (nDCG(gain=exp)@10: only the in-house nDCG takes
    gain=), else None."""
    try:
        return None if spec.strip().startswith("pse.") else by_name(f"pse.{spec.strip()}")
    except ValueError:
        return None


def _checked(measure: Measure, name: str) -> Measure:
    """A standard measure whose parameters it takes, with valid values (ir_measures parses any parameter, then
    asserts, or fails with a KeyError when it prints the measure)."""
    supported = measure.SUPPORTED_PARAMS
    unknown = sorted(set(measure.params) - set(supported))
    if unknown:
        twin = REGISTRY.get(str(measure.NAME))
        hint = ""
        # the in-house spelling is suggested only where it parses (its gain= is "linear" or "exp")
        if twin is not None and set(unknown) <= set(twin.SUPPORTED_PARAMS) and _inhouse_only(name):
            hint = f"; the in-house pse.{measure.NAME} takes {unknown}: use pse.{name}" if "(" in name else ""
        elif "gain" in unknown and "gains" in supported:
            # a gain per label: ir_measures' own spelling
            hint = (
                " (a gain per label is gains={label: gain, ...}; the in-house pse.nDCG takes gain='linear' or "
                "'exp')"
            )
        elif twin is not None and set(twin.SUPPORTED_PARAMS) != set(supported):
            # evaluate and crosscheck compute it in-house, with other parameters
            hint = f" (pse.evaluate computes it in-house, taking {sorted(twin.SUPPORTED_PARAMS)})"
        raise ValueError(
            f"{name}: {measure.NAME} takes no parameter(s) {unknown}; it takes {sorted(supported)}{hint}."
        )
    for key, info in supported.items():
        if key not in measure.params:
            if info.required:
                if key == "cutoff":
                    raise ValueError(f"{name} needs a cut-off, e.g. {name}@10.")
                given = [f"{k}={v!r}" for k, v in measure.params.items() if k != "cutoff"]
                example = f"{measure.NAME}({', '.join([*given, f'{key}=...'])})"
                raise ValueError(f"{name} needs {key} ({info.desc or info.dtype}), e.g. {example}.")
        elif not info.validate(measure.params[key]):
            raise ValueError(
                f"{name}: {key}={measure.params[key]!r} is not valid for {measure.NAME} ({info.desc or info.dtype})."
            )
        # trec_eval aborts the process on a cut-off of 0, refuses a relevance level below 1, and pytrec_eval
        # wraps a cut-off beyond a C int
        elif key == "cutoff" and not 1 <= measure.params[key] <= _MAX_CUTOFF:
            raise ValueError(
                f"{name}: cut-off k must be >= 1 and <= {_MAX_CUTOFF}, got {measure.params[key]}."
            )
        elif key == "rel" and measure.params[key] < 1:
            raise ValueError(
                f"{name}: rel must be >= 1 (labels >= rel are relevant), got {measure.params[key]}."
            )
    return measure


_MAX_CUTOFF = 2**31 - 1


def parse_measures(measures: Iterable[Any]) -> list[Measure]:
    """Measure objects from objects or names, each checked to be computable in-house (see :func:`inhouse`);
    the objects keep the user's naming (``nDCG@10`` stays the standard measure)."""
    out = []
    # one measure, named or not, is a list of one (a name had been read letter by letter: "AP" as 'A', 'P')
    for spec in [measures] if isinstance(measures, (str, Measure)) else measures:
        measure = parse_measure(spec)
        inhouse(measure)
        out.append(measure)
    return out
