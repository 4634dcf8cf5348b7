"""Pooled corpora for SDM: which documents a pool holds, and what a run shows of its background sample.

A pooled corpus holds every document judged relevant, the top-``depth`` non-relevant documents of each query
in the pooling runs ("distractors", merged across runs by best rank in trec_eval's order) and a seeded random
sample of the other documents: the background sample. The full corpus has N documents; the N - |pool| unseen
ones are modelled per query and per system by the scores the system gives the background sample
(:mod:`pyterrier_sparse_eval.sdm`).

The sample is uniform (``sample`` documents), or stratified: ``tail_sample`` documents drawn from the *tail
stratum*, the documents some pooling run ranks within ``tail_depth`` for some query (below the distractors), and
``sample`` from the rest. The tail stratum holds the documents that score high for some query, the few that
would displace a system's top results and that a uniform sample of 1 in 1000 rarely holds. Several bands
(``tail_depth=[30, 300]``, ``tail_sample=[2000, 3000]``: best rank in [depth, 30), then [30, 300)) sample the
highest ranks more densely still. Every sampled document of stratum h stands for (N_h - n_h) / n_h unseen
documents of its stratum (its Horvitz-Thompson weight; N_h documents in the stratum, n_h sampled), so the weighted
share of sampled documents scoring >= s is an unbiased estimate of the share of unseen documents scoring >= s,
for every system, query and s.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._format import read_meta
from ._sample import (
    _UNRETRIEVED,
    BackgroundSample,
    background_from_run,
    best_ranks,
    check_pool_options,
    check_pooling_runs,
    check_run_on_pool,
    fit_run_backgrounds,
    pooled_run,
    relevant_judgments,
    run_depths,
    run_queries,
    str_qrels,
    tail_bands,
    warn_small_sample,
    whole,
)
from .files import atomic_write_json
from .measures import FAMILIES, BackgroundModel, JudgedRun, prepare
from .measures._evaluate import warn_overlap
from .measures._sdm import sdm_report

__all__ = [
    "Pool",
    "build_pool",
    "tail_band_sizes",
    "BackgroundSample",
    "background_from_run",
    "fit_run_backgrounds",
    "judged_with_backgrounds",
    "models_for",
    "evaluate_on_pool",
]


@dataclass(frozen=True, repr=False)
class Pool:
    """A pooled subsample of a corpus: relevant documents, distractors and a random background sample.

    ``docnos`` = relevant + distractors + sample (disjoint); ``num_docs`` is N of the full corpus.
    Saved as JSON (:meth:`save`) and inside every index cut with :meth:`index`, so results are reproducible.
    """

    num_docs: int
    relevant: tuple[str, ...]
    distractors: tuple[str, ...]
    sample: tuple[str, ...]
    depth: int
    seed: int
    dataset: str = ""
    pool_runs: tuple[str, ...] = ()
    rel: int = 1
    #: a stratified sample's tail strata: the sampled documents, band after band, and per band (the rank that
    #: bounds it, its size, the documents sampled from it)
    tail: tuple[str, ...] = ()
    bands: tuple[tuple[int, int, int], ...] = ()
    _sample_set: frozenset[str] = field(default=frozenset(), compare=False)
    _docno_set: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sample_set", frozenset(self.sample) | frozenset(self.tail))
        object.__setattr__(self, "_docno_set", frozenset(self.docnos))
        if self.size > self.num_docs:
            raise ValueError(f"The pool holds {self.size} documents but the corpus only {self.num_docs}.")
        if sum(n for _, _, n in self.bands) != len(self.tail) or any(n > size for _, size, n in self.bands):
            raise ValueError(f"The tail bands {self.bands} do not hold the {len(self.tail)} tail documents.")

    @property
    def docnos(self) -> list[str]:
        return [*self.relevant, *self.distractors, *self.sample, *self.tail]

    @property
    def size(self) -> int:
        return len(self.relevant) + len(self.distractors) + len(self.sample) + len(self.tail)

    @property
    def stratified(self) -> bool:
        return bool(self.bands)

    @property
    def tail_size(self) -> int:
        """Documents in the tail strata (sampled or not)."""
        return sum(size for _, size, _ in self.bands)

    @property
    def tail_depth(self) -> int:
        return max((bound for bound, _, _ in self.bands), default=0)

    def strata(self) -> list[tuple[tuple[str, ...], int]]:
        """(sampled documents, stratum size) of the rest of the corpus, then of each tail band."""
        rest = self.num_docs - len(self.relevant) - len(self.distractors) - self.tail_size
        out, start = [(self.sample, rest)], 0
        for _, size, n in self.bands:
            out.append((self.tail[start : start + n], size))
            start += n
        return out

    @property
    def fraction(self) -> float:
        """The share of the corpus the pool holds."""
        return self.size / self.num_docs if self.num_docs else 0.0

    def weights(self) -> dict[str, float]:
        """A stratified pool's Horvitz-Thompson weight of each sampled document: the unseen documents of its
        stratum it stands for, (N_h - n_h) / n_h (see the module docstring)."""
        return {d: w for (docs, _), w in zip(self.strata(), self.stratum_weights()) for d in docs}

    def stratum_weights(self) -> list[float]:
        """Each stratum's Horvitz-Thompson weight, (N_h - n_h) / n_h (0 for a stratum with nothing sampled)."""
        return [(size - len(docs)) / len(docs) if docs else 0.0 for docs, size in self.strata()]

    @property
    def n_unseen(self) -> int:
        """Documents of the full corpus outside the pool."""
        return self.num_docs - self.size

    @property
    def sample_set(self) -> frozenset[str]:
        return self._sample_set

    @property
    def docno_set(self) -> frozenset[str]:
        return self._docno_set

    @functools.cached_property
    def fingerprint(self) -> str:
        """A hash of the pool's documents, computed once: ir_measures hashes a measure (its repr, the pool's
        among its parameters) for every value it reports."""
        h = hashlib.sha1(str(self.num_docs).encode())
        for part in (self.relevant, self.distractors, self.sample) + (
            (self.tail,) if self.stratified else ()
        ):
            h.update("\n".join(sorted(part)).encode())
            h.update(b"\0")
        return h.hexdigest()[:8]

    def __repr__(self) -> str:
        name = self.dataset.replace("irds:", "") or "corpus"
        tail = "".join(f",tail={n}/{size}@{bound}" for bound, size, n in self.bands)
        # the level its measures count at unless given rel=, said in their names
        rel = f",rel={self.rel}" if self.rel != 1 else ""
        return f"Pool({name}:{self.size}/{self.num_docs},depth={self.depth},sample={len(self.sample)}{tail}{rel},seed={self.seed},#{self.fingerprint})"

    def spec(self) -> dict[str, Any]:
        """Everything needed to rebuild the pool (JSON-serialisable)."""
        d = asdict(self)
        d.pop("_sample_set")
        d.pop("_docno_set")
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the pool as JSON (atomically)."""
        if os.path.isdir(path):
            raise ValueError(
                f"{path} is a folder: give the pool's JSON file, e.g. {os.path.join(path, 'pool.json')}."
            )
        atomic_write_json(path, self.spec(), indent=None)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pool:
        """The pool ``Pool.save`` wrote to ``path``, or the one a pooled index (``pool.index``) at ``path`` was cut
        for (kept in its metadata)."""
        path = getattr(path, "path", path)  # the pooled index pool.index returned
        if os.path.isdir(path):
            if not os.path.isfile(os.path.join(path, "pt_meta.json")):
                raise ValueError(
                    f"{path} is a folder but not a pooled index: pass the JSON file Pool.save wrote, or the folder "
                    "of an index pool.index(...) wrote."
                )
            meta = read_meta(Path(path))  # checked with its seal: an edited pool is damage
            if not isinstance(meta.get("pool"), dict):
                raise ValueError(
                    f"The index at {path} was not cut for a pool (pool.index(...)): it keeps none."
                )
            return cls.from_spec(meta["pool"])
        with open(path, encoding="utf-8") as f:
            try:
                spec = json.load(f)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ValueError(
                    f"{path} is not a pool written by Pool.save ({e}); rebuild it with sdm.build_pool(...) and "
                    "save it."
                ) from None
        return cls.from_spec(spec)

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Pool:
        needed = ("num_docs", "relevant", "distractors", "sample", "depth", "seed")
        spec = spec if isinstance(spec, dict) else {}
        lacking = [k for k in needed if k not in spec]
        unknown = sorted(k for k in spec if k not in cls.__dataclass_fields__ or k.startswith("_"))
        if lacking or unknown:
            raise ValueError(
                f"Not a pool written by Pool.save: missing {lacking}, unknown {unknown}; rebuild it with "
                "sdm.build_pool(...) and save it again."
            )
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()}
        bands = fields.get("bands", ())
        ok_bands = isinstance(bands, tuple) and all(
            isinstance(b, (list, tuple)) and len(b) == 3 for b in bands
        )
        fields["bands"] = tuple(tuple(int(x) for x in b) for b in bands) if ok_bands else bands
        ints, lists = (
            ("num_docs", "depth", "seed", "rel"),
            ("relevant", "distractors", "sample", "tail", "pool_runs"),
        )
        wrong = [k for k in ints if k in fields and not whole(fields[k])] + ([] if ok_bands else ["bands"])
        wrong += [k for k in lists if k in fields and not isinstance(fields[k], tuple)]
        runs = fields.get("pool_runs", ())
        if isinstance(runs, tuple) and all(isinstance(n, (str, int)) for n in runs):
            fields["pool_runs"] = tuple(str(n) for n in runs)  # names, as build_pool keeps them
        elif "pool_runs" not in wrong:
            wrong.append("pool_runs")
        docnos = ("relevant", "distractors", "sample", "tail")  # str: the pool's sets and its fingerprint
        wrong += [
            k
            for k in docnos
            if k in fields and k not in wrong and not all(isinstance(d, str) for d in fields[k])
        ]
        fields.update({k: int(fields[k]) for k in ints if k in fields and not wrong})
        parts = [fields.get(k, ()) for k in ("relevant", "distractors", "sample", "tail")]
        docs = [d for part in parts if isinstance(part, tuple) for d in part]
        if wrong or len(set(docs)) != len(docs):
            what = f"wrongly typed {wrong}" if wrong else "documents listed twice"
            raise ValueError(
                f"Not a pool written by Pool.save ({what}); rebuild it with sdm.build_pool(...)."
            )
        return cls(**fields)

    def index(self, full_index: Any, path: str | os.PathLike[str], *, mode: str = "create") -> Any:
        """Cut the pooled index out of a full-corpus index (each document scored as in the full corpus); the pool
        is kept in its metadata (``Pool.load(path)`` reads it back)."""
        if not hasattr(full_index, "subset"):
            raise TypeError(
                f"pool.index takes the full-corpus index (pse.SparseIndex or pse.ShardedIndex), not "
                f"{type(full_index).__name__}: e.g. pool.index(pse.SparseIndex(full_path), pooled_path)."
            )
        if full_index.num_docs != self.num_docs:  # another version of the corpus: SDM's N would be wrong
            raise ValueError(
                f"{self!r} was cut from a corpus of {self.num_docs:,} documents; this index holds "
                f"{full_index.num_docs:,}: index the corpus the pool was built from (all_docnos=its docnos)."
            )
        return full_index.subset(self.docnos, path, mode=mode, extra_meta={"pool": self.spec()})

    def corpus_iter(self, dataset: str | Any) -> Iterable[dict[str, Any]]:
        """The pool's documents from an ``irds:`` dataset, for encoding only the pool (e.g. with SPLADE).

        Note that BM25 indexed from these documents alone uses the pool's own statistics (idf, average
        length); cut the pooled index from a full BM25 index with :meth:`index` to keep the corpus' ones.
        """
        from .datasets import Corpus, load_dataset

        return Corpus(load_dataset(dataset), len(self.docno_set), False, keep=self.docno_set)


def build_pool(
    qrels: Any,
    runs: Sequence[Any] | dict[str, Any],
    *,
    all_docnos: Iterable[str],
    depth: int = 20,
    sample: int = 1000,
    seed: int = 0,
    rel: int = 1,
    dataset: str = "",
    tail_sample: int | Sequence[int] = 0,
    tail_depth: int | Sequence[int] | None = None,
) -> Pool:
    """Pool a corpus: judged-relevant documents + top-``depth`` distractors per query + a random sample.

    Args:
        qrels: judgments (frame or dict); labels >= ``rel`` are relevant.
        runs: full-corpus runs to mine distractors from (merged per query by each document's best rank), as a
            list or a ``{name: run}`` dict.
        all_docnos: every docno of the full corpus (e.g. ``full_index.docnos``); N is its length.
        depth: distractors per query (non-relevant documents ranked highest by the runs).
        sample: size of the uniform background sample of the other documents (2+ for SDM; 0: pooled only).
        seed: seed of the sample (numpy's default_rng over the sorted remaining docnos).
        rel: the lowest label counted relevant (``SDM_R`` / ``SDM_nDCG(rel=...)`` need the pool's).
        dataset: the collection's id, recorded in the pool (its name in ``repr`` and in ``spec()``, so a saved
            pool says what it was cut from); nothing is read from it here.
        tail_sample: documents sampled from the tail stratum (see the module docstring): those a pooling run
            ranks within ``tail_depth`` for some query, outside the pool; ``sample`` is then drawn from the
            rest. 0: a uniform sample. Lists: one band per entry (``tail_depth`` increasing).
        tail_depth: the pooling rank bounding each tail band (one per ``tail_sample`` entry, increasing; default
            100); refused without a tail sample.
    """
    if runs is None or isinstance(runs, (pd.DataFrame, str)) or not hasattr(runs, "__len__"):
        raise TypeError(
            "runs is a list of full-corpus runs (or a {name: run} dict): pass [run] for one run, list(...) for a generator."
        )
    tail_samples, bounds = check_pool_options(depth, sample, seed, tail_sample, tail_depth)
    if not whole(rel):
        raise TypeError(f"rel={rel!r}: give a whole relevance label (labels >= rel are relevant).")
    if not isinstance(dataset, str):
        raise TypeError(
            f"dataset= is the collection's id as a str (e.g. 'irds:vaswani'), not a {type(dataset).__name__}."
        )
    depth, sample, seed, rel = int(depth), int(sample), int(seed), int(rel)  # plain ints in the pool's JSON
    stratified = sum(tail_samples) > 0
    if stratified and not runs:
        raise ValueError("A tail sample needs pooling runs: the tail stratum is what they rank high.")
    names = [str(n) for n in runs] if isinstance(runs, dict) else [f"run{i}" for i in range(len(runs))]
    run_list = list(runs.values()) if isinstance(runs, dict) else list(runs)
    corpus = np.array(sorted(set(str(d) for d in all_docnos)), dtype=object)
    in_corpus = set(corpus.tolist())
    q = str_qrels(qrels)
    relevant_rows = relevant_judgments(q, rel, depth, run_list)
    relevant = list(dict.fromkeys(relevant_rows["docno"].tolist()))
    if missing := [d for d in relevant if d not in in_corpus]:
        raise ValueError(
            f"{len(missing)} relevant docnos are not in the corpus, e.g. {missing[:5]}: are qrels and corpus from "
            "the same dataset? If the collection lost these few, drop their judgments (qrels[qrels.docno.isin("
            "set(all_docnos))], or the lines in the qrels file): no pool can hold them."
        )
    relevant_set = set(relevant)
    distractors: list[str] = []
    ranked = best_ranks(run_list) if (depth or stratified) and run_list else None
    if ranked is not None:
        check_pooling_runs(ranked, q, in_corpus)
    if depth and ranked is not None:
        judged_rel = set(zip(relevant_rows["qid"].tolist(), relevant_rows["docno"].tolist()))
        keep = [(qq, d) not in judged_rel for qq, d in zip(ranked["qid"].tolist(), ranked["docno"].tolist())]
        ranked = ranked[np.array(keep, dtype=bool)]
        ranked = ranked.sort_values(["qid", "rank", "docno"], kind="stable")
        top = ranked.groupby("qid", sort=False).head(depth)
        distractors = [d for d in dict.fromkeys(top["docno"].tolist()) if d not in relevant_set]
    taken = relevant_set | set(distractors)
    band_docs: list[list[str]] = []
    if stratified:
        assert ranked is not None
        band_docs = tail_bands(ranked, taken, depth, bounds)
        lower = depth
        for band, bound, n in zip(band_docs, bounds, tail_samples):
            if n == 0 and band:
                raise ValueError(
                    f"The tail band [{lower}, {bound}) holds {len(band)} documents but gets no sample: its unseen "
                    "documents would be represented by none; give it a tail sample or leave the band out."
                )
            if n > len(band):
                raise ValueError(
                    f"A tail sample of {n} is larger than the tail stratum ({len(band)} documents ranked within "
                    f"[{lower}, {bound}) outside the pool); lower --tail-sample or raise --tail-depth."
                )
            lower = bound
    in_bands = {d for band in band_docs for d in band}
    candidates = np.array([d for d in corpus.tolist() if d not in taken and d not in in_bands], dtype=object)
    if sample > len(candidates):  # a stratified pool's bands take their documents first, whatever the depth
        where = "the pool and its tail bands" if stratified else "the pool"
        fix = "tail_depth= (--tail-depth)" if stratified else "depth= (--pool-depth)"
        raise ValueError(
            f"A sample of {sample} is larger than the {len(candidates)} documents outside {where}; lower sample= "
            f"(--sample) or {fix}."
        )
    if stratified and sample < 2 and len(candidates) > sample:
        raise ValueError("A stratified pool needs a sample of at least 2 from the rest of the corpus too.")
    warn_small_sample(sample + sum(tail_samples), len(candidates) + len(in_bands))
    rng = np.random.default_rng(seed)
    chosen = candidates[np.sort(rng.choice(len(candidates), size=sample, replace=False))].tolist()
    tail: list[str] = []
    for band, n in zip(band_docs, tail_samples):
        ordered = np.array(band, dtype=object)
        tail += ordered[np.sort(rng.choice(len(ordered), size=n, replace=False))].tolist()
    return Pool(
        num_docs=len(corpus),
        relevant=tuple(relevant),
        distractors=tuple(distractors),
        sample=tuple(chosen),
        depth=depth,
        seed=seed,
        dataset=dataset,
        pool_runs=tuple(names),
        rel=rel,
        tail=tuple(tail),
        bands=tuple((b, len(band), n) for b, band, n in zip(bounds, band_docs, tail_samples))
        if stratified
        else (),
    )


def tail_band_sizes(
    qrels: Any,
    runs: Sequence[Any] | dict[str, Any],
    *,
    all_docnos: Iterable[str],
    depth: int,
    tail_depth: int | Sequence[int],
    rel: int = 1,
) -> list[int]:
    """How many documents each tail band of :func:`build_pool` would hold (to plan ``tail_sample``); one
    ``tail_depth`` or one per band, as :func:`build_pool` takes it."""
    depths = np.atleast_1d(np.asarray(tail_depth, dtype=object)).tolist()  # one, or one per band
    bounds = check_pool_options(depth, 0, 0, [1] * len(depths), depths)[1]  # deeper than depth, increasing
    base = build_pool(qrels, runs, all_docnos=all_docnos, depth=depth, sample=0, rel=rel)
    run_list = list(runs.values()) if isinstance(runs, dict) else list(runs)
    taken = set(base.relevant) | set(base.distractors)
    ranked = best_ranks(run_list)
    return [len(b) for b in tail_bands(ranked, taken, depth, bounds)]


def judged_with_backgrounds(
    run: Any, qrels: Any, pool: Pool, k: int = 0
) -> tuple[JudgedRun, dict[str, BackgroundSample]]:
    """A run on the pool prepared for evaluation (a warning if cut above ``k``), its queries' background samples."""
    j, samples, _ = judged_run_on_pool(run, qrels, pool, k)
    return j, samples


def judged_run_on_pool(
    run: Any, qrels: Any, pool: Pool, k: int = 0
) -> tuple[JudgedRun, dict[str, BackgroundSample], np.ndarray]:
    """:func:`judged_with_backgrounds`, and the number of documents the run lists per query (each once)."""
    frame, q = pooled_run(run, pool), str_qrels(qrels)
    check_run_on_pool(frame, q, pool, k)
    j = prepare(frame, q, rel=pool.rel, queries=run_queries(run))
    return j, background_from_run(frame, pool), run_depths(frame, pool)


def models_for(j: JudgedRun, samples: dict[str, BackgroundSample], family: str) -> list[BackgroundModel]:
    """One background model per evaluated query, in ``j.qids`` order."""
    if family not in FAMILIES:
        raise ValueError(f"Unknown background family {family!r}; choose one of {', '.join(FAMILIES)}.")
    return [samples.get(q, _UNRETRIEVED).fit(family) for q in j.qids.tolist()]


def evaluate_on_pool(
    run: Any,
    qrels: Any,
    pool: Pool,
    k_values: Sequence[int],
    *,
    family: str = "auto",
    gain: str = "linear",
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    progress: Callable[[range], Iterable[int]] | None = None,
    noise_correction: bool = False,
) -> dict[str, Any]:
    """``pse.sdm.evaluate(run, qrels, pool, ...)``: pooled and SDM-corrected R@k / nDCG@k (see there)."""
    j, samples = judged_with_backgrounds(run, qrels, pool, max(k_values))
    warn_overlap(j)
    models = models_for(j, samples, family)

    def refit(rng: np.random.Generator) -> list[BackgroundModel]:
        return [samples.get(q, _UNRETRIEVED).resample(rng).fit(family) for q in j.qids.tolist()]

    per_query, aggregate = sdm_report(
        j,
        models,
        pool.n_unseen,
        k_values,
        gain=gain,
        refit=refit,
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
        progress=progress,
        noise_correction=noise_correction,
    )
    return {"aggregate": aggregate, "per_query": per_query, "models": dict(zip(j.qids.tolist(), models))}
