"""PyTerrier's parameter tools on the package's transformers: ``pt.inspect``'s attributes read under the ``__init__``
parameters' own names, and ``set_parameter`` (``pt.GridScan``'s) checked as ``__init__`` checks a value."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["InitAttributes"]


class InitAttributes:
    """Mixed in before ``pt.Transformer``. ``pt.inspect`` reads a parameter ``name`` from ``_name`` first, which is a
    method of some of these transformers (a retriever's ``_analyzer``): the attributes of :meth:`attributes` are
    those of the ``__init__`` parameters themselves, so that ``pt.inspect.transformer_apply_attributes`` (and
    PyTerrier's rank-cutoff fusion) makes the same transformer again."""

    #: the attribute holding an ``__init__`` parameter where it is not the parameter's name (an indexer's ``index``
    #: is its method: the index is ``index_ref``)
    ATTRIBUTE_OF: dict[str, str] = {}

    def attributes(self) -> list[Any]:
        """``pt.inspect``'s attributes: each ``__init__`` parameter, read from the attribute that holds it."""
        from pyterrier.inspect import TransformerAttribute

        params = list(inspect.signature(type(self).__init__).parameters.values())[1:]
        return [
            TransformerAttribute(
                p.name, getattr(self, self.ATTRIBUTE_OF.get(p.name, p.name)), p.default, p.kind
            )
            for p in params
            if not p.name.startswith("_")
        ]

    def __repr__(self) -> str:
        """The class and its arguments, those with a default only where they differ from it (``ties``,
        ``analyzer`` included); an index prints as its path (its handle's ``mmap``/``checks`` are not shown)."""
        parts = []
        for a in self.attributes():
            if a.init_parameter_kind == inspect.Parameter.VAR_KEYWORD:
                parts += [f"{k}={v!r}" for k, v in a.value.items()]
            elif a.init_default_value is inspect.Parameter.empty:
                parts.append(repr(a.value))
            elif not _same(a.value, a.init_default_value):
                parts.append(f"{a.name}={a.value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def set_parameter(self, name: str, value: Any) -> None:
        """``pt.GridScan``'s way to vary a setting: this transformer becomes the one ``__init__`` makes with it (a
        value ``__init__`` refuses is refused, and what depends on it is made again, a sharded retriever's shard
        retrievers); a retriever of the same index keeps serving the build it was made for."""
        import pyterrier as pt

        if not any(a.name == name for a in self.attributes()):
            return super().set_parameter(name, value)  # type: ignore[misc]  # PyTerrier's error, or an attribute
        fresh = pt.inspect.transformer_apply_attributes(self, **{name: value})  # type: ignore[arg-type]
        if getattr(fresh, "index", None) is getattr(self, "index", None) and "_build_id" in self.__dict__:
            fresh.__dict__["_build_id"] = self.__dict__["_build_id"]
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)


def _same(value: Any, default: Any) -> bool:
    try:
        return value is default or (type(value) is type(default) and bool(value == default))
    except Exception:  # an == that is not a truth value (an array)
        return False
