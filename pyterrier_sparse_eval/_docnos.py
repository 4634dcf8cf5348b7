"""Result frames: their docno column, gathered as bytes, and the frame built from its columns; and the merge of a
sharded search's results, which compares docnos (:func:`merge_top_k`).

A run at k = 1000 holds a docno per row: taking them from an object array of Python strings costs about 60 ns a row
(each row touches a string object somewhere in memory, and its reference count), more than the retrieval of a light
query. When pandas' default string dtype is Arrow-backed (pandas >= 3 with pyarrow installed, the dtype
``pd.Series(["x"])`` has), the column is instead gathered from the docnos' UTF-8 bytes, laid out as a fixed-width
matrix (one row per document, ``width`` bytes, and each docno's length), and handed to pandas as an Arrow string
array without creating a Python object per row: about 3x faster at 300k rows. Without an Arrow-backed default the column
stays an object array of ``str``, as before.

A result frame's other columns are cheap to make, but pandas' own ways of making them cost tens of microseconds each
whatever the frame's size: :func:`take_column` and :func:`result_frame` go around them (a one-query call on
Vaswani at k = 10: 1.09 -> 0.67 ms with the retriever's other savings, old and new code in one process).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._numba import have_numba

# the fixed-width matrix is used while it costs at most this many times the docnos' own bytes (plus 8 per
# document, an offset); beyond it (a few very long docnos), Arrow's own take over the variable-length array
FIXED_WIDTH_OVERHEAD = 2.0


try:  # the setting pandas' own inference reads (pandas >= 2.1); without it, every call probes
    from pandas._config import using_string_dtype as _infers_strings
except ImportError:  # pragma: no cover - older pandas
    _infers_strings = None
_STRING_DTYPES: dict[tuple[bool, Any], Any] = {}
try:  # pandas >= 3: a frame made from its blocks, without the constructor's inference per column
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pragma: no cover - older pandas
    _from_blocks = None
_COLUMN_INDEXES: dict[tuple[str, ...], pd.Index] = {}  # one per set of column names (~40 us each to make)


def string_dtype() -> Any:
    """The dtype pandas gives a column of ``str`` (pandas >= 3: ``str``; before: ``object``).

    Asked of pandas once per setting of its string inference and string storage (a probe Series costs ~70 us, a
    result frame's build asked twice)."""
    if _infers_strings is None:
        return pd.Series(["x"]).dtype
    key = (bool(_infers_strings()), pd.get_option("mode.string_storage"))
    if key not in _STRING_DTYPES:
        _STRING_DTYPES[key] = pd.Series(["x"]).dtype
    return _STRING_DTYPES[key]


def arrow_strings() -> bool:
    """Whether pandas' default string dtype is Arrow-backed (then docno columns are built from bytes)."""
    dtype = string_dtype()
    return isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"


def _gather_numpy(fixed: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of the docnos of ``docs``: row d of ``fixed`` holds docno d's bytes, padded, then its
    length."""
    width = fixed.shape[1] - 1
    rows = fixed.view(np.dtype((np.void, width + 1))).reshape(-1)[docs]  # one item per row: a cheap gather
    rows = rows.view(np.uint8).reshape(len(docs), width + 1)
    lengths = rows[:, width]
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, rows[:, :width][np.arange(width) < lengths[:, None]]


_gather = _gather_numpy
if have_numba():
    from numba import njit

    @njit(nogil=True, cache=True)
    def _gather(fixed: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: F811
        m, width = len(docs), fixed.shape[1] - 1
        offsets = np.empty(m + 1, dtype=np.int64)
        offsets[0] = 0
        out = np.empty(m * width, dtype=np.uint8)
        o = 0
        for i in range(m):
            d = docs[i]
            # the whole padded row (a fixed trip count): the next docno overwrites the padding
            for j in range(width):
                out[o + j] = fixed[d, j]
            o += fixed[d, width]
            offsets[i + 1] = o
        return offsets, out


class DocnoTable:
    """An index's docnos as UTF-8 bytes, for gathering result columns (see the module docstring)."""

    def __init__(self, docnos: np.ndarray):
        import pyarrow as pa

        docnos = np.asarray(docnos, dtype=object)
        n = len(docnos)
        self._strings: Any = None  # the variable-length Arrow array, only where no fixed-width table is kept
        self._fixed: np.ndarray | None = None
        self._uniform: np.ndarray | None = None
        encoded = [d.encode("utf-8") for d in docnos.tolist()]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
        width = int(lengths.max(initial=0))
        if width and n * width <= FIXED_WIDTH_OVERHEAD * (int(lengths.sum()) + 8 * n):
            padded = np.array(encoded, dtype=f"S{width}")  # padded with NUL bytes; the lengths cut them off
            if (lengths == width).all():
                self._uniform = padded  # every docno has the width: no lengths, no cutting
            elif width < 256:
                self._fixed = np.empty((n, width + 1), dtype=np.uint8)
                self._fixed[:, :width] = padded.view(np.uint8).reshape(n, width)
                self._fixed[:, width] = lengths
        if self._fixed is None and self._uniform is None:
            self._strings = pa.array(docnos, type=pa.large_string())

    def take(self, docs: np.ndarray) -> Any:
        """The docnos of internal ids ``docs`` as a ``pyarrow.LargeStringArray``."""
        import pyarrow as pa

        docs = np.asarray(docs, dtype=np.int64)
        m = len(docs)
        if self._uniform is not None:
            width = self._uniform.dtype.itemsize
            offsets = np.arange(0, (m + 1) * width, width, dtype=np.int64)
            data = self._uniform[docs]
        elif self._fixed is not None:
            offsets, data = _gather(self._fixed, docs)
        else:
            return self._strings.take(pa.array(docs))
        # whole UTF-8 encodings, cut at their own lengths: valid strings without a check
        return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(data))


def docno_column(index: Any, docs: np.ndarray) -> pd.Series:
    """The docnos of internal ids ``docs`` of ``index`` as a result column: pandas' default string dtype when it is
    Arrow-backed (gathered from the index's ``docno_table``), else an object column of ``str``."""
    return docnos_to_column(take_docnos(index, docs))


def empty_docno_column() -> pd.Series:
    """An empty docno column of the dtype :func:`docno_column` gives."""
    return pd.Series([], dtype=string_dtype() if arrow_strings() else object)


def take_docnos(index: Any, docs: np.ndarray) -> Any:
    """The docnos of ``docs``: a ``pyarrow.LargeStringArray`` where pandas' strings are Arrow's, else an object
    array (what a shard's search returns for the merge; :func:`docnos_to_column` makes the column)."""
    return index.docno_table.take(docs) if arrow_strings() else index.docnos[docs]


def concat_docnos(parts: list[Any]) -> Any:
    """Concatenates :func:`take_docnos` results (of any kind: a Ray worker decides its own) into one of this
    process's kind."""
    if arrow_strings():
        import pyarrow as pa

        return pa.concat_arrays(
            [p if isinstance(p, pa.Array) else pa.array(p, type=pa.large_string()) for p in parts]
        )
    return np.concatenate(
        [
            np.asarray(p.to_numpy(zero_copy_only=False) if hasattr(p, "to_numpy") else p, dtype=object)
            for p in parts
        ]
    )


def pick_docnos(docnos: Any, positions: np.ndarray) -> Any:
    """``docnos[positions]`` for either kind."""
    if isinstance(docnos, np.ndarray):
        return docnos[positions]
    import pyarrow as pa

    return docnos.take(pa.array(np.asarray(positions, dtype=np.int64)))


def docnos_to_column(docnos: Any) -> pd.Series:
    """A result column of :func:`concat_docnos`'s docnos."""
    values = docno_values(docnos)
    return values if isinstance(values, pd.Series) else pd.Series(values, copy=False)


def docno_values(docnos: Any) -> Any:
    """:func:`docnos_to_column` as a result frame takes it: pandas' Arrow-backed string array, made from the Arrow
    array as is (``pd.array`` and a Series around it cost ~50 us whatever the length), or an object Series of
    ``str`` (an object array alone would be inferred as strings by pandas >= 3)."""
    if isinstance(docnos, np.ndarray):
        return pd.Series(docnos, dtype=object, copy=False)
    return string_dtype().__from_arrow__(docnos)


def _arrow_backed(values: Any) -> bool:
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, pd.ArrowDtype) or (
        isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    )


