"""The ``sparse-eval`` command line (also ``python -m pyterrier_sparse_eval``).

Exit codes (every subcommand): 0 success; 1 a check failed (``crosscheck`` found a disagreement, or nothing could
be compared or evaluated); 2 bad usage or input, with one line on stderr that names the fix (unknown dataset,
measure or system spec, unreadable file, offline download, damaged index); 3 an internal error (a bug). Never a
traceback unless ``--debug``.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from . import (
    IndexCorruptError,
    StaleIndexError,
    __version__,
    datasets,
    open_index,
    plots,
    run_experiment,
    sdm,
)
from .console import EXIT_CHECK_FAILED, EXIT_OK, UsageError, one_line, run
from .files import atomic_write_text, check_destination
from .measures import crosscheck, evaluate, inhouse, parse_measure, parse_measures
from .systems import parse_system, resolve_baseline, specs_with_language

DEFAULT_METRICS = ["nDCG@10", "R@100", "AP", "RR"]

EXPERIMENT_EXAMPLE = """\
example:
  sparse-eval experiment --dataset irds:beir/scifact/test \\
      --system bm25 --system "bm25:k1=1.2,b=0.75" \\
      --metric nDCG@10 --metric R@100 --baseline 0 --output results.json --plots plots/
  # SPLADE needs pyterrier-sparse-eval[splade]:
  sparse-eval experiment --dataset irds:beir/scifact/test --system bm25 \\
      --system splade:naver/splade-cocondenser-ensembledistil

Indexes are cached under --index-dir (one per dataset and system) and reused on the next run.
Offline: set IR_DATASETS_HOME to a pre-filled ir_datasets cache.
"""


def _any_measures(names: list[str]) -> list[Any]:
    return [parse_measure(n) for n in names]


def _inhouse_twins(names: list[str]) -> list[Any]:
    return [inhouse(n) for n in names]


def _measures(names: list[str] | None, parse: Any = parse_measures) -> list[Any]:
    """Measures from names through one of the package's parsers (default: computable in-house, names kept)."""
    return list(parse(names or DEFAULT_METRICS))


def _write(path: str, text: str, quiet: bool = True) -> None:
    atomic_write_text(path, text)
    if not quiet:
        print(f"Wrote {path}")


def _with_language(args: argparse.Namespace, specs: list[str]) -> list[str]:
    try:
        return specs_with_language(specs, args.dataset, args.language, quiet=args.quiet)
    except ValueError as e:
        raise UsageError(str(e)) from None


_DATASET_HELP = (
    "irds:ID, beir:PATH[:SPLIT], files:CORPUS,TOPICS,QRELS, hf:miracl:LANG, hf:mmarco:LANG, hf:REPO"
)
_LANGUAGE_HELP = (
    "BM25 analyzer language (ISO 639-1, e.g. fr, zh); default: the dataset's declared one, else en"
)


def cmd_experiment(args: argparse.Namespace) -> int:
    files = [args.corpus, args.topics, args.qrels]
    if bool(args.dataset) == any(files) or (any(files) and not all(files)):
        raise UsageError("Give --dataset, or --corpus, --topics and --qrels together (local files).")
    args.dataset = args.dataset or "files:" + ",".join(files)
    import pandas as pd

    specs = _with_language(args, args.system or ["bm25"])
    systems = [parse_system(s) for s in specs]
    measures = _measures(args.metric, _inhouse_twins if args.measures == "in-house" else _any_measures)
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise UsageError(f"The same system is given twice: {names}.")
    baseline = resolve_baseline(args.baseline, names)
    if args.output and Path(args.output).suffix not in (".json", ".csv"):
        raise UsageError(f"--output must end in .json or .csv, got {args.output!r}.")
    check_destination(args.output, option="--output")
    plots.check_folder(args.plots, option="--plots")
    if args.num_results < 1:
        raise UsageError(f"--num-results must be a positive number of documents, got {args.num_results}.")
    if args.shards is not None and args.shards < 1:
        raise UsageError(f"--shards must be a positive number of shards, got {args.shards}.")
    if args.engine == "ray" and args.shards is None:
        raise UsageError("--engine ray builds and searches shards: give --shards N too.")
    check_destination(args.index_dir, option="--index-dir", folder=True)
    verbose = not args.quiet
    datasets.load_dataset(args.dataset)  # an unknown id fails here, before any work; loading reads nothing
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
        if Path(args.output).suffix == ".json":
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
                    "baseline": None if baseline is None else names[baseline],
                },
            }
            _write(args.output, json.dumps(payload, indent=2), quiet=not verbose)
        else:
            _write(args.output, table.to_csv(index=False), quiet=not verbose)
    if result.per_query is not None:
        reference = names[baseline if baseline is not None else 0]
        for path in plots.save_per_query_comparisons(
            result.per_query, names, reference, measure_names[0], args.plots
        ):
            if verbose:
                print(f"Wrote {path}")
    elif args.plots and verbose:
        print("--plots: per-query comparisons need at least two systems; nothing drawn.")
    return EXIT_OK


