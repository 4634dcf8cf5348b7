"""Writing a SparseIndex: its metadata, and the streaming writer behind every indexer (layout in ``_format``).

A build writes everything into a hidden temporary directory next to the target and moves it into place as the
very last step (``pt_meta.json``, with the seal of every file, is written last inside it), so an interrupted
or failed build never leaves a directory that loads as an index, and an overwrite leaves the old or the new
index at the path at every instant. Memory during a build is bounded by one batch plus one transposition pass:
batches are spilled to disk as chunks (sorted by term), and at the end the term-major arrays are written
sequentially, one term range at a time (``_spill``); the full arrays are never held in memory. Per document it
holds 4 bytes of length, and at the end the docnos, sorted in memory (about 80 bytes a document).

It knows nothing of :class:`~pyterrier_sparse_eval.SparseIndex`: writers take the target index (anything with
``path`` and ``reload()``), and the index's factories hand it to them.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyterrier as pt

from ._attributes import InitAttributes
from ._docno_checks import (
    SeenDocnos,
    batch_docnos,
    check_docs,
    corpus_positions,
    early_check,
    iter_docs,
    refuse_unencodable,
)
from ._fields import watch_fields
from ._format import SHARDED_FORMAT, describe_path, has_meta, index_format, is_index_dir, refuse_path, seal
from ._ray import Encoded, check_gpus
from ._spill import Spill, corpus_stats, index_meta, write_from_spill
from ._toks import flatten_toks, term_ids
from .files import (
    clean_leftovers,
    full_disk_named,
    is_empty_dir,
    new_temp_dir,
    remove_temp_dir,
    replace_dir,
    save_array,
    write_array,
)

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


class Target(Protocol):
    """What a writer needs of the index it writes: where it lives, and how to tell it to reopen."""

    path: Any

    def reload(self) -> None: ...


def check_mode(path: Any, mode: str, sources: tuple[Any, ...] = ()) -> None:
    """Refuse an unknown mode, ``mode="create"`` over an existing path (an empty folder is taken in either mode),
    ``mode="overwrite"`` over anything but an index of this package (a folder of notes or a results file given by mistake is never deleted), and a path
    that is, holds or lies in one of the ``sources`` the new index is read from (a subset over its own index)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
    target = os.path.realpath(path)
    try:
        here = os.path.realpath(os.getcwd())
    except FileNotFoundError:  # a working folder removed: no path holds it
        here = ""
    # the new folder made next to it, then swapped in: the working folder would be removed
    if here and (here == target or here.startswith(target.rstrip(os.sep) + os.sep)):
        raise ValueError(
            f"The index path {str(path)!r} is the working folder (or holds it): an index is built into a folder "
            "of its own, e.g. SparseIndex('index')."
        )
    for source in map(os.path.realpath, sources):
        try:
            overlaps = os.path.commonpath([target, source]) in (target, source)
        except ValueError:  # on different drives
            overlaps = False
        # the same folder by another name (a case-insensitive file system, a bind mount) too
        if overlaps or (
            os.path.exists(target) and os.path.exists(source) and os.path.samefile(target, source)
        ):
            raise ValueError(
                f"{path} is, holds or lies in the index {source} it is cut from: writing it there would destroy "
                "the source. Write it to another folder."
            )
    parent = os.path.dirname(target)
    # one shard written over (its own build id) and the sharded index no longer opens
    if index_format(parent) == SHARDED_FORMAT:
        raise ValueError(
            f"{path} lies in the sharded index {parent}: writing an index there breaks it (a shard is rebuilt with "
            f"its whole index: build pse.ShardedIndex({parent!r}) again with mode='overwrite'). Write it to another "
            "folder."
        )
    # first: it may move back an index that a killed writer had moved aside
    absent = not os.path.lexists(path)
    clean_leftovers(path)
    restored = absent and os.path.lexists(path)
    if os.path.ismount(path):
        raise ValueError(
            f"{path} is a mount point: an index is built beside its path and swapped in, which a mount point cannot "
            f"be. Give a folder inside it, e.g. {os.path.join(path, 'index')}."
        )
    if not os.path.lexists(path) or is_empty_dir(path):  # an empty folder made for the index is taken
        return
    kind = None if os.path.islink(path) else index_format(path)  # is_index_dir, the kind kept
    if kind is not None:
        if mode == "create":
            sharded = kind == SHARDED_FORMAT
            opener = "pse.ShardedIndex" if sharded else "pse.SparseIndex"
            back = (
                " (moved back: a build killed as it swapped its index in had moved it aside)"
                if restored
                else ""
            )
            raise FileExistsError(
                f"A {'sharded' if sharded else 'single'} index already exists at {path}{back}: open it with "
                f'{opener}({str(path)!r}), or pass mode="overwrite" to replace it.'
            )
        return
    if has_meta(path) and not os.path.islink(path):
        raise FileExistsError(
            f"{path} holds a pt_meta.json that is not a readable index of this package (damaged, or another "
            f"artifact): an index is only ever written over an index. `sparse-eval check-index {path}` says "
            "what is wrong; move the folder away yourself if it is to be replaced."
        )
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
            save_array(tmp / name, arr)
        for name, obj in docs.items():
            with open(tmp / name, "w", encoding="utf-8") as f:
                json.dump(obj, f, ensure_ascii=False)
        seal(tmp, meta)
        _move_into_place(tmp, index, mode)
    except BaseException:
        remove_temp_dir(tmp)
        raise


