"""The on-disk format of a SparseIndex, and the checks that a folder holds an intact one.

Layout (all readable with ``numpy.load(..., allow_pickle=False)`` and ``json``)::

    pt_meta.json              type/format (for pt.Artifact.load), statistics, how it was built, and the seal:
                              each file's size and CRC-32, a build id, a checksum of the metadata itself
    vocab.json                term strings; term id = position
    docnos.json               document ids; doc id = position
    postings.indptr.npy       int64 [num_terms + 1]   postings of term t: indptr[t]:indptr[t+1]
    postings.indices.npy      int32 [num_postings]    doc ids, ascending within a term
    postings.data.npy         float32 [num_postings]  final document-side term weights
    doclen.npy                float32 [num_docs]      tokens per document (BM25) or sum of weights
    docno_rank.npy            int32 [num_docs]        position of each docno in sorted order (tie-breaking)
    collection_df.npy         int64 [num_terms]       (subsets only) document frequencies of the parent corpus

Like Lucene's per-file checksum footers and ``CheckIndex``, an index checks itself: every file is sealed with
its size and CRC-32 when it is built. Opening it checks the metadata and every file's size; with
``checks="full"`` (the default) every file's CRC-32 too, once per open. Each array is checked when first
read: dtype, shape, and the invariants the search kernels rely on (doc ids in range and ascending within a
term, ``indptr`` monotone and ending at the number of postings, the docno ranks a permutation), whatever
``checks`` is; with ``checks="full"`` also finite weights. A failed check raises :class:`IndexCorruptError`
naming the file, before any kernel sees the data: a damaged or edited index never crashes the interpreter,
and with ``checks="full"`` never returns rankings.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import uuid
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ARTIFACT_TYPE",
    "ARTIFACT_FORMAT",
    "SHARDED_FORMAT",
    "PACKAGE_HINT",
    "FORMAT_VERSION",
    "IndexCorruptError",
    "StaleIndexError",
    "ARRAYS",
    "seal",
    "read_meta",
    "is_index_dir",
    "index_format",
    "has_meta",
    "describe_path",
    "check_sizes",
    "check_array",
    "check_json",
    "check_checksums",
    "check_sorted_postings",
    "array_files",
    "file_crc32",
    "META",
    "JSON_LISTS",
    "generation",
]

ARTIFACT_TYPE = "sparse_index"
ARTIFACT_FORMAT = "csr"
#: the format of a sharded index's manifest (``pt_meta.json`` of a folder of shards, see ``_sharded``)
SHARDED_FORMAT = "sharded"
PACKAGE_HINT = "pyterrier-sparse-eval"
FORMAT_VERSION = 1
META = "pt_meta.json"
_REBUILD = 'rebuild it (mode="overwrite")'

#: array file -> (dtype, shape from the metadata)
ARRAYS: dict[str, tuple[str, Callable[[dict[str, Any]], tuple[int, ...]]]] = {
    "postings.indptr.npy": ("<i8", lambda m: (m["num_terms"] + 1,)),
    "postings.indices.npy": ("<i4", lambda m: (m["num_postings"],)),
    "postings.data.npy": ("<f4", lambda m: (m["num_postings"],)),
    "doclen.npy": ("<f4", lambda m: (m["num_docs"],)),
    "docno_rank.npy": ("<i4", lambda m: (m["num_docs"],)),
    "collection_df.npy": ("<i8", lambda m: (m["num_terms"],)),
}
#: JSON list file -> the metadata field giving its length
JSON_LISTS = {"vocab.json": "num_terms", "docnos.json": "num_docs"}
_COUNTS = ("num_docs", "num_terms", "num_postings")
_BLOCK = 1 << 24  # elements per block of the O(n) checks, so that their temporaries stay small


class IndexCorruptError(ValueError):
    """An index on disk is damaged, incomplete or was edited after its build; the message names the file."""


class ForeignFileError(IndexCorruptError):
    """An index folder holds a file its build did not write (the entry is intact: the file is to move out)."""


class StaleIndexError(RuntimeError):
    """The index at a path was rebuilt after a handle (or a retriever) read it."""


def file_crc32(path: str | os.PathLike[str]) -> str:
    """CRC-32 of a file's bytes, as 8 hex digits: zlib's (several GB/s) over a read-only memory map of the
    file, so that no copy is made of it."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return f"{zlib.crc32(b''):08x}"
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return f"{zlib.crc32(mapped):08x}"


