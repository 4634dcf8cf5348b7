"""Exact top-k scoring kernels: numba when available, the numpy/scipy path otherwise, identical results.

Scoring is term-at-a-time: for each query term t (in the query's column order) and each posting (d, w) of t,
``acc[d] += q_t * w`` in float32, the same operations in the same order as scipy's sparse product, so every
backend produces bit-identical scores. Selection keeps the k best documents by (score desc, docno desc), the
order trec_eval uses, with a bounded min-heap: one comparison per touched document in the common case.

Parallelism: queries are split into one contiguous chunk per thread; each chunk owns its accumulator, so no
locks and no shared writes.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["HAVE_NUMBA", "top_k_numba", "available_backends"]

try:  # numba is optional: the numpy/scipy path gives the same results
    if os.environ.get("PSE_DISABLE_NUMBA"):
        raise ImportError("disabled by PSE_DISABLE_NUMBA")
    import numba
    from numba import njit, prange

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised by the numpy fallback tests through PSE_DISABLE_NUMBA
    HAVE_NUMBA = False


def available_backends() -> tuple[str, ...]:
    return ("numba", "scipy") if HAVE_NUMBA else ("scipy",)


if HAVE_NUMBA:

    @njit(inline="always")
    def _better(s1: float, r1: int, s2: float, r2: int) -> bool:
        """True if (s1, r1) ranks before (s2, r2): higher score, then higher docno rank (docno descending)."""
        return s1 > s2 or (s1 == s2 and r1 > r2)

    @njit(inline="always")
    def _sift_down(hs: np.ndarray, hd: np.ndarray, hr: np.ndarray, n: int, i: int) -> None:
        # min-heap on rank order: the root is the worst kept document
        while True:
            left = 2 * i + 1
            if left >= n:
                return
            worst = left
            right = left + 1
            if right < n and _better(hs[worst], hr[worst], hs[right], hr[right]):
                worst = right
            if _better(hs[i], hr[i], hs[worst], hr[worst]):
                hs[i], hs[worst] = hs[worst], hs[i]
                hd[i], hd[worst] = hd[worst], hd[i]
                hr[i], hr[worst] = hr[worst], hr[i]
                i = worst
            else:
                return

    @njit(nogil=True, cache=True)
    def _query_top_k(q_terms, q_weights, indptr, indices, data, tie_rank, k, acc, mark, touched,
                     hs, hd, hr, out_docs, out_scores):
        n_touched = 0
        for j in range(len(q_terms)):
            t = q_terms[j]
            w = q_weights[j]
            for p in range(indptr[t], indptr[t + 1]):
                d = indices[p]
                if mark[d] == 0:
                    mark[d] = 1
                    touched[n_touched] = d
                    n_touched += 1
                acc[d] += w * data[p]
        # select the k best while resetting the accumulator
        n = 0
        for i in range(n_touched):
            d = touched[i]
            s = acc[d]
            acc[d] = 0.0
            mark[d] = 0
            if s == 0.0:  # as scipy's sparse product, which drops zero sums
                continue
            r = tie_rank[d]
            if n < k:
                # append then sift up
                c = n
                hs[c], hd[c], hr[c] = s, d, r
                n += 1
                while c > 0:
                    parent = (c - 1) // 2
                    if _better(hs[parent], hr[parent], hs[c], hr[c]):
                        hs[parent], hs[c] = hs[c], hs[parent]
                        hd[parent], hd[c] = hd[c], hd[parent]
                        hr[parent], hr[c] = hr[c], hr[parent]
                        c = parent
                    else:
                        break
            elif _better(s, r, hs[0], hr[0]):
                hs[0], hd[0], hr[0] = s, d, r
                _sift_down(hs, hd, hr, n, 0)
        # pop the heap from worst to best into the output, best first
        for pos in range(n - 1, -1, -1):
            out_scores[pos] = hs[0]
            out_docs[pos] = hd[0]
            last = pos
            hs[0], hd[0], hr[0] = hs[last], hd[last], hr[last]
            _sift_down(hs, hd, hr, last, 0)
        return n

    @njit(nogil=True, cache=True)
    def _chunk(lo, hi, q_indptr, q_indices, q_data, indptr, indices, data, tie_rank, k, num_docs,
               out_docs, out_scores, out_n):
        acc = np.zeros(num_docs, dtype=np.float32)
        mark = np.zeros(num_docs, dtype=np.uint8)
        touched = np.empty(num_docs, dtype=np.int32)
        hs = np.empty(k, dtype=np.float32)
        hd = np.empty(k, dtype=np.int32)
        hr = np.empty(k, dtype=np.int32)
        for q in range(lo, hi):
            a, b = q_indptr[q], q_indptr[q + 1]
            out_n[q] = _query_top_k(q_indices[a:b], q_data[a:b], indptr, indices, data, tie_rank, k, acc, mark,
                                    touched, hs, hd, hr, out_docs[q], out_scores[q])

    @njit(parallel=True, nogil=True, cache=True)
    def _parallel(bounds, q_indptr, q_indices, q_data, indptr, indices, data, tie_rank, k, num_docs,
                  out_docs, out_scores, out_n):
        for c in prange(len(bounds) - 1):
            _chunk(bounds[c], bounds[c + 1], q_indptr, q_indices, q_data, indptr, indices, data, tie_rank, k,
                   num_docs, out_docs, out_scores, out_n)


def top_k_numba(q_indptr: np.ndarray, q_indices: np.ndarray, q_data: np.ndarray, indptr: np.ndarray,
                indices: np.ndarray, data: np.ndarray, tie_rank: np.ndarray, k: int, num_docs: int,
                threads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-k of every query row: (docs [nq, k] int32, scores [nq, k] float32, counts [nq] int32).

    Row q holds ``counts[q]`` results, best first. Documents with no query term are never returned.
    """
    nq = len(q_indptr) - 1
    out_docs = np.zeros((nq, k), dtype=np.int32)
    out_scores = np.zeros((nq, k), dtype=np.float32)
    out_n = np.zeros(nq, dtype=np.int32)
    if nq == 0 or k == 0:
        return out_docs, out_scores, out_n
    args = (np.ascontiguousarray(q_indptr, dtype=np.int64), np.ascontiguousarray(q_indices, dtype=np.int64),
            np.ascontiguousarray(q_data, dtype=np.float32), indptr, indices, data, tie_rank, int(k), int(num_docs),
            out_docs, out_scores, out_n)
    threads = max(1, min(int(threads), nq))
    if threads == 1:
        _chunk(0, nq, *args)
    else:
        bounds = np.linspace(0, nq, threads + 1).astype(np.int64)
        previous = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            _parallel(bounds, *args)
        finally:
            numba.set_num_threads(previous)
    return out_docs, out_scores, out_n
