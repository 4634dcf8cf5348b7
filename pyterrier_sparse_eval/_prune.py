"""Safe dynamic pruning for the numba kernel: block-max upper bounds skip the document blocks that cannot reach
the running top k. The result is exactly that of :func:`~pyterrier_sparse_eval._topk.top_k_numba` (the same
documents, order and float32 scores); nothing is approximated.

Documents are scored in blocks of ``2**shift`` consecutive ids (4,096 by default), term at a time inside a
block, as the exhaustive kernel does, so every document's score is the same float32 sum in the same order.
Before a block is scored its upper bound is computed: the sum over the query's terms that have a posting in the
block of the term's largest contribution there, from the term's block maximum. A block whose bound, widened to
cover float32 rounding, is below the running threshold (the k-th best score seen so far) holds no document of the
final top k and is skipped: its postings are never read (the term cursors gallop past it). In the blocks that
are scored, a document below the threshold is dropped before its selection key is built.

Block maxima (:func:`block_max`) are kept for the terms with the longest posting lists, one byte per block (the
maximum quantised up to a 255th of the term's largest weight), within a budget of one byte per posting; the
other terms' bound is their largest weight. They are valid for non-negative postings and query weights only: the
retriever prunes only then (and falls back to the exhaustive kernel otherwise).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._numba import numba_threads
from ._topk import HAVE_NUMBA

__all__ = ["BlockMax", "block_max", "top_k_pruned"]

_SCORE_BLOCK = 4096  # documents scored together (their accumulators stay in L1/L2); a multiple of the bound blocks


class BlockMax(NamedTuple):
    """Per-term block maxima of an index's postings (see :func:`block_max`)."""

    shift: int  # log2 of the documents per block
    term_max: np.ndarray  # float32 [num_terms]: each term's largest posting
    dense_id: np.ndarray  # int32 [num_terms]: the term's row of ``blocks``, -1 when it has none
    blocks: np.ndarray  # uint8 [rows, num_blocks]: ceil(255 * block maximum / term maximum)


