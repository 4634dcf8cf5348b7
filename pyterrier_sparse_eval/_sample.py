"""What SDM reads off a run over a pool: the run checked and keyed as the pool is, and each query's background sample.

A pool's docnos are strings, and so are the keys of everything SDM computes per query; runs and qrels with int ids
are read as strings here (the in-house metrics instead refuse ids whose types differ between run and qrels). A run
over a pool must retrieve from the pool alone: a document outside it (a full-corpus run, another pool's run) would
be counted both as retrieved and among the unseen documents the estimate adds, so it is refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_string_dtype

from ._identical import identical_rows
from .measures import FAMILIES, BackgroundModel, fit_background, trec_ranks
from .measures._inhouse import _MAX_CUTOFF
from .measures._prepare import single_precision, to_qrels_frame, to_run_frame, user_stacklevel

__all__ = [
    "BackgroundSample",
    "background_from_run",
    "best_ranks",
    "check_pool_options",
    "check_relevant_in_pool",
    "check_run_on_pool",
    "check_sdm_options",
    "fit_run_backgrounds",
    "in_set",
    "pooled_run",
    "run_depths",
    "str_ids",
    "str_qrels",
    "tail_bands",
    "warn_if_cut",
    "warn_small_sample",
    "whole",
]


def str_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its ``qid`` and ``docno`` columns as strings (a no-op when they already are)."""
    cast = {c: str for c in ("qid", "docno") if c in frame.columns and not is_string_dtype(frame[c])}
    return frame.astype(cast) if cast else frame


def str_qrels(qrels: Any) -> pd.DataFrame:
    """Qrels as a frame with string ids."""
    return str_ids(to_qrels_frame(qrels))


def run_frame(run: Any, what: str = "run") -> pd.DataFrame:
    """A run as a frame with string ids, every row with a query id and a docno (``what``: named in the error)."""
    frame = to_run_frame(run, what)
    for col in ("qid", "docno"):
        missing = int(frame[col].isna().sum())
        if missing:
            raise ValueError(
                f"The {what} has {missing} rows without a {col} (None or NaN): drop them (e.g. "
                f"run = run.dropna(subset=['{col}']))."
            )
    return str_ids(frame).reset_index(drop=True)


def run_queries(run: Any) -> list[str] | None:
    """The query ids of a ``{qid: ranking}`` run, those with an empty ranking included (a frame of its rows
    cannot show them; trec_eval evaluates them as retrieving nothing), as strings; None for a frame."""
    return [str(q) for q in run] if isinstance(run, Mapping) else None


def _once_per_query(frame: pd.DataFrame) -> pd.DataFrame:
    """Each document once per query: a duplicate keeps its highest score, with a warning."""
    twice = frame.duplicated(["qid", "docno"])
    if not twice.any():
        return frame
    warnings.warn(
        f"The run lists {int(twice.sum())} documents again for a query they were already retrieved for; SDM "
        "keeps each one's highest score (drop the duplicates from the run to silence this).",
        stacklevel=user_stacklevel(),
    )
    best = frame.sort_values("score", ascending=False, kind="stable").drop_duplicates(["qid", "docno"])
    return best.sort_index().reset_index(drop=True)


def pooled_run(run: Any, pool: Any) -> pd.DataFrame:
    """A system's run over ``pool`` as a frame with string ids, checked: every document in the pool, each listed
    once per query (a duplicate keeps its highest score, with a warning), the scores at trec_eval's single
    precision (:func:`single_precision`), as the judged rows are ranked and compared with the background."""
    frame = _once_per_query(run_frame(run))
    infinite = ~np.isfinite(frame["score"].to_numpy())
    if infinite.any():
        raise ValueError(
            f"The run has {int(infinite.sum())} infinite scores: SDM models the distribution of the scores and needs "
            "finite ones. Drop those rows (a sampled document the run leaves out counts as scoring below its lowest "
            "score) or replace them by finite scores."
        )
    frame = frame.assign(score=single_precision(frame["score"].to_numpy()))  # beyond float32's range: refused
    outside = ~in_set(frame["docno"], pool.docno_set)
    if outside.any():
        examples = list(dict.fromkeys(frame.loc[outside, "docno"].head(1000)))[:3]
        raise ValueError(
            f"The run retrieves {int(outside.sum())} documents outside {pool!r} (e.g. {examples}): SDM needs the "
            "system's run over the pooled corpus. Retrieve from pool.index(full_index, path) (or an index of the "
            "pool's documents), not from the full corpus or another pool."
        )
    return frame