def progress(docs: Any, verbose: bool, desc: str = "indexing") -> Any:
    """One progress bar for a whole build, with a total when the documents know their number."""
    from tqdm.auto import tqdm

    try:
        total = len(docs)
    except TypeError:
        total = None
    return tqdm(desc=desc, unit="doc", total=total, disable=None if verbose else True)


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
        self.vocab: dict[str, int] = {}
        self.df = np.zeros(1024, dtype=np.int64)
        self.num_docs = 0
        self.num_chunks = 0
        self.doclens: list[np.ndarray] = []
        self._chunk_ends = [0]
        self._started = time.time()
        self.tmp = new_temp_dir(index.path)
        # a file that fails to open (too many open files, Ctrl-C) had left the folder, locked, for the process's life
        opened: list[Any] = []
        try:
            opened.append(open(self.tmp / "docnos.txt", "w", encoding="utf-8", newline="\n"))
            for part in ("terms", "docs", "values"):
                opened.append(open(self.tmp / f"spill.{part}", "wb"))
            # None also where the sharded writer that holds this one checks
            self.seen: SeenDocnos | None = early_check(encoder)
        except BaseException:
            for f in opened:
                f.close()
            remove_temp_dir(self.tmp)
            raise
        self._docnos, *self._spill = opened

    def __enter__(self) -> IndexWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        """Remove everything written: the folder goes even when closing a file fails (a full disk fails the
        flush of its buffer again), which had left the folder, and the disk full, behind."""
        try:
            for f in (self._docnos, *self._spill):
                with contextlib.suppress(OSError):
                    f.close()
        finally:
            remove_temp_dir(self.tmp)

    def written_among(self, candidates: set[str]) -> set[str]:
        """Those of ``candidates`` among the docnos written so far."""
        self._docnos.flush()
        with open(self.tmp / "docnos.txt", encoding="utf-8", newline="\n") as f:  # a docno may hold "\r"
            return {d for d in (line.removesuffix("\n") for line in f) if d in candidates}

    def term_ids(self, terms: list[Any]) -> np.ndarray:
        """Map term strings to ids, growing the vocabulary."""
        return term_ids(self.vocab, terms)

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
        refuse_unencodable(docnos)
        if self.seen is not None:
            self.seen.add(docnos, self.written_among)
        values = np.asarray(values, dtype=np.float32)
        # a length (the sum of a document's weights) beyond float32's range: stored as inf, the index unverifiable
        if not (np.isfinite(values).all() and (np.abs(np.asarray(doclen, dtype=np.float64)) < 3.4e38).all()):
            raise ValueError("Document weights are NaN or infinite, or sum beyond float32's range (3.4e38).")
        docs = np.repeat(
            np.arange(self.num_docs, self.num_docs + len(docnos), dtype=np.int32), np.diff(offsets)
        )
        keep = values != 0
        terms, values, docs = np.asarray(terms, dtype=np.int32)[keep], values[keep], docs[keep]
        with full_disk_named(self._docnos.name):
            self._docnos.write("".join(d + "\n" for d in docnos))
        if len(self.vocab) > len(self.df):
            self.df = np.concatenate(
                [self.df, np.zeros(max(len(self.vocab), 2 * len(self.df)) - len(self.df), np.int64)]
            )
        self.df[: len(self.vocab)] += np.bincount(terms, minlength=len(self.vocab))
        from ._postings import sort_by_term  # its kernels compiled when an index is first built

        # spilled sorted by term (doc ids stay ascending within a term), so that finish() can read any term
        # range of a chunk with a binary search
        for spill, arr in zip(self._spill, sort_by_term(terms, docs, values, len(self.vocab))):
            write_array(arr, spill)
        self._chunk_ends.append(self._chunk_ends[-1] + len(terms))
        self.doclens.append(np.asarray(doclen, dtype=np.float32))
        self.num_docs += len(docnos)
        self.num_chunks += 1

    def close(self) -> Spill:
        """Close the spill files and describe them (the first phase's result); :meth:`finish` writes the index."""
        for f in (self._docnos, *self._spill):
            # what each still buffers is written now
            with full_disk_named(getattr(f, "name", str(self.tmp))):
                f.close()
        if self.num_docs == 0:
            raise ValueError("No documents were indexed: the document iterator was empty.")
        if self.num_docs >= 2**31 - 1:
            raise ValueError("More than 2^31 - 1 documents are not supported.")
        df = np.zeros(len(self.vocab), dtype=np.int64)  # a shard may not have seen the corpus's last terms
        n = min(len(df), len(self.df))
        df[:n] = self.df[:n]
        doclen = np.concatenate(self.doclens)
        return Spill(self.tmp, df, list(self._chunk_ends), self.num_docs, doclen, self.encoder, self._started)

    def finish(
        self,
        weight: Callable[[np.ndarray, np.ndarray, dict[str, Any]], np.ndarray] | None = None,
        extra_meta: dict[str, Any] | None = None,
        collection: tuple[dict[str, Any], np.ndarray] | None = None,
    ) -> None:
        """Transpose the chunks into term-major arrays, write metadata, and move the index into place (the
        arguments are :func:`~pyterrier_sparse_eval._spill.write_from_spill`'s)."""
        write_from_spill(self.close(), self.vocab, self.tmp, weight, extra_meta, collection)
        _move_into_place(self.tmp, self.index, self.mode)


