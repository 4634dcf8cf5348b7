"""Writing a SparseIndex: its metadata, and the streaming writer behind every indexer (layout in ``_format``).

A build writes everything into a hidden temporary directory next to the target and moves it into place as
the very last step (``pt_meta.json``, with the seal of every file, is written last inside it), so an
interrupted or failed build never leaves a directory that loads as an index, and an overwrite leaves the old
or the new index at the path at every instant. Memory during a build is bounded by one batch plus one
transposition pass: batches are spilled to disk as chunks (sorted by term), and at the end the term-major
arrays are written sequentially, one term range of at most ``_PASS_POSTINGS`` postings at a time; the full
arrays are never held in memory.

This module knows nothing of the :class:`~pyterrier_sparse_eval.SparseIndex` class: writers take the target
index (anything with ``path`` and ``reload()``), and the index's factories hand it to them.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyterrier as pt

from ._format import (
    ARTIFACT_FORMAT,
    ARTIFACT_TYPE,
    FORMAT_VERSION,
    PACKAGE_HINT,
    describe_path,
    is_index_dir,
    seal,
)
from .datasets import FieldError
from .files import clean_leftovers, new_temp_dir, replace_dir

__all__ = [
    "IndexWriter",
    "SparseIndexer",
    "index_meta",
    "write_index_dir",
    "check_mode",
    "corpus_stats",
    "open_writer",
]

MODES = ("create", "overwrite")

#: postings placed per pass when the spilled chunks are transposed (4 bytes doc id + 4 bytes weight each)
_PASS_POSTINGS = 1 << 22
_WEIGHT_BLOCK = 1 << 18


class Target(Protocol):
    """What a writer needs of the index it writes: where it lives, and how to tell it to reopen."""

    path: Any

    def reload(self) -> None: ...


def index_meta(
    *,
    num_docs: int,
    num_terms: int,
    num_postings: int,
    avgdl: float,
    encoder: dict[str, Any],
    built: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The content of ``pt_meta.json``: artifact type and format, statistics, and how the index was built."""
    return {
        "type": ARTIFACT_TYPE,
        "format": ARTIFACT_FORMAT,
        "package_hint": PACKAGE_HINT,
        "format_version": FORMAT_VERSION,
        "num_docs": int(num_docs),
        "num_terms": int(num_terms),
        "num_postings": int(num_postings),
        "avgdl": float(avgdl),
        "encoder": encoder,
        "built": {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **built, "by": PACKAGE_HINT},
        **(extra or {}),
    }