def in_set(values: pd.Series, members: frozenset[str]) -> np.ndarray:
    """``values.isin(members)``, one membership test per distinct value: pandas' isin hashes every member on each
    call (5-7 s for a 1M-document pool against a 7M-row run; this: 1-2 s)."""
    codes, names = pd.factorize(values, use_na_sentinel=False)
    return np.fromiter((v in members for v in names.tolist()), dtype=bool, count=len(names))[codes]


def whole(x: Any) -> bool:
    """An int, a numpy integer or a float without a fraction (e.g. read from JSON); not a bool."""
    if isinstance(x, (bool, np.bool_)):
        return False
    return isinstance(x, (int, np.integer)) or (isinstance(x, (float, np.floating)) and float(x).is_integer())


def check_noise_correction(noise_correction: Any, family: str, covariate: Any) -> None:
    """``noise_correction`` is a bool, with the kernel background and no covariate (the fix named)."""
    if not isinstance(noise_correction, bool):
        raise TypeError(f"noise_correction={noise_correction!r}: give True or False (a Python bool).")
    if noise_correction and family not in ("auto", "kde"):
        raise ValueError(
            f"noise_correction=True corrects the kernel background's noise, which family={family!r} does not "
            "estimate: use family='auto' or 'kde', or drop noise_correction."
        )
    if noise_correction and covariate is not None:
        raise ValueError(
            "noise_correction=True is not available with covariate= (the covariate's count has no variance "
            "estimate): drop one of them."
        )


def check_sdm_options(
    k_values: Any, family: str, bootstrap: Any, confidence: Any, seed: Any
) -> tuple[list[int], int]:
    """SDM's evaluation options checked before any work (``sdm.evaluate``, ``three_way``), each mistake named
    with its fix: the cut-offs and the bootstrap rounds as ints."""
    if whole(k_values):
        raise ValueError(
            f"k_values={k_values!r}: give a list of cut-offs, e.g. [{k_values}] or (10, 100, 1000)."
        )
    k_list = list(k_values)
    # beyond a C int the full runs' measures refuse it: said here, before the work
    if not k_list or not all(whole(k) and 1 <= k <= _MAX_CUTOFF for k in k_list):
        raise ValueError(
            f"k_values={k_list}: give at least one cut-off, each an integer >= 1 (and <= {_MAX_CUTOFF}), e.g. (10, "
            "100, 1000)."
        )
    if family not in FAMILIES:
        raise ValueError(f"Unknown background family {family!r}; choose one of {', '.join(FAMILIES)}.")
    if not whole(bootstrap) or bootstrap < 0 or bootstrap == 1:  # one round: an interval of width 0
        raise ValueError(
            f"bootstrap={bootstrap!r}: give a number of rounds >= 2 (e.g. 200), or 0 for no intervals."
        )
    # with or without a bootstrap
    if not (isinstance(confidence, (float, int, np.number)) and 0 < confidence < 1):
        raise ValueError(
            f"confidence={confidence!r}: give the intervals' coverage as a share in (0, 1), e.g. 0.95."
        )
    if bootstrap and seed is not None and not (whole(seed) and seed >= 0):
        raise ValueError(f"seed={seed!r}: give an integer >= 0 (or None for a fresh seed).")
    return [int(k) for k in k_list], int(bootstrap)


