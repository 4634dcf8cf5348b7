"""``sparse-eval sdm``: pooled vs SDM-corrected vs full-corpus R@k and nDCG@k on a pooled corpus."""

from __future__ import annotations

import argparse
from typing import Any

from .. import datasets, plots
from .. import sdm as api
from ..console import EXIT_OK, UsageError
from ..files import check_destination
from ..systems import index_folder, parse_system
from .common import (
    DATASET_HELP,
    LANGUAGE_HELP,
    check_output,
    dataset_inputs,
    index_dir_option,
    outside_indexes,
    refuse_empty,
    topic_field_option,
    user_path,
    with_language,
    write,
)

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
    if args.family not in api.FAMILIES:
        raise UsageError(f"Unknown --family {args.family!r}; choose one of {', '.join(api.FAMILIES)}.")
    for option, given in (("--output", args.output), ("--plots", args.plots)):
        refuse_empty(given, option)
    if args.per_query and not args.output:
        raise UsageError("--per-query adds each query's values to the --output JSON: give --output too.")
    # or a pipe or a device (/dev/stdout); an input file (the qrels) is never written over
    cache = index_folder(args.index_dir, args.dataset)
    check_output(args.output, (".json",), dataset_inputs(args.dataset), cache)
    outside_indexes(args.plots, "--plots", cache)
    plots.check_folder(args.plots, option="--plots")
    # the indexes go into the dataset's folder of it (a read-only root may hold a writable one)
    check_destination(cache, option="--index-dir", folder=True)
    for option, value, least in (
        ("--pool-depth", args.pool_depth, 0),
        ("--sample", args.sample, 2),  # the background SDM fits per query
        ("--tail-sample", min(args.tail_sample or [0]), 0),
        ("--bootstrap", args.bootstrap, 0),
        ("--seed", args.seed, 0),
        ("--k", min(args.k or [1]), 1),  # a cut-off
        ("--num-results", 1 if args.num_results is None else args.num_results, 1),
    ):
        if value < least:
            raise UsageError(f"{option} must be >= {least}, got {value}.")
    if max(args.k or [1]) > 2**31 - 1:  # beyond a C int, which the full runs' measures refuse after the work
        raise UsageError(f"--k must be <= 2147483647, got {max(args.k)}.")
    if args.bootstrap == 1:  # one round: an interval of width 0
        raise UsageError("--bootstrap must be 0 (no intervals) or >= 2 rounds (e.g. 200), got 1.")
    # the checks of sdm.three_way that name its Python parameters, in the flags' words
    if args.noise_correction and args.family not in ("auto", "kde"):
        raise UsageError(
            f"--noise-correction corrects the kernel background's noise, which --family {args.family} does not "
            "estimate: use --family auto or kde, or drop --noise-correction."
        )
    if args.noise_correction and args.covariate:
        raise UsageError(
            "--noise-correction is not available with --covariate (the covariate's count has no variance "
            "estimate): drop one of them."
        )
    if args.tail_sample and len(args.tail_sample) != len(args.tail_depth or [100]):
        raise UsageError("Give one --tail-depth per --tail-sample (each tail band has a size and a depth).")
    if args.tail_depth and not any(args.tail_sample or []):
        raise UsageError(
            "--tail-depth bounds a tail band of the sample: give its size (above 0) with --tail-sample too."
        )
    if any(args.tail_sample or []) and args.family not in api.WEIGHTED_FAMILIES:
        raise UsageError(
            f"A stratified sample (--tail-sample) is fitted with --family {', '.join(api.WEIGHTED_FAMILIES)}; "
            f"not {args.family!r}."
        )
    ks = sorted(set(args.k or [10, 100, 1000]))
    systems = args.system or ["bm25"]
    # the analyzer's language said once, when every spec is known good
    notes: list[str] = []
    specs = with_language(args, systems + (args.pool_run or []), notes)
    for spec in specs:
        parse_system(spec)
    datasets.require_parts(args.dataset)  # before the notes: an irds: id without a part is a usage error
    for note in notes:
        print(note)
    report = api.three_way(
        args.dataset,
        specs[: len(systems)],
        pool_runs=specs[len(systems) :] or None,
        depth=args.pool_depth,
        sample=args.sample,
        tail_sample=args.tail_sample or 0,
        tail_depth=args.tail_depth,
        seed=args.seed,
        family=args.family,
        k_values=ks,
        index_dir=args.index_dir,
        topic_field=args.topic_field,
        num_results=args.num_results,
        bootstrap=args.bootstrap,
        covariate=args.covariate or False,
        noise_correction=args.noise_correction,
        curves=bool(args.plots),  # the metric-vs-k curves are drawn only
        verbose=not args.quiet,
    )
    print(report.table())
    if args.output:
        write(args.output, report.to_json(per_query=args.per_query), quiet=args.quiet)
    if args.plots:
        for path in plots.save_sdm_figures(report, args.plots):
            if not args.quiet:
                print(f"Wrote {path}")
    return EXIT_OK


def add_parser(command: Any) -> None:
    """The subcommand and its options (``command(name, help, example)`` makes a subparser)."""
    p = command("sdm", "pooled vs SDM-corrected vs full-corpus R@k and nDCG@k", SDM_EXAMPLE)
    p.add_argument("--dataset", required=True, help=DATASET_HELP)
    p.add_argument("--language", default=None, help=LANGUAGE_HELP)
    p.add_argument("--system", action="append", help="spec as for `experiment` (repeatable; default bm25)")
    p.add_argument(
        "--pool-run",
        action="append",
        help="system whose full-corpus run supplies distractors (repeatable; default: the first --system)",
    )
    p.add_argument("--pool-depth", type=int, default=20, help="distractors per query (default 20)")
    p.add_argument("--sample", type=int, default=1000, help="random background sample (>= 2, default 1000)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the background sample and of the bootstrap (default 0)"
    )
    p.add_argument(
        "--family", default="auto", help="background score family (default auto): " + ", ".join(api.FAMILIES)
    )
    p.add_argument("--k", type=int, action="append", help="cut-off (repeatable; default 10 100 1000)")
    p.add_argument(
        "--num-results",
        type=int,
        default=None,
        help="full-run depth (default: max k, depth, tail depth, 1000)",
    )
    p.add_argument("--tail-sample", type=int, action="append", help="sampled from a tail band (repeatable)")
    p.add_argument("--tail-depth", type=int, action="append", help="rank bounding a tail band (default 100)")
    p.add_argument("--bootstrap", type=int, default=0, help="bootstrap rounds for SDM confidence intervals")
    p.add_argument("--covariate", nargs="?", const="score", choices=("score", "terms"), help="see below")
    p.add_argument("--noise-correction", action="store_true", help="correct SDM for the fit's noise")
    index_dir_option(p)
    topic_field_option(p)
    p.add_argument("--output", default=None, type=user_path, help="write the report as JSON here")
    p.add_argument("--per-query", action="store_true", help="include per-query values in the JSON")
    p.add_argument("--plots", default=None, type=user_path, metavar="DIR", help="write PNG figures into DIR")
    p.add_argument("--quiet", action="store_true", help="print only the pool's summary and the results table")
    p.set_defaults(func=cmd_sdm)
