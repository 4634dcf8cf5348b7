"""numba, when installed: every compiled kernel of the package has a numpy/scipy twin with the same results.

numba is imported with the package (the kernels' modules ask :func:`have_numba` when imported); each kernel is
compiled when first called, not at import. A numba that is installed but does not import (e.g. built for another
NumPy) counts as absent: everything falls back to the numpy/scipy twins. ``PSE_DISABLE_NUMBA=1`` hides numba
(the tests use it to run the fallbacks).

Compiled kernels are cached on disk (``cache=True``). numba checks a cached kernel against the source of the file
that defines it only, yet kernels here inline functions of other modules (``_prune``'s kernels compile
``_blocks``' and ``_topk``'s functions into themselves): after a change to ``_topk.py`` alone (an edit, or an
upgrade that leaves the old ``__pycache__`` behind) ``_prune``'s cached kernels would still run the old code. So
the package's kernels are cached under one stamp, the hash of every module in :data:`KERNEL_MODULES`: a change to
any of them recompiles them all.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Iterator
from typing import Any

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
    _cache_kernels_together()
    return True


#: the modules whose functions numba compiles: the kernels' own and those whose plain functions they compile in
KERNEL_MODULES = (
    "_blocks.py",
    "_docnos.py",
    "_lucene.py",
    "_postings.py",
    "_prune.py",
    "_textscan.py",
    "_topk.py",
    "measures/_order.py",
)
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def kernels_stamp() -> bytes:
    """The hash of every module in :data:`KERNEL_MODULES` (the cache stamp of every kernel of the package)."""
    digest = hashlib.sha256()
    for name in KERNEL_MODULES:
        with open(os.path.join(_PACKAGE, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.digest()


def _cache_kernels_together() -> None:
    """Put a cache locator first in numba's list that gives the package's kernels :func:`kernels_stamp` as their
    source stamp (the cache directory stays numba's choice); other functions are left to numba's own locators.
    Without numba's internals as expected, numba's per-file stamps stay (a warning says so)."""
    try:
        from numba.core import caching

        impl: Any = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # type: ignore[attr-defined]
        base: Any = caching._CacheLocator
        classes = impl._locator_classes
    except (ImportError, AttributeError):
        import warnings

        warnings.warn(
            "This numba's cache internals differ from the ones expected: cached kernels are checked against their "
            "own file only. After changing a kernel module, delete pyterrier_sparse_eval's __pycache__/*.nbi files.",
            stacklevel=2,
        )
        return
    if any(getattr(c, "_pse_kernels", False) for c in classes):
        return

    class KernelsLocator(base):
        _pse_kernels = True

        def __init__(self, inner: Any):
            self._inner = inner

        def ensure_cache_path(self) -> None:
            self._inner.ensure_cache_path()

        def get_cache_path(self) -> str:
            return str(self._inner.get_cache_path())

        def get_source_stamp(self) -> bytes:
            return kernels_stamp()

        def get_disambiguator(self) -> str:
            return str(self._inner.get_disambiguator())

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if os.path.relpath(os.path.abspath(py_file), _PACKAGE).replace(os.sep, "/") not in KERNEL_MODULES:
                return None
            for other in classes:
                if other is not cls:
                    inner = other.from_function(py_func, py_file)
                    if inner is not None:
                        return cls(inner)
            return None

    classes.insert(0, KernelsLocator)


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
