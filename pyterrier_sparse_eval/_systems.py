"""Retrieval systems described by short strings, as the command line takes them.

``bm25``, ``bm25:k1=1.2,b=0.75``, ``bm25:stemmer=english,stopwords=terrier``,
``splade:PATH_OR_HUB_ID``, ``splade:PATH_OR_HUB_ID,idf=true,doc_max_length=256``.
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

_KINDS = ("bm25", "splade")


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(text)


_BM25_PARAMS = {"k1": float, "b": float, "stemmer": str, "stopwords": str}
_SPLADE_PARAMS = {"idf": _bool, "doc_max_length": int, "query_max_length": int, "batch_size": int, "doc_top_k": int}
_PARAMS = {"bm25": _BM25_PARAMS, "splade": _SPLADE_PARAMS}


@dataclass
class SystemSpec:
    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    spec: str = ""
    model: str | None = None

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
        extra = "".join(f",{k}={v}" for k, v in self.params.items())
        return f"SPLADE({Path(str(self.model).rstrip('/')).name}{extra})"

    def splade(self) -> Any:
        from ._splade import Splade

        p = {k: v for k, v in self.params.items() if k != "idf"}
        return Splade(self.model, **p)

    def bm25(self) -> BM25:
        p = dict(self.params)
        for key in ("stemmer", "stopwords"):
            if p.get(key) in ("none", "None"):
                p[key] = None
        return BM25(**p)

    def index_name(self) -> str:
        if self.kind == "splade":
            sp = self.splade()
            return _slug(f"splade-{self.model}-{sp.doc_max_length}-{sp.doc_top_k}")
        bm25 = self.bm25()
        return f"bm25-k1={bm25.k1}-b={bm25.b}-{bm25.stemmer}-{bm25.stopwords}"

    def index(self, dataset: Any, dataset_id: str, index_dir: str | Path, *, verbose: bool) -> SparseIndex:
        """This system's full-corpus index of ``dataset``, built on first use and cached under ``index_dir``."""
        from .datasets import corpus_iter

        path = Path(index_dir) / _slug(dataset_id) / self.index_name()
        index = SparseIndex(path)
        if not index.built():
            encoder = self.bm25() if self.kind == "bm25" else self.splade()
            encoder.indexer(index, verbose=verbose).index(corpus_iter(dataset))
        elif verbose:
            print(f"Reusing index {path}")
        return index

    def retriever(self, index: SparseIndex, *, num_results: int, verbose: bool = False) -> pt.Transformer:
        """This system's retriever over ``index`` (a full index or a pooled subset of one)."""
        if self.kind == "splade":
            return self.splade().retriever(index, num_results=num_results, idf=bool(self.params.get("idf", False)),
                                           verbose=verbose)
        return self.bm25().retriever(index, num_results=num_results, verbose=verbose)

    def build(self, dataset: Any, dataset_id: str, index_dir: str | Path, *, num_results: int, verbose: bool) -> pt.Transformer:
        """The retriever for this system on ``dataset``, building (or reusing) its cached index."""
        index = self.index(dataset, dataset_id, index_dir, verbose=verbose)
        return self.retriever(index, num_results=num_results, verbose=verbose)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text.replace("irds:", "")).strip("_")


def parse_system(spec: str) -> SystemSpec:
    """Parse ``kind[:key=value,...]``; raises ValueError with the accepted forms."""
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind not in _KINDS:
        raise ValueError(
            f"Unknown system {spec!r}; use 'bm25', 'bm25:k1=1.2,b=0.75', 'splade:PATH_OR_HUB_ID' or "
            "'splade:PATH_OR_HUB_ID,idf=false'."
        )
    items = [p.strip() for p in rest.split(",") if p.strip()]
    model = None
    if kind == "splade":
        if not items or "=" in items[0]:
            raise ValueError(f"{spec!r}: name the SPLADE model, e.g. 'splade:naver/splade-cocondenser-ensembledistil'.")
        model = items.pop(0)
    allowed = _PARAMS[kind]
    params: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in allowed:
            example = "'bm25:k1=1.2,b=0.75'" if kind == "bm25" else "'splade:MODEL,idf=false'"
            raise ValueError(
                f"Bad system parameter {item!r} in {spec!r}; {kind} takes {', '.join(allowed)} as key=value, "
                f"e.g. {example}."
            )
        try:
            params[key] = allowed[key](value.strip())
        except ValueError:
            raise ValueError(f"Bad value for {key} in {spec!r}: {value!r}.") from None
    out = SystemSpec(kind, params, spec, model)
    if kind == "bm25":
        out.bm25()  # validates the values (k1 >= 0, 0 <= b <= 1, known stemmer)
    else:
        out.splade()  # validates lengths; loads nothing
    return out
