"""Evaluate on a pooled subsample of a corpus, report what the full corpus would give (SDM).

The workflow::

    pool = pse.sdm.build_pool(qrels, [bm25_run], all_docnos=full_index.docnos, depth=20, sample=1000, seed=0)
    pooled_index = pool.index(full_index, "pooled.idx")        # or index pool.corpus_iter(dataset) yourself
    bm25 = pse.BM25().retriever(pooled_index, num_results=pool.size)
    pt.Experiment([bm25], topics, qrels,
                  [pse.R @ 100, pse.sdm.SDM_R(pool=pool) @ 100, pse.sdm.SDM_nDCG(pool=pool) @ 100])

A pooled corpus holds every document judged relevant, the top-``depth`` non-relevant documents of each query
in the pooling runs ("distractors", merged across runs by best rank) and a seeded uniform random sample of
``sample`` other documents: the background sample. The full corpus has N documents; the N - |pool| unseen
ones are modelled per query and per system by the scores the system gives the background sample (see
:mod:`pyterrier_sparse_eval.measures._score_dist` and :mod:`pyterrier_sparse_eval.measures._sdm`).

A run only shows the sampled documents it retrieved; the others score below its lowest score and are treated
as censored there, so retrieve deep (``num_results=pool.size`` is cheap on a pooled corpus).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ir_measures import Metric
from ir_measures.measures import Measure, ParamInfo

from .measures._prepare import Judged, prepare, to_qrels_frame, to_run_frame
from .measures._score_dist import FAMILIES, BackgroundModel, fit_background
from .measures._sdm import add_bootstrap, sdm_ndcg, sdm_recall, sdm_table, survival_of_rows

__all__ = [
    "Pool",
    "build_pool",
    "background_from_run",
    "fit_run_backgrounds",
    "evaluate",
    "threshold_recall",
    "SDM_R",
    "SDM_nDCG",
    "three_way",
]


# ------------------------------------------------------------------------------------------------------------
# Pooled corpora
# ------------------------------------------------------------------------------------------------------------


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
    _sample_set: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sample_set", frozenset(self.sample))
        if self.size > self.num_docs:
            raise ValueError(f"The pool holds {self.size} documents but the corpus only {self.num_docs}.")

    @property
    def docnos(self) -> list[str]:
        return [*self.relevant, *self.distractors, *self.sample]

    @property
    def size(self) -> int:
        return len(self.relevant) + len(self.distractors) + len(self.sample)

    @property
    def n_unseen(self) -> int:
        """Documents of the full corpus outside the pool."""
        return self.num_docs - self.size

    @property
    def sample_set(self) -> frozenset[str]:
        return self._sample_set

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha1(str(self.num_docs).encode())
        for part in (self.relevant, self.distractors, self.sample):
            h.update("\n".join(sorted(part)).encode())
            h.update(b"\0")
        return h.hexdigest()[:8]

    def __repr__(self) -> str:
        name = self.dataset.replace("irds:", "") or "corpus"
        return (f"Pool({name}:{self.size}/{self.num_docs},depth={self.depth},sample={len(self.sample)},"
                f"seed={self.seed},#{self.fingerprint})")

    def spec(self) -> dict[str, Any]:
        """Everything needed to rebuild the pool (JSON-serialisable)."""
        d = asdict(self)
        d.pop("_sample_set")
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    def save(self, path: str | os.PathLike) -> None:
        """Write the pool as JSON (atomically)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.spec(), f)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Pool:
        with open(path, encoding="utf-8") as f:
            return cls.from_spec(json.load(f))

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Pool:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()})

    def index(self, full_index: Any, path: str | os.PathLike, *, mode: str = "create") -> Any:
        """Cut the pooled index out of a full-corpus index (scores equal the full corpus' exactly)."""
        return full_index.subset(self.docnos, path, mode=mode, extra_meta={"pool": self.spec()})

    def corpus_iter(self, dataset: str | Any) -> Iterator[dict[str, Any]]:
        """The pool's documents from an ``irds:`` dataset, for encoding only the pool (e.g. with SPLADE).

        Note that BM25 indexed from these documents alone uses the pool's own statistics (idf, average
        length); cut the pooled index from a full BM25 index with :meth:`index` to keep the corpus' ones.
        """
        from .datasets import corpus_iter

        wanted = set(self.docnos)
        for doc in corpus_iter(dataset):
            if doc["docno"] in wanted:
                yield doc


