"""What the command line shows its user: one line per error, and no chatter from the libraries it drives.

Public so that other front ends (scripts, services) can keep the same contract.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ._startup import started

__all__ = [
    "EXIT_OK",
    "EXIT_CHECK_FAILED",
    "EXIT_USAGE",
    "EXIT_INTERNAL",
    "OFFLINE_HINT",
    "HF_OFFLINE_HINT",
    "OfflineError",
    "UsageError",
    "run",
    "looks_like_network",
    "ClusterUnreachable",
    "ClusterSetupError",
    "one_line",
    "library_logs",
    "progress_bars",
    "stopping",
]

#: the exit-code contract of every subcommand
EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class OfflineError(ConnectionError):
    """A collection's files are not in the local cache and could not be downloaded."""


class OfflineModeError(OfflineError, FileNotFoundError):
    """An :class:`OfflineError` because offline mode (``HF_HUB_OFFLINE``) keeps the hub from being asked: the files
    are not here (a ``FileNotFoundError`` too, as it was before it was an ``OfflineError``)."""


class ClusterSetupError(RuntimeError):
    """A Ray cluster that cannot do the work as it is set up (a node with another copy of the package or without
    it, workers or nodes lost beyond Ray's retries, a process connected to another cluster): an environment
    problem, exit status 2; the message names the fix."""


#: exceptions that mean bad input or a bad environment (exit 2), as opposed to a bug (exit 3)
INPUT_ERRORS: tuple[type[BaseException], ...] = (
    UsageError,
    ValueError,
    OSError,
    ImportError,
    ClusterSetupError,
)


