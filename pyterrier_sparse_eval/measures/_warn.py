"""Warnings of the measures: pointing at the user's line, and given once for the run and qrels that each measure of
an evaluation prepares in turn."""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["each_once", "user_stacklevel", "warn_once"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _inner_dirs() -> tuple[str, ...]:
    """The package's folder, and those of the libraries that call its measures (ir_measures, PyTerrier) if loaded."""
    found = [_PACKAGE_DIR]
    for name in ("ir_measures", "pyterrier"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path:
            found.append(os.path.dirname(os.path.abspath(path)))
    return tuple(d + os.sep for d in found)


def user_stacklevel() -> int:
    """The ``stacklevel`` of a warning raised here that points at the first caller outside the package and the
    libraries that call its measures (the user's line, e.g. their ``pt.Experiment(...)``), however deep the calls."""
    level, frame, inner = 1, sys._getframe(1), _inner_dirs()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inner):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    return level


#: the last warnings given: (message, weak references to the objects they were given for)
_RECENT: deque[tuple[str, tuple[weakref.ref[Any], ...]]] = deque(maxlen=32)


_SCOPE = threading.local()  # .said: the messages given within each_once(), if within it


@contextmanager
def each_once() -> Iterator[None]:
    """Within it, each message of :func:`warn_once` is given once, whatever it is given for (``pse.evaluate``
    prepares its run and qrels once per relevance threshold)."""
    outer = getattr(_SCOPE, "said", None)
    _SCOPE.said = set() if outer is None else outer
    try:
        yield
    finally:
        _SCOPE.said = outer


def warn_once(message: str, given: tuple[Any, ...] | None) -> None:
    """Warn (a UserWarning pointing at the user's line) unless ``message`` was just given for the same objects
    ``given`` (a run and qrels, each measure of ``pt.Experiment`` preparing them in turn: once, not once per measure)
    or within the same :func:`each_once`. Without either, or for objects that take no weak reference (dicts), each
    time."""
    said = getattr(_SCOPE, "said", None)
    if said is not None:
        if message in said:
            return
        said.add(message)
    if given is None:
        warnings.warn(message, stacklevel=user_stacklevel())
        return
    for said, refs in _RECENT:
        if said == message and len(refs) == len(given) and all(r() is g for r, g in zip(refs, given)):
            return
    try:
        _RECENT.append((message, tuple(weakref.ref(g) for g in given)))
    except TypeError:
        pass
    warnings.warn(message, stacklevel=user_stacklevel())
