"""Experiments: ``pse.Experiment`` (``pt.Experiment`` with a cross-check and per-query values next to a
baseline) and :func:`run_experiment`, the whole pipeline on a dataset that ``sparse-eval experiment`` runs."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt

from . import datasets, files
from ._identical import ignores_identical_ids, ignoring_identical_ids
from ._trec_files import refuse_spaced, trec_run_text
from .files import slug
from .measures import crosscheck as _crosscheck
from .measures import inhouse, parse_measure, parse_measures
from .measures._frames import check_gdeval, experiment_frames
from .systems import System, name_systems, systems_with_language

__all__ = ["Experiment", "ExperimentResult", "run_experiment"]


def _parse(measure: Any) -> Any:
    """Measure names as ir_measures (or this package, ``pse.nDCG@10``) spell them; trec_eval's names (``map``,
    ``ndcg_cut_10``) and ``mrt`` are left to pt, which reads them. Any other name gets this package's error, which
    names the fix ("did you mean 'pse.nDCG@10'?"), not pt's "unkonwn measure"."""
    try:
        return parse_measure(measure)
    except TypeError:
        # not a measure or a name: pt's to read
        return measure
    except ValueError:
        # a measure object with a cut-off or level trec_eval cannot take (nDCG@0 aborts the process) is refused
        if isinstance(measure, str) and (measure == "mrt" or _trec_name(measure)):
            return measure
        raise


#: options of the table's evaluation, not given to the per-query one: its significance tests and display, and
#: save_dir (the runs are saved by then, and pt would write aggregated.csv again without the table's tests)
_TABLE_ONLY = (
    "baseline",
    "test",
    "correction",
    "correction_alpha",
    "highlight",
    "save_dir",
    "save_mode",
)


def _trec_name(name: str) -> bool:
    """Whether pt.Experiment reads ``name`` as trec_eval's (or knows it as one ir_measures cannot compute, e.g.
    ``gm_map``, and says so itself)."""
    try:
        ir_measures.parse_trec_measure(name)
    except ValueError as e:
        return not str(e).startswith("unkonwn measure")  # (sic): ir_measures' message for an unknown name
    return True


