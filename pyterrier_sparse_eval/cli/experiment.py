"""``sparse-eval experiment``: index, retrieve and evaluate systems on a dataset with pt.Experiment."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import datasets, plots, run_experiment
from ..console import EXIT_OK, UsageError
from ..files import check_destination
from ..measures import inhouse, parse_measure
from ..systems import index_folder, name_systems, parse_system, resolve_baseline
from .common import (
    DATASET_HELP,
    DEFAULT_METRICS,
    LANGUAGE_HELP,
    check_output,
    dataset_inputs,
    index_dir_option,
    measures_named,
    outside_indexes,
    refuse_empty,
    topic_field_option,
    user_path,
    with_language,
    write,
)

EXPERIMENT_EXAMPLE = """\
example:
  sparse-eval experiment --dataset irds:beir/scifact/test \\
      --system bm25 --system "bm25:k1=1.2,b=0.75" \\
      --metric nDCG@10 --metric R@100 --baseline 0 --output results.json --plots plots/
  # SPLADE needs pyterrier-sparse-eval[splade]:
  sparse-eval experiment --dataset irds:beir/scifact/test --system bm25 \\
      --system splade:naver/splade-cocondenser-ensembledistil

Indexes are cached under --index-dir (one per corpus and system: the query sets of a
corpus share it) and reused on the next run.
Offline: set IR_DATASETS_HOME to a pre-filled ir_datasets cache.
"""


def _any_measures(names: list[str]) -> list[Any]:
    return [parse_measure(n) for n in names]


def _inhouse_twins(names: list[str]) -> list[Any]:
    try:
        return [inhouse(n) for n in names]
    except ValueError as e:  # in the flags' words: the standard measures compute it
        raise UsageError(str(e).replace("ir_measures / pt.Experiment", "--measures standard")) from None


def cmd_experiment(args: argparse.Namespace) -> int:
    files = [args.corpus, args.topics, args.qrels]
    if bool(args.dataset) == any(files) or (any(files) and not all(files)):
        raise UsageError("Give --dataset, or --corpus, --topics and --qrels together (local files).")
    if commas := [f"--{o} {f}" for o, f in zip(("corpus", "topics", "qrels"), files) if f and "," in f]:
        raise UsageError(
            f"{commas[0]}: a path holding ',' cannot be read (files: specs separate paths by commas); rename the file or link it."
        )
    # absolute paths, so that the JSON's config names the files from any folder (as given where the current
    # folder's own path holds a comma)
    if not args.dataset:
        absolute = [str(Path(f).expanduser().absolute()) for f in files]
        args.dataset = "files:" + ",".join(a if "," not in a else f for a, f in zip(absolute, files))
    import pandas as pd

    notes: list[str] = []
    specs = with_language(args, args.system or ["bm25"], notes)
    systems = [parse_system(s) for s in specs]
    measures = measures_named(args.metric, _inhouse_twins if args.measures == "in-house" else _any_measures)
    try:
        names = name_systems(systems)
    except ValueError as e:
        raise UsageError(str(e)) from None
    baseline = resolve_baseline(args.baseline, names)
    # a pipe or a device (/dev/stdout) gets JSON; an input file (the qrels) is never written over
    cache = index_folder(args.index_dir, args.dataset)
    check_output(args.output, (".json", ".csv"), dataset_inputs(args.dataset), cache)
    if args.plots and len(systems) < 2:  # it had run to the end to draw nothing
        raise UsageError("--plots draws per-query comparisons of two systems or more: give another --system.")
    for option, given in (("--plots", args.plots), ("--save-runs", args.save_runs)):
        refuse_empty(given, option)
        outside_indexes(given, option, cache)
    plots.check_folder(args.plots, option="--plots")
    check_destination(args.save_runs, option="--save-runs", folder=True)
    if args.num_results < 1:
        raise UsageError(f"--num-results must be a positive number of documents, got {args.num_results}.")
    if args.shards is not None and args.shards < 1:
        raise UsageError(f"--shards must be a positive number of shards, got {args.shards}.")
    if args.engine == "ray" and args.shards is None:
        raise UsageError("--engine ray builds and searches shards: give --shards N too.")
    if args.ray_address is not None and not args.ray_address.strip():
        raise UsageError(
            "--ray-address is empty: give the head node's address (host:port; `ray status` on the head node prints "
            "it), or leave the option out to use RAY_ADDRESS or start Ray on this machine."
        )
    if args.ray_address and args.engine != "ray":
        raise UsageError(
            "--ray-address is the cluster of --engine ray: give --engine ray (and --shards N) too."
        )
    # the indexes go into the dataset's folder of it (a read-only root may hold a writable one); a cache that holds
    # every index already is only read (a shared cache on a read-only mount serves)
    if not all(s.cached(args.index_dir, args.dataset, shards=args.shards) for s in systems):
        check_destination(cache, option="--index-dir", folder=True)
    verbose = not args.quiet
    # an unknown id, or an irds: one without a part, fails here, before any work; loading reads nothing
    datasets.load_dataset(args.dataset)
    datasets.require_parts(args.dataset)
    for note in notes:
        print(note)
    result = run_experiment(
        args.dataset,
        systems,
        measures,
        num_results=args.num_results,
        index_dir=args.index_dir,
        baseline=baseline,
        topic_field=args.topic_field,
        perquery=bool(args.plots) and len(systems) > 1,
        verbose=verbose,
        **{k: getattr(args, k) for k in ("shards", "engine", "ray_address", "save_runs")},
    )
    table = result.table
    measure_names = [str(m) for m in measures]
    with pd.option_context("display.width", 100, "display.max_columns", 20, "display.precision", 4):
        print(table.to_string(index=False))
    if args.output:
        if Path(args.output).suffix.lower() != ".csv":
            rows = table.to_dict("records")
            payload = {
                "results": {row["name"]: {m: float(row[m]) for m in measure_names} for row in rows},
                "significance": {
                    row["name"]: {
                        k: _jsonable(v) for k, v in row.items() if k not in measure_names and k != "name"
                    }
                    for row in rows
                }
                if baseline is not None
                else {},
                "config": {
                    "dataset": args.dataset,
                    "systems": {s.name: s.spec for s in systems},
                    "metrics": measure_names,
                    "measures": args.measures,
                    "num_results": args.num_results,
                    "queries": result.queries,
                    "topic_field": result.topic_field,
                    "baseline": None if baseline is None else names[baseline],
                },
            }
            write(args.output, payload, quiet=not verbose)
        else:
            write(args.output, table.to_csv(index=False), quiet=not verbose)
    if result.per_query is not None:
        reference = names[baseline if baseline is not None else 0]
        for path in plots.save_per_query_comparisons(
            result.per_query, names, reference, measure_names[0], args.plots
        ):
            if verbose:
                print(f"Wrote {path}")
    return EXIT_OK


def _jsonable(v: Any) -> Any:
    if v is None:  # pt.Experiment's significance cells of the baseline itself
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return None if f != f else f


def add_parser(command: Any) -> None:
    """The subcommand and its options (``command(name, help, example)`` makes a subparser)."""
    p = command(
        "experiment",
        "index, retrieve and evaluate systems on a dataset with pt.Experiment",
        EXPERIMENT_EXAMPLE,
    )
    p.add_argument("--dataset", help=DATASET_HELP)
    for option in ("--corpus", "--topics", "--qrels"):  # local files: the three parts of files:
        p.add_argument(
            option,
            default=None,
            type=user_path,
            help=f"instead of --dataset: the {option[2:]} file (with the other two)",
        )
    p.add_argument("--language", default=None, help=LANGUAGE_HELP)
    p.add_argument(
        "--system",
        action="append",
        help="bm25, 'bm25:k1=1.2,b=0.75', 'splade:PATH_OR_HUB_ID' or 'splade:PATH_OR_HUB_ID,idf=true' "
        "(repeatable; default bm25)",
    )
    p.add_argument(
        "--metric",
        action="append",
        help=f"ir_measures name (repeatable; default {' '.join(DEFAULT_METRICS)})",
    )
    p.add_argument(
        "--measures",
        choices=("standard", "in-house"),
        default="standard",
        help="compute the metrics with ir_measures' providers (standard, default) or in-house "
        "(pse.nDCG@10 ...; trec_eval-exact, faster)",
    )
    p.add_argument(
        "--num-results", type=int, default=1000, help="documents retrieved per query (default 1000)"
    )
    index_dir_option(p)
    topic_field_option(p)
    p.add_argument("--baseline", default=None, help="system index or name for significance tests")
    p.add_argument("--output", default=None, type=user_path, help="write results to a .json or .csv file")
    p.add_argument(
        "--plots",
        default=None,
        type=user_path,
        metavar="DIR",
        help="write per-query comparison PNGs into DIR",
    )
    p.add_argument("--quiet", action="store_true", help="print only the results table")
    p.add_argument("--shards", type=int, default=None, help="use N-shard indexes (exactly the same results)")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="where to index and search")
    p.add_argument(
        "--ray-address", default=None, help="Ray cluster to join (default RAY_ADDRESS, else local)"
    )
    p.add_argument(
        "--save-runs",
        default=None,
        type=user_path,
        metavar="DIR",
        help="write each system's TREC run into DIR",
    )
    p.set_defaults(func=cmd_experiment)