def check_mode(path: Any, mode: str) -> None:
    """Refuse an unknown mode, ``mode="create"`` over an existing path, and ``mode="overwrite"`` over anything
    but an index of this package: a folder of notes or a results file given by mistake is never deleted."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
    clean_leftovers(path)  # first: it may move back an index that a killed writer had moved aside
    if not os.path.lexists(path):
        return
    if is_index_dir(path):
        if mode == "create":
            raise FileExistsError(
                f'An index already exists at {path}; pass mode="overwrite" to rebuild it '
                "(or load it with pse.SparseIndex(path))."
            )
        return
    raise FileExistsError(
        f"{path} exists and is {describe_path(path)}: an index is only ever written over an index. Choose "
        "another path, or move that one away yourself."
    )


def _move_into_place(tmp: Path, index: Target, mode: str) -> None:
    check_mode(index.path, mode)  # again: the path may have changed while the index was being built
    replace_dir(tmp, Path(index.path), overwrite=mode == "overwrite", replaceable=is_index_dir)
    index.reload()  # the object the caller holds may have read the previous index


def write_index_dir(
    index: Target, mode: str, arrays: dict[str, np.ndarray], docs: dict[str, Any], meta: dict[str, Any]
) -> None:
    """Write a complete index from in-memory arrays into a hidden temporary folder, then move it into place."""
    tmp = new_temp_dir(index.path)
    try:
        for name, arr in arrays.items():
            np.save(tmp / name, arr)
        for name, obj in docs.items():
            with open(tmp / name, "w", encoding="utf-8") as f:
                json.dump(obj, f, ensure_ascii=False)
        seal(tmp, meta)
        _move_into_place(tmp, index, mode)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def iter_docs(docs: Any) -> Iterator[dict[str, Any]]:
    """Documents from an iterable of dicts or a DataFrame."""
    if isinstance(docs, pd.DataFrame):
        return iter(docs.to_dict(orient="records"))
    return iter(docs)


def progress(docs: Any, verbose: bool, desc: str = "indexing") -> Any:
    """One progress bar for a whole build, with a total when the documents know their number."""
    from tqdm.auto import tqdm

    try:
        total = len(docs)
    except TypeError:
        total = None
    return tqdm(desc=desc, unit="doc", total=total, disable=None if verbose else True)


def warn_empty(empty: int, total: int, fields: Sequence[str]) -> None:
    """Say once how many documents had no text in the indexed fields."""
    if empty:
        warnings.warn(
            f"{empty:,} of {total:,} documents have no text in {' + '.join(fields)} (missing, None or NaN): "
            "they are indexed empty and can never be retrieved.",
            stacklevel=3,
        )


def batched(it: Iterator[Any], n: int) -> Iterator[list[Any]]:
    while batch := list(itertools.islice(it, n)):
        yield batch


class IndexWriter:
    """Accumulates document batches on disk and writes a complete index atomically.

    Use as a context manager: leaving the block with an exception removes everything written so far.
    """

    def __init__(self, index: Target, *, mode: str, encoder: dict[str, Any]):
        check_mode(index.path, mode)
        self.index = index
        self.mode = mode
        self.encoder = encoder
        self.tmp = new_temp_dir(index.path)
        self.vocab: dict[str, int] = {}
        self.df = np.zeros(1024, dtype=np.int64)
        self.num_docs = 0
        self.num_chunks = 0
        self.doclens: list[np.ndarray] = []
        self._docnos = open(self.tmp / "docnos.txt", "w", encoding="utf-8", newline="\n")
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
            if not isinstance(d, str) or not d or "\n" in d or "\0" in d:
                raise ValueError(
                    f"Invalid docno {d!r}: docnos must be non-empty strings without newlines or NUL characters."
                )
        values = np.asarray(values, dtype=np.float32)
        if values.size and not np.isfinite(values).all():
            raise ValueError("Document term weights contain NaN or infinity.")
        docs = np.repeat(
            np.arange(self.num_docs, self.num_docs + len(docnos), dtype=np.int32), np.diff(offsets)
        )
        keep = values != 0
        terms, values, docs = np.asarray(terms, dtype=np.int32)[keep], values[keep], docs[keep]
        self._docnos.write("".join(d + "\n" for d in docnos))
        if len(self.vocab) > len(self.df):
            self.df = np.concatenate(
                [self.df, np.zeros(max(len(self.vocab), 2 * len(self.df)) - len(self.df), np.int64)]
            )
        self.df[: len(self.vocab)] += np.bincount(terms, minlength=len(self.vocab))
        from ._postings import sort_by_term  # numba (when installed) is imported when an index is built

        # spilled sorted by term (doc ids stay ascending within a term), so that finish() can read any term
        # range of a chunk with a binary search
        for spill, arr in zip(self._spill, sort_by_term(terms, docs, values, len(self.vocab))):
            arr.tofile(spill)
        self._chunk_ends.append(self._chunk_ends[-1] + len(terms))
        self.doclens.append(np.asarray(doclen, dtype=np.float32))
        self.num_docs += len(docnos)
        self.num_chunks += 1

    def _write_docnos(self) -> np.ndarray:
        """docnos.json from the spilled docnos (refusing duplicates); returns each document's docno rank."""
        tmp = self.tmp
        with open(tmp / "docnos.txt", "rb") as text:
            raw = text.read()
        # UTF-8 bytes sort in code point order (trec_eval's strcmp order) and take a quarter of the memory of
        # numpy's fixed-width str; numpy's bytes drop trailing NULs, so a NUL would merge two docnos (refused)
        docnos = raw.split(b"\n")[:-1]
        del raw
        docno_arr = np.array(docnos, dtype=bytes)
        order = np.argsort(docno_arr, kind="stable")
        dup = docno_arr[order[1:]] == docno_arr[order[:-1]]
        if dup.any():
            examples = sorted({d.decode() for d in docno_arr[order[1:]][dup][:5].tolist()})
            raise ValueError(f"Duplicate docnos in the corpus, e.g. {examples}; docnos must be unique.")
        del docno_arr
        docno_rank = np.empty(len(docnos), dtype=np.int32)
        docno_rank[order] = np.arange(len(docnos), dtype=np.int32)
        del order
        with open(tmp / "docnos.json", "w", encoding="utf-8", newline="\n") as out:
            out.write("[")
            for start in range(0, len(docnos), 1 << 16):  # a JSON list written in slices, never as one string
                part = json.dumps([d.decode() for d in docnos[start : start + (1 << 16)]], ensure_ascii=False)
                out.write(("," if start else "") + part[1:-1])
            out.write("]")
        (tmp / "docnos.txt").unlink()
        return docno_rank

    def finish(
        self,
        weight: Callable[[np.ndarray, np.ndarray, dict[str, Any]], np.ndarray] | None = None,
        extra_meta: dict[str, Any] | None = None,
        collection: tuple[dict[str, Any], np.ndarray] | None = None,
    ) -> None:
        """Transpose the chunks into term-major arrays, write metadata, and move the index into place.

        ``weight(values, doclen_of_each_posting, stats)`` turns stored values into final weights once corpus
        statistics (``stats["avgdl"]``, ``stats["num_docs"]``, and Lucene's ``stats["doc_count"]``,
        ``stats["sum_ttf"]``) are known (BM25).

        The postings are written in passes over term ranges of at most ``_PASS_POSTINGS`` postings each: a
        pass reads its slice of every spilled chunk, places it, and appends it to the output files, so memory
        stays bounded by one pass whatever the size of the index.

        ``collection`` = (statistics, document frequencies per term id) of a larger corpus this index is part
        of (a shard): the weights and the idf then come from them (``collection_df.npy``, as for a subset).
        """
        from ._postings import place_postings

        self._docnos.close()
        for spill in self._spill:
            spill.close()
        if self.num_docs == 0:
            raise ValueError("No documents were indexed: the document iterator was empty.")
        if self.num_docs >= 2**31 - 1:
            raise ValueError("More than 2^31 - 1 documents are not supported.")
        tmp = self.tmp
        docno_rank = self._write_docnos()
        doclen = np.concatenate(self.doclens)
        # avgdl: the mean over all documents; doc_count and sum_ttf as Lucene counts them (documents with at least
        # one term, and their total length), for Lucene's BM25
        stats = corpus_stats(doclen) if collection is None else collection[0]
        num_terms = len(self.vocab)
        indptr = np.zeros(num_terms + 1, dtype=np.int64)
        np.cumsum(self.df[:num_terms], out=indptr[1:])
        nnz = int(indptr[-1])
        spill_names = [tmp / f"spill.{part}" for part in ("terms", "docs", "values")]
        ends = self._chunk_ends
        with (
            open(tmp / "postings.indices.npy", "wb") as out_i,
            open(tmp / "postings.data.npy", "wb") as out_d,
        ):
            for stream, dtype in ((out_i, np.int32), (out_d, np.float32)):
                np.lib.format.write_array_header_1_0(
                    stream, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (nnz,)}
                )
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
                        p_terms, p_docs, p_values = (
                            np.fromfile(name, dtype=dt, count=hi - lo, offset=lo * 4)
                            for name, dt in zip(spill_names, (np.int32, np.int32, np.float32))
                        )
                        place_postings(p_terms, p_docs, p_values, t0, cursor, docs_out, values_out)
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
        if collection is not None:
            np.save(tmp / "collection_df.npy", np.asarray(collection[1][:num_terms], dtype=np.int64))
            extra_meta = {"collection": {**collection[0], "parent": "shards"}, **(extra_meta or {})}
        with open(tmp / "vocab.json", "w", encoding="utf-8") as vocab_file:
            vocab_file.write(json.dumps(list(self.vocab), ensure_ascii=False))
        meta = index_meta(
            num_docs=self.num_docs,
            num_terms=num_terms,
            num_postings=nnz,
            avgdl=float(doclen.mean()) if len(doclen) else 0.0,
            encoder=self.encoder,
            built={"seconds": round(time.time() - self._started, 3)},
            extra={"doc_count": int(np.count_nonzero(doclen)), **(extra_meta or {})},
        )
        seal(tmp, meta)  # pt_meta.json last: its presence marks a complete index
        _move_into_place(tmp, self.index, self.mode)