def _meta_checksum(meta: dict[str, Any]) -> str:
    body = {k: v for k, v in meta.items() if k != "checksum"}
    return f"{zlib.crc32(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()):08x}"


def seal(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Record every file of a finished index folder (size, CRC-32), a new build id and the metadata's own
    checksum, and write ``pt_meta.json``: the last file written, whose presence marks a complete index."""
    files = {}
    for entry in sorted(folder.iterdir()):
        if entry.name != META:
            files[entry.name] = {"bytes": entry.stat().st_size, "crc32": file_crc32(entry)}
    sealed = {**meta, "build_id": uuid.uuid4().hex, "files": files}
    sealed["checksum"] = _meta_checksum(sealed)
    with open(folder / META, "w", encoding="utf-8") as f:
        json.dump(sealed, f, indent=2, ensure_ascii=False)
    return sealed


def index_format(path: str | os.PathLike[str]) -> str | None:
    """The kind of index of this package that the ``pt_meta.json`` at ``path`` declares: ``ARTIFACT_FORMAT``
    (a single index) or ``SHARDED_FORMAT``; None when there is none, it is not valid JSON, or it declares
    anything else. Reads the metadata only (no array)."""
    try:
        with open(Path(path) / META, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    if (
        isinstance(meta, dict)
        and meta.get("type") == ARTIFACT_TYPE
        and meta.get("format") in (ARTIFACT_FORMAT, SHARDED_FORMAT)
        and meta.get("package_hint", PACKAGE_HINT) == PACKAGE_HINT
    ):
        return str(meta["format"])
    return None


def has_meta(path: str | os.PathLike[str]) -> bool:
    """Whether there is a ``pt_meta.json`` at ``path``: an index, or one whose checks say what is wrong."""
    return os.path.isfile(os.path.join(path, META))


def require_meta(path: str | os.PathLike[str]) -> None:
    """A FileNotFoundError naming what is at ``path`` when it holds no index at all (nothing, a file, a folder
    without ``pt_meta.json``)."""
    if not has_meta(path):
        raise FileNotFoundError(
            f"No index at {path}: it is {describe_path(path) if os.path.lexists(path) else 'not there'}. Build "
            f"one with pse.SparseIndex({str(path)!r}) (or pse.ShardedIndex(path, num_shards=N)) and an indexer."
        )


def is_index_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder (not a link to one) whose ``pt_meta.json`` says it is a sparse index of
    this package (a single or a sharded one)."""
    return not os.path.islink(path) and index_format(path) is not None


def describe_path(path: str | os.PathLike[str]) -> str:
    """What is at ``path``, in a few words, for error messages."""
    p = Path(path)
    if p.is_symlink():
        return f"a symbolic link to {os.readlink(p)}"
    if p.is_file():
        return f"a file of {p.stat().st_size:,} bytes"
    if p.is_dir():
        names = sorted(os.listdir(p))
        if is_index_dir(p):
            return "a sparse index"
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return (
            f"a folder that is not a sparse index ({len(names)} entries: {shown})"
            if names
            else "an empty folder"
        )
    return "something that is not a file or a folder"


def _corrupt(path: Path, what: str) -> IndexCorruptError:
    return IndexCorruptError(
        f"{path}: {what}. The index is damaged or was edited after its build; {_REBUILD}."
    )


def array_files(meta: dict[str, Any]) -> list[str]:
    """The array files of an index with this metadata (``collection_df.npy`` only for subsets)."""
    return [n for n in ARRAYS if n != "collection_df.npy" or "collection" in meta]


def read_meta(folder: Path) -> dict[str, Any]:
    """``pt_meta.json`` of an index folder, checked: our type and format, a known version, the counts, and the
    seal: the records of every file and the metadata's own checksum (indexes built before sealing have none
    of the three and are read without them; a partial seal is damage)."""
    path = folder / META
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (ValueError, RecursionError) as e:
        # mode="overwrite" writes only over an index it can read: this one is removed, then built again
        raise IndexCorruptError(
            f"{path}: not valid JSON ({type(e).__name__}). The index is damaged or was edited after its build; "
            f'remove {folder} and build it again (mode="overwrite" writes only over an index whose metadata '
            "reads)."
        ) from None
    if (
        not isinstance(meta, dict)
        or meta.get("type") != ARTIFACT_TYPE
        or meta.get("format") != ARTIFACT_FORMAT
    ):
        if (
            isinstance(meta, dict)
            and meta.get("type") == ARTIFACT_TYPE
            and meta.get("format") == SHARDED_FORMAT
        ):
            raise ValueError(f"{folder} is a sharded index: open it with pse.ShardedIndex({str(folder)!r}).")
        found = (
            {k: meta.get(k) for k in ("type", "format")} if isinstance(meta, dict) else type(meta).__name__
        )
        raise ValueError(f"{folder} is not a sparse_index.csr artifact (pt_meta.json says {found}).")
    version = meta.get("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise _corrupt(path, f"format_version is {version!r}, not a version number")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{folder} was written by a newer pyterrier-sparse-eval (format {version!r}); "
            "upgrade with `pip install -U pyterrier-sparse-eval`."
        )
    for key in _COUNTS:
        if not isinstance(meta.get(key), int) or isinstance(meta.get(key), bool) or meta[key] < 0:
            raise _corrupt(path, f"{key} is {meta.get(key)!r}, not a count")
    seal_keys = ("files", "build_id", "checksum")
    if any(k in meta for k in seal_keys):
        if not all(k in meta for k in seal_keys):
            raise _corrupt(path, "the seal is incomplete (files, build_id and checksum go together)")
        if meta["checksum"] != _meta_checksum(meta):
            raise _corrupt(path, "the metadata does not match its checksum (a field was edited)")
        files = meta["files"]
        if not isinstance(files, dict) or not all(
            isinstance(r, dict) and isinstance(r.get("bytes"), int) and isinstance(r.get("crc32"), str)
            for r in files.values()
        ):
            raise _corrupt(path, "the file records are malformed")
        unrecorded = sorted((set(array_files(meta)) | set(JSON_LISTS)) - set(files))
        if unrecorded:
            raise _corrupt(path, f"the seal does not record {unrecorded[0]}")
    return meta


def refuse_path(index: Any) -> None:
    """A TypeError for a path given where an index object goes (it had failed on a missing attribute)."""
    if isinstance(index, (str, os.PathLike)):
        raise TypeError(
            f"{str(index)!r} is a path, not an index: pass pse.SparseIndex({str(index)!r}) (pse.ShardedIndex(path, "
            "num_shards=N) to build shards; pse.open_index(path) opens either, once built)."
        )


def handle_path(path: str | os.PathLike[str]) -> str:
    """An index handle's folder, absolute (``~`` expanded): a later ``os.chdir`` (a notebook's) or a Ray worker in
    another folder still finds the index the handle was made for."""
    path = os.path.expanduser(os.fspath(path))
    try:
        return os.path.abspath(path)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"The index path {path!r} is relative to the current folder, which no longer exists (removed after "
            "the process moved into it): give an absolute path, or os.chdir() into a folder that exists."
        ) from None


