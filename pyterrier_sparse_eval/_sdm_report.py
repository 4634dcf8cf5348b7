"""Three-way SDM report: pooled vs SDM-corrected vs exact full-corpus values, per system, measure and query.

Sparse retrieval over the full corpus is cheap for the collections this runs on, so the truth is computed
next to the estimate: that is how to find out whether SDM can be trusted on a collection before relying on it
where the full corpus cannot be scored.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from . import datasets
from ._cache import DAMAGED, clear_unreadable_entry, index_folder
from ._covariate import Covariate, evaluate_with_covariate
from ._features import MatchedTerms
from ._format import IndexCorruptError
from ._identical import IgnoreIdenticalIds, ignores_identical_ids
from ._index import SparseIndex
from ._pool import (
    BackgroundSample,
    Pool,
    background_from_run,
    build_pool,
    evaluate_on_pool,
)
from ._sample import check_noise_correction, check_pool_options, check_sdm_options, in_set, whole
from .measures import evaluate as evaluate_inhouse
from .measures import json_ready
from .systems import name_systems, parse_system, specs_in_dataset_language

__all__ = ["ThreeWay", "three_way"]


def bootstrap_bar(rounds: range) -> Iterable[int]:
    """The bootstrap's rounds with a progress bar (on a terminal only: tqdm's automatic setting)."""
    from tqdm.auto import tqdm

    return tqdm(rounds, desc="SDM bootstrap", unit="round", disable=None)


def _judged_in_corpus(qrels: Any, docnos: Any) -> Any:
    """The judgments of documents in the corpus, with a warning naming those left out (no pool can hold them)."""
    outside = ~in_set(qrels["docno"].astype(str), frozenset(docnos.tolist()))
    if outside.any():
        relevant = int((qrels["label"][outside] > 0).sum())
        warnings.warn(
            f"{int(outside.sum())} judgments ({relevant} relevant) name documents that are not in the corpus (e.g. "
            f"{qrels['docno'][outside].astype(str).head(3).tolist()}): no pool can hold them, so they are left out of "
            "the pooled, SDM and full values alike; `sparse-eval experiment` counts the relevant ones as never "
            "retrieved, so its R@k and nDCG@k can be lower.",
            stacklevel=2,
        )
    return qrels[~outside].reset_index(drop=True)


@dataclass
class ThreeWay:
    """Result of :func:`three_way`.

    ``results[system][measure]`` = ``{"pooled", "sdm", "full"}`` (+ ``"sdm_ci"`` with a bootstrap);
    ``per_query[system][measure][qid]`` the same per query; ``curves[system][metric]`` = ``{"k": [...],
    "pooled": [...], "sdm": [...], "full": [...]}`` over many cut-offs, for plots (with ``"sdm_low"`` and
    ``"sdm_high"``, the bootstrap interval, when one was asked for).
    """

    results: dict[str, dict[str, dict[str, Any]]]
    per_query: dict[str, dict[str, dict[str, dict[str, Any]]]]
    config: dict[str, Any]
    pool: Pool
    models: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    samples: dict[str, dict[str, BackgroundSample]] = field(default_factory=dict, repr=False)
    curves: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict, repr=False)

    def to_json(self, per_query: bool = False) -> dict[str, Any]:
        """A dict for ``json.dumps``: a value that is NaN or infinite is ``None``."""
        out: dict[str, Any] = {"results": self.results, "config": self.config}
        if per_query:
            out["per_query"] = self.per_query
        return json_ready(out)

    def table(self) -> str:
        """A text table: the pool's size, then one row per system and measure (100 columns, wider when a system's
        name is longer than 28 characters: each is named whole)."""
        covariate = self.config.get("covariate")
        terms = " and matched query terms" if self.config.get("covariate_features") else ""
        width = max([28, *map(len, self.results)])
        rows = [
            _describe(self.pool)
            + (f"\nSDM with {covariate}'s full-corpus run{terms} as covariate" if covariate else "")
            + (
                "\nSDM's terms corrected for the noise of the fitted survival"
                if self.config.get("noise_correction")
                else ""
            ),
            f"{'system':<{width}} {'measure':<10} {'pooled':>8} {'SDM':>8} {'full':>8} {'gap closed':>10}"
            + ("  SDM 95% CI" if self.config.get("bootstrap") else ""),  # an interval only with a bootstrap
        ]
        for system, measures in self.results.items():
            for name, v in measures.items():
                gap = v["pooled"] - v["full"]
                closed = f"{1 - abs(v['sdm'] - v['full']) / abs(gap):.0%}" if abs(gap) >= 0.01 else "-"
                ci = f"[{v['sdm_ci'][0]:.4f}, {v['sdm_ci'][1]:.4f}]" if "sdm_ci" in v else ""
                rows.append(
                    f"{system:<{width}} {name:<10} {v['pooled']:>8.4f} {v['sdm']:>8.4f} {v['full']:>8.4f} "
                    f"{closed:>10}" + (f"  {ci}" if ci else "")
                )
        return "\n".join(rows)


def _describe(pool: Pool) -> str:
    tail = f" + {len(pool.tail)} of the {pool.tail_size} in the tail stratum" if pool.stratified else ""
    if len(pool.bands) > 1:
        bounds = [bound for bound, _, _ in pool.bands]
        ranks = [f"< {bounds[0]}", *(f"{low} to {bound - 1}" for low, bound in zip(bounds, bounds[1:]))]
        tail += (
            " (" + ", ".join(f"{n} of {size} ranked {r}" for r, (_, size, n) in zip(ranks, pool.bands)) + ")"
        )
    return (
        f"Pool: {pool.size} of {pool.num_docs} documents ({pool.fraction:.2%} of the corpus): "
        f"{len(pool.relevant)} relevant, {len(pool.distractors)} distractors, {len(pool.sample)} sampled{tail}; "
        f"{pool.n_unseen} unseen"
    )


def _cut_for(index: SparseIndex) -> str:
    """The fingerprint of the pool a pooled index was cut for (from its sealed metadata), or what it lacks."""
    try:
        return "#" + Pool.from_spec(index.meta.get("pool") or {}).fingerprint
    except (ValueError, TypeError):
        return "none recorded"


def _curve_ks(k_values: Sequence[int], num_docs: int) -> list[int]:
    """The cut-offs of the metric-vs-k curves: the asked ones, and 24 up to the deepest within the corpus (each
    costs a pass over every relevant row's count: a grid out to k = 2**31 - 1 had taken a minute more)."""
    top = max(1, min(max(k_values), num_docs))
    ks = {int(round(x)) for x in np.geomspace(1, top, num=24)} | set(k_values)
    return sorted(k for k in ks if k >= 1)


def _spec_list(name: str, given: Any) -> list[str]:
    if isinstance(given, str) or not hasattr(given, "__iter__") or not (given := list(given)):
        raise ValueError(f"{name}={given!r}: give a list of system specs, e.g. ['bm25'].")
    return given


def three_way(
    dataset: str | Any,
    systems: Sequence[str],
    *,
    pool_runs: Sequence[str] | None = None,
    depth: int = 20,
    sample: int = 1000,
    seed: int = 0,
    family: str = "auto",
    k_values: Sequence[int] = (10, 100, 1000),
    tail_sample: int | Sequence[int] = 0,
    tail_depth: int | Sequence[int] | None = None,
    index_dir: str | Path = "indexes",
    topic_field: str | None = None,
    num_results: int | None = None,
    bootstrap: int = 0,
    covariate: bool | str = False,
    noise_correction: bool = False,
    curves: bool = True,
    verbose: bool = True,
) -> ThreeWay:
    """Pooled, SDM-corrected and full-corpus R@k and nDCG@k for ``systems`` (specs like ``bm25``,
    ``bm25:k1=1.2,b=0.75``, ``splade:PATH``) on a dataset (a spec, or a loaded dataset read as given).

    The pool: relevant documents + top-``depth`` distractors per query from the ``pool_runs`` systems'
    full-corpus runs (default: the first system) + ``sample`` random background documents (``seed``). Each
    system's pooled index is cut from its full index (same scores), retrieved in full (``num_results`` = pool
    size), and corrected with its own per-query background fits. The full-corpus runs, which give the
    distractors and the exact values, retrieve ``num_results`` documents per query (default: the largest k,
    pool depth or tail depth, at least 1000); it must be at least the largest k and the pool depth. ``covariate``:
    correct with the first pooling run's full-corpus run as covariate (``pse.sdm.evaluate(..., covariate=)``);
    ``"terms"``: with each document's count of the query's terms (:class:`MatchedTerms`) as a feature.
    ``topic_field``: the topics' field used as the query (:func:`pse.datasets.get_topics`'s ``field``).
    ``noise_correction``: as in ``pse.sdm.evaluate``."""
    if covariate not in (False, True, "score", "terms"):
        raise ValueError(f"covariate={covariate!r}: give False, True (or 'score'), or 'terms'.")
    # BM25's language the dataset's, as the command line gives it
    systems = specs_in_dataset_language(_spec_list("systems", systems), dataset, quiet=not verbose)
    pool_runs = (
        specs_in_dataset_language(_spec_list("pool_runs", pool_runs), dataset, quiet=True)
        if pool_runs
        else None
    )
    if num_results is not None and not (whole(num_results) and num_results >= 1):
        raise ValueError(f"num_results={num_results!r}: give a whole number of documents per query.")
    specs = [parse_system(s) for s in systems]
    # a pooling run is a system's when it is the same system (its model as given), not when the names agree
    given = {s.full_name: s for s in specs}
    pool_specs = list(
        {p.full_name: given.get(p.full_name, p) for p in map(parse_system, pool_runs or systems[:1])}.values()
    )
    # every run's name distinct; the same system given twice refused
    name_systems(specs + [p for p in pool_specs if p.full_name not in given])
    # every option checked before any indexing
    k_values, bootstrap = check_sdm_options(k_values, family, bootstrap, 0.95, seed)
    check_noise_correction(noise_correction, family, covariate or None)
    tail_samples, depths = check_pool_options(depth, sample, seed, tail_sample, tail_depth)
    if sample < 2:
        raise ValueError(
            f"sample={sample}: SDM needs a background sample of at least 2 (1000 is the default)."
        )
    tail = max(depths) if sum(tail_samples) else 0
    full_depth = max(max(k_values), depth, tail, 1000) if num_results is None else int(num_results)
    if full_depth < max(max(k_values), depth, tail):
        deepest = f" or the tail depth ({tail})" if tail else ""
        raise ValueError(
            f"num_results (--num-results) {full_depth} is below the largest k ({max(k_values)}) or the pool depth "
            f"({depth}){deepest}: the full-corpus runs could not give the exact values; raise it."
        )
    dataset_name = datasets.dataset_spec(dataset)  # the index cache's folder is named by it
    ds = datasets.load_dataset(dataset)  # a loaded one as it is (pse.hf.hf_dataset's columns=, configs=, ...)
    datasets.require_documents(ds)  # before its topics are read (downloaded)
    topics = datasets.get_topics(ds, topic_field, verbose=verbose)
    qrels = datasets.get_qrels(ds)
    topics = datasets.judged_topics(dataset_name, topics, qrels)  # before any index is built
    # the judged queries not in the topics (said above) are neither pooled nor evaluated
    qrels = qrels[qrels["qid"].astype(str).isin(set(topics["qid"].astype(str)))].reset_index(drop=True)
    folder = index_folder(index_dir, dataset_name)

    # BEIR's evaluation: a query's own document is not among its results (ArguAna); the full runs keep full_depth
    # others (said once, there), the runs over the pool every pooled document
    ignore = ignores_identical_ids(dataset)
    own_full = IgnoreIdenticalIds(verbose, full_depth) if ignore else (lambda run: run)
    own = IgnoreIdenticalIds() if ignore else (lambda run: run)
    full_index: dict[str, SparseIndex] = {}
    full_runs: dict[str, Any] = {}

    def full_run(spec: Any) -> Any:
        if spec.name not in full_runs:
            full_index[spec.name] = spec.index(
                index_dir, dataset, lambda: datasets.corpus_iter(ds), verbose=verbose
            )
            if verbose:
                print(f"Retrieving {spec.name} over the full corpus ({full_depth} per query)")
            # one more, and the query's own left out, as BEIR's search: full_depth documents other than the query
            retriever = spec.retriever(
                full_index[spec.name], num_results=full_depth + ignore, verbose=verbose
            )
            full_runs[spec.name] = own_full(retriever.transform(topics))
        return full_runs[spec.name]

    pool_frames = {s.name: full_run(s) for s in pool_specs}
    for spec in specs:
        full_run(spec)
    first = full_index[specs[0].name]
    qrels = _judged_in_corpus(qrels, first.docnos)
    pool = build_pool(
        qrels,
        pool_frames,
        all_docnos=first.docnos.tolist(),
        depth=depth,
        sample=sample,
        seed=seed,
        dataset=dataset_name,
        tail_sample=tail_sample,
        tail_depth=tail_depth,
    )
    if verbose:
        print(f"Pooled corpus: {pool!r}")
    cov = None
    if covariate:  # the first pooling run, and with "terms" each document's count of the query's terms
        first_pool = pool_specs[0]
        cov_run = pool_frames[first_pool.name]
        if covariate == "terms":
            cov_run = MatchedTerms(full_index[first_pool.name], first_pool.encoder).transform(cov_run)
        cov = Covariate.from_run(cov_run, pool)

    results: dict[str, dict[str, dict[str, Any]]] = {}
    per_query: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    models: dict[str, dict[str, Any]] = {}
    samples: dict[str, dict[str, BackgroundSample]] = {}
    curve_out: dict[str, dict[str, dict[str, list[float]]]] = {}
    measure_names = [f"{m}@{k}" for k in k_values for m in ("R", "nDCG")]
    for spec in specs:
        pooled_path = folder / f"pool-{pool.fingerprint}" / spec.cache_name(dataset)
        pooled_path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(pooled_path.parent / f".{pooled_path.name}.lock")):  # concurrent runs build it once
            pooled_index = SparseIndex(pooled_path)
            mode: str | None = "create"
            if not pooled_index.built():
                clear_unreadable_entry(pooled_path)
            else:
                try:  # a damaged cache entry is rebuilt, as a damaged full index is
                    _ = pooled_index.postings
                    mode = None
                except IndexCorruptError as e:
                    warnings.warn(f"Rebuilding {pooled_path}: {DAMAGED} ({e})", stacklevel=2)
                    mode = "overwrite"
                if mode is None and (cut_for := _cut_for(pooled_index)) != f"#{pool.fingerprint}":
                    # an entry copied or restored from elsewhere: another pool's documents give other numbers
                    warnings.warn(
                        f"Rebuilding {pooled_path}: it holds the documents of another pool ({cut_for}), not of "
                        f"{pool!r}.",
                        stacklevel=2,
                    )
                    mode = "overwrite"
            if mode is not None:
                pool.index(full_index[spec.name], pooled_path, mode=mode)
                # a handle that read the entry before it was rebuilt would refuse to search (stale)
                pooled_index = SparseIndex(pooled_path)
        if verbose:
            print(f"Retrieving {spec.name} over the pooled corpus")
        pooled_run = own(
            spec.retriever(pooled_index, num_results=pool.size, verbose=verbose).transform(topics)
        )
        ks = _curve_ks(k_values, pool.num_docs) if curves else list(k_values)
        progress = bootstrap_bar if verbose else None
        options: dict[str, Any] = {
            "family": family,
            "bootstrap": bootstrap,
            "seed": seed,
            "progress": progress,
        }
        if cov is not None:
            corrected = evaluate_with_covariate(pooled_run, qrels, pool, cov, ks, **options)
        else:
            corrected = evaluate_on_pool(
                pooled_run, qrels, pool, ks, noise_correction=noise_correction, **options
            )
        truth = evaluate_inhouse(
            full_runs[spec.name], qrels, [f"{m}@{k}" for k in ks for m in ("R", "nDCG")], warn=False
        )
        results[spec.name] = {}
        per_query[spec.name] = {}
        for name in measure_names:
            agg = dict(corrected["aggregate"][name])
            qids = list(corrected["per_query"][name])
            full_pq = truth.per_query[name]
            agg["full"] = float(np.mean([full_pq.get(q, 0.0) for q in qids])) if qids else math.nan
            results[spec.name][name] = {k: agg[k] for k in ("pooled", "sdm", "full", "sdm_ci") if k in agg}
            per_query[spec.name][name] = {
                q: {**v, "full": float(full_pq.get(q, 0.0))} for q, v in corrected["per_query"][name].items()
            }
        curve_out[spec.name] = {}
        for metric in ("R", "nDCG"):
            rows: dict[str, list] = {"k": ks, "pooled": [], "sdm": [], "full": []}
            if bootstrap:
                rows["sdm_low"], rows["sdm_high"] = [], []
            for k in ks:
                name = f"{metric}@{k}"
                qids = list(corrected["per_query"][name])
                rows["pooled"].append(corrected["aggregate"][name]["pooled"])
                rows["sdm"].append(corrected["aggregate"][name]["sdm"])
                if bootstrap:
                    rows["sdm_low"].append(corrected["aggregate"][name]["sdm_ci"][0])
                    rows["sdm_high"].append(corrected["aggregate"][name]["sdm_ci"][1])
                rows["full"].append(float(np.mean([truth.per_query[name].get(q, 0.0) for q in qids])))
            curve_out[spec.name][metric] = rows
        samples[spec.name] = background_from_run(pooled_run, pool)
        # with a covariate, the whole sample's fits: what the figures show of the background
        models[spec.name] = corrected.get("models") or {
            q: sample.fit(family) for q, sample in samples[spec.name].items()
        }
    config = {
        "dataset": dataset_name,
        "systems": {s.name: s.spec for s in specs},
        "pool_runs": [s.name for s in pool_specs],
        "pool_depth": depth,
        "sample": sample,
        "tail_sample": tail_samples,
        "tail_depth": depths if tail else None,
        "tail_size": pool.tail_size,
        "pool_fraction": pool.fraction,
        "seed": seed,
        "family": family,
        "covariate": pool_specs[0].name if covariate else None,
        "covariate_features": ["matched query terms"] if covariate == "terms" else [],
        "noise_correction": bool(noise_correction),
        "k": list(k_values),
        "bootstrap": bootstrap,
        "num_results": full_depth,
        "num_docs": pool.num_docs,
        "pool_size": pool.size,
        "n_unseen": pool.n_unseen,
        "pool_fingerprint": pool.fingerprint,
        "queries": int(len(topics)),
        "topic_field": topics.attrs.get("topic_field"),
    }
    return ThreeWay(results, per_query, config, pool, models, samples, curve_out)
