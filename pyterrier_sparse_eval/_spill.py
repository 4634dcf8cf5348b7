"""From spilled chunks to a complete index folder: the second phase of every build (layout in ``_format``).

A writer (``_build.IndexWriter``) spills each batch to disk as a chunk sorted by term, plus the docnos as text;
closing it gives a :class:`Spill`, a small picklable description of those files and of the counts gathered on
the way. :func:`write_from_spill` turns a spill into the index's files, term range by term range, in memory
bounded by one pass of at most ``_PASS_POSTINGS`` postings. It writes into the spill's own folder (consuming the
spill files as it goes, as a local build does) or into another, fresh folder, leaving the spill untouched: a
shard finished on a Ray worker that dies half-way is finished again from the same spill by the retried task.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._docnos import code_point_order
from ._format import ARTIFACT_FORMAT, ARTIFACT_TYPE, FORMAT_VERSION, PACKAGE_HINT, seal
from .files import full_disk_named, save_array, write_array

__all__ = ["Spill", "corpus_stats", "index_meta", "write_from_spill"]

#: postings placed per pass when the spilled chunks are transposed (4 bytes doc id + 4 bytes weight each)
_PASS_POSTINGS = 1 << 22
_WEIGHT_BLOCK = 1 << 18
_SPILLS = ("terms", "docs", "values")


@dataclass
class Spill:
    """A closed writer's spilled chunks: ``folder`` holds ``docnos.txt`` and ``spill.{terms,docs,values}``;
    chunk c is postings ``chunk_ends[c]:chunk_ends[c + 1]``; ``df`` counts documents per term id."""

    folder: Path
    df: np.ndarray
    chunk_ends: list[int]
    num_docs: int
    doclen: np.ndarray
    encoder: dict[str, Any]
    started: float


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


def corpus_stats(doclen: np.ndarray) -> dict[str, Any]:
    """What BM25 weights need of a corpus, from its document lengths in document order: N, the mean length,
    and Lucene's docCount and sumTotalTermFreq (documents with at least one term, and their total length)."""
    return {
        "num_docs": len(doclen),
        "avgdl": float(doclen.mean()) if len(doclen) else 0.0,
        "doc_count": int(np.count_nonzero(doclen)),
        "sum_ttf": float(doclen.sum()),
    }


def _write_docnos(src: Path, out: Path, consume: bool) -> np.ndarray:
    """docnos.json from the spilled docnos (refusing duplicates); returns each document's docno rank."""
    with open(src / "docnos.txt", "rb") as text:
        raw = text.read()
    # UTF-8 bytes sort in code point order (trec_eval's strcmp order) and take a quarter of the memory of str
    docnos = raw.split(b"\n")[:-1]
    del raw
    order = code_point_order(docnos)
    # equal docnos are neighbours in that order (compared as the bytes objects, 8 bytes a document)
    ranked = np.array(docnos, dtype=object)[order]
    twice = ranked[1:][ranked[1:] == ranked[:-1]][:5].tolist()
    del ranked
    if twice:
        examples = sorted({d.decode() for d in twice[:5]})
        raise ValueError(f"Duplicate docnos in the corpus, e.g. {examples}; docnos must be unique.")
    docno_rank = np.empty(len(docnos), dtype=np.int32)
    docno_rank[order] = np.arange(len(docnos), dtype=np.int32)
    del order
    with open(out / "docnos.json", "w", encoding="utf-8", newline="\n") as f:
        f.write("[")
        for start in range(0, len(docnos), 1 << 16):  # a JSON list written in slices, never as one string
            part = json.dumps([d.decode() for d in docnos[start : start + (1 << 16)]], ensure_ascii=False)
            f.write(("," if start else "") + part[1:-1])
        f.write("]")
    if consume:
        (src / "docnos.txt").unlink()
    return docno_rank


def write_from_spill(
    spill: Spill,
    vocab: Iterable[str],
    out: Path,
    weight: Callable[[np.ndarray, np.ndarray, dict[str, Any]], np.ndarray] | None = None,
    extra_meta: dict[str, Any] | None = None,
    collection: tuple[dict[str, Any], np.ndarray] | None = None,
) -> dict[str, Any]:
    """Write a complete, sealed index into ``out`` (the spill's own folder: its spill files are consumed; any
    other folder: the spill is left as it was) and return its metadata. ``vocab`` lists the terms by id.

    ``weight(values, doclen_of_each_posting, stats)`` turns stored values into final weights once corpus
    statistics (``stats["avgdl"]``, ``stats["num_docs"]``, and Lucene's ``stats["doc_count"]``,
    ``stats["sum_ttf"]``) are known (BM25).

    ``collection`` = (statistics, document frequencies per term id) of a larger corpus this index is part of
    (a shard): the weights and the idf then come from them (``collection_df.npy``, as for a subset).
    """
    # a full disk said with the folder and the space left
    with full_disk_named(str(out)):
        from ._postings import place_postings  # its kernels compiled when an index is first built

        src = spill.folder
        consume = Path(out).resolve() == Path(src).resolve()
        docno_rank = _write_docnos(src, out, consume)
        doclen = spill.doclen
        stats = corpus_stats(doclen) if collection is None else collection[0]
        df = spill.df
        num_terms = len(df)
        indptr = np.zeros(num_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        nnz = int(indptr[-1])
        spill_names = [src / f"spill.{part}" for part in _SPILLS]
        ends = spill.chunk_ends
        with (
            open(out / "postings.indices.npy", "wb") as out_i,
            open(out / "postings.data.npy", "wb") as out_d,
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
                for c in range(len(ends) - 1):
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
                write_array(docs_out, out_i)
                write_array(values_out, out_d)
                t0 = t1
        if consume:
            for name in spill_names:
                name.unlink()
        save_array(out / "postings.indptr.npy", indptr)
        save_array(out / "doclen.npy", doclen)
        save_array(out / "docno_rank.npy", docno_rank)
        if collection is not None:
            save_array(out / "collection_df.npy", np.asarray(collection[1][:num_terms], dtype=np.int64))
            extra_meta = {"collection": {**collection[0], "parent": "shards"}, **(extra_meta or {})}
        with open(out / "vocab.json", "w", encoding="utf-8") as vocab_file:
            vocab_file.write(json.dumps(list(vocab)[:num_terms], ensure_ascii=False))
        meta = index_meta(
            num_docs=spill.num_docs,
            num_terms=num_terms,
            num_postings=nnz,
            avgdl=float(doclen.mean()) if len(doclen) else 0.0,
            encoder=spill.encoder,
            built={"seconds": round(time.time() - spill.started, 3)},
            extra={"doc_count": int(np.count_nonzero(doclen)), **(extra_meta or {})},
        )
        seal(out, meta)  # pt_meta.json last: its presence marks a complete index
        return meta
