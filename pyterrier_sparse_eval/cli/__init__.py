"""The ``sparse-eval`` command line (also ``python -m pyterrier_sparse_eval``).

Exit codes (every subcommand): 0 success; 1 a check failed (``crosscheck`` found a disagreement, or nothing could
be compared or evaluated); 2 bad usage or input, with one line on stderr that names the fix (unknown dataset,
measure or system spec, unreadable file, offline download, damaged index); 3 an internal error (a bug). Never a
traceback unless ``--debug``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings
from typing import Any, NoReturn

from .. import StaleIndexError, __version__, datasets, files, plots
from ..console import run
from . import checks, experiment, sdm
from .common import DEFAULT_METRICS

__all__ = ["DEFAULT_METRICS", "build_parser", "main"]


def _deprecated(name: str, replacement: str, fn: Any) -> Any:
    def shim(*args: Any) -> Any:
        warnings.warn(f"cli.{name} is deprecated; use {replacement}.", DeprecationWarning, stacklevel=2)
        return fn(*args)

    shim.__doc__ = f"Deprecated: use ``{replacement}``; removed in the next release."
    return shim


read_trec_run = _deprecated("read_trec_run", "pse.datasets.read_run", lambda p: datasets.read_run(p))
read_trec_qrels = _deprecated("read_trec_qrels", "pse.datasets.read_qrels", lambda p: datasets.read_qrels(p))
write_sdm_plots = _deprecated("write_sdm_plots", "pse.plots.save_sdm_figures", plots.save_sdm_figures)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors in one line on stderr (the exit-code contract) naming --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
    common = _Parser(add_help=False)
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

    experiment.add_parser(command)
    checks.add_parsers(command)
    sdm.add_parser(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's parser: its --help lists its options
        prog = f"{parser.prog} {args.command}"
        parser.exit(2, f"{prog}: error: unrecognized arguments: {' '.join(unknown)} (see {prog} --help)\n")
    # the JSON alone on stdout (--output /dev/stdout), the rest on stderr
    if getattr(args, "output", None) and _is_stdout(args.output):
        with contextlib.redirect_stdout(sys.stderr):
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    return run(
        lambda: _command(args),
        debug=args.debug or args.debug_all,
        quiet=getattr(args, "quiet", False),
        input_errors=(StaleIndexError, datasets.FieldError),
    )


def _command(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args))
    finally:
        # a build's temporary folder a signal left between its creation and the try that removes it on failure
        files.remove_unfinished()


def _is_stdout(path: str) -> bool:
    """Whether ``path`` (``--output``) is this process's standard output (``/dev/stdout``, a pipe or a file)."""
    try:
        given, out = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # not there; a stdout without a descriptor
        return False
    return (given.st_dev, given.st_ino) == (out.st_dev, out.st_ino)


if __name__ == "__main__":
    sys.exit(main())
