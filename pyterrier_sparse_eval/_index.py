"""SparseIndex: a term-major CSR index stored as plain ``.npy`` arrays plus JSON (layout in ``_format``).

The index is the factory of its transformers: ``index.indexer()``, ``index.retriever()``, and
``index.subset()`` for a pooled subsample that keeps the full corpus's statistics. It checks itself: see
:meth:`SparseIndex.verify` and ``_format``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyterrier as pt
import scipy.sparse as sp

from ._build import SparseIndexer, check_mode, index_meta, write_index_dir
from ._docnos import DocnoTable, code_point_order
from ._format import (
    ARTIFACT_FORMAT,
    ARTIFACT_TYPE,
    JSON_LISTS,
    META,
    PACKAGE_HINT,
    ForeignFileError,
    IndexCorruptError,
    StaleIndexError,
    array_files,
    check_array,
    check_checksums,
    check_json,
    check_sizes,
    check_sorted_postings,
    generation,
    handle_path,
    has_meta,
    index_format,
    read_meta,
    unless_rebuilt,
)
from ._retriever import SparseRetriever
from ._weights import idf_lucene, lucene_idf
from .datasets import FieldError

__all__ = ["SparseIndex", "IndexCorruptError", "StaleIndexError"]

_CHECKS = ("full", "structure")


def refuse_ray_options(options: dict[str, Any]) -> None:
    """``engine=`` / ``ray_address=`` search the shards of a ShardedIndex: on a single index, say what to build
    (``engine="local"`` and ``ray_address=None``, the defaults, are taken out of ``options``)."""
    if options.get("engine", "local") == "local" and options.get("ray_address") is None:
        options.pop("engine", None), options.pop("ray_address", None)
    if "engine" in options or "ray_address" in options:
        raise ValueError(
            "engine= and ray_address= search the shards of a ShardedIndex (on Ray); this is a single SparseIndex: "
            "build a ShardedIndex (pse.ShardedIndex(path, num_shards=N)) to search it on Ray."
        )


def read_from_disk(handle: Any) -> set[str]:
    """The names of what an index handle reads from disk when first used (its cached properties)."""
    return {n for k in type(handle).__mro__ for n, a in vars(k).items() if isinstance(a, cached_property)}


def handle_state(handle: Any) -> dict[str, Any]:
    """An index handle's state without what it read from disk (its path and options), for pickling."""
    return {k: v for k, v in handle.__dict__.items() if k not in read_from_disk(handle)}