def Experiment(  # noqa: N802 - mirrors pt.Experiment
    retr_systems: Sequence[Any],
    topics: pd.DataFrame,
    qrels: pd.DataFrame,
    eval_metrics: Sequence[Any],
    *,
    crosscheck: bool = False,
    names: Sequence[str] | None = None,
    **kwargs: Any,
) -> Any:
    """``pt.Experiment``, plus three things it cannot do.

    - ``crosscheck=True``: each system's run is also evaluated in-house and with pytrec_eval, query by query,
      for every measure both can compute; any disagreement raises an error that shows the differing queries.
    - ``perquery="both"`` together with ``baseline=``: returns ``(table with significance tests, per-query
      frame)`` (``pt.Experiment`` allows only one of the two). With or without a baseline, the table's means
      are those of ``perquery=False`` (pt's are NaN when a topic has no judgments) unless ``mrt`` is asked.

    - Two or more systems: the table is right (PyTerrier 1.1.2's ``pt.Experiment`` can put one system's means
      under another measure's column when a system retrieves nothing for any judged query, or for those of a
      first batch): with ``batch_size=`` and no baseline one system is evaluated a call; else the last system's
      run is computed here and checked (every run, when it retrieved nothing judged, with ``batch_size=`` and a
      baseline, or with ``save_dir``); not when ``mrt``, ``dataframe=False``, ``highlight=``, another
      ``save_format`` or ``precompute_prefix=True`` ask for pt.Experiment's own.

    In each case each system's run is computed once and shared: in batches of ``batch_size`` topics, and saved
    in ``save_dir`` as a TREC run (read back with ``save_mode="reuse"``), as pt.Experiment does. Measures may be given by name, in-house
    ones included (``"pse.nDCG@10"``). The table's columns follow the order the measures were given in
    (``pt.Experiment`` sorts them), each measure's significance columns after it; with ``highlight=`` the
    returned Styler keeps ``pt.Experiment``'s order.
    """
    if isinstance(retr_systems, dict):  # pt.Experiment's {name: system}, its baseline a name
        names = list(retr_systems) if names is None else names
        if isinstance(kwargs.get("baseline"), str):
            kwargs = {**kwargs, "baseline": list(retr_systems).index(kwargs["baseline"])}
        retr_systems = list(retr_systems.values())
    eval_metrics = [_parse(m) for m in eval_metrics]
    # pt's bare AssertionErrors
    if not len(retr_systems):
        raise ValueError("No system to evaluate: give a list of retrievers (or runs as frames).")
    if isinstance(baseline := kwargs.get("baseline"), (int, np.integer)) and not 0 <= baseline < len(
        retr_systems
    ):
        raise ValueError(
            f"baseline={baseline} names no system: give the position (0 to {len(retr_systems) - 1}) or the name of "
            "the system the others are tested against."
        )
    topics, qrels = experiment_frames(topics, qrels, retr_systems, eval_metrics, kwargs)
    both, timed = kwargs.get("perquery") == "both", "mrt" in map(str, eval_metrics)
    # pt's bare AssertionError
    if kwargs.get("perquery") not in (None, False, "both") and kwargs.get("baseline") is not None:
        raise ValueError(
            "perquery=True gives per-query values, without the significance tests against baseline=: give "
            "perquery='both' for both (a table with the tests, and the per-query frame)."
        )
    if both and timed and kwargs.get("baseline") is not None:
        raise ValueError(
            "perquery='both' with baseline= evaluates runs computed once, so mrt (pt.Experiment's timing of each "
            "system) cannot be measured there: ask for mrt in a call without perquery='both'."
        )
    # pt.Experiment (PyTerrier 1.1.2) can put a system's means under other measures' columns (see _table): the
    # runs of several systems are computed here and evaluated as frames, unless what is asked needs pt's own;
    # with perquery="both" it averages per-query values in which a topic without judgments is NaN (every mean
    # NaN), and with highlight= fails: its table made here too, but with the mean response time (mrt, pt's own)
    guarded = (
        len(retr_systems) > 1 and kwargs.get("perquery") is not True and _guardable(eval_metrics, kwargs)
    )
    if not crosscheck and not (both and not timed) and not guarded:
        out = pt.Experiment(retr_systems, topics, qrels, eval_metrics, names=names, **kwargs)
        if kwargs.get("perquery") == "both":
            return _in_order(out[0], eval_metrics), out[1]
        return out if kwargs.get("perquery") else _in_order(out, eval_metrics)
    names = (
        list(names)
        if names is not None
        else [str(s) if not isinstance(s, pd.DataFrame) else f"run{i}" for i, s in enumerate(retr_systems)]
    )
    if not crosscheck and not both and kwargs.get("save_dir") is None:
        table = _bounded_table(list(retr_systems), topics, qrels, eval_metrics, names, kwargs)
        if table is not None:
            return _in_order(table, eval_metrics)
    runs = _runs(retr_systems, topics, names, kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k != "batch_size"}  # the runs are frames: evaluated whole
    if kwargs.get("save_dir") is not None:  # each run is in save_dir now: pt.Experiment reads it, not again
        kwargs = {**kwargs, "save_mode": "reuse"}
    if crosscheck:
        checkable: list[Any] = []
        for m in eval_metrics:
            try:  # computed in-house, and by trec_eval (Judged@k, nDCG with exponential gain are not)
                checkable.extend(c for c in parse_measures([m]) if inhouse(c).trec_eval() is not None)
            except (ValueError, TypeError):  # not computed in-house: nothing to compare
                continue
        # the topics' judgments, matched as text so that qid types that differ reach the cross-check's own error
        judged = qrels[qrels["qid"].astype(str).isin(set(topics["qid"].astype(str)))]
        for name, run in zip(names, runs if checkable else []):  # nothing in-house asked: nothing to compare
            report = _crosscheck(run, judged, checkable)
            if not report.compared:
                raise ValueError(
                    f"crosscheck=True compared nothing for {name}: no query of its run has judgments (an empty "
                    "run, or qrels of another split?)."
                )
            if not report.ok:
                raise AssertionError(f"In-house and trec_eval values differ for {name}:\n{report.summary()}")
        if not checkable:
            warnings.warn(
                "crosscheck=True, but no requested measure is computed both in-house and by trec_eval (Judged@k "
                "and nDCG with exponential gain are not): nothing was compared.",
                stacklevel=2,
            )
    if not both:
        if kwargs.get("perquery"):
            return pt.Experiment(runs, topics, qrels, eval_metrics, names=names, **kwargs)
        return _in_order(_table(runs, topics, qrels, eval_metrics, names, kwargs), eval_metrics)
    table_kwargs = {k: v for k, v in kwargs.items() if k != "perquery"}
    table = _in_order(_table(runs, topics, qrels, eval_metrics, names, table_kwargs), eval_metrics)
    query_kwargs = {k: v for k, v in table_kwargs.items() if k not in _TABLE_ONLY}
    if isinstance(query_kwargs.get("round"), dict):  # per measure: pt rounds the table only
        del query_kwargs["round"]
    with warnings.catch_warnings():  # the table's evaluation of the same runs said it already
        warnings.filterwarnings("ignore", message=r"\d+ of \d+ judged queries have no results in the run")
        per_query = pt.Experiment(
            runs, topics, qrels, eval_metrics, names=names, perquery=True, **query_kwargs
        )
    return table, per_query