def corpus_stats(doclen: np.ndarray) -> dict[str, Any]:
    """What BM25 weights need of a corpus, from its document lengths in document order: N, the mean length,
    and Lucene's docCount and sumTotalTermFreq (documents with at least one term, and their total length)."""
    return {
        "num_docs": len(doclen),
        "avgdl": float(doclen.mean()) if len(doclen) else 0.0,
        "doc_count": int(np.count_nonzero(doclen)),
        "sum_ttf": float(doclen.sum()),
    }


def open_writer(index: Any, *, mode: str, encoder: dict[str, Any]) -> Any:
    """The writer of ``index``: its own when it has one (a sharded index), else an :class:`IndexWriter`."""
    if hasattr(index, "writer"):
        return index.writer(mode=mode, encoder=encoder)
    return IndexWriter(index, mode=mode, encoder=encoder)


def check_docs(docs: list[dict[str, Any]], fields: Iterable[str], hint: str) -> None:
    """Every document has ``fields``; else an error naming the first that does not."""
    for doc in docs:
        missing = [f for f in fields if f not in doc]
        if missing:
            raise FieldError(
                f"Document {doc.get('docno', '(no docno)')!r} is missing {missing} (it has {sorted(doc)}). {hint}"
            )


_TOKS_HINT = (
    "index.indexer() takes documents with precomputed `toks`; encode text first "
    "(e.g. splade.doc_encoder() >> index.indexer()) or use pse.BM25().indexer(index) for raw text."
)