def check_relevant_in_pool(frame: pd.DataFrame, qrels: pd.DataFrame, pool: Any) -> None:
    """Refuse qrels whose relevant documents (label >= the pool's ``rel``) for the run's queries are not all in
    ``pool`` outside its background sample: SDM models every unseen document as non-relevant, so such a document
    would silently be counted as missed, or as background (qrels other than the pool's, or queries the pool was
    not built for)."""
    judged = qrels[qrels["qid"].isin(frame["qid"].unique()) & (qrels["label"] > 0)]
    lower = judged[judged["label"] < pool.rel]
    outside = int((~in_set(lower["docno"], pool.docno_set)).sum())
    # a sampled document stands for unseen ones only if there are any (a pool of the whole corpus has none)
    sampled = int(in_set(lower["docno"], pool.sample_set).sum()) if pool.n_unseen else 0
    if outside or sampled:
        labels = "label 1" if pool.rel == 2 else f"labels 1 to {pool.rel - 1}"
        warnings.warn(
            f"{outside + sampled} judged documents with {labels} for the run's queries are "
            f"outside {pool!r} ({outside}) or among its sampled background documents ({sampled}): nDCG@k counts "
            "their gain in its ideal ranking, but no run over the pool can retrieve the first, and the second also "
            f"stand for unseen non-relevant documents, so SDM's nDCG@k is off (R@k at rel={pool.rel} is not "
            "affected). For nDCG@k, build the pool with rel=1.",
            stacklevel=user_stacklevel(),
        )
    rel = judged[judged["label"] >= pool.rel]
    for found, where, why in (
        (
            rel[~in_set(rel["docno"], pool.docno_set)],
            f"are not in {pool!r}",
            "no run over the pool can retrieve them, and SDM models every unseen document as non-relevant, so each "
            "would count as missed",
        ),
        (
            rel[in_set(rel["docno"], pool.sample_set)],
            f"are among {pool!r}'s sampled background documents",
            "they stand for the unseen non-relevant ones, so SDM would count each as relevant and as background both",
        ),
    ):
        if len(found):
            examples = [f"{q}/{d}" for q, d in zip(found["qid"].head(3), found["docno"].head(3))]
            raise ValueError(
                f"{len(found)} relevant documents of the qrels for {found['qid'].nunique()} of the run's queries "
                f"{where} (qid/docno, e.g. {examples}): {why}. Evaluate with the qrels the pool was built from, or "
                "build the pool with these qrels (sdm.build_pool(qrels, ...))."
            )


def check_run_on_pool(frame: pd.DataFrame, qrels: pd.DataFrame, pool: Any, k: int = 0) -> None:
    """:func:`check_relevant_in_pool`, and a warning when the run looks cut above the largest cut-off ``k``."""
    check_relevant_in_pool(frame, qrels, pool)
    warn_if_cut(run_depths(frame, pool), pool, k)


def run_depths(frame: pd.DataFrame, pool: Any = None) -> np.ndarray:
    """The number of documents the run lists for each of its queries; with ``pool``, a query that lists every
    pooled document but its own (BEIR's ``ignore_identical_ids``) counts it (only such queries' rows are read)."""
    sizes = frame.groupby("qid", sort=False).size()
    if pool is None:
        return sizes.to_numpy()
    short = [q for q, n in sizes.items() if n == pool.size - 1 and str(q) in pool.docno_set]
    rows = frame[frame["qid"].isin(short)]
    own = sizes.index.isin(short) & ~sizes.index.isin(rows["qid"][identical_rows(rows)])
    return sizes.to_numpy() + own.astype(np.int64)


def warn_if_cut(sizes: np.ndarray, pool: Any, k: int) -> None:
    """A warning when a run listing ``sizes`` documents per query looks cut above the cut-off ``k``."""
    deepest, reach = (int(sizes.max()) if len(sizes) else 0), min(k, pool.size)
    at = int(np.sum(sizes == deepest))
    # cut: no query reaches k (nor the whole pool), and most queries (3 at least) stop at the same depth
    if len(sizes) and deepest < reach and at >= 3 and at >= len(sizes) / 2:
        warnings.warn(
            f"The run lists at most {deepest} documents per query ({at} of its {len(sizes)} queries exactly "
            f"{deepest}), fewer than {reach} (k={k}, a pool of {pool.size}): if it was cut (num_results), the "
            f"documents below the cut count as not retrieved and SDM's values at k > {deepest} come out low. "
            f"Retrieve at least {reach} documents per query over the pool (e.g. num_results=pool.size).",
            stacklevel=user_stacklevel(),
        )