def _jsonable(v: Any) -> Any:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return None if f != f else f


EVALUATE_EXAMPLE = """\
example:
  sparse-eval evaluate --run bm25.run --qrels test.qrels \\
      --metric nDCG@10 --metric AP --per-query --output eval.json

Files are TREC format: runs "qid Q0 docno rank score tag", qrels "qid iteration docno label".
Documents are ranked by score, then docno (both descending), as trec_eval does; the rank
column is ignored. Exit status 1 when no query of the run has judgments.
"""

CROSSCHECK_EXAMPLE = """\
example:
  sparse-eval crosscheck --run bm25.run --qrels test.qrels \\
      --metric nDCG@10 --metric R@100 --metric AP

Exit status 0 when every measure agrees with trec_eval (pytrec_eval) within 1e-9 on every
query, 1 when one differs or when no query could be compared (no judged query in the run).
"""


def cmd_evaluate(args: argparse.Namespace) -> int:
    measures = _measures(args.metric)
    check_destination(args.output, option="--output")
    run, qrels = datasets.read_run(args.run), datasets.read_qrels(args.qrels)
    result = evaluate(run, qrels, measures, missing_as_zero=args.missing_as_zero)
    width = max(len(str(m)) for m in measures)
    for name, value in result.aggregate.items():
        print(f"{name:<{width}}  all  {value:.4f}")
    if args.per_query:
        for name, values in result.per_query.items():
            for qid, value in values.items():
                print(f"{name:<{width}}  {qid}  {value:.4f}")
    if result.missing:
        print(
            f"{len(result.missing)} judged queries have no results in the run"
            + (" (counted as 0)" if args.missing_as_zero else " (left out; --missing-as-zero counts them)"),
            file=sys.stderr,
        )
    if args.output:
        _write(args.output, json.dumps(result.to_json(per_query=args.per_query), indent=2))
    if result.num_queries == 0:
        print(
            "sparse-eval: nothing was evaluated: no query of the run has judgments in the qrels (an empty run, "
            "or qrels of another split?)",
            file=sys.stderr,
        )
        return EXIT_CHECK_FAILED
    return EXIT_OK


def cmd_crosscheck(args: argparse.Namespace) -> int:
    measures = _measures(args.metric)
    check_destination(args.output, option="--output")
    report = crosscheck(datasets.read_run(args.run), datasets.read_qrels(args.qrels), measures)
    print(report.summary())
    if args.output:
        _write(args.output, json.dumps(report.to_json(), indent=2))
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


SDM_EXAMPLE = """\
example:
  sparse-eval sdm --dataset irds:vaswani --system bm25 --system "bm25:k1=1.2,b=0.75" \\
      --pool-depth 10 --sample 1000 --k 10 --k 100 --k 1000 --output sdm.json --plots sdm-plots

Pools the corpus (relevant documents + the top --pool-depth non-relevant documents per
query of the --pool-run systems + --sample random background documents), evaluates every
system on the pool, corrects R@k and nDCG@k for the unseen documents by Score Distribution
Modeling, and compares both with the exact full-corpus values (--covariate: the unseen documents
the first --pool-run ranks high modelled from their scores; --covariate terms: and the terms held;
--noise-correction: each term corrected for the noise of the fitted background, for nDCG@k).
JSON: {"results": {system: {measure: {"pooled", "sdm", "full"}}}, "config": {...}}.
"""