def take_column(values: Any, rows: np.ndarray) -> Any:
    """``values.take(rows)`` for a column's array (``frame[c].array``) and non-negative ``rows``: Arrow-backed arrays
    through Arrow's own take (pandas' checks around it cost ~40 us a column whatever its length)."""
    if _arrow_backed(values):
        import pyarrow as pa

        return values.dtype.__from_arrow__(values.__arrow_array__().take(pa.array(rows)))
    return values.take(rows)


def result_frame(columns: dict[str, Any]) -> pd.DataFrame:
    """``pd.DataFrame(columns, copy=False)`` (every column new, of one length), made from its blocks where pandas
    allows it and every column is numeric, boolean or Arrow-backed (its constructor infers and checks each column:
    ~100 us at any size); the constructor otherwise."""
    names = tuple(columns)
    blocks = []
    for i, values in enumerate(columns.values()):
        if isinstance(values, pd.Series):
            values = values.array
        if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "biuf":
            blocks.append((values.reshape(1, -1), np.array([i])))
        elif _arrow_backed(values):
            blocks.append((values, np.array([i])))
        else:
            break
    if _from_blocks is None or len(blocks) < len(names) or len({len(v) for v in columns.values()}) > 1:
        return pd.DataFrame(columns, copy=False)
    if names not in _COLUMN_INDEXES:
        if len(_COLUMN_INDEXES) >= 64:
            _COLUMN_INDEXES.clear()
        _COLUMN_INDEXES[names] = pd.DataFrame(columns=list(names)).columns  # the constructor's dtype
    n = len(next(iter(columns.values()))) if columns else 0
    # a view of the shared index: its own name, as a frame's columns are made by the constructor
    return _from_blocks(blocks, pd.RangeIndex(n), _COLUMN_INDEXES[names].view())