if HAVE_NUMBA:
    from numba import njit, prange

    from ._topk import _ordered, _select, _unordered

    @njit(nogil=True, cache=True)
    def _fill_block_max(indptr, indices, data, shift, dense_id, term_max, blocks):
        for t in range(len(indptr) - 1):
            a, b = indptr[t], indptr[t + 1]
            m = np.float32(0.0)
            for p in range(a, b):
                m = max(m, data[p])
            term_max[t] = m
            r = dense_id[t]
            if r < 0 or m <= 0:
                continue
            scale = 255.0 / np.float64(m)
            for p in range(a, b):
                blk = indices[p] >> shift
                v = np.uint8(min(255.0, np.ceil(np.float64(data[p]) * scale)))
                if v > blocks[r, blk]:
                    blocks[r, blk] = v

    @njit(inline="always", nogil=True, cache=True)
    def _advance(indices, p, end, target):
        """The first position at or after ``p`` (before ``end``) whose doc id is at least ``target``."""
        for _ in range(16):
            if p >= end or indices[p] >= target:
                return p
            p += 1
        lo, step = p, 16
        while True:
            hi = lo + step
            if hi >= end:
                hi = end
                break
            if indices[hi] >= target:
                break
            lo = hi + 1
            step *= 2
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < target:
                lo = mid + 1
            else:
                hi = mid
        return lo

    @njit(nogil=True, cache=True)
    def _query_pruned(
        q_terms,
        q_weights,
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        k,
        num_docs,
        lucene,
        shift,
        term_max,
        dense_id,
        blocks,
        acc,
        acc64,
        mark,
        touched,
        keys,
        fbuf,
        ubuf,
        out_docs,
        out_scores,
        cursor,
        lut,
        sub_ub,
        live,
        term_ub,
        order,
        ess,
        stats,
    ):
        nt = len(q_terms)
        one = np.float32(1.0)
        bsize = np.int64(len(acc))
        nsub = bsize >> shift
        num_blocks = blocks.shape[1]
        # float32 rounding: a product and nt additions of non-negative values lose at most (nt + 2) ulps
        widen = 1.0 + (nt + 2) * 2.0**-23
        lo_doc, hi_doc, total = np.int64(1) << 62, np.int64(-1), np.int64(0)
        for j in range(nt):
            t = q_terms[j]
            cursor[j] = indptr[t]
            total += indptr[t + 1] - indptr[t]
            if indptr[t + 1] > indptr[t]:
                lo_doc = min(lo_doc, np.int64(indices[indptr[t]]))
                hi_doc = max(hi_doc, np.int64(indices[indptr[t + 1] - 1]))
            # each quantised block maximum v's bound on the term's contribution (v = 256: the term's maximum)
            w = np.float64(q_weights[j])
            for v in range(257):
                x = np.float64(term_max[t]) * min(v, 255) / 255.0 if v < 256 else np.float64(term_max[t])
                # Lucene's w - w / (1 + x) in float32 may exceed the exact value by 4 ulps of w
                lut[j, v] = w * x / (1.0 + x) + 4.0 * w * 2.0**-24 if lucene else w * x
        theta = np.float32(-np.inf)
        n = 0
        cap = k + max(2 * k, 4096)
        b0 = (lo_doc // bsize) * bsize
        while b0 <= hi_doc:
            b1 = min(b0 + bsize, num_docs)
            sb0 = b0 >> shift
            n_live = 0
            n_ess = nt
            if theta > 0:
                sub_ub[:nsub] = 0.0
                for j in range(nt):
                    t = q_terms[j]
                    end = indptr[t + 1]
                    p = _advance(indices, cursor[j], end, b0)
                    cursor[j] = p
                    term_ub[j] = 0.0
                    if p >= end or indices[p] >= b1:
                        continue
                    r = dense_id[t]
                    if r >= 0:
                        m = 0
                        for sb in range(min(nsub, num_blocks - sb0)):
                            v = blocks[r, sb0 + sb]
                            sub_ub[sb] += lut[j, v]
                            m = max(m, v)
                        term_ub[j] = lut[j, m]
                    else:
                        for sb in range(nsub):
                            sub_ub[sb] += lut[j, 256]
                        term_ub[j] = lut[j, 256]
                # MaxScore inside the block: the terms of smallest bound whose bounds sum below the threshold are
                # non-essential; a document none of the other (essential) terms holds cannot reach the top k
                for j in range(nt):
                    order[j] = j
                    ess[j] = 1
                for j in range(1, nt):
                    x, i = order[j], j
                    while i > 0 and term_ub[order[i - 1]] > term_ub[x]:
                        order[i] = order[i - 1]
                        i -= 1
                    order[i] = x
                low = 0.0
                for j in range(nt):
                    low += term_ub[order[j]]
                    if low * widen >= theta:
                        break
                    ess[order[j]] = 0
                    n_ess -= 1
                for sb in range(nsub):
                    if sub_ub[sb] * widen >= theta and (sb0 + sb) << shift < b1:
                        live[n_live] = sb
                        n_live += 1
                stats[1] += nsub - n_live
                if n_live == 0:
                    b0 += bsize
                    continue
            else:
                for sb in range(nsub):
                    if (sb0 + sb) << shift < b1:
                        live[n_live] = sb
                        n_live += 1
            stats[2] += n_live
            n_touched = 0
            # mode per term: 0 mark and score; with non-essential terms, a first pass marks the documents of the
            # essential terms (1), then, in query order, essential terms score (2), non-essential ones score the
            # marked documents only (3): every candidate's sum keeps the query's term order
            two = n_ess < nt
            for j in range(2 * nt if two else nt):
                phase, j = (j // nt, j % nt) if two else (1, j)
                if two and phase == 0 and ess[j] == 0:
                    continue
                mode = (1 if phase == 0 else (2 if ess[j] else 3)) if two else 0
                t = q_terms[j]
                w = q_weights[j]
                end = indptr[t + 1]
                p = cursor[j]
                i = 0
                while i < n_live:
                    # a run of consecutive live sub-blocks: one posting range
                    i2 = i + 1
                    while i2 < n_live and live[i2] == live[i2 - 1] + 1:
                        i2 += 1
                    lo = b0 + (np.int64(live[i]) << shift)
                    hi = min(b1, b0 + (np.int64(live[i2 - 1] + 1) << shift))
                    i = i2
                    p = _advance(indices, p, end, lo)
                    start = p
                    if mode <= 1:
                        while p < end and indices[p] < hi:
                            d = indices[p] - b0
                            touched[n_touched] = d  # branch-free: kept only on the first touch
                            n_touched += 1 - mark[d]
                            mark[d] = 1
                            if mode == 0:
                                if lucene:
                                    acc64[d] += np.float64(w - w / (one + data[p]))
                                else:
                                    acc[d] += w * data[p]
                            p += 1
                    else:
                        while p < end and indices[p] < hi:
                            d = indices[p] - b0
                            if mode == 2 or mark[d]:
                                if lucene:
                                    acc64[d] += np.float64(w - w / (one + data[p]))
                                else:
                                    acc[d] += w * data[p]
                            p += 1
                    if phase == 1:
                        stats[0] += p - start
                if phase == 1:
                    cursor[j] = p
            for i in range(n_touched):
                d = touched[i]
                if lucene:
                    s = np.float32(acc64[d])
                    acc64[d] = 0.0
                else:
                    s = acc[d]
                    acc[d] = 0.0
                mark[d] = 0
                if s >= theta and s != 0.0:  # zero sums are dropped, as by scipy's sparse product
                    fbuf[0] = s
                    keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(d + b0)
                    n += 1
            if n > k and (n >= cap or theta == -np.inf):
                # the threshold: the k-th best score so far; documents tied with it stay candidates
                cut = np.partition(keys[:n], n - k)[n - k] >> np.uint64(32)
                m = 0
                for i in range(n):
                    if (keys[i] >> np.uint64(32)) >= cut:
                        keys[m] = keys[i]
                        m += 1
                n = m
                cap = n + max(2 * k, 4096)
                ubuf[0] = np.uint32(_unordered(cut))
                theta = fbuf[0]
            b0 += bsize
        return _select(keys, n, k, tie_rank, rank_to_doc, fbuf, ubuf, out_docs, out_scores)

    @njit(nogil=True, cache=True)
    def _chunk_pruned(
        lo,
        hi,
        q_indptr,
        q_indices,
        q_data,
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        k,
        num_docs,
        lucene,
        shift,
        term_max,
        dense_id,
        blocks,
        out_docs,
        out_scores,
        out_n,
        stats,
    ):
        bsize = max(np.int64(1) << shift, np.int64(_SCORE_BLOCK))
        acc = np.zeros(bsize, dtype=np.float32)
        acc64 = np.zeros(bsize if lucene else 1, dtype=np.float64)
        mark = np.zeros(bsize, dtype=np.uint8)
        touched = np.empty(bsize, dtype=np.int32)
        keys = np.empty(num_docs, dtype=np.uint64)
        width = 1
        for q in range(lo, hi):
            width = max(width, q_indptr[q + 1] - q_indptr[q])
        cursor = np.empty(width, dtype=np.int64)
        lut = np.empty((width, 257), dtype=np.float64)
        sub_ub = np.empty(bsize >> shift, dtype=np.float64)
        live = np.empty(bsize >> shift, dtype=np.int64)
        term_ub = np.empty(width, dtype=np.float64)
        order = np.empty(width, dtype=np.int64)
        ess = np.empty(width, dtype=np.uint8)
        fbuf = np.zeros(1, dtype=np.float32)
        ubuf = fbuf.view(np.uint32)
        for q in range(lo, hi):
            a, b = q_indptr[q], q_indptr[q + 1]
            out_n[q] = _query_pruned(
                q_indices[a:b],
                q_data[a:b],
                indptr,
                indices,
                data,
                tie_rank,
                rank_to_doc,
                k,
                num_docs,
                lucene,
                shift,
                term_max,
                dense_id,
                blocks,
                acc,
                acc64,
                mark,
                touched,
                keys,
                fbuf,
                ubuf,
                out_docs[q],
                out_scores[q],
                cursor,
                lut,
                sub_ub,
                live,
                term_ub,
                order,
                ess,
                stats[q],
            )

    @njit(parallel=True, nogil=True, cache=True)
    def _parallel_pruned(bounds, *args):
        for c in prange(len(bounds) - 1):
            _chunk_pruned(bounds[c], bounds[c + 1], *args)


def block_max(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, num_docs: int, shift: int = 8
) -> BlockMax | None:
    """Block maxima of term-major postings for :func:`top_k_pruned`; None when a posting is negative (no bound).

    Terms get a row of per-block maxima longest list first, while the rows fit one byte per posting and the term
    has at least one posting per 16 blocks on average; the others are bounded by their largest posting.
    """
    if not HAVE_NUMBA:
        raise ImportError("pruning needs numba: pip install numba")
    if len(data) and float(np.min(data)) < 0:
        return None
    num_terms = len(indptr) - 1
    num_blocks = max(1, (int(num_docs) + (1 << shift) - 1) >> shift)
    df = np.diff(indptr)
    order = np.argsort(-df, kind="stable")
    eligible = int((df >= max(1, num_blocks // 16)).sum())
    rows = min(eligible, len(data) // num_blocks)
    dense_id = np.full(num_terms, -1, dtype=np.int32)
    dense_id[order[:rows]] = np.arange(rows, dtype=np.int32)
    term_max = np.zeros(num_terms, dtype=np.float32)
    blocks = np.zeros((rows, num_blocks), dtype=np.uint8)
    _fill_block_max(indptr, indices, data, np.int64(shift), dense_id, term_max, blocks)
    return BlockMax(shift, term_max, dense_id, blocks)


def top_k_pruned(
    q_indptr: np.ndarray,
    q_indices: np.ndarray,
    q_data: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    tie_rank: np.ndarray,
    num_results: int,
    num_docs: int,
    bm: BlockMax,
    threads: int = 1,
    rank_to_doc: np.ndarray | None = None,
    lucene: bool = False,
    stats: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~pyterrier_sparse_eval._topk.top_k_numba`'s result, skipping the blocks that cannot enter the top k.

    Query weights and postings must be non-negative (``bm`` from :func:`block_max` of the same postings).
    ``stats``, when given, is an int64 [num_queries, 3] array that receives per query the postings scored, the
    blocks skipped and the blocks scored.
    """
    nq = len(q_indptr) - 1
    out_docs = np.zeros((nq, num_results), dtype=np.int32)
    out_scores = np.zeros((nq, num_results), dtype=np.float32)
    out_n = np.zeros(nq, dtype=np.int32)
    if stats is None:
        stats = np.zeros((nq, 3), dtype=np.int64)
    if nq == 0 or num_results == 0:
        return out_docs, out_scores, out_n
    q_data = np.ascontiguousarray(q_data, dtype=np.float32)
    if len(q_data) and float(q_data.min()) < 0:
        raise ValueError("pruning needs non-negative query weights; use the exhaustive kernel.")
    if rank_to_doc is None:
        rank_to_doc = np.empty(len(tie_rank), dtype=np.int32)
        rank_to_doc[tie_rank] = np.arange(len(tie_rank), dtype=np.int32)
    args = (
        np.ascontiguousarray(q_indptr, dtype=np.int64),
        np.ascontiguousarray(q_indices, dtype=np.int64),
        q_data,
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        int(num_results),
        int(num_docs),
        bool(lucene),
        np.int64(bm.shift),
        bm.term_max,
        bm.dense_id,
        bm.blocks,
        out_docs,
        out_scores,
        out_n,
        stats,
    )
    threads = max(1, min(int(threads), nq))
    if threads == 1:
        _chunk_pruned(0, nq, *args)
    else:
        bounds = np.linspace(0, nq, threads + 1).astype(np.int64)
        with numba_threads(threads):
            _parallel_pruned(bounds, *args)
    return out_docs, out_scores, out_n
