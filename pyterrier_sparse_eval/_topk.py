"""Exact top-k retrieval kernels: numba when available, numpy/scipy otherwise, with identical results.

Scoring is term-at-a-time: for each query term t (in the query's column order) and each posting (d, w) of t,
``acc[d] += q_t * w`` in float32, the same operations in the same order as scipy's sparse product, so every
backend produces bit-identical scores. For Lucene BM25 postings (``lucene=True``) a posting x of a term of weight w
adds ``w - w / (1 + x)`` in float32 to a float64 accumulator instead, as Lucene's BM25Scorer and disjunction sum do
(``_lucene.lucene_product`` is the scipy twin). Selection keeps the ``num_results`` best documents in trec_eval's
order (score descending, then docno descending): each scored document gets one unique 64-bit key (the
order-preserving bits of its float32 score, :func:`~pyterrier_sparse_eval.measures._order.ordered_bits`, above
its docno rank), a radix select on the score bits finds the cut-off (:func:`_kth_score`; numba's ``np.partition``
on uint64 keys cost 1.3-1.6x more on the whole of SciFact's and Vaswani's searches) and only the winners are sorted.
First touches of a block's documents are recorded without a branch on queries with fewer postings than the
collection has documents (most touches are first touches there, and a mispredicted branch per posting cost the
exhaustive search of SciFact's and Vaswani's topics 1.25-1.4x), with one on the others.

Parallelism: queries are split into one contiguous chunk per thread; each chunk owns its accumulator, so no
locks and no shared writes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._numba import available_backends, have_numba, numba_threads
from .measures._order import ordered_bits, score_keys, unordered_bits

HAVE_NUMBA = have_numba()

__all__ = [
    "HAVE_NUMBA",
    "available_backends",
    "compact",
    "finite_scores",
    "postings_per_row",
    "top_k_numba",
    "top_k_trec_order",
]


def finite_scores(found: Any) -> Any:
    """A search's (query row, doc, score, rank), refused if a score is a sum beyond float32's range (an infinity
    would tie the documents it ranks by docno alone)."""
    if not np.isfinite(found[2]).all():
        raise ValueError("Scores beyond float32's range (3.4e38): scale the query or document weights down.")
    return found


def top_k_trec_order(
    scores: np.ndarray, docs: np.ndarray, tie_rank: np.ndarray, num_results: int
) -> np.ndarray:
    """Positions of the ``num_results`` best entries in trec_eval order: score descending, then docno descending.

    ``tie_rank[docs]`` must order documents as their docnos sort. Selection is a linear-time partition of the
    scores, then a sort of the candidates by unique (score, docno rank) keys, never a sort of all documents.
    """
    n = len(scores)
    if n > num_results:
        # the cut-off score first (a float partition, no keys yet); ties at it are all candidates
        cand = np.flatnonzero(scores >= np.partition(scores, n - num_results)[n - num_results])
    else:
        cand = np.arange(n)
    keys = (score_keys(scores[cand]) << np.uint64(32)) | tie_rank[docs[cand]].astype(np.uint64)
    return cand[np.argsort(keys)[::-1][:num_results]]


def postings_per_row(df: np.ndarray, q_indptr: np.ndarray, q_indices: np.ndarray) -> np.ndarray:
    """The postings each query row's terms touch: the sum of their document frequencies (0 for empty rows)."""
    c = np.zeros(len(q_indices) + 1, dtype=np.int64)
    np.cumsum(np.asarray(df)[q_indices], out=c[1:])
    return c[q_indptr[1:]] - c[q_indptr[:-1]]


_BLOCK = 1 << 16  # documents per accumulator block: 256 KB of float32 scores, resident in L2