def cmd_sdm(args: argparse.Namespace) -> int:
    if args.family not in sdm.FAMILIES:
        raise UsageError(f"Unknown --family {args.family!r}; choose one of {', '.join(sdm.FAMILIES)}.")
    if args.output and Path(args.output).suffix.lower() != ".json":
        raise UsageError(f"--output must end in .json, got {args.output!r}.")
    check_destination(args.output, option="--output")
    plots.check_folder(args.plots, option="--plots")
    check_destination(args.index_dir, option="--index-dir", folder=True)
    for option, value, least in (
        ("--pool-depth", args.pool_depth, 0),
        ("--sample", args.sample, 2),  # the background SDM fits per query
        ("--tail-sample", min(args.tail_sample or [0]), 0),
        ("--bootstrap", args.bootstrap, 0),
        ("--seed", args.seed, 0),
    ):
        if value < least:
            raise UsageError(f"{option} must be >= {least}, got {value}.")
    if args.tail_sample and len(args.tail_sample) != len(args.tail_depth or [100]):
        raise UsageError("Give one --tail-depth per --tail-sample (each tail band has a size and a depth).")
    if args.tail_depth and not args.tail_sample:
        raise UsageError(
            "--tail-depth bounds a tail band of the sample: give its size with --tail-sample too."
        )
    if any(args.tail_sample or []) and args.family not in sdm.WEIGHTED_FAMILIES:
        raise UsageError(
            f"A stratified sample (--tail-sample) is fitted with --family {', '.join(sdm.WEIGHTED_FAMILIES)}; "
            f"not {args.family!r}."
        )
    ks = sorted(set(args.k or [10, 100, 1000]))
    report = sdm.three_way(
        args.dataset,
        _with_language(args, args.system or ["bm25"]),
        pool_runs=_with_language(args, args.pool_run) if args.pool_run else None,
        depth=args.pool_depth,
        sample=args.sample,
        tail_sample=args.tail_sample or 0,
        tail_depth=args.tail_depth or 100,
        seed=args.seed,
        family=args.family,
        k_values=ks,
        index_dir=args.index_dir,
        num_results=args.num_results,
        bootstrap=args.bootstrap,
        covariate=args.covariate or False,
        noise_correction=args.noise_correction,
        verbose=not args.quiet,
    )
    print(report.table())
    if args.output:
        _write(args.output, json.dumps(report.to_json(per_query=args.per_query), indent=2), quiet=args.quiet)
    if args.plots:
        for path in plots.save_sdm_figures(report, args.plots):
            if not args.quiet:
                print(f"Wrote {path}")
    return EXIT_OK


CHECK_INDEX_EXAMPLE = """\
example:
  sparse-eval check-index indexes/vaswani/bm25-k1=0.9-b=0.4-porter-lucene-1a2b3c4d

Verifies every file (every shard's, for a sharded index) against the sizes and CRC-32s of its
build, and every invariant the search relies on. Exit status 0 for an intact index, 1 for a
damaged one (the message names the shard, file and problem), 2 when PATH is not an index.
"""


