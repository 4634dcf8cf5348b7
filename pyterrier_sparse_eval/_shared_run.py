"""What the SDM measures share on one run within one ir_measures evaluation (``pt.Experiment``'s), and the
warnings given once for it (see :class:`SharedRun`)."""

from __future__ import annotations

import re
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import pandas as pd

__all__ = ["SharedRun", "ir_measures_evaluator"]


class SharedRun(threading.local):
    """What the SDM measures share on one run within one ir_measures evaluation (``pt.Experiment``'s): its
    evaluator hands each measure its own sorted copy of the run in turn, so the run is prepared and its
    backgrounds fitted once, not once per measure, and each of SDM's warnings about it is given once (up to its
    numbers: the cut-off it names), not once per measure. Held by weak reference to that copy (freed with it),
    per thread. Called otherwise (``runtime_impl`` on a frame of one's own, which one may change between calls),
    every call evaluates afresh."""

    def __init__(self) -> None:
        self._run: Any = None
        self._views: dict[tuple[Any, ...], tuple[int, tuple[Any, ...], Any]] = {}
        self._warned: set[tuple[type, str]] = set()

    def view(self, run: Any, shared: bool, uses: tuple[Any, ...], width: int, make: Callable[[], Any]) -> Any:
        """``make()`` for this run and the objects it ``uses`` (compared by identity), again only for a wider
        ``width``; ``shared``: called by ir_measures' evaluator, on its own copy of the run."""
        if not isinstance(run, pd.DataFrame) or not shared:
            self._clear()
            return make()
        if self._run is None or self._run() is not run:
            self._run, self._views, self._warned = weakref.ref(run, self._clear), {}, set()
        key = tuple(id(x) for x in uses)
        held = self._views.get(key)
        if held is not None and held[0] >= width and all(a is b for a, b in zip(held[1], uses)):
            return held[2]
        value = self.replayed(make)
        self._views[key] = (width, uses, value)
        return value

    def replayed(self, make: Callable[[], Any]) -> Any:
        """``make()``, its warnings given again as they were (from the module they were raised for, with its
        registry, so the filters see them as before), each of the package's about the shared run once. One
        thread at a time: ``warnings.catch_warnings`` changes the filters of the whole process."""
        seen: list[warnings.WarningMessage] = []
        with _RECORDING:
            try:
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    return make()
            finally:
                for w in seen:
                    if w.category is UserWarning and self._run is not None:
                        kind = (w.category, re.sub(r"\d+", "#", str(w.message)))
                        if kind in self._warned:
                            continue
                        self._warned.add(kind)
                    module = _module_of(w.filename)
                    # module= only when found: explicit None is what warn_explicit gets at shutdown, and drops the
                    # warning (a notebook cell, `python -c`: no module's file)
                    where = {} if module is None else {"module": module.__name__}
                    if module is not None:
                        where["registry"] = module.__dict__.setdefault("__warningregistry__", {})
                    warnings.warn_explicit(
                        w.message, w.category, w.filename, w.lineno, source=w.source, **where
                    )

    def _clear(self, ref: Any = None) -> None:
        if ref is None or ref is self._run:  # not a run replaced since
            self._run, self._views, self._warned = None, {}, set()


_RECORDING = threading.RLock()


def _module_of(filename: str) -> Any:
    """The loaded module whose file ``filename`` is (None: a script's or a notebook cell's)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None


def ir_measures_evaluator() -> Any:
    """ir_measures' runtime evaluator when it calls this (its loop over its ``measures``, on its own sorted copy of
    the run), else None."""
    frame = sys._getframe(1)
    for _ in range(8):
        if frame is None:
            return None
        if frame.f_code.co_name == "_iter_calc" and "ir_measures" in frame.f_code.co_filename:
            return frame.f_locals.get("self")
        frame = frame.f_back  # type: ignore[assignment]
    return None