def run(
    command: Callable[[], int],
    *,
    debug: bool = False,
    quiet: bool = False,
    prog: str = "sparse-eval",
    input_errors: tuple[type[BaseException], ...] = (),
) -> int:
    """Run a command under the exit-code contract: its own status on success; 2 and one line on stderr that
    names the fix for bad input (:data:`INPUT_ERRORS`, ``input_errors``, a failed download); 3 and one line
    for anything else (a bug); the traceback only with ``debug``. A closed stdout (``| head``) is not an
    error; ``quiet`` silences every progress bar."""
    started()  # Ctrl-C from here on is a KeyboardInterrupt, reported below
    try:
        with _terminated_as_exception(), progress_bars(shown=not quiet), library_logs():
            with _warnings_as_lines(prog, debug):
                return command()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{prog}: terminated", file=sys.stderr)
        return 143
    except Exception as e:
        if _caused_by(e, Terminated):  # raised inside a C call, which wrapped it (a SystemError)
            print(f"{prog}: terminated", file=sys.stderr)
            return 143
        if isinstance(e, BrokenPipeError) and _stdout_closed():
            # the reader of our output left (`| head`): not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_OK
        if debug:  # the traceback, then the same message and exit code as without --debug
            traceback.print_exc()
        # an OfflineError names the collection; any other failed download, the fixes
        if looks_like_network(e):
            print(
                f"{prog}: error: {one_line(e) if isinstance(e, OfflineError) else OFFLINE_HINT + '.'}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        if isinstance(e, INPUT_ERRORS + input_errors):
            print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
            return EXIT_USAGE
        print(
            f"{prog}: internal error: {type(e).__name__}: {one_line(e)} (a bug: rerun with --debug for the "
            "traceback, and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


class Terminated(BaseException):
    """SIGTERM (``kill``, ``timeout``, a batch scheduler's time limit, ``docker stop``) raised in the main thread,
    so that a command stops as on Ctrl-C: every build removes what it wrote, nothing half-written is left."""


@contextlib.contextmanager
def _terminated_as_exception() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Terminated()

    def swallowed(unraisable: Any) -> None:
        # the signal came while a finalizer (__del__) ran: Python prints its exception ("Exception ignored in") and
        # goes on, so the command would have run to its end; the signal is sent again, out of the finalizer
        kind = unraisable.exc_type
        if isinstance(kind, type) and issubclass(kind, (Terminated, KeyboardInterrupt)):
            again = signal.SIGTERM if issubclass(kind, Terminated) else signal.SIGINT
            threading.Timer(0.05, os.kill, (os.getpid(), again)).start()
        else:
            hook(unraisable)

    previous, hook = signal.signal(signal.SIGTERM, stop), sys.unraisablehook
    sys.unraisablehook = swallowed
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.unraisablehook = hook


def stopping(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C or SIGTERM, wherever it landed: one raised by a signal handler inside a C call
    reaches Python wrapped in another error (a SystemError "returned a result with an exception set")."""
    return not isinstance(error, Exception) or _caused_by(error, (KeyboardInterrupt, Terminated))


def _caused_by(error: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


#: the fix for an hf: collection whose hub could not be reached
HF_OFFLINE_HINT = (
    "the Hugging Face hub could not be reached (this machine may be offline): read hf: collections from a local "
    "copy with SPARSE_EVAL_HF_MIRROR (README, 'Collections'), or set HF_HUB_OFFLINE=1 to fail at once"
)
OFFLINE_HINT = (
    "a download was attempted and failed (this machine may be offline): point IR_DATASETS_HOME at a filled "
    "ir_datasets cache (README, 'Offline'), set HF_HUB_OFFLINE=1 with models given as local folders, and read "
    "hf: collections from a local copy with SPARSE_EVAL_HF_MIRROR (README, 'Collections')"
)


def _stdout_closed() -> bool:
    """Whether the reader of our standard output has gone (``| head`` exited): the pipe's write end then
    polls as an error. Other broken pipes are real failures."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLERR)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll here, or stdout is not a real file
        return False


#: names of exception classes (or of one of their bases) that mean a failed download or connection: requests
#: and urllib3, httpx and httpcore (any version: huggingface_hub raises httpx's), huggingface_hub's offline mode
_NETWORK_ERRORS = frozenset(
    {
        "ConnectionError",
        "MaxRetryError",
        "NameResolutionError",
        "NetworkError",
        "TransportError",
        "TimeoutException",
        "ConnectTimeout",
        "ProxyError",
        "OfflineModeIsEnabled",
        "LocalEntryNotFoundError",
    }
)


class ClusterUnreachable(ConnectionError):
    """A Ray cluster could not be reached: the message names the address and the fix (not a download)."""


def looks_like_network(error: BaseException) -> bool:
    """Whether an error (or one it was raised from) is a failed download or connection."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ClusterUnreachable):
            return False
        if isinstance(seen, socket.gaierror) or (
            not isinstance(seen, BrokenPipeError)
            and any(cls.__name__ in _NETWORK_ERRORS for cls in type(seen).__mro__)
        ):
            return True
        text = str(seen).lower()
        if "download" in text and ("fail" in text or "source" in text):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def one_line(error: BaseException) -> str:
    """An error's message on one line (a KeyError's without the quotes repr adds)."""
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    if isinstance(error, FileNotFoundError) and error.args and isinstance(error.args[0], os.PathLike):
        text = f"No such file or directory: {text}"  # a library's FileNotFoundError(Path): the path alone
    return " ".join(str(text).split()) or type(error).__name__


@contextlib.contextmanager
def _warnings_as_lines(prog: str, debug: bool) -> Iterator[None]:
    """A warning on the command line is one line, ``prog: warning: message``; libraries' deprecation notices
    (pandas' to pyterrier, ...) are not for the user of the command (with ``--debug``: all of them, in Python's
    form with the file and line they came from)."""
    with warnings.catch_warnings():
        if not debug:
            for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
                warnings.simplefilter("ignore", category)

            def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
                from tqdm import tqdm

                # above a progress bar that is running (tqdm clears and redraws it), not at the end of its line
                tqdm.write(f"{prog}: warning: {one_line(Warning(message))}", file=sys.stderr)

            warnings.showwarning = show
        yield


@contextlib.contextmanager
def library_logs() -> Iterator[None]:
    """ir_datasets logs every download retry and file it opens (each module on its own logger); the command
    line reports what matters in its own words, one line per error, so library log records below ERROR are
    dropped while a command runs. The ``datasets`` library logs an error before raising it (a data file it cannot
    read), which the command reports too: below CRITICAL its records are dropped as well (its import sets its level
    from DATASETS_VERBOSITY)."""
    previous = logging.root.manager.disable
    hub, verbosity = logging.getLogger("datasets"), os.environ.get("DATASETS_VERBOSITY")
    hub_level = hub.level
    logging.disable(logging.WARNING)
    hub.setLevel(logging.CRITICAL)
    os.environ["DATASETS_VERBOSITY"] = "critical"
    try:
        yield
    finally:
        logging.disable(previous)
        hub.setLevel(hub_level)
        if verbosity is None:
            os.environ.pop("DATASETS_VERBOSITY", None)
        else:
            os.environ["DATASETS_VERBOSITY"] = verbosity


@contextlib.contextmanager
def progress_bars(shown: bool) -> Iterator[None]:
    """With ``shown=False`` (--quiet): no progress bar from this package or the libraries it drives (tqdm,
    Hugging Face) while the command runs; everything is restored afterwards."""
    if shown:
        yield
        return
    import functools

    import tqdm
    import tqdm.auto

    classes = {tqdm.tqdm, tqdm.auto.tqdm}
    saved = {cls: cls.__dict__.get("__init__") for cls in classes}
    env = {k: os.environ.get(k) for k in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")}
    for cls in classes:
        cls.__init__ = functools.partialmethod(cls.__init__, disable=True)
    os.environ.update({"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"})
    try:
        yield
    finally:
        for cls, init in saved.items():
            if init is None:
                del cls.__init__
            else:
                cls.__init__ = init
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
