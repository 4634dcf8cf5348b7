"""Shared helpers for the benchmark scripts: machine facts, medians, and writing BENCHMARKS.md sections."""

from __future__ import annotations

import argparse
import os
import platform
import re
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"


def exit_on_sigterm() -> None:
    """Make SIGTERM (``kill``, a scheduler's stop, a closed terminal's job control) end a benchmark as Ctrl-C does:
    by an exception, so its ``finally`` blocks and ``atexit`` cleanups run and no temporary corpus or index (GBs at
    1M documents) is left in /tmp. Python's default for SIGTERM ends the process at once, running neither. Every
    script importing this module gets it; a handler someone set already is kept."""
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    ):
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


exit_on_sigterm()


def machine_facts() -> str:
    import numpy
    import pandas
    import scipy

    facts = [
        f"{os.cpu_count()} cores",
        f"Python {platform.python_version()}",
        f"numpy {numpy.__version__}",
        f"scipy {scipy.__version__}",
        f"pandas {pandas.__version__}",
    ]
    try:
        import numba

        facts.append(f"numba {numba.__version__}")
    except ImportError:
        pass
    return ", ".join(facts)


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section between ``<!-- name -->`` markers in BENCHMARKS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = (
        BENCHMARKS_MD.read_text()
        if BENCHMARKS_MD.exists()
        else (
            "# Benchmarks\n\nWritten by the scripts in `benchmarks/`; each section names the command that made it.\n"
        )
    )
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    from pyterrier_sparse_eval.files import atomic_write_text

    # whole or not at all: an interrupt must not truncate the other sections
    atomic_write_text(BENCHMARKS_MD, text)


def publish(lines: list[str], section: str, title: str, write: bool) -> None:
    """Print a benchmark's report (its ``lines``) and, when ``write``, make it BENCHMARKS.md's section ``section``
    under the heading ``## {title} ({today})``."""
    text = "\n".join(lines) + "\n"
    print(text)
    if write:
        write_section(section, f"## {title} ({today()})\n\n" + text)


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (a count of runs, queries, documents), refused in the flag's words."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def size_list(text: str) -> list[int]:
    """An argparse type: comma-separated integers >= 1 (corpus sizes), e.g. ``100000,1000000``."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more integers >= 1, comma-separated")
    return values


def command_line() -> str:
    return "python " + " ".join([os.path.relpath(sys.argv[0], BENCHMARKS_MD.parent)] + sys.argv[1:])


def today() -> str:
    return time.strftime("%Y-%m-%d")


def module_at(revision: str, name: str) -> Any:
    """The package's module ``name`` (e.g. ``"_lucene"``) as it was at git ``revision``: its source run inside the
    package, so that its relative imports resolve, from a file of its own (numba's cache of its kernels needs
    one, removed at exit); the peer a benchmark measures this checkout against."""
    import atexit
    import shutil
    import subprocess
    import tempfile
    import types

    source = subprocess.run(
        ["git", "show", f"{revision}:pyterrier_sparse_eval/{name}.py"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix=f"bench-{revision}-")) / f"{name}_at_{revision}.py"
    atexit.register(shutil.rmtree, path.parent, True)
    path.write_text(source)
    module = types.ModuleType(f"pyterrier_sparse_eval.{name}_at_{revision}")
    module.__package__, module.__file__ = "pyterrier_sparse_eval", str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module