if HAVE_NUMBA:
    from numba import njit, prange

    _ordered = njit(inline="always", cache=True)(ordered_bits)
    _unordered = njit(inline="always", cache=True)(unordered_bits)

    @njit(nogil=True, cache=True)
    def _block_end(indices, p, end, b1):
        """The first position from ``p`` (up to ``end``) whose document is at least ``b1``: 16 postings at a time,
        then one by one (a term's postings in a block are read next anyway)."""
        while p + 16 <= end and indices[p + 15] < b1:
            p += 16
        while p < end and indices[p] < b1:
            p += 1
        return p

    @njit(nogil=True, cache=True)
    def _radix_sort(a):
        """Ascending copy of uint64 keys: LSD radix sort, 8 bits per pass, passes where every key has the same
        digit skipped (linear time; faster than a comparison sort for the few candidates of a query); insertion
        sort for at most 64 keys."""
        n = len(a)
        src = a.copy()
        if n <= 64:  # a few candidates (small k): insertion sort, without the passes' 256 counters
            for i in range(1, n):
                x = src[i]
                j = i - 1
                while j >= 0 and src[j] > x:
                    src[j + 1] = src[j]
                    j -= 1
                src[j + 1] = x
            return src
        dst = np.empty(n, dtype=np.uint64)
        cnt = np.empty(257, dtype=np.int64)
        for shift in range(0, 64, 8):
            sh = np.uint64(shift)
            cnt[:] = 0
            for i in range(n):
                cnt[((src[i] >> sh) & np.uint64(255)) + 1] += 1
            if n == 0 or cnt[((src[0] >> sh) & np.uint64(255)) + 1] == n:
                continue
            for d in range(256):
                cnt[d + 1] += cnt[d]
            for i in range(n):
                d = (src[i] >> sh) & np.uint64(255)
                dst[cnt[d]] = src[i]
                cnt[d] += 1
            src, dst = dst, src
        return src

    @njit(nogil=True, cache=True)
    def _kth_score(keys, n, k):
        """The k-th largest score bits (the keys' high 32 bits) of the first ``n`` keys: a radix select, 11 bits a
        pass over the keys whose higher bits match so far (with numba's np.partition of the keys instead, the
        searches of SciFact's and Vaswani's topics took 1.3-1.6x longer); a partition below 256 keys."""
        if n <= 256:
            return np.partition(keys[:n] >> np.uint64(32), n - k)[n - k]
        hist = np.empty(2048, dtype=np.int64)
        prefix = np.uint64(0)
        mask = np.uint64(0)
        need = k
        for shift in (53, 42, 32):
            width = 2048 if shift > 32 else 1024
            sh = np.uint64(shift)
            hist[:width] = 0
            for i in range(n):
                key = keys[i]
                if (key & mask) == prefix:
                    hist[(key >> sh) & np.uint64(width - 1)] += 1
            b = width - 1
            while hist[b] < need:
                need -= hist[b]
                b -= 1
            prefix |= np.uint64(b) << sh
            mask |= np.uint64(width - 1) << sh
        return prefix >> np.uint64(32)

    @njit(nogil=True, cache=True)
    def _keep_best(keys, n, k):
        """Move the keys scoring at least the k-th best of the first ``n`` (ties with it included) to the front:
        their number and that score's bits."""
        cut = _kth_score(keys, n, k)
        m = 0
        for i in range(n):
            if (keys[i] >> np.uint64(32)) >= cut:
                keys[m] = keys[i]
                m += 1
        return m, cut

    @njit(nogil=True, cache=True)
    def _select(keys, n, num_results, tie_rank, rank_to_doc, fbuf, ubuf, out_docs, out_scores):
        """Write the best ``num_results`` of the ``n`` (score bits, doc id) keys to the outputs in trec_eval order;
        the number written."""
        if n > num_results:  # every document scoring at least the cut-off is a candidate (+ boundary ties)
            n, _ = _keep_best(keys, n, num_results)
        # re-key the candidates by (score, docno rank): trec_eval's tie order
        low = np.uint64(0xFFFFFFFF)
        for i in range(n):
            keys[i] = (keys[i] & ~low) | np.uint64(tie_rank[np.int64(keys[i] & low)])
        chosen = _radix_sort(keys[:n])
        n = min(n, num_results)
        for pos in range(n):
            key = chosen[len(chosen) - 1 - pos]
            ubuf[0] = np.uint32(_unordered(key >> np.uint64(32)))
            out_scores[pos] = fbuf[0]
            out_docs[pos] = rank_to_doc[np.int64(key & low)]
        return n

    @njit(nogil=True, cache=True)
    def _query_top_k(
        q_terms,
        q_weights,
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        num_results,
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
        block,
    ):
        # documents are scored block by block (``block`` consecutive doc ids at a time) so that the
        # accumulator stays in cache; each term's postings are sorted by doc id, so a cursor per term walks
        # them once. Per document, contributions are still added in query-term order: bit-identical sums.
        nt = len(q_terms)
        one = np.float32(1.0)
        lo_doc, hi_doc = np.int64(1) << 62, np.int64(-1)
        postings = 0
        for j in range(nt):
            t = q_terms[j]
            cursor[j] = indptr[t]
            postings += indptr[t + 1] - indptr[t]
            if indptr[t + 1] > indptr[t]:
                lo_doc = min(lo_doc, np.int64(indices[indptr[t]]))
                hi_doc = max(hi_doc, np.int64(indices[indptr[t + 1] - 1]))
        # first touches marked with a branch when they are rare (more postings than documents: most touches are
        # repeats), branch-free when they are not (see the module docstring)
        dense = postings > len(keys)  # keys: one slot per document
        n = 0
        b0 = (lo_doc // block) * block
        while b0 <= hi_doc:
            b1 = b0 + block
            ub0 = np.uint32(b0)
            n_touched = 0
            for j in range(nt):
                t = q_terms[j]
                w = q_weights[j]
                p = cursor[j]
                stop = _block_end(indices, p, indptr[t + 1], b1)
                ix = indices[p:stop]
                x = data[p:stop]
                # counted loops with unsigned offsets (see _blocks._scan_block). The same four loops as _prune's
                # touched-list blocks: one inlined helper for both measured 1.2x slower on light queries at 1M, k = 100
                if lucene and dense:  # Lucene's BM25Scorer: w - w / (1 + x) in float32, summed in float64
                    for i in range(len(ix)):
                        d = np.uint32(ix[i]) - ub0
                        if mark[d] == 0:
                            mark[d] = 1
                            touched[n_touched] = d
                            n_touched += 1
                        acc64[d] += np.float64(w - w / (one + x[i]))
                elif lucene:
                    for i in range(len(ix)):
                        d = np.uint32(ix[i]) - ub0
                        touched[n_touched] = d  # kept only on the first touch
                        n_touched += 1 - mark[d]
                        mark[d] = 1
                        acc64[d] += np.float64(w - w / (one + x[i]))
                elif dense:
                    for i in range(len(ix)):
                        d = np.uint32(ix[i]) - ub0
                        if mark[d] == 0:
                            mark[d] = 1
                            touched[n_touched] = d
                            n_touched += 1
                        acc[d] += w * x[i]
                else:
                    for i in range(len(ix)):
                        d = np.uint32(ix[i]) - ub0
                        touched[n_touched] = d
                        n_touched += 1 - mark[d]
                        mark[d] = 1
                        acc[d] += w * x[i]
                cursor[j] = stop
            for i in range(n_touched):
                d = touched[i]
                if lucene:
                    s = np.float32(acc64[d])
                    acc64[d] = 0.0
                else:
                    s = acc[d]
                    acc[d] = 0.0
                mark[d] = 0
                if s == 0.0:  # as scipy's sparse product, which drops zero sums
                    continue
                fbuf[0] = s
                # the docno rank is looked up for the winners only: the doc id holds its place for now
                keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(d + b0)
                n += 1
            b0 = b1
        return _select(keys, n, num_results, tie_rank, rank_to_doc, fbuf, ubuf, out_docs, out_scores)

    @njit(nogil=True, cache=True)
    def _chunk(
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
        num_results,
        num_docs,
        block,
        lucene,
        out_docs,
        out_scores,
        out_n,
    ):
        acc = np.zeros(block, dtype=np.float32)
        acc64 = np.zeros(block if lucene else 1, dtype=np.float64)
        mark = np.zeros(block, dtype=np.uint8)
        touched = np.empty(block + 1, dtype=np.int64)  # + 1: the branch-free marking writes one slot ahead
        keys = np.empty(num_docs, dtype=np.uint64)
        cursor = np.empty(
            max(1, np.int64(np.max(np.diff(q_indptr))) if len(q_indptr) > 1 else 1), dtype=np.int64
        )
        fbuf = np.zeros(1, dtype=np.float32)
        ubuf = fbuf.view(np.uint32)
        for q in range(lo, hi):
            a, b = q_indptr[q], q_indptr[q + 1]
            out_n[q] = _query_top_k(
                q_indices[a:b],
                q_data[a:b],
                indptr,
                indices,
                data,
                tie_rank,
                rank_to_doc,
                num_results,
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
                np.int64(block),
            )

    @njit(parallel=True, nogil=True, cache=True)
    def _parallel(
        bounds,
        q_indptr,
        q_indices,
        q_data,
        indptr,
        indices,
        data,
        tie_rank,
        rank_to_doc,
        num_results,
        num_docs,
        block,
        lucene,
        out_docs,
        out_scores,
        out_n,
    ):
        for c in prange(len(bounds) - 1):
            _chunk(
                bounds[c],
                bounds[c + 1],
                q_indptr,
                q_indices,
                q_data,
                indptr,
                indices,
                data,
                tie_rank,
                rank_to_doc,
                num_results,
                num_docs,
                block,
                lucene,
                out_docs,
                out_scores,
                out_n,
            )

    @njit(nogil=True, cache=True)
    def _compact(lo, hi, start, docs, scores, counts, offsets, rows_out, docs_out, scores_out, ranks_out):
        for q in range(lo, hi):
            pos = offsets[q]
            for r in range(counts[q]):
                rows_out[pos] = start + q
                docs_out[pos] = docs[q, r]
                scores_out[pos] = scores[q, r]
                ranks_out[pos] = r
                pos += 1

    @njit(parallel=True, nogil=True, cache=True)
    def _compact_parallel(
        bounds, start, docs, scores, counts, offsets, rows_out, docs_out, scores_out, ranks_out
    ):
        for c in prange(len(bounds) - 1):
            _compact(
                bounds[c],
                bounds[c + 1],
                start,
                docs,
                scores,
                counts,
                offsets,
                rows_out,
                docs_out,
                scores_out,
                ranks_out,
            )


def compact(
    start: int, docs: np.ndarray, scores: np.ndarray, counts: np.ndarray, threads: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flatten per-query result rows into (query_row, doc, score float64, rank) arrays (numba backend)."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    out = (
        np.empty(total, np.int64),
        np.empty(total, np.int32),
        np.empty(total, np.float64),
        np.empty(total, np.int64),
    )
    threads = max(1, min(int(threads), len(counts)))
    if threads == 1:
        _compact(0, len(counts), start, docs, scores, counts, offsets, *out)
    else:
        # chunks of equal row counts, not equal query counts
        bounds = np.searchsorted(offsets, np.linspace(0, total, threads + 1)).astype(np.int64)
        bounds[0], bounds[-1] = 0, len(counts)
        with numba_threads(threads):
            _compact_parallel(bounds, start, docs, scores, counts, offsets, *out)
    return out


def top_k_numba(
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
    block: int | None = None,
    lucene: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top ``num_results`` of every query row: (docs [nq, n] int32, scores [nq, n] float32, counts [nq] int32).

    Row q holds ``counts[q]`` results, best first. Documents with no query term are never returned. With
    ``lucene=True`` a posting x of a query term of weight w adds ``w - w / (1 + x)`` (Lucene's BM25), computed
    in float32 and summed in float64 before the score is rounded to float32, as Lucene sums a disjunction.
    """
    nq = len(q_indptr) - 1
    out_docs = np.zeros((nq, num_results), dtype=np.int32)
    out_scores = np.zeros((nq, num_results), dtype=np.float32)
    out_n = np.zeros(nq, dtype=np.int32)
    if nq == 0 or num_results == 0:
        return out_docs, out_scores, out_n
    if rank_to_doc is None:
        rank_to_doc = np.empty(len(tie_rank), dtype=np.int32)
        rank_to_doc[tie_rank] = np.arange(len(tie_rank), dtype=np.int32)
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
        int(max(1, min(num_docs, block or _BLOCK))),
        bool(lucene),
        out_docs,
        out_scores,
        out_n,
    )
    threads = max(1, min(int(threads), nq))
    if threads == 1:
        _chunk(0, nq, *args)
    else:
        bounds = np.linspace(0, nq, threads + 1).astype(np.int64)
        with numba_threads(threads):
            _parallel(bounds, *args)
    return out_docs, out_scores, out_n