@dataclass
class BackgroundSample:
    """What a run shows of one query's background sample: observed scores, and how many fell below ``below``.

    A stratified sample also carries each observed score's stratum (``stratum``), the censored documents per
    stratum (``below_by``) and each stratum's Horvitz-Thompson weight (``weight_by``)."""

    observed: np.ndarray
    n_below: int
    below: float
    stratum: np.ndarray | None = None
    below_by: np.ndarray | None = None
    weight_by: np.ndarray | None = None

    def fit(self, family: str = "auto") -> BackgroundModel:
        if self.stratum is None:
            return fit_background(self.observed, family, n_below=self.n_below, below=self.below)
        assert self.weight_by is not None and self.below_by is not None
        return fit_background(
            self.observed,
            family,
            n_below=self.n_below,
            below=self.below,
            weights=self.weight_by[self.stratum],
            weight_below=float(self.below_by @ self.weight_by),
        )

    def resample(self, rng: np.random.Generator) -> BackgroundSample:
        """A bootstrap resample of the whole sample (censored members included), within each stratum."""
        if self.stratum is None:
            n = len(self.observed) + self.n_below
            picks = rng.integers(0, n, size=n)
            observed = self.observed[picks[picks < len(self.observed)]]
            return BackgroundSample(observed, int(np.sum(picks >= len(self.observed))), self.below)
        assert self.below_by is not None
        parts, strata, below_by = [], [], np.zeros_like(self.below_by)
        for h in range(len(self.below_by)):
            mine = self.observed[self.stratum == h]
            n = len(mine) + int(self.below_by[h])
            picks = rng.integers(0, n, size=n) if n else np.zeros(0, dtype=np.int64)
            parts.append(mine[picks[picks < len(mine)]])
            strata.append(np.full(len(parts[-1]), h))
            below_by[h] = int(np.sum(picks >= len(mine)))
        return BackgroundSample(
            np.concatenate(parts),
            int(below_by.sum()),
            self.below,
            np.concatenate(strata).astype(np.int64),
            below_by,
            self.weight_by,
        )


def background_from_run(
    run: Any, pool: Any, exclude: dict[str, set[str]] | None = None
) -> dict[str, BackgroundSample]:
    """Per query of the run, the scores of the pool's sampled documents it retrieved, the rest censored.

    ``exclude[qid]``: sampled documents left out of that query's sample (they stand for unseen documents
    modelled otherwise, see :mod:`pyterrier_sparse_eval._covariate`)."""
    # a document listed twice had been counted twice in the sample (its censored share 0 where it was 0.5)
    frame = _once_per_query(str_ids(to_run_frame(run)).reset_index(drop=True))
    m = len(pool.sample) + len(pool.tail)
    if m < 2:
        fix = (
            "build the pool with a larger sample (sample=, --sample)"
            if pool.n_unseen
            else "but the pool holds the whole corpus, so the pooled values are the full corpus's: evaluate the run "
            "with pse.evaluate or standard measures"
        )
        raise ValueError(f"{pool!r} has a background sample of {m}; SDM needs at least 2 ({fix}).")
    is_sample = in_set(frame["docno"], pool.sample_set)
    # at trec_eval's precision, as the relevant rows' scores (``prepare``) are compared with them: a sampled
    # score equal to a relevant one stays equal (counted above it), and the run's lowest score censors alike
    # (a no-op for pooled_run's frame, already rounded; this function also takes a run as given)
    scores = single_precision(frame["score"].to_numpy(dtype=np.float64))
    out: dict[str, BackgroundSample] = {}
    if pool.stratified:
        strata = pool.strata()
        stratum_of = {d: h for h, (docs, _) in enumerate(strata) for d in docs}
        weight_by = np.array(pool.stratum_weights())
        sizes = np.array([len(docs) for docs, _ in strata])
        doc_stratum = frame["docno"].map(stratum_of).fillna(0).to_numpy(dtype=np.int64)
    docnos = frame["docno"].to_numpy()
    for qid, rows in frame.groupby("qid", sort=False).indices.items():
        left_out = exclude.get(str(qid), set()) if exclude else set()
        mine = rows[is_sample[rows]]
        if left_out:
            mine = mine[np.array([d not in left_out for d in docnos[mine]], dtype=bool)]
        observed = scores[mine]
        lowest = float(scores[rows].min())
        if not pool.stratified:
            out[str(qid)] = BackgroundSample(observed, m - len(left_out) - len(observed), lowest)
            continue
        stratum = doc_stratum[mine]
        out_of = np.array([stratum_of[d] for d in left_out], dtype=np.int64)
        kept = sizes - np.bincount(out_of, minlength=len(sizes))
        below_by = kept - np.bincount(stratum, minlength=len(sizes))
        out[str(qid)] = BackgroundSample(observed, int(below_by.sum()), lowest, stratum, below_by, weight_by)
    return out