class SparseIndex(pt.Artifact):
    """A sparse (term x document) index of finite term weights (BM25's and SPLADE's are non-negative), loadable as a
    ``pt.Artifact``.

    The index is a factory for its transformers::

        index = pse.SparseIndex("indexes/scifact-bm25")
        pse.BM25().indexer(index).index(dataset.get_corpus_iter())    # raw text, BM25 weights
        index.indexer().index(docs_with_toks)                          # precomputed {term: weight} dicts
        index.retriever(num_results=1000, idf=True)                    # queries with `query_toks`

    Files are read on first use, checked once (see ``checks``) and cached. The handle remembers which build
    it read: if the index at ``path`` is rebuilt by anyone else, every further read (and every retriever made
    from it) fails with :class:`StaleIndexError` until :meth:`reload` is called; the two builds are never
    mixed. Builds made through this object reload it.

    Args:
        path: the index directory.
        mmap: memory-map the postings instead of reading them into RAM.
        checks: what opening and first reads check. Always: the metadata, every file's size, each array's
            header, dtype and shape, and every invariant the kernels rely on (doc ids in range and ascending
            within a term, offsets monotone, docno ranks a permutation), so that no damage can crash a
            kernel. ``"full"`` (default) also every file's CRC-32 against the one recorded at build time (once
            per open) and finite weights, so that damage never yields rankings either. ``"structure"`` skips
            those two, for very large indexes opened often; :meth:`verify` then checks them on demand.
    """

    ARTIFACT_TYPE = ARTIFACT_TYPE
    ARTIFACT_FORMAT = ARTIFACT_FORMAT
    ARTIFACT_PACKAGE_HINT = PACKAGE_HINT

    def __init__(self, path: str | os.PathLike[str], *, mmap: bool = True, checks: str = "full"):
        if checks not in _CHECKS:
            raise ValueError(f"checks must be one of {_CHECKS}, got {checks!r}.")
        super().__init__(handle_path(path))
        self.mmap = mmap
        self.checks = checks

    def __repr__(self) -> str:
        return f"SparseIndex({str(self.path)!r})"

    # --- state ---------------------------------------------------------------------------------------------
    @property
    def directory(self) -> Path:
        """The index directory."""
        return Path(os.fspath(self.path))  # type: ignore[arg-type]  # always given: SparseIndex takes a path

    def built(self) -> bool:
        """True when a complete single index exists at ``path``: its ``pt_meta.json`` is valid JSON and says so
        (a sharded index, or damaged metadata, is not one; opening it says what is wrong)."""
        return index_format(self.directory) == ARTIFACT_FORMAT

    def reload(self) -> None:
        """Forget everything read from disk (metadata, arrays, the build seen); the next use reads the index
        now at ``path``, checked again."""
        for name in read_from_disk(self):
            self.__dict__.pop(name, None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its path and options: a process that unpickles it opens the index itself (memory-mapped), and
        nothing read from disk is copied (a retriever pickled after a search had carried the whole index)."""
        return handle_state(self)

    def _require_built(self) -> Path:
        path = self.directory
        if not has_meta(path):  # else the checks of the metadata say what is wrong with it
            raise FileNotFoundError(
                f"No sparse index at {path}. Build one first, e.g. pse.BM25().indexer(index).index(docs) "
                "or index.indexer().index(docs_with_toks)."
            )
        return path

    @cached_property
    def _opened(self) -> tuple[dict[str, Any], tuple[int, int, int], str]:
        """The metadata read when this handle opened the index (checked), the identity of its ``pt_meta.json``
        and its build id (for indexes built before build ids: one made from that identity)."""
        path = self._require_built()
        seen = generation(path)
        with unless_rebuilt(path, seen):
            meta = read_meta(path)
            check_sizes(path, meta)
            if self.checks == "full":
                check_checksums(path, meta)  # every file, those a query never reads included, once per open
        if generation(path) != seen:  # rebuilt while it was being opened: open the new one
            raise StaleIndexError(
                f"The index at {path} was rebuilt while it was being opened; open it again."
            )
        return meta, seen, str(meta.get("build_id") or "legacy-{}-{}-{}".format(*seen))

    @property
    def meta(self) -> dict[str, Any]:
        """The index metadata (``pt_meta.json``): statistics, how the index was built, its seal."""
        return self._opened[0]

    @property
    def build_id(self) -> str:
        """Identifies the build this handle reads."""
        return self._opened[2]

    def check_current(self) -> None:
        """Raise :class:`StaleIndexError` if the index at ``path`` is no longer the build this handle read.

        Cheap (one ``stat``) while ``pt_meta.json`` is the file this handle opened; when it is another file (a
        rebuild, but also a copy of the same build, or a ``touch``), what it says decides."""
        path = self.directory
        meta, seen, build = self._opened
        try:
            current = generation(path)
            if current == seen:
                return
            now = read_meta(path)
            if (now.get("build_id") == meta.get("build_id")) if "build_id" in meta else now == meta:
                self.__dict__["_opened"] = (meta, current, build)  # the same build: remember its new identity
                return
        except (FileNotFoundError, ValueError):  # removed, or replaced by something damaged
            pass
        raise StaleIndexError(
            f"The index at {path} was rebuilt (or moved or removed) after this handle read it; call index.reload() "
            "to use the index now there (and make new retrievers from it), or run the command again."
        )

    def _read_checked(self, read: Any) -> Any:
        """``read()`` a file of this handle's build: the build is checked before and after, so a file of a
        build that replaced it in between is never used, and a read that fails on one (a size or shape of the
        other build's) is a :class:`StaleIndexError`, not damage."""
        self.check_current()
        try:
            value = read()
        except (IndexCorruptError, ValueError, OSError):
            try:
                self.check_current()
            except StaleIndexError as stale:
                raise stale from None
            raise
        self.check_current()
        return value

    def _load(self, name: str) -> np.ndarray:
        """An array file, checked on first read (once per open) and cached."""
        loaded: dict[str, np.ndarray] = self._loaded
        if name not in loaded:
            # finite weights are what the build wrote (it refuses others): with the CRC-32s checked on open they
            # need no scan of their own; an unsealed index has no CRC-32s, so they are scanned
            full = self.checks == "full" and "files" not in self.meta
            loaded[name] = self._read_checked(
                lambda: check_array(self.directory, name, self.meta, full, self.mmap)
            )
        return loaded[name]

    @cached_property
    def _loaded(self) -> dict[str, np.ndarray]:
        return {}

    def _json(self, name: str) -> list[Any]:
        full = self.checks == "full" and "files" not in self.meta  # sealed: the CRC-32s stand for the scan
        return self._read_checked(lambda: check_json(self.directory, name, self.meta, full))

    def verify(self) -> dict[str, Any]:
        """Check everything: every file's size and CRC-32 against the seal, every array's dtype, shape and
        invariants, the JSON lists, and that no file is missing or foreign. Raises
        :class:`IndexCorruptError` naming the file and what is wrong; returns the verified metadata.

        Indexes built before files were sealed (no ``files`` record) are checked for everything but the
        CRC-32s."""
        path = self._require_built()
        with unless_rebuilt(path, generation(path), "verified"):
            return self._verify(path)

    def _verify(self, path: Path) -> dict[str, Any]:
        meta = read_meta(path)
        check_sizes(path, meta)
        check_checksums(path, meta)
        expected = set(JSON_LISTS) | set(array_files(meta))
        present = {p.name for p in path.iterdir()} - {META}
        missing, foreign = sorted(expected - present), sorted(present - expected)
        if missing:
            raise IndexCorruptError(f"{path / missing[0]}: missing. The index is incomplete; rebuild it.")
        if foreign:
            raise ForeignFileError(
                f"{path / foreign[0]}: a file the build did not write is in the index folder; move it out."
            )
        arrays = {}
        for name in sorted(expected):
            if name.endswith(".npy"):
                arrays[name] = check_array(path, name, meta, True, True)
            else:
                check_json(path, name, meta)
        check_sorted_postings(path, arrays["postings.indptr.npy"], arrays["postings.indices.npy"])
        return meta

    @cached_property
    def vocab(self) -> list[str]:
        return self._json("vocab.json")

    @cached_property
    def term_ids(self) -> dict[str, int]:
        """Term string -> term id."""
        return {t: i for i, t in enumerate(self.vocab)}

    @cached_property
    def docnos(self) -> np.ndarray:
        """Document ids (object array of str); position = internal doc id."""
        return np.array(self._json("docnos.json"), dtype=object)

    @cached_property
    def docno_table(self) -> DocnoTable:
        """The docnos as UTF-8 bytes, from which result frames gather their docno column (needs pyarrow; built
        on first use, about 0.25 s per million documents)."""
        return DocnoTable(self.docnos)

    @cached_property
    def postings(self) -> sp.csr_matrix:
        """The term-major weight matrix, shape (num_terms, num_docs)."""
        indptr = self._load("postings.indptr.npy")
        indices = self._load("postings.indices.npy")
        data = self._load("postings.data.npy")
        check_sorted_postings(self.directory, indptr, indices)
        return sp.csr_matrix((data, indices, indptr), shape=(self.num_terms, self.num_docs), copy=False)

    @cached_property
    def doclen(self) -> np.ndarray:
        return self._load("doclen.npy")

    @cached_property
    def docno_rank(self) -> np.ndarray:
        """Rank of each document's docno in ascending string order (trec_eval breaks score ties by docno)."""
        return self._load("docno_rank.npy")

    @cached_property
    def rank_to_doc(self) -> np.ndarray:
        """Inverse of :attr:`docno_rank`: the internal id of the document with each docno rank."""
        rank = np.asarray(self.docno_rank)
        out = np.empty(len(rank), dtype=np.int32)
        out[rank] = np.arange(len(rank), dtype=np.int32)
        return out

    @property
    def num_docs(self) -> int:
        return int(self.meta["num_docs"])

    @property
    def num_terms(self) -> int:
        return int(self.meta["num_terms"])

    @property
    def num_postings(self) -> int:
        return int(self.meta["num_postings"])

    @cached_property
    def df(self) -> np.ndarray:
        """Document frequency of every term: the number of documents with a non-zero weight for it."""
        return np.diff(np.asarray(self._load("postings.indptr.npy"))).astype(np.int64)

    @cached_property
    def idf(self) -> np.ndarray:
        """idf_t = ln(1 + (N - df_t + 0.5) / (df_t + 0.5)) per term (float64).

        From the stored matrix, or, for a :meth:`subset`, from the statistics of the corpus it was cut from, so
        that a document scores the same in the subset as in the full corpus. N counts every document (the
        IDF-weighted retriever's); a BM25 index's stored weights hold Lucene's idf, whose N counts the documents
        with a term (``doc_count``).
        """
        return idf_lucene(self.collection_df, self.collection_num_docs)

    @cached_property
    def lucene_impacts(self) -> tuple[np.ndarray, np.ndarray]:
        """For an index of Lucene BM25 postings: (each posting's score for a query term used once, each term's
        weight: its Lucene idf), float32, computed on first use and kept in memory (4 bytes per posting). The
        retriever adds these instead of evaluating ``w - w / (1 + x)`` per posting on heavy queries."""
        from ._prune import lucene_impacts

        idf = lucene_idf(self.collection_df, self.collection_doc_count)
        return lucene_impacts(self.postings, idf), idf

    @cached_property
    def term_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Each term's largest and smallest positive posting value (float32), computed on first use and kept in
        memory (8 bytes per term); None if some posting is negative. The retriever's threshold kernel bounds each
        query term's contribution with them (MaxScore's non-essential terms, on Lucene-scored indexes)."""
        from ._prune import term_bounds

        return term_bounds(self.postings)

    @property
    def collection_num_docs(self) -> int:
        """N of the corpus the statistics come from (the parent corpus for a subset, else ``num_docs``)."""
        return int(self.meta.get("collection", {}).get("num_docs", self.num_docs))

    @property
    def collection_doc_count(self) -> int:
        """Lucene's docCount of the corpus the statistics come from: documents with at least one term."""
        collection = self.meta.get("collection") or {}
        return int(collection.get("doc_count", self.meta.get("doc_count", self.collection_num_docs)))

    @property
    def collection_df(self) -> np.ndarray:
        """Document frequencies of the corpus the statistics come from (the parent's for a subset)."""
        if self.meta.get("collection") is not None:
            return np.asarray(self._load("collection_df.npy"), dtype=np.int64)
        return self.df

    @property
    def encoder(self) -> dict[str, Any]:
        """How documents were turned into term weights (e.g. ``{"type": "bm25", "k1": 0.9, ...}``)."""
        encoder: dict[str, Any] = self.meta.get("encoder", {"type": "toks"})
        return encoder

    def subset(
        self,
        docnos: Iterable[str],
        path: str | os.PathLike[str],
        *,
        mode: str = "create",
        extra_meta: dict[str, Any] | None = None,
    ) -> SparseIndex:
        """Write a new index holding only ``docnos``, which keeps this index's corpus statistics.

        Document weights are copied as stored (BM25's length normalisation used the full corpus' average
        length) and the subset's idf comes from this index's document frequencies and N, so every document
        scores exactly as it does in the full index: this is how a pooled subsample of a corpus is evaluated.
        Written atomically, like every index.
        """
        wanted = list(dict.fromkeys(str(d) for d in docnos))
        position = {d: i for i, d in enumerate(self.docnos.tolist())}
        unknown = [d for d in wanted if d not in position]
        if unknown:
            raise FieldError(f"{len(unknown)} docnos are not in {self!r}, e.g. {unknown[:5]}.")
        if not wanted:
            raise ValueError("A subset needs at least one document.")
        cols = np.sort(np.fromiter((position[d] for d in wanted), dtype=np.int64, count=len(wanted)))
        target = SparseIndex(path, mmap=self.mmap)
        check_mode(target.path, mode, sources=(self.path,))
        sub = sp.csr_matrix(self.postings[:, cols])
        sub.sort_indices()
        sub_docnos = self.docnos[cols].tolist()
        order = code_point_order(sub_docnos)
        docno_rank = np.empty(len(cols), dtype=np.int32)
        docno_rank[order] = np.arange(len(cols), dtype=np.int32)
        parent = self.meta.get("collection") or {}
        collection = {
            "num_docs": self.collection_num_docs,
            "doc_count": self.collection_doc_count,
            "avgdl": parent.get("avgdl", float(self.meta.get("avgdl", 0.0))),
            "parent": str(self.path),
        }
        meta = index_meta(
            num_docs=len(cols),
            num_terms=self.num_terms,
            num_postings=int(sub.nnz),
            avgdl=float(np.asarray(self.doclen)[cols].mean()),
            encoder=self.encoder,
            built={"subset_of": str(self.path)},
            extra={"collection": collection, **(extra_meta or {})},
        )
        files = {
            "postings.indptr.npy": sub.indptr.astype(np.int64),
            "postings.indices.npy": sub.indices.astype(np.int32),
            "postings.data.npy": sub.data.astype(np.float32),
            "doclen.npy": np.asarray(self.doclen)[cols],
            "docno_rank.npy": docno_rank,
            "collection_df.npy": np.asarray(self.collection_df, dtype=np.int64),
        }
        write_index_dir(target, mode, files, {"vocab.json": self.vocab, "docnos.json": sub_docnos}, meta)
        return target

    # --- factories -----------------------------------------------------------------------------------------
    def indexer(
        self, *, mode: str = "create", batch_size: int = 10_000, verbose: bool = True, **kwargs: Any
    ) -> SparseIndexer:
        """An indexer for documents that already carry ``toks`` ({term: weight} dicts); ``engine="ray"``,
        ``ray_address`` and ``num_workers`` as for :class:`SparseIndexer`."""
        return SparseIndexer(self, mode=mode, batch_size=batch_size, verbose=verbose, **kwargs)

    def retriever(
        self,
        *,
        num_results: int = 1000,
        idf: bool = True,
        analyzer: Any = None,
        memory_budget: int = 512 * 2**20,
        backend: str = "auto",
        threads: int = 1,
        verbose: bool = False,
        ties: str = "trec_eval",
        prune: bool = True,
        impacts: bool = True,
        bounds: bool = True,
        **ray_options: Any,
    ) -> SparseRetriever:
        """A retriever for queries with ``query_toks`` (or ``query`` text, when the index knows its analyzer).

        Scores are sum_t q_t * d_t * idf_t (``idf=True``) or the plain dot product sum_t q_t * d_t; Lucene's BM25
        for an index of Lucene BM25 postings (see :class:`~pyterrier_sparse_eval.SparseRetriever`). ``engine=``
        is a :class:`~pyterrier_sparse_eval.ShardedIndex`'s: refused, naming it.

        Equal scores come in trec_eval's order (``ties="trec_eval"``) whatever the index holds, where
        ``BM25(...).retriever(index)`` orders them as Lucene and Anserini do on its Lucene BM25 indexes: with ties
        at the cut-off the two top k hold different documents; ``ties="lucene"`` gives Anserini's run.
        """
        refuse_ray_options(ray_options)
        if ray_options:
            raise TypeError(
                f"SparseIndex.retriever() got unexpected keyword argument(s) {sorted(ray_options)}."
            )
        return SparseRetriever(
            self,
            num_results=num_results,
            idf=idf,
            analyzer=analyzer,
            memory_budget=memory_budget,
            backend=backend,
            threads=threads,
            verbose=verbose,
            ties=ties,
            prune=prune,
            impacts=impacts,
            bounds=bounds,
        )