def generation(folder: Path) -> tuple[int, int, int]:
    """Identity of the ``pt_meta.json`` on disk: a rebuild writes a new file, so a new identity."""
    st = os.stat(folder / META)
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


@contextlib.contextmanager
def unless_rebuilt(folder: Path, seen: tuple[int, int, int] | None, doing: str = "opened") -> Iterator[None]:
    """Damage found inside the block is damage only if ``folder`` still holds the build ``seen`` (its
    :func:`generation` before the block): one swapped in meanwhile by another process's rebuild mixes two builds'
    files, which is a :class:`StaleIndexError` (the index was being ``doing``: "opened" or "verified")."""
    try:
        yield
    except IndexCorruptError:
        try:
            now: tuple[int, int, int] | None = generation(folder)
        except OSError:
            now = None
        if now == seen:
            raise
        again = (
            "verify it again" if doing == "verified" else "open it again (index.reload(), or a new handle)"
        )
        raise StaleIndexError(
            f"The index at {folder} was rebuilt while it was being {doing}; {again}."
        ) from None


def check_sizes(folder: Path, meta: dict[str, Any]) -> None:
    """Every file the seal records is there with its recorded size (a cheap ``stat`` each)."""
    for name, record in meta.get("files", {}).items():
        path = folder / name
        if not path.is_file():
            raise _corrupt(path, "missing")
        if path.stat().st_size != record["bytes"]:
            raise _corrupt(path, f"{path.stat().st_size:,} bytes where the build wrote {record['bytes']:,}")