def fit_run_backgrounds(run: Any, pool: Any, family: str = "auto") -> dict[str, BackgroundModel]:
    """One background model per query of the run (see :func:`background_from_run`)."""
    return {q: s.fit(family) for q, s in background_from_run(run, pool).items()}


#: the background of a query the run returned nothing for: every sampled document censored (p(s) = 1 below
#: infinity, whatever the strata)
_UNRETRIEVED = BackgroundSample(np.zeros(0), 2, np.inf)


def check_pool_options(
    depth: Any, sample: Any, seed: Any, tail_sample: Any, tail_depth: Any
) -> tuple[list[int], list[int]]:
    """:func:`build_pool`'s options checked before any work (``sparse-eval sdm`` checks them before indexing):
    the tail samples and tail depths, one per band."""
    for name, value in (("depth", depth), ("sample", sample), ("seed", seed)):
        if not whole(value):
            raise TypeError(f"{name}={value!r}: give a whole number.")
    if seed < 0:
        raise ValueError(f"seed={seed}: give an integer >= 0.")
    tail_samples = _per_band(tail_sample)
    if not tail_samples:
        raise ValueError(
            "tail_sample is an empty list: give one size per tail band, or 0 for a uniform sample."
        )
    if depth < 0 or sample < 0 or min(tail_samples) < 0:
        raise ValueError("depth, sample and tail_sample must be >= 0.")
    given = None if tail_depth is None else _per_band(tail_depth)
    if given is not None and not sum(tail_samples):
        raise ValueError(
            f"tail_depth={given} bounds the tail bands of tail_sample=, which samples none here: give "
            "tail_sample= above 0 too (or leave tail_depth= out for a uniform sample)."
        )
    # not given: 100 (a uniform sample's bands, 0 documents each, have one each and use none)
    bounds = given if given is not None else [100] * (1 if sum(tail_samples) else len(tail_samples))
    if len(bounds) != len(tail_samples):
        raise ValueError(
            f"{len(tail_samples)} tail samples for {len(bounds)} tail depths: give one per band."
        )
    stratified = sum(tail_samples) > 0
    if sample == 1 and not stratified:
        raise ValueError(
            "sample=1: SDM needs a background sample of at least 2 (and reads little off fewer than 50); "
            "sample=0 pools for pooled evaluation only."
        )
    if stratified and (bounds[0] <= depth or any(b <= a for a, b in zip(bounds, bounds[1:]))):
        raise ValueError(
            f"tail_depth (--tail-depth) {bounds} must be deeper than the pool depth ({depth}) and increasing."
        )
    return tail_samples, bounds


def relevant_judgments(qrels: pd.DataFrame, rel: int, depth: int, runs: Sequence[Any]) -> pd.DataFrame:
    """:func:`build_pool`'s judgments of labels >= ``rel``: none is an error (every R@k would be 0); a warning
    when ``depth`` asks for distractors and no pooling run ranks any."""
    rows = qrels[qrels["label"] >= rel]
    if rows.empty:
        labels = sorted({int(x) if float(x).is_integer() else x for x in qrels["label"].tolist()})
        raise ValueError(
            f"No judgment has a label >= rel={rel} (the labels: {labels[:10]}): a pool needs relevant documents; "
            "give the lowest label counted relevant (rel=)."
        )
    if depth and not runs:
        warnings.warn(
            f"depth={depth} takes each query's top non-relevant documents from the pooling runs, and none were "
            "given: the pool holds the relevant documents and the sample only (give runs=, or depth=0).",
            stacklevel=user_stacklevel(),
        )
    return rows