class SparseIndexer(pt.Indexer):
    """Indexes documents that carry ``docno`` and ``toks`` (a {term: weight} dict), e.g. SPLADE output.

    Weights are stored as given; the retriever applies idf at query time when asked to. ``encoder`` is
    recorded in the index metadata (how the weights were made; default ``{"type": "toks"}``).
    """

    def __init__(
        self,
        index: Any,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool = True,
        encoder: dict[str, Any] | None = None,
    ):
        self.index_ref = index
        self.mode = mode
        self.batch_size = batch_size
        self.verbose = verbose
        self.encoder = encoder

    def __repr__(self) -> str:
        return f"SparseIndexer({self.index_ref!r}, mode={self.mode!r})"

    def index(self, docs: Iterable[dict[str, Any]] | pd.DataFrame) -> Any:  # type: ignore[override]
        """Index ``docs`` and return the (reloaded) index."""
        encoder = self.encoder if self.encoder is not None else {"type": "toks"}
        with open_writer(self.index_ref, mode=self.mode, encoder=encoder) as writer:
            bar = progress(docs, self.verbose)
            for batch in batched(iter_docs(docs), self.batch_size):
                docnos, toks = self.encode(batch, bar)
                add_toks(writer, docnos, toks)
                if not self.updates_progress:
                    bar.update(len(batch))
            bar.close()
            writer.finish()
        self.finished()
        return self.index_ref

    #: whether :meth:`encode` moves the progress bar itself (as an encoder that takes long per batch does)
    updates_progress = False

    def encode(self, batch: list[dict[str, Any]], bar: Any) -> tuple[list[str], list[dict[str, float]]]:
        """The docnos and ``toks`` of a batch of documents (subclasses encode text here)."""
        check_docs(batch, ("docno", "toks"), _TOKS_HINT)
        return [str(d["docno"]) for d in batch], [d["toks"] for d in batch]

    def finished(self) -> None:
        """Called after a successful build (subclasses report here)."""


def add_toks(writer: IndexWriter, docnos: list[str], toks: list[dict[str, float]]) -> None:
    """Add documents given as {term: weight} dicts to a writer (document length = sum of weights)."""
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
    writer.add(docnos, terms, values, offsets, np.bincount(owner, weights=values, minlength=len(toks)))