def check_checksums(folder: Path, meta: dict[str, Any]) -> None:
    """Every sealed file's CRC-32 against the one recorded at build time. zlib releases the GIL while it sums,
    so the files are read on several threads."""
    records = meta.get("files", {})
    names = sorted(records, key=lambda n: -records[n]["bytes"])
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        for name, crc in zip(names, pool.map(lambda n: file_crc32(folder / n), names)):
            if crc != records[name]["crc32"]:
                raise _corrupt(folder / name, "its CRC-32 differs from the one recorded at build time")


def check_json(folder: Path, name: str, meta: dict[str, Any], full: bool = True) -> list[Any]:
    """A JSON list file of the index, checked: valid JSON, a list of the recorded length and, when ``full``,
    of distinct strings (what the build wrote; with the CRC-32s checked that needs no scan of its own)."""
    path = folder / name
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except FileNotFoundError:
        raise _corrupt(path, "missing") from None
    except (ValueError, RecursionError) as e:
        raise _corrupt(path, f"not valid JSON ({type(e).__name__})") from None
    expected = meta[JSON_LISTS[name]]
    if not isinstance(value, list) or len(value) != expected:
        got = len(value) if isinstance(value, list) else type(value).__name__
        raise _corrupt(path, f"holds {got} entries where the metadata says {JSON_LISTS[name]} = {expected}")
    if full and (not all(type(v) is str for v in value) or len(set(value)) != len(value)):
        raise _corrupt(path, "holds entries that are not distinct strings")
    return value


def _blocks(n: int) -> range:
    return range(0, n, _BLOCK)


def check_array(folder: Path, name: str, meta: dict[str, Any], full: bool, mmap: bool) -> np.ndarray:
    """Load one array file of the index and check its header against its size, its dtype and shape, and its
    invariants (see the module docstring); returns the array. Checksums are :func:`check_checksums`' job."""
    path = folder / name
    dtype, shape_of = ARRAYS[name]
    shape = shape_of(meta)
    try:  # the header first: a shape edited in it must not make numpy allocate what the file does not hold
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            reader = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            found_shape, fortran, found_dtype = reader(f)
            offset = f.tell()
    except FileNotFoundError:
        raise _corrupt(path, "missing") from None
    # numpy's header parser raises what the damaged bytes lead it to (tokenize.TokenError among them)
    except Exception as e:
        raise _corrupt(path, f"not a readable .npy array ({type(e).__name__}: {e})") from None
    if found_dtype.str != dtype or tuple(found_shape) != shape or fortran:
        order = " in Fortran order" if fortran else ""
        raise _corrupt(
            path, f"holds {found_dtype.str} {tuple(found_shape)}{order} where the index needs {dtype} {shape}"
        )
    if offset + int(np.prod(shape)) * np.dtype(dtype).itemsize != path.stat().st_size:
        raise _corrupt(path, "its size does not match its header (truncated, or bytes added)")
    arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    problem = _invariant(name, arr, meta, full)
    if problem:
        raise _corrupt(path, problem)
    return arr