def _best_ranks(runs: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """qid, docno, best 0-based rank over the runs (each ranked in trec_eval order)."""
    frames = []
    for run in runs:
        frame = to_run_frame(run)
        frame = frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
        frame = frame.assign(rank=frame.groupby("qid", sort=False).cumcount())
        frames.append(frame[["qid", "docno", "rank"]])
    merged = pd.concat(frames, ignore_index=True)
    return merged.groupby(["qid", "docno"], as_index=False, sort=False)["rank"].min()


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
) -> Pool:
    """Pool a corpus: judged-relevant documents + top-``depth`` distractors per query + a random sample.

    Args:
        qrels: judgments (frame or dict); labels >= ``rel`` are relevant.
        runs: full-corpus runs to mine distractors from (merged per query by each document's best rank), as a
            list or a ``{name: run}`` dict.
        all_docnos: every docno of the full corpus (e.g. ``full_index.docnos``); N is its length.
        depth: distractors per query (non-relevant documents ranked highest by the runs).
        sample: size of the uniform random background sample from the remaining documents.
        seed: seed of the sample (numpy's default_rng over the sorted remaining docnos).
    """
    if depth < 0 or sample < 0:
        raise ValueError("depth and sample must be >= 0.")
    names = list(runs) if isinstance(runs, dict) else [f"run{i}" for i in range(len(runs))]
    run_list = list(runs.values()) if isinstance(runs, dict) else list(runs)
    corpus = np.array(sorted(set(str(d) for d in all_docnos)), dtype=object)
    in_corpus = set(corpus.tolist())
    q = to_qrels_frame(qrels)
    relevant_rows = q[q["label"] >= rel]
    relevant = list(dict.fromkeys(relevant_rows["docno"].tolist()))
    missing = [d for d in relevant if d not in in_corpus]
    if missing:
        raise ValueError(f"{len(missing)} relevant docnos are not in the corpus, e.g. {missing[:5]}: "
                         "are qrels and corpus from the same dataset?")
    relevant_set = set(relevant)
    distractors: list[str] = []
    if depth and run_list:
        ranked = _best_ranks(run_list)
        judged_rel = set(zip(relevant_rows["qid"].tolist(), relevant_rows["docno"].tolist()))
        keep = [(qq, d) not in judged_rel for qq, d in zip(ranked["qid"].tolist(), ranked["docno"].tolist())]
        ranked = ranked[np.array(keep, dtype=bool)]
        ranked = ranked.sort_values(["qid", "rank", "docno"], kind="stable")
        top = ranked.groupby("qid", sort=False).head(depth)
        distractors = [d for d in dict.fromkeys(top["docno"].tolist()) if d not in relevant_set]
    taken = relevant_set | set(distractors)
    candidates = np.array([d for d in corpus.tolist() if d not in taken], dtype=object)
    if sample > len(candidates):
        raise ValueError(f"A sample of {sample} is larger than the {len(candidates)} documents outside the pool; "
                         "lower --sample or --pool-depth.")
    rng = np.random.default_rng(seed)
    chosen = candidates[np.sort(rng.choice(len(candidates), size=sample, replace=False))].tolist()
    return Pool(num_docs=len(corpus), relevant=tuple(relevant), distractors=tuple(distractors), sample=tuple(chosen),
                depth=depth, seed=seed, dataset=dataset, pool_runs=tuple(names), rel=rel)


# ------------------------------------------------------------------------------------------------------------
# Background samples from a run
# ------------------------------------------------------------------------------------------------------------


@dataclass
class BackgroundSample:
    """What a run shows of one query's background sample: observed scores, and how many fell below ``below``."""

    observed: np.ndarray
    n_below: int
    below: float

    def fit(self, family: str = "auto") -> BackgroundModel:
        return fit_background(self.observed, family, n_below=self.n_below, below=self.below)

    def resample(self, rng: np.random.Generator) -> BackgroundSample:
        """A bootstrap resample of the whole sample (censored members included)."""
        n = len(self.observed) + self.n_below
        picks = rng.integers(0, n, size=n)
        observed = self.observed[picks[picks < len(self.observed)]]
        return BackgroundSample(observed, int(np.sum(picks >= len(self.observed))), self.below)