def cmd_check_index(args: argparse.Namespace) -> int:
    index = open_index(args.path)  # a SparseIndex or a ShardedIndex, as its pt_meta.json says
    if not (Path(args.path) / "pt_meta.json").is_file():  # damaged metadata is a failed check, below
        raise UsageError(f"{args.path} is not a sparse index (no pt_meta.json); give an index folder.")
    try:
        meta = index.verify()
    except IndexCorruptError as e:
        print(f"sparse-eval: check failed: {one_line(e)}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    shards = f"sharded, {meta['num_shards']} shards, " if "num_shards" in meta else ""  # a sharded index
    sealed = "" if "files" in meta or shards else " (built before files were sealed: no CRC-32s to compare)"
    print(
        f"{args.path}: intact{sealed}: {shards}{meta['num_docs']:,} documents, {meta['num_terms']:,} terms, "
        f"{meta['num_postings']:,} postings, build {meta.get('build_id', '(not recorded)')}"
    )
    return EXIT_OK


def _trec_file_parser(command: Any, name: str, help_text: str, example: str) -> argparse.ArgumentParser:
    """A subcommand reading a TREC run and qrels, with the shared --run/--qrels/--metric options."""
    p: argparse.ArgumentParser = command(name, help_text, example)
    p.add_argument("--run", required=True, help="TREC run file")
    p.add_argument("--qrels", required=True, help="TREC qrels file")
    p.add_argument(
        "--metric", action="append", help=f"measure (repeatable; default {' '.join(DEFAULT_METRICS)})"
    )
    return p


def _deprecated(name: str, replacement: str, fn: Any) -> Any:
    def shim(*args: Any) -> Any:
        warnings.warn(f"cli.{name} is deprecated; use {replacement}.", DeprecationWarning, stacklevel=2)
        return fn(*args)

    shim.__doc__ = f"Deprecated: use ``{replacement}``; removed in the next release."
    return shim


read_trec_run = _deprecated("read_trec_run", "pse.datasets.read_run", lambda p: datasets.read_run(p))
read_trec_qrels = _deprecated("read_trec_qrels", "pse.datasets.read_qrels", lambda p: datasets.read_qrels(p))
write_sdm_plots = _deprecated("write_sdm_plots", "pse.plots.save_sdm_figures", plots.save_sdm_figures)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparse-eval",
        description="Evaluate sparse retrieval (BM25, SPLADE) on ir_datasets collections with PyTerrier.",
        epilog="exit codes: 0 success, 1 a check failed, 2 bad usage or input, 3 internal error (a bug)",
    )
    parser.add_argument(
        "--version", action="version", version=f"sparse-eval (pyterrier-sparse-eval) {__version__}"
    )
    parser.add_argument(
        "--debug", action="store_true", dest="debug_all", help="show the traceback of an error"
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str, example: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            epilog=example,
            parents=[common],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = command(
        "experiment",
        "index, retrieve and evaluate systems on a dataset with pt.Experiment",
        EXPERIMENT_EXAMPLE,
    )
    p.add_argument("--dataset", help=_DATASET_HELP)
    for option in ("--corpus", "--topics", "--qrels"):  # local files: the three parts of files:
        p.add_argument(
            option, default=None, help=f"instead of --dataset: the {option[2:]} file (with the other two)"
        )
    p.add_argument("--language", default=None, help=_LANGUAGE_HELP)
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
    p.add_argument("--index-dir", default="indexes", help="where indexes are cached (default ./indexes)")
    p.add_argument(
        "--topic-field", default=None, help="topic field to use as the query (default: chosen and reported)"
    )
    p.add_argument("--baseline", default=None, help="system index or name for significance tests")
    p.add_argument("--output", default=None, help="write results to a .json or .csv file")
    p.add_argument("--plots", default=None, metavar="DIR", help="write per-query comparison PNGs into DIR")
    p.add_argument("--quiet", action="store_true", help="print only the results table")
    p.add_argument("--shards", type=int, default=None, help="use N-shard indexes (exactly the same results)")
    p.add_argument("--engine", choices=("local", "ray"), default="local", help="where to index and search")
    p.add_argument(
        "--ray-address", default=None, help="Ray cluster to join (default RAY_ADDRESS, else local)"
    )
    p.add_argument("--save-runs", default=None, metavar="DIR", help="write each system's TREC run into DIR")
    p.set_defaults(func=cmd_experiment)

    p = _trec_file_parser(
        command, "evaluate", "evaluate a TREC run file in-house (trec_eval semantics)", EVALUATE_EXAMPLE
    )
    p.add_argument("--per-query", action="store_true", help="also report every query's value")
    p.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="count judged queries missing from the run as 0 (trec_eval -c)",
    )
    p.add_argument("--output", default=None, help="write JSON: aggregate, per_query (--per-query), ...")
    p.set_defaults(func=cmd_evaluate)

    p = _trec_file_parser(
        command,
        "crosscheck",
        "compare in-house values with trec_eval's (pytrec_eval), query by query",
        CROSSCHECK_EXAMPLE,
    )
    p.add_argument("--output", default=None, help="write the report as JSON here")
    p.set_defaults(func=cmd_crosscheck)

    p = command(
        "check-index", "verify an index: sizes, checksums and invariants of every file", CHECK_INDEX_EXAMPLE
    )
    p.add_argument("path", help="the index folder (a single or a sharded index)")
    p.set_defaults(func=cmd_check_index)

    p = command("sdm", "pooled vs SDM-corrected vs full-corpus R@k and nDCG@k", SDM_EXAMPLE)
    p.add_argument("--dataset", required=True, help=_DATASET_HELP)
    p.add_argument("--language", default=None, help=_LANGUAGE_HELP)
    p.add_argument("--system", action="append", help="spec as for `experiment` (repeatable; default bm25)")
    p.add_argument(
        "--pool-run",
        action="append",
        help="system whose full-corpus run supplies distractors (repeatable; default: the first --system)",
    )
    p.add_argument("--pool-depth", type=int, default=20, help="distractors per query (default 20)")
    p.add_argument("--sample", type=int, default=1000, help="random background sample (>= 2, default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the background sample (default 0)")
    p.add_argument("--family", default="auto", help="background score family: " + ", ".join(sdm.FAMILIES))
    p.add_argument("--k", type=int, action="append", help="cut-off (repeatable; default 10 100 1000)")
    p.add_argument(
        "--num-results", type=int, default=None, help="full-run depth (default: max k, depth, 1000)"
    )
    p.add_argument("--tail-sample", type=int, action="append", help="sampled from a tail band (repeatable)")
    p.add_argument("--tail-depth", type=int, action="append", help="rank bounding a tail band (default 100)")
    p.add_argument("--bootstrap", type=int, default=0, help="bootstrap rounds for SDM confidence intervals")
    p.add_argument("--covariate", nargs="?", const="score", choices=("score", "terms"), help="see above")
    p.add_argument("--noise-correction", action="store_true", help="correct SDM for the fit's noise")
    p.add_argument("--index-dir", default="indexes", help="where indexes are cached (default ./indexes)")
    p.add_argument("--output", default=None, help="write the report as JSON here")
    p.add_argument("--per-query", action="store_true", help="include per-query values in the JSON")
    p.add_argument("--plots", default=None, metavar="DIR", help="write PNG figures into DIR")
    p.add_argument("--quiet", action="store_true", help="print only the results table")
    p.set_defaults(func=cmd_sdm)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    return run(
        lambda: int(args.func(args)),
        debug=args.debug or args.debug_all,
        quiet=getattr(args, "quiet", False),
        input_errors=(StaleIndexError, datasets.FieldError),
    )


if __name__ == "__main__":
    sys.exit(main())
