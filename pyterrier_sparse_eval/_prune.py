"""A running threshold for the numba kernel: documents that cannot enter the top k are dropped as soon as they are
scored. The result is exactly that of :func:`~pyterrier_sparse_eval._topk.top_k_numba` (the same documents, order
and float32 scores); nothing is approximated.

Documents are scored block by block, term at a time inside a block, as the exhaustive kernel does, so every
document's score is the same float32 sum in the same order. The exhaustive kernel then builds a selection key
(score bits and doc id) for every document it touched and partitions them all at the end; here the k-th best score
seen so far (the threshold) is kept instead, and a document scoring below it is dropped before its key is built:
only candidates are kept, re-partitioned when their buffer fills. On queries that touch many documents (frequent
terms, long queries) that is most of the selection work saved; on short posting lists the bookkeeping can cost more
than it saves (``top_k_pruned(light=...)`` sends such queries to the exhaustive kernel; the retriever does not).

Block-max upper bounds (skipping blocks whose best possible score is below the threshold) were measured too and
dropped: on BM25 queries with frequent terms and on SPLADE-like queries, 256-document blocks' bounds skipped under
10% of the postings and cost more than they saved (BENCHMARKS.md, "workloads").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._numba import numba_threads
from ._topk import HAVE_NUMBA, top_k_numba

__all__ = ["top_k_pruned"]

_BLOCK = (
    1 << 14
)  # documents scored together: their accumulators stay in L2 (16k measured best, BENCHMARKS.md)

if HAVE_NUMBA:
    from numba import njit, prange

    from ._topk import _ordered, _select, _unordered

    @njit(nogil=True, cache=True)
    def _query_threshold(
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
    ):
        nt = len(q_terms)
        one = np.float32(1.0)
        bsize = np.int64(len(acc))
        lo_doc, hi_doc = np.int64(1) << 62, np.int64(-1)
        postings = np.int64(0)
        for j in range(nt):
            t = q_terms[j]
            cursor[j] = indptr[t]
            postings += indptr[t + 1] - indptr[t]
            if indptr[t + 1] > indptr[t]:
                lo_doc = min(lo_doc, np.int64(indices[indptr[t]]))
                hi_doc = max(hi_doc, np.int64(indices[indptr[t + 1] - 1]))
        dense = postings > num_docs  # more postings than documents: most touches are repeats
        theta = np.float32(-np.inf)
        n = 0
        cap = k + max(2 * k, 4096)
        b0 = (lo_doc // bsize) * bsize
        while b0 <= hi_doc:
            b1 = b0 + bsize
            n_touched = 0
            for j in range(nt):
                t = q_terms[j]
                w = q_weights[j]
                p = cursor[j]
                end = indptr[t + 1]
                # first touches are marked branch-free when they are frequent (sparse queries: touches are
                # random) and with a branch when they are rare (dense queries touch each document many times)
                if lucene and dense:  # Lucene's BM25Scorer: w - w / (1 + x) in float32, summed in float64
                    while p < end and indices[p] < b1:
                        d = indices[p] - b0
                        if mark[d] == 0:
                            mark[d] = 1
                            touched[n_touched] = d
                            n_touched += 1
                        acc64[d] += np.float64(w - w / (one + data[p]))
                        p += 1
                elif lucene:
                    while p < end and indices[p] < b1:
                        d = indices[p] - b0
                        touched[n_touched] = d  # kept only on the first touch
                        n_touched += 1 - mark[d]
                        mark[d] = 1
                        acc64[d] += np.float64(w - w / (one + data[p]))
                        p += 1
                elif dense:
                    while p < end and indices[p] < b1:
                        d = indices[p] - b0
                        if mark[d] == 0:
                            mark[d] = 1
                            touched[n_touched] = d
                            n_touched += 1
                        acc[d] += w * data[p]
                        p += 1
                else:
                    while p < end and indices[p] < b1:
                        d = indices[p] - b0
                        touched[n_touched] = d
                        n_touched += 1 - mark[d]
                        mark[d] = 1
                        acc[d] += w * data[p]
                        p += 1
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
            b0 = b1
        return _select(keys, n, k, tie_rank, rank_to_doc, fbuf, ubuf, out_docs, out_scores)

    @njit(nogil=True, cache=True)
    def _chunk_threshold(
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
        out_docs,
        out_scores,
        out_n,
        block,
    ):
        acc = np.zeros(block, dtype=np.float32)
        acc64 = np.zeros(block if lucene else 1, dtype=np.float64)
        mark = np.zeros(block, dtype=np.uint8)
        touched = np.empty(block + 1, dtype=np.int32)  # + 1: the branch-free marking writes one slot ahead
        keys = np.empty(num_docs, dtype=np.uint64)
        width = 1
        for q in range(lo, hi):
            width = max(width, q_indptr[q + 1] - q_indptr[q])
        cursor = np.empty(width, dtype=np.int64)
        fbuf = np.zeros(1, dtype=np.float32)
        ubuf = fbuf.view(np.uint32)
        for q in range(lo, hi):
            a, b = q_indptr[q], q_indptr[q + 1]
            out_n[q] = _query_threshold(
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
            )

    @njit(parallel=True, nogil=True, cache=True)
    def _parallel_threshold(bounds, *args):
        for c in prange(len(bounds) - 1):
            _chunk_threshold(bounds[c], bounds[c + 1], *args)


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
    threads: int = 1,
    rank_to_doc: np.ndarray | None = None,
    lucene: bool = False,
    block: int | None = None,
    light: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~pyterrier_sparse_eval._topk.top_k_numba`'s result, dropping documents below a running threshold.

    ``block`` is the number of documents scored together (16,384 by default). Queries whose terms' postings number
    less than ``light`` times the documents go to the exhaustive kernel (same result, less bookkeeping).
    """
    if not HAVE_NUMBA:
        raise ImportError("the threshold kernel needs numba: pip install numba")
    nq = len(q_indptr) - 1
    out_docs = np.zeros((nq, num_results), dtype=np.int32)
    out_scores = np.zeros((nq, num_results), dtype=np.float32)
    out_n = np.zeros(nq, dtype=np.int32)
    if nq == 0 or num_results == 0:
        return out_docs, out_scores, out_n
    if rank_to_doc is None:
        rank_to_doc = np.empty(len(tie_rank), dtype=np.int32)
        rank_to_doc[tie_rank] = np.arange(len(tie_rank), dtype=np.int32)
    if light > 0:
        df = np.diff(indptr)[q_indices]
        postings = np.add.reduceat(df, q_indptr[:-1]) if len(df) else np.zeros(nq, dtype=np.int64)
        short = np.where(np.diff(q_indptr) > 0, postings, 0) < light * num_docs
        if short.any():
            q = sp.csr_matrix((q_data, q_indices, q_indptr), shape=(nq, len(indptr) - 1))
            for rows, threshold in ((np.flatnonzero(short), False), (np.flatnonzero(~short), True)):
                if len(rows):
                    sub = q[rows]
                    common = (sub.indptr, sub.indices, sub.data, indptr, indices, data, tie_rank, num_results)
                    if threshold:
                        got = top_k_pruned(*common, num_docs, threads, rank_to_doc, lucene, block)
                    else:
                        got = top_k_numba(*common, num_docs, threads, rank_to_doc, lucene=lucene)
                    out_docs[rows], out_scores[rows], out_n[rows] = got
            return out_docs, out_scores, out_n
    args = (
        np.ascontiguousarray(q_indptr, dtype=np.int64),
        np.ascontiguousarray(q_indices, dtype=np.int64),
        np.ascontiguousarray(q_data, dtype=np.float32),
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        int(num_results),
        int(num_docs),
        bool(lucene),
        out_docs,
        out_scores,
        out_n,
        np.int64(max(1, min(num_docs, block or _BLOCK))),
    )
    threads = max(1, min(int(threads), nq))
    if threads == 1:
        _chunk_threshold(0, nq, *args)
    else:
        bounds = np.linspace(0, nq, threads + 1).astype(np.int64)
        with numba_threads(threads):
            _parallel_threshold(bounds, *args)
    return out_docs, out_scores, out_n