def background_from_run(run: Any, pool: Pool) -> dict[str, BackgroundSample]:
    """Per query of the run, the scores of the pool's sampled documents it retrieved, the rest censored."""
    frame = to_run_frame(run).reset_index(drop=True)
    m = len(pool.sample)
    if m < 2:
        raise ValueError(f"{pool!r} has a background sample of {m}; SDM needs at least 2 (use a larger sample).")
    is_sample = frame["docno"].isin(pool.sample_set).to_numpy()
    scores = frame["score"].to_numpy(dtype=np.float64)
    out: dict[str, BackgroundSample] = {}
    for qid, rows in frame.groupby("qid", sort=False).indices.items():
        observed = scores[rows[is_sample[rows]]]
        out[str(qid)] = BackgroundSample(observed, m - len(observed), float(scores[rows].min()))
    return out


def fit_run_backgrounds(run: Any, pool: Pool, family: str = "auto") -> dict[str, BackgroundModel]:
    """One background model per query of the run (see :func:`background_from_run`)."""
    return {q: s.fit(family) for q, s in background_from_run(run, pool).items()}


# ------------------------------------------------------------------------------------------------------------
# Functional API
# ------------------------------------------------------------------------------------------------------------


def _judged(run: Any, qrels: Any, pool: Pool) -> tuple[Judged, dict[str, BackgroundSample]]:
    frame = to_run_frame(run).reset_index(drop=True)
    return prepare(frame, qrels, rel=pool.rel), background_from_run(frame, pool)


def _models_for(j: Judged, samples: dict[str, BackgroundSample], family: str) -> list[BackgroundModel]:
    empty = BackgroundSample(np.zeros(0), 2, np.inf)
    return [samples.get(q, empty).fit(family) for q in j.qids.tolist()]


