"""Ctrl-C while the ``sparse-eval`` command starts: its imports take seconds, and a KeyboardInterrupt there had
printed Python's traceback, or, landing in a finalizer, been ignored (the command then ran to its end, exit 0).
Imported first by the package, with the standard library only: in the command's process, Ctrl-C says
``sparse-eval: interrupted`` and exits 130 (nothing is written before the command runs), until :func:`started`
hands Ctrl-C back to the command's own handling."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

__all__ = ["started"]


def _interrupted_at_start(signum: int, frame: Any) -> None:
    os.write(2, b"sparse-eval: interrupted\n")
    os._exit(130)


def started() -> None:
    """The command runs: Ctrl-C is a KeyboardInterrupt again, which it reports (and its builds clean up after)."""
    if signal.getsignal(signal.SIGINT) is _interrupted_at_start:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if (
    sys.argv
    and os.path.basename(sys.argv[0]) == "sparse-eval"
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
):
    signal.signal(signal.SIGINT, _interrupted_at_start)
