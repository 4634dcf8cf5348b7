"""numba, when installed: every compiled kernel of the package has a numpy/scipy twin with the same results.

numba is imported only by the modules that compile kernels (retrieval, indexing), when they are first used,
so importing the package stays fast. A numba that is installed but does not import (e.g. built for another
NumPy) counts as absent: everything falls back to the numpy/scipy twins. ``PSE_DISABLE_NUMBA=1`` hides numba
(the tests use it to run the fallbacks).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator

__all__ = ["have_numba", "available_backends", "numba_threads"]


@functools.cache
def have_numba() -> bool:
    """Whether numba imports here (tried once)."""
    if os.environ.get("PSE_DISABLE_NUMBA"):
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def available_backends() -> tuple[str, ...]:
    """Retrieval backends usable here, preferred first."""
    return ("numba", "scipy") if have_numba() else ("scipy",)


@contextlib.contextmanager
def numba_threads(threads: int) -> Iterator[None]:
    """Run numba's parallel loops inside the block on ``threads`` threads (at most numba's configured number)."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    try:
        yield
    finally:
        numba.set_num_threads(previous)
