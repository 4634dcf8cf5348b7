"""trec_eval's ranking order, defined once for the whole package.

trec_eval reads scores into single-precision floats and ranks each query's documents by score descending,
then by docno descending (string order, also for docnos held as numbers: 9 ranks above 10); the rank column
of a run file is ignored. Every place that ranks (the retriever's top-k selection in both backends,
evaluation, the cross-check, pooling) uses the helpers here, so a run evaluates the same wherever it is
ranked.

The shared device is an order-preserving integer key: the bits of an IEEE-754 float32, with the sign bit
flipped for positive numbers and all bits flipped for negative ones, sort as unsigned integers exactly as
the floats sort (the classic radix-sort transform; e.g. Herf, "Radix Tricks", 2001). Placed in the high
half of a 64-bit key above a docno rank, one unsigned comparison orders by (score, docno).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ordered_bits", "unordered_bits", "score_keys", "is_contiguous", "trec_order", "trec_ranks"]

_SIGN = np.uint64(0x80000000)
_LOW31 = np.uint64(0x7FFFFFFF)
_ONE = np.uint64(1)
_SHIFT31 = np.uint64(31)


def ordered_bits(bits: Any) -> Any:
    """Order-preserving key of float32 bit patterns (uint32 values held in unsigned integers).

    Written with integer operations only, so the same function serves numpy arrays and, compiled by numba,
    scalars inside the retrieval kernel.

    >>> f = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], dtype=np.float32)
    >>> bool(np.all(np.diff(ordered_bits(f.view(np.uint32).astype(np.uint64)).astype(np.int64)) > 0))
    True
    """
    return bits ^ (((bits >> _SHIFT31) * _LOW31) | _SIGN)


def unordered_bits(key: Any) -> Any:
    """The float32 bit pattern back from :func:`ordered_bits`."""
    return key ^ ((((key >> _SHIFT31) ^ _ONE) * _LOW31) | _SIGN)


def score_keys(scores: np.ndarray) -> np.ndarray:
    """uint64 keys (below 2^32) that sort as the scores do in single precision; -0.0 and 0.0 are equal."""
    bits = (np.asarray(scores, dtype=np.float32) + np.float32(0)).view(np.uint32)  # + 0 turns -0.0 into 0.0
    return ordered_bits(bits.astype(np.uint64))


def is_contiguous(group: np.ndarray, heads: np.ndarray) -> bool:
    """Whether each query's rows form one block (``heads``: where the query changes; ``group`` >= 0)."""
    return len(heads) == np.count_nonzero(np.bincount(group))


def trec_order(group: np.ndarray, scores: np.ndarray, docnos: np.ndarray) -> np.ndarray | None:
    """Permutation putting rows in trec_eval order: query (``group``, integer codes >= 0, ascending), score
    descending in single precision, docno descending. None when the rows are in that order already.

    Sorting strings is the expensive part, so docnos are compared only among rows whose query and score tie.
    ``scores`` must be float32.
    """
    n = len(group)
    order = None
    in_order = False
    if n:
        heads = np.concatenate([[0], np.flatnonzero(group[1:] != group[:-1]) + 1])
        head_groups = group[heads]
        same_q = group[1:] == group[:-1]
        if is_contiguous(group, heads) and np.all(~same_q | (scores[1:] <= scores[:-1])):
            # each query's rows are contiguous and already sorted by score (as retrievers emit runs):
            # only the blocks need reordering, if at all
            if np.all(head_groups[1:] > head_groups[:-1]):
                order = np.arange(n)
                in_order = True
            else:
                lengths = np.diff(np.append(heads, n))
                by_group = np.argsort(head_groups, kind="stable")
                new_starts = np.cumsum(lengths[by_group]) - lengths[by_group]
                order = np.repeat(heads[by_group] - new_starts, lengths[by_group]) + np.arange(n)
    if order is None:
        # one 64-bit key: query in the high half, score descending in the low half; equal keys are exactly
        # the (query, score) ties resolved below
        key = (group.astype(np.uint64) << np.uint64(32)) | (~score_keys(scores) & np.uint64(0xFFFFFFFF))
        order = np.argsort(key)
    g, s = (group, scores) if in_order else (group[order], scores[order])
    tie = (g[1:] == g[:-1]) & (s[1:] == s[:-1])
    if tie.any():
        # only the tied rows are touched: pairs (i, i+1) with equal query and score form maximal runs
        left = np.flatnonzero(tie)
        pos = np.union1d(left, left + 1)
        starts_run = np.ones(len(pos), dtype=bool)
        starts_run[1:] = ~((pos[1:] == pos[:-1] + 1) & tie[np.maximum(pos[1:] - 1, 0)])
        run_id = np.cumsum(starts_run)
        names = docnos[order[pos]]
        if pd.api.types.infer_dtype(names, skipna=False) != "string":
            # trec_eval compares docnos as text: int docnos 9 and 10 tie-break as "9" > "10", not 10 > 9
            names = names.astype(str)
        name_rank = np.empty(len(pos), dtype=np.int64)
        name_rank[np.argsort(names, kind="stable")] = np.arange(len(pos))
        moved = order[pos][np.lexsort((-name_rank, run_id))]
        if in_order and np.any(moved != order[pos]):
            in_order = False
        order[pos] = moved
    return None if in_order else order


def trec_ranks(qids: Any, scores: Any, docnos: Any) -> np.ndarray:
    """Each row's 0-based rank within its query in trec_eval order (rows in any order, ids of any type).

    >>> trec_ranks(["q", "q", "q"], [1.0, 2.0, 1.0], ["a", "b", "c"]).tolist()   # tie: docno "c" before "a"
    [2, 0, 1]
    """
    codes, _ = pd.factorize(np.asarray(qids, dtype=object), use_na_sentinel=False)
    group = codes.astype(np.int64)
    s = np.asarray(scores, dtype=np.float64).astype(np.float32)
    order = trec_order(group, s, np.asarray(docnos, dtype=object))
    if order is None:
        order = np.arange(len(group))
    g = group[order]
    starts = np.searchsorted(g, np.arange(g.max() + 1 if len(g) else 0))
    ranks = np.empty(len(group), dtype=np.int64)
    ranks[order] = np.arange(len(group)) - starts[g]
    return ranks
