"""SparseIndex: a term-major CSR index stored as plain ``.npy`` arrays plus JSON, and the indexers that build it.

On disk (all readable with ``numpy.load(..., allow_pickle=False)`` and ``json``)::

    pt_meta.json              type/format (for pt.Artifact.load), statistics, how it was built
    vocab.json                term strings; term id = position
    docnos.json               document ids; doc id = position
    postings.indptr.npy       int64 [num_terms + 1]   postings of term t: indptr[t]:indptr[t+1]
    postings.indices.npy      int32 [num_postings]    doc ids, ascending within a term
    postings.data.npy         float32 [num_postings]  final document-side term weights
    doclen.npy                float32 [num_docs]      tokens per document (BM25) or sum of weights
    docno_rank.npy            int32 [num_docs]        position of each docno in sorted order (tie-breaking)

A build writes everything into a hidden temporary directory next to the target and renames it into place as
the very last step, so an interrupted or failed build never leaves a directory that loads as an index.
Memory during a build is bounded by one batch plus one transposition pass: batches are spilled to disk as
chunks (sorted by term), and at the end the term-major arrays are written sequentially, one term range of at
most ``_PASS_POSTINGS`` postings at a time; the full arrays are never held in memory.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyterrier as pt
import scipy.sparse as sp

from ._weights import idf_lucene

__all__ = ["SparseIndex", "SparseIndexer"]

#: postings placed per pass when the spilled chunks are transposed (4 bytes doc id + 4 bytes weight each)
_PASS_POSTINGS = 1 << 22
_WEIGHT_BLOCK = 1 << 18

FORMAT_VERSION = 1
_MODES = ("create", "overwrite")


class SparseIndex(pt.Artifact):
    """A sparse (term x document) index of non-negative term weights, loadable as a ``pt.Artifact``.

    The index is a factory for its transformers::

        index = pse.SparseIndex("indexes/scifact-bm25")
        pse.BM25().indexer(index).index(dataset.get_corpus_iter())    # raw text, BM25 weights
        index.indexer().index(docs_with_toks)                          # precomputed {term: weight} dicts
        index.retriever(num_results=1000, idf=True)                    # queries with `query_toks`

    Args:
        path: the index directory.
        mmap: memory-map the postings instead of reading them into RAM.
    """

    ARTIFACT_TYPE = "sparse_index"
    ARTIFACT_FORMAT = "csr"
    ARTIFACT_PACKAGE_HINT = "pyterrier-sparse-eval"

    def __init__(self, path: str | os.PathLike, *, mmap: bool = True):
        super().__init__(path)
        self.mmap = mmap

    def __repr__(self) -> str:
        return f"SparseIndex({str(self.path)!r})"

    # --- state ---------------------------------------------------------------------------------------------
    def built(self) -> bool:
        """True when a complete index exists at ``path``."""
        return (Path(self.path) / "pt_meta.json").is_file()

    def _require_built(self) -> Path:
        path = Path(self.path)
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
            meta = json.load(f)
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
            return json.load(f)

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
        collection = self.meta.get("collection")
        if collection is not None:
            df = np.asarray(self._load("collection_df.npy"), dtype=np.int64)
            return idf_lucene(df, int(collection["num_docs"]))
        return idf_lucene(self.df, self.num_docs)

    @property
    def collection_num_docs(self) -> int:
        """N of the corpus the statistics come from (the parent corpus for a subset, else ``num_docs``)."""
        return int(self.meta.get("collection", {}).get("num_docs", self.num_docs))

    def subset(self, docnos: Iterable[str], path: str | os.PathLike, *, mode: str = "create",
               extra_meta: dict[str, Any] | None = None) -> SparseIndex:
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
        _check_mode(target, mode)
        sub = sp.csr_matrix(self.postings[:, cols])
        sub.sort_indices()
        sub_docnos = self.docnos[cols].tolist()
        order = np.argsort(np.array(sub_docnos), kind="stable")
        docno_rank = np.empty(len(cols), dtype=np.int32)
        docno_rank[order] = np.arange(len(cols), dtype=np.int32)
        parent_collection = self.meta.get("collection")
        collection = {"num_docs": self.collection_num_docs, "avgdl": float(self.meta.get("avgdl", 0.0)),
                      "parent": str(self.path)}
        if parent_collection is not None:
            collection["avgdl"] = parent_collection.get("avgdl", collection["avgdl"])
        collection_df = (np.asarray(self._load("collection_df.npy")) if parent_collection is not None
                         else self.df)
        meta = {
            "type": SparseIndex.ARTIFACT_TYPE,
            "format": SparseIndex.ARTIFACT_FORMAT,
            "package_hint": SparseIndex.ARTIFACT_PACKAGE_HINT,
            "format_version": FORMAT_VERSION,
            "num_docs": len(cols),
            "num_terms": self.num_terms,
            "num_postings": int(sub.nnz),
            "avgdl": float(np.asarray(self.doclen)[cols].mean()),
            "encoder": self.encoder,
            "collection": collection,
            "built": {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "by": "pyterrier-sparse-eval",
                      "subset_of": str(self.path)},
            **(extra_meta or {}),
        }
        files = {
            "postings.indptr.npy": sub.indptr.astype(np.int64),
            "postings.indices.npy": sub.indices.astype(np.int32),
            "postings.data.npy": sub.data.astype(np.float32),
            "doclen.npy": np.asarray(self.doclen)[cols],
            "docno_rank.npy": docno_rank,
            "collection_df.npy": np.asarray(collection_df, dtype=np.int64),
        }
        _write_index_dir(target, mode, files, {"vocab.json": self.vocab, "docnos.json": sub_docnos}, meta)
        return SparseIndex(path, mmap=self.mmap)

    @property
    def encoder(self) -> dict[str, Any]:
        """How documents were turned into term weights (e.g. ``{"type": "bm25", "k1": 0.9, ...}``)."""
        return self.meta.get("encoder", {"type": "toks"})

    # --- factories -----------------------------------------------------------------------------------------
    def indexer(self, *, mode: str = "create", batch_size: int = 10_000, verbose: bool = True) -> SparseIndexer:
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
    ) -> pt.Transformer:
        """A retriever for queries with ``query_toks`` (or ``query`` text, when the index knows its analyzer).

        Scores are sum_t q_t * d_t * idf_t (``idf=True``) or the plain dot product sum_t q_t * d_t.
        """
        from ._retriever import SparseRetriever

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


# ------------------------------------------------------------------------------------------------------------
# Building
# ------------------------------------------------------------------------------------------------------------


def _replace_dir(tmp: Path, target: Path, mode: str) -> None:
    """Move a finished index folder into place; an existing one is swapped out only with mode="overwrite"."""
    if target.exists():
        if mode != "overwrite":  # appeared while we were building
            raise FileExistsError(f"An index appeared at {target} during the build; pass mode=\"overwrite\".")
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        os.replace(target, old / "index")
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)
    os.chmod(target, 0o755)


def _write_index_dir(index: SparseIndex, mode: str, arrays: dict[str, np.ndarray], docs: dict[str, Any],
                     meta: dict[str, Any]) -> None:
    """Write a complete index into a hidden temporary folder, then move it into place (pt_meta.json last)."""
    target = Path(index.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        for name, arr in arrays.items():
            np.save(tmp / name, arr)
        for name, obj in docs.items():
            with open(tmp / name, "w", encoding="utf-8") as f:
                json.dump(obj, f, ensure_ascii=False)
        with open(tmp / "pt_meta.json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, ensure_ascii=False)
        _replace_dir(tmp, target, mode)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _check_mode(index: SparseIndex, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}.")
    if mode == "create" and os.path.exists(index.path):
        raise FileExistsError(
            f"An index already exists at {index.path}; pass mode=\"overwrite\" to rebuild it "
            "(or load it with pse.SparseIndex(path))."
        )


def _iter_docs(docs: Any) -> Iterator[dict[str, Any]]:
    if isinstance(docs, pd.DataFrame):
        return iter(docs.to_dict(orient="records"))
    return iter(docs)


def _batched(it: Iterator[Any], n: int) -> Iterator[list[Any]]:
    while batch := list(itertools.islice(it, n)):
        yield batch


class IndexWriter:
    """Accumulates document batches on disk and writes a complete index atomically.

    Use as a context manager: leaving the block with an exception removes everything written so far.
    """

    def __init__(self, index: SparseIndex, *, mode: str, encoder: dict[str, Any]):
        _check_mode(index, mode)
        self.index = index
        self.mode = mode
        self.encoder = encoder
        target = Path(index.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        self.vocab: dict[str, int] = {}
        self.df = np.zeros(1024, dtype=np.int64)
        self.num_docs = 0
        self.num_chunks = 0
        self.doclens: list[np.ndarray] = []
        self._docnos = open(self.tmp / "docnos.txt", "w", encoding="utf-8")
        self._spill = [open(self.tmp / f"spill.{part}", "wb") for part in ("terms", "docs", "values")]
        self._chunk_ends = [0]
        self._started = time.time()

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        for f in (self._docnos, *self._spill):
            if not f.closed:
                f.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def term_ids(self, terms: list[Any]) -> np.ndarray:
        """Map term strings to ids, growing the vocabulary."""
        vocab = self.vocab
        new = set(terms).difference(vocab)
        if new:
            bad = [t for t in new if not isinstance(t, str)]
            if bad:
                raise TypeError(
                    f"Terms must be strings, got {type(bad[0]).__name__} {bad[0]!r}; convert token ids to "
                    "their vocabulary strings (e.g. tokenizer.convert_ids_to_tokens) before indexing."
                )
            for t in sorted(new):
                vocab[t] = len(vocab)
        return np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32, count=len(terms))

    def add(
        self,
        docnos: list[str],
        terms: np.ndarray,
        values: np.ndarray,
        offsets: np.ndarray,
        doclen: np.ndarray,
    ) -> None:
        """Add a batch: document i holds ``terms[offsets[i]:offsets[i+1]]`` with ``values`` (no duplicates)."""
        for d in docnos:
            if not isinstance(d, str) or not d or "\n" in d:
                raise ValueError(f"Invalid docno {d!r}: docnos must be non-empty strings without newlines.")
        values = np.asarray(values, dtype=np.float32)
        if values.size and not np.isfinite(values).all():
            raise ValueError("Document term weights contain NaN or infinity.")
        docs = np.repeat(np.arange(self.num_docs, self.num_docs + len(docnos), dtype=np.int32), np.diff(offsets))
        keep = values != 0
        terms, values, docs = np.asarray(terms, dtype=np.int32)[keep], values[keep], docs[keep]
        self._docnos.write("".join(d + "\n" for d in docnos))
        if len(self.vocab) > len(self.df):
            self.df = np.concatenate([self.df, np.zeros(max(len(self.vocab), 2 * len(self.df)) - len(self.df), np.int64)])
        self.df[: len(self.vocab)] += np.bincount(terms, minlength=len(self.vocab))
        from ._kernels import sort_by_term  # numba (when installed) is imported when an index is built

        # spilled sorted by term (doc ids stay ascending within a term), so that finish() can read any term
        # range of a chunk with a binary search
        for f, arr in zip(self._spill, sort_by_term(terms, docs, values, len(self.vocab))):
            arr.tofile(f)
        self._chunk_ends.append(self._chunk_ends[-1] + len(terms))
        self.doclens.append(np.asarray(doclen, dtype=np.float32))
        self.num_docs += len(docnos)
        self.num_chunks += 1

    def finish(
        self,
        weight: Callable[[np.ndarray, np.ndarray, dict[str, Any]], np.ndarray] | None = None,
        extra_meta: dict[str, Any] | None = None,
    ) -> SparseIndex:
        """Transpose the chunks into term-major arrays, write metadata, and move the index into place.

        ``weight(values, doclen_of_each_posting, stats)`` turns stored values into final weights once corpus
        statistics (``stats["avgdl"]``, ``stats["num_docs"]``) are known (BM25 saturation).

        The postings are written in passes over term ranges of at most ``_PASS_POSTINGS`` postings each: a
        pass reads its slice of every spilled chunk, places it, and appends it to the output files, so memory
        stays bounded by one pass whatever the size of the index.
        """
        from ._kernels import place_postings

        self._docnos.close()
        for f in self._spill:
            f.close()
        if self.num_docs == 0:
            raise ValueError("No documents were indexed: the document iterator was empty.")
        tmp = self.tmp
        num_docs = self.num_docs
        with open(tmp / "docnos.txt", encoding="utf-8") as f:
            docnos = f.read().split("\n")[:-1]
        docno_arr = np.array(docnos)
        order = np.argsort(docno_arr, kind="stable")
        dup = docno_arr[order[1:]] == docno_arr[order[:-1]]
        if dup.any():
            examples = sorted(set(docno_arr[order[1:]][dup].tolist()))[:5]
            raise ValueError(f"Duplicate docnos in the corpus, e.g. {examples}; docnos must be unique.")
        docno_rank = np.empty(num_docs, dtype=np.int32)
        docno_rank[order] = np.arange(num_docs, dtype=np.int32)
        del docno_arr, order
        with open(tmp / "docnos.json", "w", encoding="utf-8") as f:
            f.write(json.dumps(docnos, ensure_ascii=False))
        del docnos
        (tmp / "docnos.txt").unlink()

        doclen = np.concatenate(self.doclens)
        stats = {"num_docs": num_docs, "avgdl": float(doclen.mean()) if len(doclen) else 0.0}
        num_terms = len(self.vocab)
        df = self.df[:num_terms]
        indptr = np.zeros(num_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        nnz = int(indptr[-1])
        if num_docs >= 2**31 - 1:
            raise ValueError("More than 2^31 - 1 documents are not supported.")
        spill_names = [tmp / f"spill.{part}" for part in ("terms", "docs", "values")]
        ends = self._chunk_ends
        with open(tmp / "postings.indices.npy", "wb") as out_i, open(tmp / "postings.data.npy", "wb") as out_d:
            for f, dtype in ((out_i, np.int32), (out_d, np.float32)):
                np.lib.format.write_array_header_1_0(
                    f, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (nnz,)})
            t0 = 0
            while nnz and t0 < num_terms:
                t1 = int(np.searchsorted(indptr, indptr[t0] + _PASS_POSTINGS, side="right")) - 1
                t1 = min(max(t1, t0 + 1), num_terms)
                n = int(indptr[t1] - indptr[t0])
                docs_out = np.empty(n, dtype=np.int32)
                values_out = np.empty(n, dtype=np.float32)
                cursor = indptr[t0:t1] - indptr[t0]
                # term ranges are found by binary search in a read-only map of the spilled terms; the postings
                # themselves are read into (and freed with) ordinary arrays, so a pass's reads leave memory with it
                terms_mm = np.memmap(spill_names[0], dtype=np.int32, mode="r")
                for c in range(self.num_chunks):
                    a, b = ends[c], ends[c + 1]
                    lo, hi = (int(x) for x in a + np.searchsorted(terms_mm[a:b], [t0, t1]))
                    if hi > lo:
                        part = [np.fromfile(name, dtype=dt, count=hi - lo, offset=lo * 4) for name, dt in
                                zip(spill_names, (np.int32, np.int32, np.float32))]
                        place_postings(*part, t0, cursor, docs_out, values_out)
                del terms_mm
                if weight is not None:  # in blocks: the formula's float64 temporaries stay small
                    for s in range(0, n, _WEIGHT_BLOCK):
                        e = min(n, s + _WEIGHT_BLOCK)
                        values_out[s:e] = weight(values_out[s:e], doclen[docs_out[s:e]], stats)
                docs_out.tofile(out_i)
                values_out.tofile(out_d)
                t0 = t1
        for name in spill_names:
            name.unlink()
        np.save(tmp / "postings.indptr.npy", indptr)
        np.save(tmp / "doclen.npy", doclen)
        np.save(tmp / "docno_rank.npy", docno_rank)
        with open(tmp / "vocab.json", "w", encoding="utf-8") as f:
            f.write(json.dumps(list(self.vocab), ensure_ascii=False))
        meta = {
            "type": SparseIndex.ARTIFACT_TYPE,
            "format": SparseIndex.ARTIFACT_FORMAT,
            "package_hint": SparseIndex.ARTIFACT_PACKAGE_HINT,
            "format_version": FORMAT_VERSION,
            "num_docs": self.num_docs,
            "num_terms": num_terms,
            "num_postings": nnz,
            "avgdl": stats["avgdl"],
            "encoder": self.encoder,
            "built": {
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "seconds": round(time.time() - self._started, 3),
                "by": "pyterrier-sparse-eval",
            },
            **(extra_meta or {}),
        }
        # pt_meta.json last: its presence marks a complete index
        with open(tmp / "pt_meta.json", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, ensure_ascii=False)
        self._move_into_place()
        return SparseIndex(self.index.path, mmap=self.index.mmap)

    def _move_into_place(self) -> None:
        _replace_dir(self.tmp, Path(self.index.path), self.mode)
        # the SparseIndex object the user holds may have cached the previous index
        for attr in ("meta", "vocab", "term_ids", "docnos", "postings", "doclen", "docno_rank", "rank_to_doc", "df",
                     "idf"):
            self.index.__dict__.pop(attr, None)


def check_doc(doc: dict[str, Any], fields: Iterable[str], hint: str) -> None:
    missing = [f for f in fields if f not in doc]
    if missing:
        raise KeyError(f"Document is missing {missing} (it has {sorted(doc)}). {hint}")


class SparseIndexer(pt.Indexer):
    """Indexes documents that carry ``docno`` and ``toks`` (a {term: weight} dict), e.g. SPLADE output.

    Weights are stored as given; the retriever applies idf at query time when asked to.
    """

    def __init__(self, index: SparseIndex, *, mode: str = "create", batch_size: int = 10_000, verbose: bool = True):
        self.index_ref = index
        self.mode = mode
        self.batch_size = batch_size
        self.verbose = verbose
        self.encoder: dict[str, Any] = {"type": "toks"}

    def __repr__(self) -> str:
        return f"SparseIndexer({self.index_ref!r}, mode={self.mode!r})"

    def index(self, docs: Iterable[dict[str, Any]] | pd.DataFrame) -> SparseIndex:
        from tqdm.auto import tqdm

        with IndexWriter(self.index_ref, mode=self.mode, encoder=self.encoder) as writer:
            bar = tqdm(desc="indexing", unit="doc", disable=None if self.verbose else True)
            for batch in _batched(_iter_docs(docs), self.batch_size):
                check_doc(batch[0], ("docno", "toks"), _TOKS_HINT)
                docnos = [str(d["docno"]) for d in batch]
                toks = [d["toks"] for d in batch]
                for t in toks:
                    if not isinstance(t, dict):
                        raise TypeError(f"`toks` must be a dict of term -> weight, got {type(t).__name__}.")
                lengths = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
                offsets = np.zeros(len(toks) + 1, dtype=np.int64)
                np.cumsum(lengths, out=offsets[1:])
                terms = writer.term_ids(list(itertools.chain.from_iterable(toks)))
                values = np.fromiter(
                    itertools.chain.from_iterable(t.values() for t in toks), dtype=np.float64, count=int(offsets[-1])
                )
                owner = np.repeat(np.arange(len(toks)), lengths)
                doc_mass = np.bincount(owner, weights=values, minlength=len(toks))
                writer.add(docnos, terms, values, offsets, doc_mass)
                bar.update(len(batch))
            bar.close()
            return writer.finish()


_TOKS_HINT = (
    "index.indexer() takes documents with precomputed `toks`; encode text first "
    "(e.g. splade.doc_encoder() >> index.indexer()) or use pse.BM25().indexer(index) for raw text."
)
