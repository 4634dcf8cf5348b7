"""Lucene's conventions for the retriever's runs: its BM25 sum over a sparse product (the scipy backend's twin of the
numba kernel) and its tie order made visible to evaluators."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._topk import HAVE_NUMBA

__all__ = ["lucene_product", "nudge_ties"]

# the ordered key of -0.0: a step below 0.0 must skip it (-0.0 == 0.0 is still a tie); nudge_ties steps in the key
# space without it (keys below it one up), and maps back at the end
_NEG_ZERO = 0x7FFFFFFF

if HAVE_NUMBA:
    from numba import njit

    from ._topk import _ordered, _unordered

    @njit(nogil=True, cache=True)
    def _nudged(rows, bits):
        """:func:`nudge_ties` in one pass (the numpy twin below takes ten): key t_i = key_i at a query's first row,
        else min(key_i, t_(i-1) - 1), in the key space without -0.0, mapped back to float64 scores."""
        out = np.empty(len(bits), dtype=np.float64)
        fbuf = np.zeros(1, dtype=np.float32)
        ubuf = fbuf.view(np.uint32)
        prev = np.int64(0)
        for i in range(len(bits)):
            key = np.int64(_ordered(np.uint64(bits[i])))
            key += key < _NEG_ZERO  # the key space without -0.0 (see nudge_ties)
            if i > 0 and rows[i] == rows[i - 1] and key >= prev:
                key = prev - 1
            prev = key
            ubuf[0] = np.uint32(_unordered(np.uint64(key - (key <= _NEG_ZERO))))
            out[i] = np.float64(fbuf[0])
        return out


def nudge_ties(rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Scores in which documents that tie on a query's float32 score keep their rank order for any evaluator.

    trec_eval reads scores as float32 and orders ties by docno descending, so a run in another tie order must
    not contain ties: each score becomes the largest float32 strictly below the previous one of its query when
    it is not already (the i-th document of a tie goes i float32 steps down; a document just below a tie follows
    if the nudged tie reaches it; a step below 0.0 skips -0.0, which would tie with it). Anserini's
    ScoreTiesAdjusterReranker does the same in steps of 1e-6 after rounding to 1e-4. Rows must be grouped by query, each query best first; float64 out, float32 values.
    """
    from .measures._order import score_keys, unordered_bits

    scores32 = np.asarray(scores, dtype=np.float32)
    if len(scores32) < 2:
        return scores32.astype(np.float64)
    if HAVE_NUMBA:
        return _nudged(rows, (scores32 + np.float32(0)).view(np.uint32))  # + 0: -0.0 is 0.0
    keys = score_keys(scores32).astype(np.int64)
    keys += keys < _NEG_ZERO
    pos = np.arange(len(keys), dtype=np.int64)
    head = np.concatenate([[True], rows[1:] != rows[:-1]])
    segment = np.cumsum(head) - 1
    # t_i = min(key_i, t_(i-1) - 1) within a query: a running minimum of key + position, restarted per query
    big = np.int64(1) << 40
    t = np.minimum.accumulate(keys + pos - segment * big) + segment * big - pos
    if (t == keys).all():
        return (scores32 + np.float32(0)).astype(np.float64)  # -0.0 as 0.0, as the compiled pass gives it
    t -= t <= _NEG_ZERO  # back to float32 keys, -0.0 skipped
    bits = unordered_bits(t.astype(np.uint64)).astype(np.uint32)
    return bits.view(np.float32).astype(np.float64)


def lucene_product(q: sp.csr_matrix, postings: sp.csr_matrix) -> sp.csr_matrix:
    """Lucene BM25 scores of each query row: sum over its terms of w - w / (1 + x) over each term's postings x,
    each contribution in float32, summed in float64, the sum rounded to float32 (as the numba kernel).

    The rows are kept as their documents (int32) and scores (float32) and joined once into the CSR matrix's own
    arrays: 16 bytes per score at the peak, what ``memory_budget`` charges (row ids and a COO-to-CSR conversion
    had made it 44)."""
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    indptr = np.zeros(q.shape[0] + 1, dtype=np.int64)
    one = np.float32(1.0)
    for r in range(q.shape[0]):
        a, b = q.indptr[r], q.indptr[r + 1]
        if a == b:
            continue
        docs, contrib = [], []
        for t, w in zip(q.indices[a:b].tolist(), q.data[a:b]):
            p0, p1 = postings.indptr[t], postings.indptr[t + 1]
            x = postings.data[p0:p1]
            docs.append(postings.indices[p0:p1])
            contrib.append((w - w / (one + x)).astype(np.float64))
        d, c = np.concatenate(docs), np.concatenate(contrib)
        del docs, contrib
        # each document's contributions summed in the order given either way (the same float64 sums): over the
        # whole corpus when the query touches a quarter of it (8 bytes a document and 16 a score found, where
        # sorting the postings costs ~45 bytes each, and time), else over the documents it touches
        if 4 * len(d) >= postings.shape[1]:
            total = np.bincount(d, weights=c, minlength=postings.shape[1])
            at = np.flatnonzero(total)
            total = total[at]
        else:
            at, inv = np.unique(d, return_inverse=True)
            total = np.bincount(inv, weights=c, minlength=len(at))
        score = total.astype(np.float32)
        keep = score != 0  # a sum rounded to float32 0 is no score
        cols.append(at[keep].astype(np.int32, copy=False))
        vals.append(score[keep])
        indptr[r + 1] = len(cols[-1])
    np.cumsum(indptr, out=indptr)
    shape = (q.shape[0], postings.shape[1])
    if not cols:
        return sp.csr_matrix(shape, dtype=np.float32)
    return sp.csr_matrix((np.concatenate(vals), np.concatenate(cols), indptr), shape=shape, copy=False)