def warn_small_sample(sample: int, rest: int) -> None:
    """A warning when a background ``sample`` (tail samples included) drawn from ``rest`` documents is too small
    to show SDM a shape: ``fit_background``'s kernel needs 50 observed scores (fewer get a parametric or empirical fit)."""
    if 0 < sample < 50 and sample < rest:
        warnings.warn(
            f"A background sample of {sample} documents for the {rest} outside the pool: SDM reads each query's "
            "unseen documents off the sampled ones the system scores, so a query whose few sampled documents the "
            "run does not retrieve gets no correction at all, and fewer than 50 give no shape to fit. Sample "
            "more (sample=1000, --sample 1000, is the default).",
            stacklevel=user_stacklevel(),
        )


def _per_band(value: int | Sequence[int]) -> list[int]:
    """One number, or one per tail band (numpy integers too)."""
    values: Any = [value] if whole(value) else value
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{value!r}: give a whole number, or a list of them (one per tail band).")
    values = list(values)
    if not all(whole(t) for t in values):
        raise TypeError(f"{value!r}: tail_sample and tail_depth are whole numbers of documents and ranks.")
    return [int(t) for t in values]


def best_ranks(runs: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """qid, docno, best 0-based rank over the runs, each ranked in trec_eval order (score in single
    precision, then docno, both descending), the order the runs are evaluated in."""
    frames = []
    for run in runs:
        frame = str_ids(to_run_frame(run, "pooling run"))
        frame = frame.assign(rank=trec_ranks(frame["qid"], frame["score"], frame["docno"]))
        frames.append(frame[["qid", "docno", "rank"]])
    merged = pd.concat(frames, ignore_index=True)
    return merged.groupby(["qid", "docno"], as_index=False, sort=False)["rank"].min()


def check_pooling_runs(ranked: pd.DataFrame, qrels: pd.DataFrame, corpus: set[str]) -> None:
    """Refuse pooling runs (:func:`best_ranks`) that rank documents outside ``corpus``, or no query of the
    (string-id) ``qrels``: their relevant documents would not be set aside before each query's top documents are
    taken, and the pool would shrink."""
    if len(strangers := ranked["docno"][~in_set(ranked["docno"], frozenset(corpus))]):
        raise ValueError(
            f"{strangers.nunique()} documents the pooling runs rank are not in the corpus {list(strangers.unique()[:3])}:"
            " runs and all_docnos of the same dataset? Drop strays: run[run.docno.isin(set(all_docnos))]."
        )
    ranked_qids, judged_qids = set(ranked["qid"].tolist()), set(qrels["qid"].tolist())
    if judged_qids and not ranked_qids & judged_qids:
        floats = [x for x in sorted(ranked_qids | judged_qids) if x.endswith(".0")]
        cast = (
            f" (a qid column was float, e.g. {floats[0]!r}: cast it to int first, e.g. "
            "run.assign(qid=run.qid.astype(int).astype(str)))"
            if floats
            else ""
        )
        raise ValueError(
            f"The pooling runs rank no query of the qrels (runs' qids e.g. {sorted(ranked_qids)[:3]}, the "
            f"qrels' {sorted(judged_qids)[:3]}): pass runs of the qrels' topics{cast}."
        )


def tail_bands(ranked: pd.DataFrame, taken: set[str], depth: int, bounds: Sequence[int]) -> list[list[str]]:
    """Each tail band's documents (sorted): best pooling rank in [previous bound, bound), outside the pool (every
    ranked document is in the corpus: build_pool refuses strays first)."""
    if len(ranked) and (listed := int(ranked["rank"].max()) + 1) < bounds[-1]:
        warnings.warn(
            f"The pooling runs list at most {listed} documents per query, so the tail band bounded at "
            f"{bounds[-1]} ends at rank {listed}: retrieve them {bounds[-1]} deep (or lower tail_depth).",
            stacklevel=3,
        )
    best = ranked.groupby("docno", sort=False)["rank"].min()
    best = best[[d not in taken for d in best.index.tolist()]]
    out, lower = [], depth
    for bound in bounds:
        out.append(sorted(best.index[(best >= lower) & (best < bound)].tolist()))
        lower = bound
    return out