def evaluate(
    run: Any,
    qrels: Any,
    pool: Pool,
    k_values: Sequence[int] = (10, 100, 1000),
    *,
    family: str = "auto",
    gain: str = "linear",
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Pooled and SDM-corrected R@k and nDCG@k of a run over the pooled corpus of ``pool``.

    Returns ``{"aggregate": {measure: {"pooled": x, "sdm": y[, "sdm_ci": [lo, hi]]}}, "per_query": {measure:
    {qid: {...}}}, "models": {qid: BackgroundModel}}``, measures named ``R@k`` and ``nDCG@k``. The bootstrap
    resamples each query's background sample and refits: the interval reflects the uncertainty of the fit,
    not the sampling of queries.
    """
    if family not in FAMILIES:
        raise ValueError(f"Unknown background family {family!r}; choose one of {', '.join(FAMILIES)}.")
    j, samples = _judged(run, qrels, pool)
    models = _models_for(j, samples, family)
    qids = j.qids.tolist()
    per_query, aggregate = sdm_table(j, survival_of_rows(j, models), pool.n_unseen, k_values, gain)
    if bootstrap:
        empty = BackgroundSample(np.zeros(0), 2, np.inf)

        def refit(rng: np.random.Generator) -> list[BackgroundModel]:
            return [samples.get(q, empty).resample(rng).fit(family) for q in qids]

        add_bootstrap(j, refit, pool.n_unseen, k_values, gain, bootstrap, confidence, seed, per_query, aggregate)
    return {"aggregate": aggregate, "per_query": per_query, "models": dict(zip(qids, models))}


def threshold_recall(run: Any, qrels: Any, pool: Pool, k: int, *, family: str = "skewnorm",
                     models: dict[str, BackgroundModel] | None = None, tol: float = 1e-10) -> dict[str, float]:
    """The published reference's Recall@k estimator, per query, for parity.

    Solves ``pooled(tau) + N_unseen * p(tau) = k`` for the score threshold tau by bisection, where pooled(tau)
    counts the run's documents scoring >= tau (the reference's R * alpha_r + D * alpha_d) and p is the
    background survival; Recall@k is the share of relevant documents scoring >= tau. Unlike the reference,
    the bracket is the run's own score range widened until it holds the root, not a fixed [-1, 1].
    Prefer :func:`evaluate` (an exact expectation); this is a plug-in approximation.
    """
    frame = to_run_frame(run)
    q = to_qrels_frame(qrels)
    relevant = q[q["label"] >= pool.rel].groupby("qid")["docno"].apply(set).to_dict()
    if models is None:
        models = fit_run_backgrounds(frame, pool, family)
    out: dict[str, float] = {}
    for qid, rows in frame.groupby("qid", sort=False):
        rel_docs = relevant.get(qid)
        if not rel_docs:
            continue
        scores = np.sort(rows["score"].to_numpy(dtype=np.float64))
        rel_scores = rows.loc[rows["docno"].isin(rel_docs), "score"].to_numpy(dtype=np.float64)
        model = models[str(qid)]

        def excess(tau: float, scores: np.ndarray = scores, model: BackgroundModel = model) -> float:
            pooled_above = len(scores) - np.searchsorted(scores, tau, side="left")
            return float(pooled_above + pool.n_unseen * model.sf(tau)) - k

        span = max(float(scores[-1] - scores[0]), 1.0)
        lo, hi = float(scores[0]) - span, float(scores[-1]) + span
        while excess(hi) > 0:
            hi += span
        while excess(lo) < 0 and lo > -1e300:
            lo -= span
            span *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            if excess(mid) > 0:
                lo = mid
            else:
                hi = mid
            if hi - lo <= tol * max(1.0, abs(mid)):
                break
        out[str(qid)] = float(np.sum(rel_scores >= hi)) / len(rel_docs)
    return out


# ------------------------------------------------------------------------------------------------------------
# ir_measures measures for pt.Experiment
# ------------------------------------------------------------------------------------------------------------


class _SDMMeasure(Measure):
    """SDM-corrected measure over a pooled corpus; each run gets its own per-query background fits."""

    def runtime_impl(self, qrels: Any, run: Any) -> Iterator[Metric]:
        pool: Pool = self.params["pool"]
        family = self.params.get("family") or "auto"
        j, samples = _judged(run, qrels, pool)
        models = _models_for(j, samples, family)
        p = survival_of_rows(j, models)
        k = int(self.params["cutoff"])
        if self.NAME == "SDM_R":
            values = sdm_recall(j, k, p, pool.n_unseen)
        else:
            values = sdm_ndcg(j, k, p, pool.n_unseen, gain=self.params.get("gain") or "linear")
        for qid, value in zip(j.qids.tolist(), values.tolist()):
            yield Metric(qid, self, value)


def _make(name: str, doc: str, extra: dict[str, ParamInfo]) -> _SDMMeasure:
    params = {
        "cutoff": ParamInfo(dtype=int, required=True, desc="ranking cut-off in the full corpus"),
        "pool": ParamInfo(dtype=Pool, required=True, desc="the pooled corpus the run was retrieved from"),
        "family": ParamInfo(dtype=str, choices=FAMILIES, default="auto", desc="background score family"),
        **extra,
    }
    cls = type(f"_{name}", (_SDMMeasure,), {"NAME": name, "__name__": name, "__doc__": doc, "SUPPORTED_PARAMS": params})
    return cls()


SDM_R = _make("SDM_R", "Expected full-corpus Recall@k of a run over a pooled corpus (SDM).", {})
SDM_nDCG = _make(
    "SDM_nDCG",
    "Expected full-corpus nDCG@k (trec_eval's ndcg_cut_k, linear gain) of a run over a pooled corpus (SDM).",
    {"gain": ParamInfo(dtype=str, choices=("linear", "exp"), default="linear", desc="gain")},
)


def three_way(dataset: str, systems: Sequence[str], **kwargs: Any) -> Any:
    """Pooled vs SDM-corrected vs exact full-corpus R@k / nDCG@k for system specs on an ``irds:`` dataset.

    See :func:`pyterrier_sparse_eval._sdm_report.three_way` for the arguments (``pool_runs``, ``depth``,
    ``sample``, ``seed``, ``family``, ``k_values``, ``index_dir``, ``bootstrap``); ``sparse-eval sdm`` runs it.
    """
    from ._sdm_report import three_way as run

    return run(dataset, systems, **kwargs)
