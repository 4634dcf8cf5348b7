"""numba, when installed: every compiled kernel of the package has a numpy/scipy twin with the same results.

numba itself is imported only by the modules that compile kernels (retrieval, indexing), when they are first
used, so importing the package stays fast. ``PSE_DISABLE_NUMBA=1`` hides numba (the tests use it to run the
fallbacks).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator

__all__ = ["HAVE_NUMBA", "available_backends", "numba_threads"]

HAVE_NUMBA = not os.environ.get("PSE_DISABLE_NUMBA") and importlib.util.find_spec("numba") is not None


def available_backends() -> tuple[str, ...]:
    """Retrieval backends usable here, preferred first."""
    return ("numba", "scipy") if HAVE_NUMBA else ("scipy",)


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