def open_writer(index: Any, *, mode: str, encoder: dict[str, Any]) -> Any:
    """The writer of ``index``: its own when it has one (a sharded index), else an :class:`IndexWriter`."""
    if hasattr(index, "writer"):
        return index.writer(mode=mode, encoder=encoder)
    return IndexWriter(index, mode=mode, encoder=encoder)


ENGINES = ("local", "ray")


def python_number(value: Any) -> Any:
    """numpy's numbers as Python's (an index's JSON metadata takes no numpy scalar), anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def check_integer(name: str, value: Any, least: int = 1, why: str = "") -> None:
    """``value`` is an integer (not a bool) >= ``least``; else a ValueError naming it (and ``why``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}{why}, got {value!r}.")


def check_engine(engine: str, **ray_options: Any) -> None:
    """A known engine; Ray's options (``ray_address``, ``num_workers``) only with ``engine="ray"``."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}.")
    if engine != "ray" and (given := [k for k, v in ray_options.items() if v is not None]):
        gpu = " To encode on a GPU here, give the model device='cuda'." if "num_gpus" in given else ""
        raise ValueError(
            f"{', '.join(given)}: Ray's options, for engine='ray' only (give it, or leave them out).{gpu}"
        )
    check_gpus(ray_options.get("num_gpus") or 0)


_TOKS_HINT = (
    "index.indexer() takes documents with precomputed `toks`; encode text first "
    "(e.g. splade.doc_encoder() >> index.indexer()) or use pse.BM25().indexer(index) for raw text."
)


class SparseIndexer(InitAttributes, pt.Indexer):
    """Indexes documents that carry ``docno`` and ``toks`` (a {term: weight} dict), e.g. SPLADE output.

    Weights are stored as given; the retriever applies idf at query time when asked to. ``encoder`` is
    recorded in the index metadata (how the weights were made; default ``{"type": "toks"}``). With
    ``engine="ray"`` the batches are encoded by Ray tasks (``num_workers`` kept busy; default: the cluster's
    CPUs) and a sharded index's shards are finished on the cluster (see ``_ray``).
    """

    ATTRIBUTE_OF = {"index": "index_ref"}  # its index() is the method

    def __init__(
        self,
        index: Any,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool = True,
        encoder: dict[str, Any] | None = None,
        engine: str = "local",
        ray_address: str | None = None,
        num_workers: int | None = None,
    ):
        refuse_path(index)
        check_engine(engine, ray_address=ray_address, num_workers=num_workers)
        check_integer("batch_size", batch_size)
        self.index_ref = index
        self.mode = mode
        self.batch_size = batch_size
        self.verbose = verbose
        self.encoder = encoder
        self.engine = engine
        self.ray_address = ray_address
        self.num_workers = num_workers

    def __repr__(self) -> str:
        return f"SparseIndexer({self.index_ref!r}, mode={self.mode!r}, engine={self.engine!r})"

    def index(self, docs: Iterable[dict[str, Any]] | pd.DataFrame) -> Any:  # type: ignore[override]
        """Index ``docs`` and return the (reloaded) index."""
        encoder = self.encoder if self.encoder is not None else {"type": "toks"}
        if self.engine == "ray":
            self.empty_, self.total_ = build_on_ray(self, docs, encoder, self.batches, None)
            self.finished()
            return self.index_ref
        done = 0
        writing = open_writer(self.index_ref, mode=self.mode, encoder=encoder)
        with writing as writer, corpus_positions(lambda: done):
            bar = progress(docs, self.verbose)
            for batch in watch_fields(batched(iter_docs(docs), self.batch_size), self):
                docnos, toks = self.encode(batch, bar)
                add_toks(writer, docnos, toks)
                done += len(batch)
                bar.update(0 if self.updates_progress else len(batch))
            bar.close()
            writer.finish()
        self.finished()
        return self.index_ref

    #: whether :meth:`encode` moves the progress bar itself (as an encoder that takes long per batch does)
    updates_progress = False

    def encode(self, batch: list[dict[str, Any]], bar: Any) -> tuple[list[str], list[dict[str, float]]]:
        """The docnos and ``toks`` of a batch of documents (subclasses encode text here)."""
        check_docs(batch, ("docno", "toks"), _TOKS_HINT)
        return batch_docnos(batch), [d["toks"] for d in batch]

    def batches(self, first: list[dict[str, Any]]) -> Callable[[list[dict[str, Any]]], Encoded]:
        """What a Ray worker runs on each batch (``engine="ray"``), set up from the first batch."""
        return ToksBatches()

    def finished(self) -> None:
        """Called after a successful build (subclasses report here)."""


class ToksBatches:
    """Documents that carry ``toks`` as :data:`Encoded` batches (run on a Ray worker for ``engine="ray"``)."""

    def __call__(self, batch: list[dict[str, Any]]) -> Encoded:
        check_docs(batch, ("docno", "toks"), _TOKS_HINT)
        return flatten_toks(batch_docnos(batch), [d["toks"] for d in batch])


def build_on_ray(
    indexer: Any,
    docs: Any,
    encoder: dict[str, Any],
    make: Callable[[list[dict[str, Any]]], Callable[[list[dict[str, Any]]], Encoded]],
    weight: Callable[..., Any] | None,
) -> tuple[int, int]:
    """Index ``docs`` into ``indexer.index_ref`` with batches encoded by Ray tasks running ``make(first_batch)``;
    returns (documents without text, documents). ``weight`` finishes the stored values (BM25)."""
    from ._ray import EncoderPool, connect

    ray = connect(indexer.ray_address)
    empty = total = 0
    with open_writer(indexer.index_ref, mode=indexer.mode, encoder=encoder) as writer:
        bar = progress(docs, indexer.verbose)
        batches = watch_fields(batched(iter_docs(docs), indexer.batch_size), indexer)
        first = next(batches, None)
        if first is not None:
            pool = EncoderPool(ray, make(first), indexer.num_workers, getattr(indexer, "num_gpus", 0) or 0)
            mapped = contextlib.closing(pool.map(itertools.chain([first], batches)))
            # the batches come in order: a batch's error surfaces once those before it are added
            try:
                with mapped as results, corpus_positions(lambda: total):
                    for n, (docnos, names, idx, values, offsets, doclen, missing) in results:
                        writer.add(docnos, writer.term_ids(names)[idx], values, offsets, doclen)
                        empty, total = empty + missing, total + n
                        bar.update(n)
            except BaseException:
                # on any error, Ctrl-C and SIGTERM included, the batches in flight are left to end on their own
                pool.abandon()
                raise
        bar.close()
        if hasattr(writer, "writers"):  # a sharded index: its shards are finished on the cluster
            writer.finish(weight, ray=ray)
        else:
            writer.finish(weight)
    return empty, total


def add_toks(writer: IndexWriter, docnos: list[str], toks: list[dict[str, float]]) -> None:
    """Add documents given as {term: weight} dicts to a writer (document length = sum of weights)."""
    _, names, idx, values, offsets, doclen, _ = flatten_toks(docnos, toks)
    writer.add(docnos, writer.term_ids(names)[idx], values, offsets, doclen)