def _guardable(measures: list[Any], kwargs: dict[str, Any]) -> bool:
    """Whether a table can be made from runs computed here: not with the mean response time (``mrt``, pt's own
    timing), a styled or dict output, another save format or prefix precomputation."""
    return (
        "mrt" not in map(str, measures)
        and kwargs.get("dataframe", True) is True
        and not kwargs.get("highlight")
        and kwargs.get("save_format", "trec") == "trec"
        and not kwargs.get("precompute_prefix")
    )


def _bounded_table(
    systems: list[Any],
    topics: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: list[Any],
    names: list[str],
    kwargs: Any,
) -> pd.DataFrame | None:
    """The table without holding every system's run (see :func:`_table`), or None when it needs them all: in
    batches without a baseline, one system a call (each names its own columns; concatenated by name); unbatched,
    only the last system names the columns, so its run alone is computed here and checked."""
    if kwargs.get("batch_size") is not None:
        if kwargs.get("baseline") is not None:
            return None
        tables = [
            pt.Experiment([s], topics, qrels, measures, names=[n], **kwargs) for s, n in zip(systems, names)
        ]
        return pd.concat(tables, ignore_index=True)
    last = (
        systems[-1]
        if isinstance(systems[-1], pd.DataFrame)
        else _runs(systems[-1:], topics, names[-1:], {})[0]
    )
    if "qid" not in last.columns:  # nothing at all: pt.Experiment's own refusal
        return pt.Experiment(systems, topics, qrels, measures, names=names, **kwargs)
    if _nothing_judged(last, topics, qrels):
        return None  # another must be last (all runs computed)
    return pt.Experiment([*systems[:-1], last], topics, qrels, measures, names=names, **kwargs)


def _nothing_judged(run: pd.DataFrame, topics: pd.DataFrame, qrels: pd.DataFrame) -> bool:
    """Whether a run retrieves nothing for any judged query of the topics (its row is ir_measures' defaults)."""
    judged = set(qrels["qid"].astype(str)) & set(topics["qid"].astype(str))
    return not run["qid"].astype(str).isin(judged).any()


def _table(
    runs: list[Any],
    topics: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: list[Any],
    names: list[str],
    kwargs: Any,
) -> pd.DataFrame:
    """pt.Experiment's table of runs (frames). PyTerrier 1.1.2 names the columns by the last system's order of
    measures and fills each row in its own: a run with nothing for any judged query has the measures in another
    order (ir_measures' defaults, sorted by name) and, last, would misname every other row. Such a run (its row
    all 0) is not put last; the rows come back in the order given."""
    empty = [_nothing_judged(run, topics, qrels) for run in runs]
    if not empty[-1] or all(empty):
        return pt.Experiment(runs, topics, qrels, measures, names=names, **kwargs)
    last = max(i for i, e in enumerate(empty) if not e)
    order = [i for i in range(len(runs)) if i != last] + [last]
    if kwargs.get("baseline") is not None:
        kwargs = {**kwargs, "baseline": order.index(kwargs["baseline"])}
    table = pt.Experiment(
        [runs[i] for i in order], topics, qrels, measures, names=[names[i] for i in order], **kwargs
    )
    if not isinstance(table, pd.DataFrame):  # a dict by name (dataframe=False), a Styler (highlight=)
        return table
    return table.iloc[np.argsort(order)].reset_index(drop=True)  # by position: names may repeat


