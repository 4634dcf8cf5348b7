"""SparseIndex: a term-major CSR index stored as plain ``.npy`` arrays plus JSON (layout in ``_build``).

The index is the factory of its transformers: ``index.indexer()``, ``index.retriever()``, and
``index.subset()`` for a pooled subsample that keeps the full corpus's statistics.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyterrier as pt
import scipy.sparse as sp

from ._build import (
    ARTIFACT_FORMAT,
    ARTIFACT_TYPE,
    FORMAT_VERSION,
    PACKAGE_HINT,
    SparseIndexer,
    check_mode,
    index_meta,
    write_index_dir,
)
from ._retriever import SparseRetriever
from ._weights import idf_lucene

__all__ = ["SparseIndex"]


class SparseIndex(pt.Artifact):
    """A sparse (term x document) index of non-negative term weights, loadable as a ``pt.Artifact``.

    The index is a factory for its transformers::

        index = pse.SparseIndex("indexes/scifact-bm25")
        pse.BM25().indexer(index).index(dataset.get_corpus_iter())    # raw text, BM25 weights
        index.indexer().index(docs_with_toks)                          # precomputed {term: weight} dicts
        index.retriever(num_results=1000, idf=True)                    # queries with `query_toks`

    Arrays and metadata are read on first use and cached; :meth:`refresh` forgets them (every build through
    this object calls it).

    Args:
        path: the index directory.
        mmap: memory-map the postings instead of reading them into RAM.
    """

    ARTIFACT_TYPE = ARTIFACT_TYPE
    ARTIFACT_FORMAT = ARTIFACT_FORMAT
    ARTIFACT_PACKAGE_HINT = PACKAGE_HINT

    def __init__(self, path: str | os.PathLike[str], *, mmap: bool = True):
        super().__init__(os.fspath(path))
        self.mmap = mmap

    def __repr__(self) -> str:
        return f"SparseIndex({str(self.path)!r})"

    # --- state ---------------------------------------------------------------------------------------------
    def built(self) -> bool:
        """True when a complete index exists at ``path``."""
        return (self.directory / "pt_meta.json").is_file()

    def refresh(self) -> None:
        """Forget every cached array and the metadata; they are read again from disk on next use."""
        for klass in type(self).__mro__:
            for name, attr in vars(klass).items():
                if isinstance(attr, cached_property):
                    self.__dict__.pop(name, None)

    @property
    def directory(self) -> Path:
        """The index directory."""
        return Path(os.fspath(self.path))  # type: ignore[arg-type]  # always given: SparseIndex takes a path

    def _require_built(self) -> Path:
        path = self.directory
        if not self.built():
            raise FileNotFoundError(
                f"No sparse index at {path}. Build one first, e.g. pse.BM25().indexer(index).index(docs) "
                "or index.indexer().index(docs_with_toks)."
            )
        return path

    @cached_property
    def meta(self) -> dict[str, Any]:
        """The index metadata (``pt_meta.json``): statistics and how the index was built."""
        path = self._require_built()
        with open(path / "pt_meta.json", encoding="utf-8") as f:
            meta: dict[str, Any] = json.load(f)
        if meta.get("type") != self.ARTIFACT_TYPE or meta.get("format") != self.ARTIFACT_FORMAT:
            raise ValueError(f"{path} is not a sparse_index.csr artifact (pt_meta.json says {meta}).")
        if meta.get("format_version", 0) > FORMAT_VERSION:
            raise ValueError(
                f"{path} was written by a newer pyterrier-sparse-eval (format {meta['format_version']}); "
                "upgrade with `pip install -U pyterrier-sparse-eval`."
            )
        return meta

    def _load(self, name: str) -> np.ndarray:
        path = self._require_built() / name
        return np.load(path, mmap_mode="r" if self.mmap else None, allow_pickle=False)

    @cached_property
    def vocab(self) -> list[str]:
        with open(self._require_built() / "vocab.json", encoding="utf-8") as f:
            vocab: list[str] = json.load(f)
        return vocab

    @cached_property
    def term_ids(self) -> dict[str, int]:
        """Term string -> term id."""
        return {t: i for i, t in enumerate(self.vocab)}

    @cached_property
    def docnos(self) -> np.ndarray:
        """Document ids (object array of str); position = internal doc id."""
        with open(self._require_built() / "docnos.json", encoding="utf-8") as f:
            return np.array(json.load(f), dtype=object)

    @cached_property
    def postings(self) -> sp.csr_matrix:
        """The term-major weight matrix, shape (num_terms, num_docs)."""
        indptr = self._load("postings.indptr.npy")
        indices = self._load("postings.indices.npy")
        data = self._load("postings.data.npy")
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
        that a document scores the same in the subset as in the full corpus.
        """
        return idf_lucene(self.collection_df, self.collection_num_docs)

    @property
    def collection_num_docs(self) -> int:
        """N of the corpus the statistics come from (the parent corpus for a subset, else ``num_docs``)."""
        return int(self.meta.get("collection", {}).get("num_docs", self.num_docs))

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
            raise KeyError(f"{len(unknown)} docnos are not in {self!r}, e.g. {unknown[:5]}.")
        if not wanted:
            raise ValueError("A subset needs at least one document.")
        cols = np.sort(np.fromiter((position[d] for d in wanted), dtype=np.int64, count=len(wanted)))
        target = SparseIndex(path, mmap=self.mmap)
        check_mode(target.path, mode)
        sub = sp.csr_matrix(self.postings[:, cols])
        sub.sort_indices()
        sub_docnos = self.docnos[cols].tolist()
        order = np.argsort(np.array(sub_docnos), kind="stable")
        docno_rank = np.empty(len(cols), dtype=np.int32)
        docno_rank[order] = np.arange(len(cols), dtype=np.int32)
        parent = self.meta.get("collection") or {}
        collection = {
            "num_docs": self.collection_num_docs,
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
        self, *, mode: str = "create", batch_size: int = 10_000, verbose: bool = True
    ) -> SparseIndexer:
        """An indexer for documents that already carry ``toks`` ({term: weight} dicts)."""
        return SparseIndexer(self, mode=mode, batch_size=batch_size, verbose=verbose)

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
    ) -> SparseRetriever:
        """A retriever for queries with ``query_toks`` (or ``query`` text, when the index knows its analyzer).

        Scores are sum_t q_t * d_t * idf_t (``idf=True``) or the plain dot product sum_t q_t * d_t.
        """
        return SparseRetriever(
            self,
            num_results=num_results,
            idf=idf,
            analyzer=analyzer,
            memory_budget=memory_budget,
            backend=backend,
            threads=threads,
            verbose=verbose,
        )
