"""``sparse-eval evaluate``, ``crosscheck`` and ``check-index``: a TREC run evaluated in-house or compared with
trec_eval's values, and an index verified."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from .. import ForeignFileError, IndexCorruptError, datasets, open_index
from ..console import EXIT_CHECK_FAILED, EXIT_OK, UsageError, one_line
from ..measures import crosscheck, evaluate
from .common import DEFAULT_METRICS, check_output, measures_named, user_path, write

EVALUATE_EXAMPLE = """\
example:
  sparse-eval evaluate --run bm25.run --qrels test.qrels \\
      --metric nDCG@10 --metric AP --per-query --output eval.json

Files are TREC format: runs "qid Q0 docno rank score tag", qrels "qid iteration docno label"
(or a BEIR TSV "query-id corpus-id score" with its header); plain or compressed (gzip, bzip2, xz),
or a pipe (--run /dev/stdin, --qrels <(zcat test.qrels.gz)). Labels are integers.
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


def _two_files(args: argparse.Namespace) -> None:
    """--run and --qrels name two files (standard input for both had been reported as a malformed qrels file)."""
    same = os.path.abspath(args.run) == os.path.abspath(args.qrels)
    # a link to the other file (a missing one is said where it is read)
    with contextlib.suppress(OSError):
        same = same or os.path.samefile(args.run, args.qrels)
    if same:
        raise UsageError(
            f"--run and --qrels are the same file ({args.run}): give the run and the qrels each its own."
        )


def cmd_evaluate(args: argparse.Namespace) -> int:
    _two_files(args)
    measures = measures_named(args.metric)
    check_output(args.output, (".json",), (args.run, args.qrels))
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
        write(args.output, result.to_json(per_query=args.per_query))
    if result.num_queries == 0:
        what = "every judged query counted as 0" if args.missing_as_zero else "nothing was evaluated"
        print(
            f"sparse-eval: {what}: no query of the run has judgments in the qrels (an empty run, or qrels of "
            "another split?)",
            file=sys.stderr,
        )
        return EXIT_CHECK_FAILED
    return EXIT_OK


def cmd_crosscheck(args: argparse.Namespace) -> int:
    _two_files(args)
    measures = measures_named(args.metric)
    check_output(args.output, (".json",), (args.run, args.qrels))
    report = crosscheck(datasets.read_run(args.run), datasets.read_qrels(args.qrels), measures)
    print(report.summary())
    if args.output:
        write(args.output, report.to_json())
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


CHECK_INDEX_EXAMPLE = """\
example:
  sparse-eval check-index indexes/vaswani/bm25-k1=0.9-b=0.4-porter-lucene-1a2b3c4d

Verifies every file (every shard's, for a sharded index) against the sizes and CRC-32s of its
build, and every invariant the search relies on. Exit status 0 for an intact index, 1 for a
damaged one (the message names the shard, file and problem), 2 when PATH is not an index.
"""


def cmd_check_index(args: argparse.Namespace) -> int:
    if not Path(args.path).exists():
        raise UsageError(f"{args.path} does not exist; give an index folder (e.g. one under --index-dir).")
    if not (Path(args.path) / "pt_meta.json").is_file():  # damaged metadata is a failed check, below
        raise UsageError(f"{args.path} is not a sparse index (no pt_meta.json); give an index folder.")
    index = open_index(args.path)  # a SparseIndex or a ShardedIndex, as its pt_meta.json says
    try:
        meta = index.verify()
    except IndexCorruptError as e:
        # a foreign file's message names its fix (move it out): a command reuses such an entry as it is
        fix = (
            ""
            if isinstance(e, ForeignFileError)
            else " (from the command line: sparse-eval experiment rebuilds a damaged cache entry, saying why)"
        )
        print(f"sparse-eval: check failed: {one_line(e)}{fix}", file=sys.stderr)
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
    p.add_argument(
        "--run", required=True, type=user_path, help="TREC run file (a pipe too: /dev/stdin, <(...))"
    )
    p.add_argument(
        "--qrels", required=True, type=user_path, help="qrels file: TREC, or BEIR TSV (with its header)"
    )
    p.add_argument(
        "--metric", action="append", help=f"measure (repeatable; default {' '.join(DEFAULT_METRICS)})"
    )
    return p


def add_parsers(command: Any) -> None:
    """The three subcommands and their options (``command(name, help, example)`` makes a subparser)."""
    p = _trec_file_parser(
        command, "evaluate", "evaluate a TREC run file in-house (trec_eval semantics)", EVALUATE_EXAMPLE
    )
    p.add_argument("--per-query", action="store_true", help="also report every query's value")
    p.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="count judged queries missing from the run as 0 (trec_eval -c)",
    )
    p.add_argument(
        "--output", default=None, type=user_path, help="write JSON: aggregate, per_query (--per-query), ..."
    )
    p.set_defaults(func=cmd_evaluate)

    p = _trec_file_parser(
        command,
        "crosscheck",
        "compare in-house values with trec_eval's (pytrec_eval), query by query",
        CROSSCHECK_EXAMPLE,
    )
    p.add_argument("--output", default=None, type=user_path, help="write the report as JSON here")
    p.set_defaults(func=cmd_crosscheck)

    p = command(
        "check-index", "verify an index: sizes, checksums and invariants of every file", CHECK_INDEX_EXAMPLE
    )
    p.add_argument("path", type=user_path, help="the index folder (a single or a sharded index)")
    p.set_defaults(func=cmd_check_index)