def _invariant(name: str, arr: np.ndarray, meta: dict[str, Any], full: bool) -> str | None:
    """The first broken invariant of an array, or None: everything a kernel relies on (so that no damage can
    crash one), always; finite weights only when ``full`` (non-finite weights give wrong scores, no crash)."""
    n_docs = meta["num_docs"]
    if name == "postings.indptr.npy":
        if arr[0] != 0 or arr[-1] != meta["num_postings"]:
            return f"runs from {arr[0]} to {arr[-1]} where it must run from 0 to num_postings = {meta['num_postings']}"
        if np.any(arr[1:] < arr[:-1]):
            return "decreases somewhere (postings offsets must be monotone)"
    elif name == "postings.indices.npy":
        for s in _blocks(len(arr)):
            block = arr[s : s + _BLOCK]
            if len(block) and (block.min() < 0 or block.max() >= n_docs):
                return f"holds doc ids outside 0..{n_docs - 1}"
    elif name == "docno_rank.npy":
        if n_docs and (arr.min() < 0 or arr.max() >= n_docs or np.bincount(arr, minlength=n_docs).max() != 1):
            return "is not a permutation of 0..num_docs-1"
    elif name in ("postings.data.npy", "doclen.npy"):
        if full:
            for s in _blocks(len(arr)):
                if not np.isfinite(arr[s : s + _BLOCK]).all():
                    return "holds NaN or infinite values"
    elif name == "collection_df.npy" and len(arr) and arr.min() < 0:
        return "holds negative document frequencies"
    return None


def check_sorted_postings(folder: Path, indptr: np.ndarray, indices: np.ndarray) -> None:
    """Doc ids ascend strictly within each term: the kernels walk each term's postings in order, and a descent
    would send them outside their buffers."""
    term = first_unsorted_term(indptr, indices)
    if term >= 0:
        raise _corrupt(
            folder / "postings.indices.npy", f"doc ids do not ascend within a term (term id {term})"
        )


def first_unsorted_term(indptr: np.ndarray, indices: np.ndarray) -> int:
    """The first term whose doc ids do not ascend strictly (a repeat or a descent), or -1 when every term's do.
    ``indptr`` must run from 0 to ``len(indices)`` and never decrease (checked before). A doc id may fall only
    where a term starts: the count of falls over all postings (one comparison each) must equal the count at the
    starts of terms (one each); only when it does not are the falls located. O(postings + terms), one pass over
    the doc ids: 0.05 s for the 47M of a 1M-document index, a plain sum over them 0.03 s."""
    n = len(indices)
    ptr = np.asarray(indptr)
    falls = 0
    for s in _blocks(n):
        block = indices[s : min(n, s + _BLOCK + 1)]
        falls += int(np.count_nonzero(block[1:] <= block[:-1]))
    if not falls:
        return -1
    # the starts of non-empty terms but the first posting, each once
    starts = ptr[:-1][(ptr[1:] > ptr[:-1]) & (ptr[:-1] > 0)]
    if falls == int(np.count_nonzero(indices[starts] <= indices[starts - 1])):
        return -1
    for s in _blocks(n):
        block = indices[s : min(n, s + _BLOCK + 1)]
        # each fall in the last term starting at or before it (the non-empty one among terms starting there)
        drops = np.flatnonzero(block[1:] <= block[:-1]) + (s + 1)
        term = np.searchsorted(ptr[:-1], drops, side="right") - 1
        bad = ptr[term] != drops
        if bad.any():
            return int(term[np.argmax(bad)])
    return -1  # pragma: no cover - the counts differ only where a fall is inside a term