def _runs(
    systems: Sequence[Any], topics: pd.DataFrame, names: list[str], options: dict[str, Any]
) -> list[Any]:
    """Each system's run, computed once, as pt.Experiment would compute it: in batches of ``batch_size`` topics;
    with ``save_dir``, saved there as ``<name>.res.gz`` (a TREC run; a run given as a frame too, so that the file
    holds what is evaluated) or, with ``save_mode="reuse"``, read back from it (``"warn"``, pt's default, warns
    before writing over one, ``"error"`` refuses). Names and options are checked as pt.Experiment checks them,
    before any run."""
    save_dir, mode, size = (
        options.get("save_dir"),
        options.get("save_mode", "warn"),
        options.get("batch_size"),
    )
    if len(names) != len(systems):
        raise ValueError(f"{len(names)} names for {len(systems)} systems: give one name per system.")
    if save_dir is not None:
        from pyterrier.io import ok_filename

        if options.get("save_format", "trec") != "trec":
            raise ValueError(
                "pse.Experiment computes each run once for crosscheck=True or perquery='both' with baseline=, and "
                "saves it in save_dir as a TREC run file: leave save_format at 'trec' (or save the runs yourself)."
            )
        if mode not in ("warn", "error", "reuse", "overwrite"):
            raise ValueError(f"save_mode={mode!r}: give 'warn', 'error', 'reuse' or 'overwrite'.")
        if not Path(save_dir).is_dir():
            raise ValueError(
                f"save_dir={str(save_dir)!r} is not a folder: make it first (as pt.Experiment needs)."
            )
        if bad := [n for n in names if not ok_filename(n)]:
            raise ValueError(
                f"save_dir is set, but names {bad} hold characters a file name cannot: give names=."
            )
        if len(set(names)) < len(names):
            raise ValueError(
                "save_dir is set, but names are not unique: give names= with one name per system."
            )
    runs = []
    for name, system in zip(names, systems):
        path = None if save_dir is None else Path(save_dir) / f"{name}.res.gz"
        if path is not None and path.exists():
            if mode == "reuse":
                runs.append(pt.io.read_results(str(path)))
                continue
            if mode == "error":
                raise ValueError(f"save_dir holds {path} already: give save_mode='reuse' or 'overwrite'.")
            if mode == "warn":
                warnings.warn(
                    f"{path} exists and is written over: give save_mode='reuse' to read it instead.",
                    stacklevel=3,
                )
        if isinstance(system, pd.DataFrame):
            run = system
        else:  # a batch (or the topics) without a result is refused, as pt.Experiment refuses it
            step = size or max(len(topics), 1)
            parts = [system.transform(topics.iloc[i : i + step]) for i in range(0, len(topics), step)]
            if (empty := [i for i, part in enumerate(parts) if len(part) == 0]) and not size:
                raise ValueError(
                    f"No results received from {name} for any of the {len(topics)} topics: pt.Experiment refuses "
                    "a system that retrieves nothing. Check its index and the topics' query field."
                )
            if empty:
                batch = topics.iloc[empty[0] * step : (empty[0] + 1) * step]
                raise ValueError(
                    f"No results received from {name} for batch {empty[0] + 1} of {len(parts)} ({len(batch)} "
                    f"topics, qids {list(batch['qid'])[:5]}): pt.Experiment refuses a batch without results. "
                    "Give a larger batch_size=, or none (a query that retrieves nothing then counts as 0)."
                )
            run = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        if path is not None:  # a TREC run needs ranks: a frame without them gets them as pt would add them
            pt.io.write_results(run if "rank" in run.columns else pt.model.add_ranks(run.copy()), str(path))
        runs.append(run)
    return runs


