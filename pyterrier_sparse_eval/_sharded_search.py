"""ShardedRetriever: exact top k over a sharded index, each shard's top k merged into the single index's run."""

from __future__ import annotations

import inspect
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import numpy as np
import pandas as pd
import pyterrier as pt

from ._attributes import InitAttributes
from ._build import check_engine
from ._docnos import (
    concat_docnos,
    docno_values,
    merge_top_k,
    pick_docnos,
    result_frame,
    run_places,
    take_column,
    take_docnos,
)
from ._format import StaleIndexError
from ._records import validate_queries
from ._retriever import _OPTIONS, SparseRetriever, nudge_ties
from .measures._prepare import user_stacklevel

__all__ = ["ShardedRetriever"]


class ShardedRetriever(InitAttributes, pt.Transformer):
    """Exact top k over a :class:`ShardedIndex`: each shard's top k (a :class:`SparseRetriever` with the same
    arguments), merged by score and then the tie order (``ties``). Since every shard scores with the corpus's
    statistics, the merged run equals the run of a single index over the corpus: same documents, order, scores.
    """

    def __init__(
        self,
        index: Any,  # a ShardedIndex
        *,
        num_results: int = 1000,
        engine: str = "local",
        ray_address: str | None = None,
        **kwargs: Any,
    ):
        check_engine(engine, ray_address=ray_address)
        self.index = index
        self.num_results = num_results
        self.engine = engine
        self.ray_address = ray_address
        self.kwargs = kwargs
        # every shard checked now (present, complete, of this build); local retrievers analyse the queries
        self._parts = [SparseRetriever(s, num_results=num_results, **kwargs) for s in index.shards]
        self.ties = self._parts[0].ties
        self._searchers: Any = None
        self._build_id = index.build_id
        if engine == "ray":
            from ._ray_search import ShardSearchers

            n = index.num_shards
            shards = [  # absolute paths: the workers' working directory is not the driver's
                (os.path.abspath(s.directory), s.build_id, f"shard {i} of {n} ({s.directory})")
                for i, s in enumerate(index.shards)
            ]
            # the actors get query weights: the analyzer (and its memo) stays here
            remote = {k: v for k, v in kwargs.items() if k != "analyzer"}
            remote["index_options"] = {"mmap": index.mmap, "checks": index.checks}
            self._searchers = ShardSearchers(shards, {"num_results": num_results, **remote}, ray_address)

    def attributes(self) -> list[Any]:
        """``pt.inspect``'s attributes: the ``__init__`` parameters, with the shard retrievers' options (``ties``,
        ``idf``, ...) each its own, at :class:`SparseRetriever`'s default when not given (so that the repr names
        only those that differ, and ``pt.inspect.transformer_apply_attributes`` and ``set_parameter`` take them)."""
        from pyterrier.inspect import TransformerAttribute

        own = [a for a in super().attributes() if a.init_parameter_kind != inspect.Parameter.VAR_KEYWORD]
        options = [
            p
            for p in inspect.signature(SparseRetriever.__init__).parameters.values()
            if p.name in _OPTIONS and p.name != "num_results"
        ]
        return own + [
            TransformerAttribute(p.name, self.kwargs.get(p.name, p.default), p.default, p.KEYWORD_ONLY)
            for p in options
        ]

    def fuse_rank_cutoff(self, k: int) -> ShardedRetriever | None:
        """``retriever % k``: the same retriever returning ``min(k, num_results)`` documents, each shard's top k
        (on Ray: left to PyTerrier's cut, new shard actors not started for it)."""
        if k >= self.num_results:
            return self
        if self.engine != "local":
            return None
        cut = cast(ShardedRetriever, pt.inspect.transformer_apply_attributes(self, num_results=k))
        cut._build_id = self._build_id
        return cut

    def get_parameter(self, name: str) -> Any:
        """A setting, a shard retriever's option (``idf``, ``ties``) as its retrievers use it."""
        return getattr(self._parts[0], name) if name in _OPTIONS else super().get_parameter(name)

    def _search(self, weights: list[dict[str, float]]) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        """Each shard's top k for the queries: (query row, docnos (see take_docnos), float32 score)."""
        if self._searchers is not None:
            return self._searchers.search(weights)
        # the open-files limit raised for every shard's maps (the first search of an unpickled retriever; its shard
        # retrievers open their own handles: the index's shards are not opened, and checked, a second time)
        self.index.allow_maps()

        def one(part: SparseRetriever) -> tuple[np.ndarray, Any, np.ndarray]:
            part._check_build()
            r, d, s, _ = part.search_matrix(part.query_matrix(weights))
            return r, take_docnos(part.index, d), s.astype(np.float32)

        workers = min(len(self._parts), os.cpu_count() or 1)
        if workers == 1:
            return [one(p) for p in self._parts]
        # the kernels release the GIL: shards are searched in parallel threads (results in shard order)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, self._parts))

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        first = self._parts[0]
        validate_queries(inp, self)
        keep = [c for c in inp.columns if c not in ("docno", "docid", "score", "rank")]
        if len(inp) == 0:
            return first._empty(inp[keep])
        self.index.check_current()
        if self.index.build_id != self._build_id:
            raise StaleIndexError(
                f"The sharded index at {self.index.path} was rebuilt after this retriever was created; create a "
                "new retriever from it (e.g. index.retriever(...))."
            )
        if first.lucene_ and not first.idf:
            first.transform(inp)  # raises its explanation
        weights = first._query_weights(inp)  # queries analysed once, for every shard
        if self._searchers is not None:
            for part in self._parts:
                part._check_build()  # the driver's view: the shards the actors opened are of this build
        # the single index's rule: rows of the query matrix left empty (unknown terms, weights 0 in float32)
        empty = int((np.diff(first.query_matrix(weights).indptr) == 0).sum())
        if empty:  # the shards share one vocabulary: a query unknown to one is unknown to all
            warnings.warn(
                f"{empty} of {len(inp)} queries share no term (of non-zero weight) with the index: no results.",
                stacklevel=user_stacklevel(),  # the user's line, past PyTerrier's pipeline frames
            )
        parts = self._search(weights)
        row, score = np.concatenate([p[0] for p in parts]), np.concatenate([p[2] for p in parts])
        if not len(row):
            return first._empty(inp[keep])
        docno = concat_docnos([p[1] for p in parts])
        # no query has more results than all the shards' rows together (and a C long takes that number)
        merged = merge_top_k(row, docno, score, min(int(self.num_results), max(len(score), 1)), self.ties)
        row, docno, score = row[merged], pick_docnos(docno, merged), score[merged]
        columns = {c: take_column(inp[c].array, row) for c in keep}
        columns["docno"] = docno_values(docno)
        columns["score"] = nudge_ties(row, score) if self.ties == "lucene" else score.astype(np.float64)
        columns["rank"] = run_places(row)
        return result_frame(columns)