def merge_top_k(row: np.ndarray, docno: Any, score: np.ndarray, k: int, ties: str) -> np.ndarray:
    """Positions of each query's best ``k`` of the shards' results (a sharded search's merge): score descending,
    then the smaller docno (``ties="lucene"``) or the larger (trec_eval's order) first; docnos compare by code
    point, as each shard's. Docnos are compared only where they decide: among rows of a query with equal scores,
    and none below its k-th best score (a row there is out whatever its docno); each distinct docno is sorted once.
    Each ordering is one stable sort of one integer key, which merges the shards' runs (each already in order)
    in a few passes, where sorting by the columns in turn sorted every row afresh (2-2.4x faster on 8M rows).
    Scores are finite (a search's results are, ``finite_scores``) and query rows lie in [0, 2^32)."""
    key = _query_score_key(row, score)
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts, counts = _groups(row[order])
    # each query's k-th best score: the rows past its k-th place and below that score are dropped untied
    kth = ordered[starts + np.minimum(counts, k) - 1]
    keep = (np.arange(len(order)) - np.repeat(starts, counts) < k) | (ordered == np.repeat(kth, counts))
    order, ordered = order[keep], ordered[keep]
    same = ordered[1:] == ordered[:-1]
    if same.any():
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] |= same
        tied[:-1] |= same
        tied_docnos = pick_docnos(docno, order[tied])
        if not isinstance(tied_docnos, np.ndarray):
            tied_docnos = tied_docnos.to_numpy(zero_copy_only=False)
        # the distinct docnos (hashed), then their code point order: a docno found in many rows is sorted once
        codes, distinct = pd.factorize(tied_docnos)
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[code_point_order(np.asarray(distinct, dtype=object))] = np.arange(len(distinct))
        within = np.zeros(len(order), dtype=np.int64)
        within[tied] = rank[codes] if ties == "lucene" else len(distinct) - 1 - rank[codes]
        # rows of equal (query, score) form a group, numbered in order; each group's rows by their docno's place
        group = np.concatenate([[0], np.cumsum(~same)])
        order = order[np.argsort(group * len(distinct) + within, kind="stable")]
    return order[run_places(row[order]) < k]


def code_point_order(values: Sequence[str] | Sequence[bytes] | np.ndarray) -> np.ndarray:
    """The stable order of docnos (``str``, or their UTF-8 ``bytes``) by code point, trec_eval's ``strcmp`` order.
    numpy's fixed-width sort pads every value to the longest (4 bytes a character for ``str``): used while that at
    most doubles them, else Python's sort of the same values, so that one long docno (a URL) among many short ones
    does not multiply the memory (a 2,000-character docno had taken a sharded search's merge from 22 MB to 817 MB).
    Docnos hold no NUL (every build refuses it), which numpy's strings drop at their end."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)
    if int(lengths.max()) * n <= 2 * int(lengths.sum()) + (1 << 16):
        return np.argsort(
            np.array(values, dtype=bytes if isinstance(values[0], bytes) else str), kind="stable"
        )
    return np.array(sorted(range(n), key=values.__getitem__), dtype=np.int64)


def _query_score_key(row: np.ndarray, score: np.ndarray) -> np.ndarray:
    """One integer per result that sorts as (query row ascending, score descending): the row in the high 32 bits,
    the float32 score's bits in the low 32, mapped so that unsigned order is descending score order (-0.0 and
    0.0 equal). Scores wider than float32 are ranked among themselves instead (their order, not their bits)."""
    row = np.asarray(row)
    if len(row) and (row.min() < 0 or row.max() >= 2**32):
        raise ValueError("query rows must lie in [0, 2^32)")
    if score.dtype == np.float32:
        bits = (score + np.float32(0)).view(np.uint32)
        ascending = np.where(bits >> 31 == 1, ~bits, bits | np.uint32(1 << 31))
        low = (np.uint32(0xFFFFFFFF) - ascending).astype(np.uint64)
    else:
        _, places = np.unique(-score.astype(np.float64), return_inverse=True)
        low = places.astype(np.uint64)
    return (row.astype(np.uint64) << np.uint64(32)) | low


def _groups(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of equal values of a sorted array starts, and its length."""
    starts = np.flatnonzero(np.concatenate([[True], r[1:] != r[:-1]])) if len(r) else np.zeros(0, np.int64)
    return starts, np.diff(np.append(starts, len(r)))


def run_places(r: np.ndarray) -> np.ndarray:
    """Each element's place (0-based) in its run of equal values of a sorted array: a run's ranks by query."""
    starts, counts = _groups(r)
    return np.arange(len(r)) - np.repeat(starts, counts)
