"""Retrieval systems described by short strings, as the command line takes them.

``bm25``, ``bm25:k1=1.2,b=0.75``, ``bm25:stemmer=english,stopwords=terrier``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyterrier as pt

from ._bm25 import BM25
from ._index import SparseIndex

__all__ = ["SystemSpec", "parse_system"]

_KINDS = ("bm25",)
_BM25_PARAMS = {"k1": float, "b": float, "stemmer": str, "stopwords": str}


@dataclass
class SystemSpec:
    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    spec: str = ""

    @property
    def name(self) -> str:
        """A readable name, e.g. ``BM25(k1=0.9,b=0.4)``."""
        if self.kind == "bm25":
            bm25 = self.bm25()
            extra = "".join(
                f",{k}={v}" for k, v in (("stemmer", bm25.stemmer), ("stopwords", bm25.stopwords))
                if v != BM25.__init__.__kwdefaults__[k]
            )
            return f"BM25(k1={bm25.k1},b={bm25.b}{extra})"
        raise AssertionError(self.kind)

    def bm25(self) -> BM25:
        p = dict(self.params)
        for key in ("stemmer", "stopwords"):
            if p.get(key) in ("none", "None"):
                p[key] = None
        return BM25(**p)

    def index_name(self) -> str:
        bm25 = self.bm25()
        return f"bm25-k1={bm25.k1}-b={bm25.b}-{bm25.stemmer}-{bm25.stopwords}"

    def build(self, dataset: Any, dataset_id: str, index_dir: str | Path, *, num_results: int, verbose: bool) -> pt.Transformer:
        """The retriever for this system on ``dataset``, building (or reusing) its cached index."""
        from .datasets import corpus_iter

        bm25 = self.bm25()
        path = Path(index_dir) / _slug(dataset_id) / self.index_name()
        index = SparseIndex(path)
        if not index.built():
            bm25.indexer(index, verbose=verbose).index(corpus_iter(dataset))
        elif verbose:
            print(f"Reusing index {path}")
        return bm25.retriever(index, num_results=num_results)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text.replace("irds:", "")).strip("_")


def parse_system(spec: str) -> SystemSpec:
    """Parse ``kind[:key=value,...]``; raises ValueError with the accepted forms."""
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind not in _KINDS:
        raise ValueError(f"Unknown system {spec!r}; use 'bm25' or 'bm25:k1=1.2,b=0.75'.")
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in _BM25_PARAMS:
            raise ValueError(
                f"Bad system parameter {item!r} in {spec!r}; bm25 takes {', '.join(_BM25_PARAMS)} as key=value, "
                "e.g. 'bm25:k1=1.2,b=0.75'."
            )
        try:
            params[key] = _BM25_PARAMS[key](value.strip())
        except ValueError:
            raise ValueError(f"Bad value for {key} in {spec!r}: {value!r}.") from None
    out = SystemSpec(kind, params, spec)
    out.bm25()  # validates the values (k1 >= 0, 0 <= b <= 1, known stemmer)
    return out