def _in_order(table: Any, measures: Sequence[Any]) -> Any:
    """The table's columns in the order the measures were given, each followed by its significance columns."""
    if not isinstance(table, pd.DataFrame) or "name" not in table.columns:
        return table
    names = [str(m) for m in measures]
    grouped = [c for n in names for c in table.columns if c == n or c.startswith(f"{n} ")]
    rest = [c for c in table.columns if c != "name" and c not in grouped]
    return table[["name", *dict.fromkeys(grouped), *rest]]


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns: the ``pt.Experiment`` table, the per-query frame (when asked
    for), the number of evaluated queries and the topic field(s) used as the query."""

    table: pd.DataFrame
    per_query: pd.DataFrame | None
    queries: int
    topic_field: str | None = None


def run_experiment(
    dataset: str | Any,
    systems: Sequence[System],
    measures: Sequence[Any],
    *,
    num_results: int = 1000,
    index_dir: str | os.PathLike[str] = "indexes",
    baseline: int | None = None,
    topic_field: str | None = None,
    perquery: bool = False,
    verbose: bool = True,
    shards: int | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    save_runs: str | os.PathLike[str] | None = None,
) -> ExperimentResult:
    """Index (or reuse the cached indexes of) each system on a dataset, retrieve, and evaluate.

    ``dataset`` is a spec or a loaded dataset, read as given (``pse.hf.hf_dataset``'s ``columns=`` and
    ``configs=`` kept). Topics without judgments are dropped (with a warning that counts them); each system's
    index is cached under ``index_dir/<dataset spec>/<system>``. ``perquery=True`` also returns the per-query values of every
    measure (from the same runs). ``shards=N`` uses sharded indexes (built and searched with ``engine``,
    ``"local"`` or ``"ray"`` at ``ray_address``); ``save_runs=DIR`` writes each system's run as a TREC run file ``DIR/<name>.run``
    with the name reduced by :func:`~pyterrier_sparse_eval.files.slug` (``BM25(k1=0.9,b=0.4)`` writes
    ``BM25_k1=0.9_b=0.4.run``), written atomically, and evaluates those same runs. A measure whose cut-off is
    deeper than ``num_results`` (R@100 of 10 documents) is warned about, one without a cut-off (AP) below 1000;
    a BEIR dataset's retrievers take ``num_results + 1``, each query's own document left out (BEIR's evaluation).
    """
    if engine != "local" and shards is None:
        raise ValueError(f"engine={engine!r} builds and searches shards: give shards=N too.")
    if ray_address and engine != "ray":
        raise ValueError("ray_address= is the cluster of engine='ray': give engine='ray' (and shards=N) too.")
    if not systems or not measures:
        raise ValueError("Give at least one system and one measure, e.g. measures=['nDCG@10', 'R@100'].")
    if baseline is not None and not 0 <= baseline < len(systems):
        raise ValueError(f"baseline={baseline} is not a system index (0..{len(systems) - 1}).")
    _warn_cut_short(measures, num_results)
    systems = systems_with_language(systems, dataset, quiet=not verbose)  # the dataset's, as the command line
    dataset_name = datasets.dataset_spec(dataset)  # the index cache's folder is named by it
    names = name_systems(systems)  # distinct (two checkpoints in folders of one name), or refused as the same
    run_files = [Path(save_runs) / f"{slug(n)}.run" for n in names] if save_runs is not None else []
    if len(set(run_files)) < len(run_files):
        raise ValueError(
            f"Two systems would write the same run file in {save_runs}: give them distinct names."
        )
    files.check_destination(save_runs, option="save_runs=", folder=True)  # before any index is built
    if folders := [str(p) for p in run_files if p.is_dir()]:
        raise ValueError(f"save_runs={str(save_runs)!r}: {folders} are folders where run files would go.")
    ds = datasets.load_dataset(dataset)  # a loaded one as it is (pse.hf.hf_dataset's columns=, configs=, ...)
    datasets.require_documents(ds)  # before its topics are read (downloaded)
    topics = datasets.get_topics(ds, topic_field, verbose=verbose)
    qrels = datasets.get_qrels(ds)
    topics = datasets.judged_topics(dataset_name, topics, qrels)  # before any index is built
    check_gdeval([_parse(m) for m in measures], topics, qrels)
    extra: dict[str, Any] = {} if shards is None else {"engine": engine, "ray_address": ray_address}
    # ids a TREC run file cannot hold: the qids now, each index's docnos once it is ready (not after every build)
    if save_runs is not None:
        refuse_spaced(topics["qid"], "qid", "save_runs= (--save-runs)")
    # BEIR's: a query's own document is left out of one more result each (ArguAna's queries are documents)
    own = ignores_identical_ids(dataset)
    retrievers: list[Any] = []
    for s in systems:
        index = s.index(
            index_dir, dataset, lambda: datasets.corpus_iter(ds), verbose=verbose, shards=shards, **extra
        )
        if save_runs is not None:
            refuse_spaced(index.docnos, "docno", "save_runs= (--save-runs)")
        retrievers.append(s.retriever(index, num_results=num_results + own, verbose=verbose, **extra))
    retrievers = ignoring_identical_ids(retrievers, dataset, verbose, num_results)
    if save_runs is not None:
        retrievers = [r.transform(topics) for r in retrievers]
        if empty := [name for name, run in zip(names, retrievers) if not len(run)]:  # no file written
            raise _nothing_retrieved(len(topics), f"no results from {empty[0]}")
        for name, run, path in zip(names, retrievers, run_files):
            files.atomic_write_text(path, trec_run_text(run, name))
            if verbose:
                print(f"Wrote {path}")
    try:
        out = Experiment(
            retrievers,
            topics,
            qrels,
            measures,
            names=names,
            baseline=baseline,
            verbose=verbose,
            perquery="both" if perquery else False,
        )
    except ValueError as e:  # pyterrier's words for it: "but no results received", "no results in dataframe"
        if "no results" not in str(e):
            raise
        raise _nothing_retrieved(len(topics), str(e)) from None
    table, per_query = out if perquery else (out, None)
    return ExperimentResult(table, per_query, len(topics), topics.attrs.get("topic_field"))


def _nothing_retrieved(topics: int, why: str) -> ValueError:
    return ValueError(
        f"A system retrieved no document for any of the {topics} topics, so there is nothing to evaluate: its "
        f"index shares no term with the queries (is it this collection's, analysed in their language?); {why}"
    )


def _warn_cut_short(measures: Sequence[Any], num_results: int) -> None:
    """A warning naming the measures whose cut-off is deeper than the ``num_results`` documents retrieved per
    query: R@100 of 10 documents is R@10's value (``sdm.three_way``, whose full runs must give exact values,
    refuses this instead); and one naming those without a cut-off (AP, nDCG, RR) when ``num_results`` < 1000."""
    deeper, uncut = [], []
    for m in measures:
        try:
            measure = parse_measure(m) if isinstance(m, str) else m
            cutoff, cuttable = measure.params.get("cutoff"), "cutoff" in measure.SUPPORTED_PARAMS
        except (ValueError, AttributeError):  # an unknown name is refused when the measures are computed
            continue
        if isinstance(cutoff, (int, np.integer)) and cutoff > num_results:
            deeper.append((str(m), int(cutoff)))
        elif cutoff is None and cuttable and num_results < 1000:
            uncut.append(str(m))
    if uncut:  # AP of 100 documents is not the AP published figures give, of 1000
        warnings.warn(
            f"{', '.join(uncut)}: computed on the {num_results} documents retrieved per query (num_results, "
            "--num-results), as trec_eval computes them on the run it is given; published values of them usually "
            "retrieve 1000.",
            stacklevel=3,
        )
    if deeper:
        listed = ", ".join(name for name, _ in deeper)
        warnings.warn(
            f"num_results (--num-results) {num_results} is below the cut-off of {listed}: computed on the "
            f"{num_results} documents retrieved per query, not on as many as the cut-off names; raise num_results to "
            f"{max(k for _, k in deeper)} for their values.",
            stacklevel=3,
        )
