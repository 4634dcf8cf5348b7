"""A running threshold for the numba kernel: documents that cannot enter the top k are dropped as soon as they are
scored. The result is exactly that of :func:`~pyterrier_sparse_eval._topk.top_k_numba` (the same documents, order
and float32 scores); nothing is approximated.

Documents are scored block by block, term at a time inside a block, as the exhaustive kernel does, so every
document's score is the same float32 sum in the same order. The exhaustive kernel then builds a selection key
(score bits and doc id) for every document it touched and partitions them all at the end; here the k-th best score
seen so far (the threshold) is kept instead, and a document scoring below it is dropped before its key is built:
only candidates are kept, re-partitioned when their buffer fills. Three ways to score a block, chosen per query by
how many postings its terms have (measured on bench_workloads.py's workloads and the real topics):

- **touched list** (light and frequent-term queries): each first touch of a document is recorded, and only those
  documents are read back. On Lucene-scored indexes, once the threshold exceeds the summed bounds (largest
  contributions, ``SparseIndex.term_bounds``) of the query's lowest-bound terms, MaxScore's non-essential terms,
  a block walks the other terms as usual, keeps as candidates the documents whose partial sum plus those bounds
  can still reach the threshold, and adds the non-essential terms' postings to the candidates only (no touched
  list, no key for the rest): 1.2-1.35x at k = 10 and 100 on light and frequent-term queries, 1.0-1.05x at
  k = 1000. The sums stay exact: the bounds are used only when the query's float64 sums are exact in any order
  of addition (its smallest and largest contributions are less than 2^30 apart: on BM25 weights always). Once
  an index handle holds the precomputed contributions (below), these blocks add them too (1.05-1.1x);
- **scan** (queries with at least ``SCAN`` postings per document: long BM25 queries, learned-sparse queries): no
  bookkeeping per posting, in sub-blocks of ``SCAN_BLOCK`` documents, whatever the block size (on collections
  small enough for narrower blocks, such as SciFact and Vaswani, fewer ends of terms in a block to find: 1.06-1.15x
  at k = 10 and 100); the whole sub-block is read back in
  64-document chunks, a vectorised pass first asking whether any document of the chunk reaches the threshold
  (once it is set, mostly none does), the few that do found through a bit mask. The threshold is set as soon as
  the first chunks hold more than k candidates, not after the first block: keying a whole first block and
  partitioning it cost long queries a quarter of their time at k = 10. On Lucene-scored indexes a query term
  used once adds the posting's precomputed contribution (``SparseIndex.lucene_impacts``, the same float32 bits
  as the formula) instead of evaluating ``w - w / (1 + x)``: 1.3-2.3x on long queries. On Lucene-scored
  indexes, a scanned query whose span holds at least four steps (a step: the larger of the block and
  ``SCAN_BLOCK``) chooses at each step: once its essential terms hold at most ``SCAN_BOUNDED`` postings per document
  of the collection, the step is a bounded block (as above). This is the frequent-term query heavy enough to be
  scanned (a few terms, some of them very frequent: 36 of bench_workloads.py's 200 at 1M documents, 43% of the
  workload's time at k = 10; 15% of their postings in essential terms at the final threshold). With the bounded
  blocks' candidates dropped term by term (``_blocks._bounded_block``), frequent-term queries at k = 10 1.16-1.18x
  at 1M documents and 1.23-1.28x at 3M, at k = 100 1.04-1.06x and 1.12-1.14x, at k = 1000 1.0-1.03x; long queries
  (whose essential terms stay dense) 0.98-1.04x, light ones and the real topics 0.97-1.02x (old and new package in
  one process, passes alternated, best of 8-25). Essential terms' share of the postings as the criterion instead
  (at most 60%) took long queries to 0.56-0.73x;
- **exhaustive** (queries with fewer than ``LIGHT`` x k postings, ``light=``): a threshold set this late saves
  less than it costs; :func:`~pyterrier_sparse_eval._topk.top_k_numba` scores them.

Blocks hold 16,384 documents (accumulators in L2), fewer on small collections (:func:`default_block`) so that the
threshold set by the first blocks prunes the next. Block-max upper bounds (skipping blocks whose best possible score
is below the threshold) were measured too and dropped: on BM25 queries with frequent terms and on SPLADE-like
queries, 256-document blocks' bounds skipped under 10% of the postings and cost more than they saved. So were other
uses of the per-term bounds: MaxScore document at a time (the essential terms' documents scored in query-term order,
galloping in the other lists), 0.4-0.7x on light and frequent-term queries, 1.0x on long ones; term at a time over
the whole collection, candidates looked up in the non-essential lists, 0.1-0.7x (accumulators out of cache); in
blocks with the candidates looked up (galloping) instead of walking the non-essential postings, 0.1-0.6x (and
0.88-1.0x where a block's postings outnumber its candidates 16-256 times, candidates dropped term by term, its end
found by a linear or a galloping search); and on long and learned-sparse scanned queries, 0.3-0.9x: finding the
candidates among a whole block costs more than the scan's vectorised read-back. Nor did scanned blocks that add only
the essential terms, keep as candidates what the vectorised read-back finds above the threshold less the other terms'
bounds, and look those terms up for the candidates (galloping) instead of walking them: at the final threshold (5
long queries, k = 10 and 100), non-essential terms whose bounds sum to 18-44% of it hold 15-44% of the postings and
leave 76-8,700 candidates in 1M documents, yet the whole query ran at 1.04x at k = 10, 0.98x at k = 100 and 0.92x at
k = 1000 (1M documents, one process, variants alternated, best of 30; 0.79-1.03x with 40%). Every block walks a
term's postings in a counted loop (the term's end in the block found first) with unsigned offsets into the
accumulators: LLVM then drops the negative-index check and unrolls the scatter-add, 1.3-1.5x per posting on long
queries (counted loops with signed offsets had measured 0.94-1.0x). Wider blocks for sparse queries were measured and
dropped too (doubled, up to 16 blocks, while a block got at most min(8 x k, 1024) postings): 1.07-1.15x on light
queries at 1M and k = 100, 0.97-1.0x at 3M and on the other cells (the wider accumulators cost their allocation and
cache). A better first threshold would pay on long queries: set from the start at the final k-th score (an oracle),
or at 0.9 of it, it made them 1.25-1.35x faster at 1M (the bounded blocks start skipping at once). A safe one from
each term's largest contributions (the k-th best partial sum over the documents in the terms' top k or 4k lists:
every document scores at least its partial sum) reached only 0.56-0.76 of the final k-th score on long queries (0.8
on frequent-term ones, where the oracle saved under 15%): not built.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._blocks import WIDE_SPAN, lucene_impacts, term_bounds
from ._numba import numba_threads
from ._topk import HAVE_NUMBA, postings_per_row, top_k_numba

__all__ = [
    "BUDGET",
    "LIGHT",
    "SCAN",
    "SCAN_BLOCK",
    "SCAN_BOUNDED",
    "default_block",
    "lucene_impacts",
    "term_bounds",
    "top_k_pruned",
]

#: documents scored together: their accumulators stay in L2 (16k measured best at 1M documents)
_BLOCK = 1 << 14
#: queries with fewer postings than this many times k go to the exhaustive kernel (a threshold set late saves little)
LIGHT = 16.0
#: queries with at least this many postings per document read back whole blocks (measured: bench_workloads.py)
SCAN = 0.12
_NO_IMPACTS = np.zeros(0, dtype=np.float32)  # no weight per term: the formula is used
#: documents a scanned block scores at once (64 KiB of float64 accumulators; 1.0-1.2x over 16,384 on long queries)
SCAN_BLOCK = 1 << 13
#: a block is scored with the bounds when the terms they skip hold at least this share of the query's postings
BUDGET = 0.3
#: a scanned query's step is a bounded block when its essential terms hold at most this many postings per document
SCAN_BOUNDED = 0.05

if HAVE_NUMBA:
    from numba import njit, prange

    from ._blocks import NARROW_SLACK, SLACK, _bounded_block, _cut, _next_cap, _scan_block
    from ._topk import _block_end, _ordered, _select

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
        imp,
        imp_w,
        scan_min,
        tmax,
        tmin,
        cand,
        budget,
        scan_block,
        wide_span,
        scan_bounded,
    ):
        nt = len(q_terms)
        one = np.float32(1.0)
        bsize = np.int64(len(mark))  # acc and acc64 may be longer: a scanned sub-block can be wider
        lo_doc, hi_doc = np.int64(1) << 62, np.int64(-1)
        postings = np.int64(0)
        for j in range(nt):
            t = q_terms[j]
            cursor[j] = indptr[t]
            postings += indptr[t + 1] - indptr[t]
            if indptr[t + 1] > indptr[t]:
                lo_doc = min(lo_doc, np.int64(indices[indptr[t]]))
                hi_doc = max(hi_doc, np.int64(indices[indptr[t + 1] - 1]))
        scan = postings >= scan_min  # heavy query: no touched list, the whole block is read back
        # per-term bounds (the largest contribution of each term), in decreasing order, and their suffix sums; on
        # Lucene-scored indexes only, for queries scored with a touched list, and when the query's float64 sums are
        # exact (then any order of addition gives the bits of the other kernels' query-term order): every
        # contribution is a float32 of at least ``low``, so a multiple of 2^(exponent(low) - 23), and every sum
        # below 2^(exponent(low) + 30) is exact
        step = max(bsize, scan_block)  # a scanned query's documents between two choices of how to score them
        bounded = lucene and len(tmax) > 0 and (not scan or hi_doc - lo_doc >= 4 * step)  # scanned: wide
        ub = np.zeros(nt, dtype=np.float64)
        low = np.inf
        for j in range(nt if bounded else 0):
            w = q_weights[j]
            t = q_terms[j]
            if not w > 0:  # a negative, zero or NaN weight: the bounds do not hold
                bounded = False
                break
            if indptr[t + 1] > indptr[t]:
                ub[j] = np.float64(w - w / (one + tmax[t]))
                low = min(low, np.float64(w - w / (one + tmin[t])))
        if bounded and not (0 < low < np.inf and ub.sum() < math.ldexp(1.0, math.frexp(low)[1] - 1 + 30)):
            bounded = False
        order = np.argsort(-ub) if bounded else np.arange(0)
        rest = np.zeros(len(order) + 1, dtype=np.float64)  # rest[i]: the bounds of order[i:] summed
        rest_postings = np.zeros(len(order) + 1, dtype=np.int64)  # and their postings
        for i in range(len(order) - 1, -1, -1):
            t = q_terms[order[i]]
            rest[i] = rest[i + 1] + ub[order[i]]
            rest_postings[i] = rest_postings[i + 1] + indptr[t + 1] - indptr[t]
        e = nt
        dense = postings > num_docs  # more postings than documents: most touches are repeats
        theta = np.float32(-np.inf)
        below = -np.inf
        n = 0
        slack = SLACK if hi_doc - lo_doc >= wide_span else NARROW_SLACK
        cap = _next_cap(k, k, slack)
        b0 = (lo_doc // bsize) * bsize
        # the bounded blocks pay when the terms they skip hold at least this many of the query's postings
        worth = budget * postings
        margin = 1.0 - 1e-6  # 16x the relative error of rounding to float32 (the float64 sums are exact)
        while b0 <= hi_doc:
            b1 = b0 + bsize
            if bounded and theta > 0:
                while e > 0 and rest[e - 1] < theta * margin:
                    e -= 1
                if e == 0:  # no document left can reach the threshold
                    break
                essential = postings - rest_postings[e]
                if e < nt and (essential <= scan_bounded * num_docs if scan else rest_postings[e] >= worth):
                    n = _bounded_block(
                        q_terms, q_weights, indptr, indices, data, imp, imp_w, order, e, theta * margin, rest,
                        cursor, acc64, mark, touched, cand, b0, b1, theta, keys, n, fbuf, ubuf,
                    )  # fmt: skip
                    if n >= k + max(k, 32):  # a fresh threshold: it sets which terms are essential
                        n, cap, theta, below = _cut(keys, n, k, slack, fbuf, ubuf)
                    b0 = b1
                    continue
            if scan:  # SCAN_BLOCK sub-blocks, whatever the block size: the rest of the span, or the step's
                s1 = min(hi_doc + 1, num_docs, b0 + step) if bounded else min(hi_doc + 1, num_docs)
                for s0 in range(b0, s1, scan_block):
                    n, cap, theta, below = _scan_block(
                        q_terms, q_weights, indptr, indices, data, imp, imp_w, lucene, acc, acc64, cursor, s0,
                        min(scan_block, s1 - s0), theta, below, keys, n, k, cap, slack, fbuf, ubuf,
                    )  # fmt: skip
                if not bounded:
                    break
                b0 += step
                continue
            n_touched = 0
            ub0 = np.uint32(b0)
            use_imp = lucene and len(imp_w) == len(indptr) - 1
            for j in range(nt):
                t = q_terms[j]
                w = q_weights[j]
                p = cursor[j]
                stop = _block_end(indices, p, indptr[t + 1], b1)
                ix = indices[p:stop]
                x = data[p:stop]
                # counted loops (see _scan_block); first touches are marked branch-free when they are frequent
                # (sparse queries: touches are random) and with a branch when they are rare (dense queries touch
                # each document many times)
                if use_imp and w == imp_w[t]:  # the precomputed contributions (see _scan_block)
                    im = imp[p:stop]
                    if dense:
                        for i in range(len(ix)):
                            d = np.uint32(ix[i]) - ub0
                            if mark[d] == 0:
                                mark[d] = 1
                                touched[n_touched] = d
                                n_touched += 1
                            acc64[d] += np.float64(im[i])
                    else:
                        for i in range(len(ix)):
                            d = np.uint32(ix[i]) - ub0
                            touched[n_touched] = d
                            n_touched += 1 - mark[d]
                            mark[d] = 1
                            acc64[d] += np.float64(im[i])
                elif lucene and dense:  # Lucene's BM25Scorer: w - w / (1 + x) in float32, summed in float64
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
                if s >= theta and s != 0.0:  # zero sums are dropped, as by scipy's sparse product
                    fbuf[0] = s
                    keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(d + b0)
                    n += 1
            if n > k and (n >= cap or theta == -np.inf):
                n, cap, theta, below = _cut(keys, n, k, slack, fbuf, ubuf)
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
        imp,
        imp_w,
        scan_min,
        tmax,
        tmin,
        budget,
        scan_block,
        wide_span,
        scan_bounded,
    ):
        acc = np.zeros(max(block, scan_block), dtype=np.float32)
        # float64 sums: Lucene's, and the bounded blocks' partial sums
        acc64 = np.zeros(max(block, scan_block) if lucene or len(tmax) else 1, dtype=np.float64)
        cand = np.empty(block if len(tmax) else 1, dtype=np.int64)
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
                imp,
                imp_w,
                scan_min,
                tmax,
                tmin,
                cand,
                budget,
                scan_block,
                wide_span,
                scan_bounded,
            )

    @njit(parallel=True, nogil=True, cache=True)
    def _parallel_threshold(bounds, *args):
        for c in prange(len(bounds) - 1):
            _chunk_threshold(bounds[c], bounds[c + 1], *args)


def default_block(num_docs: int) -> int:
    """Documents scored together: 16,384 (accumulators in L2), smaller on small collections so that a query spans
    several blocks and the threshold set by the first ones prunes the others (a quarter of the collection, at
    least 1,024; measured on SciFact and Vaswani: 1.4-1.7x at k = 10 over one block)."""
    return int(min(_BLOCK, max(1024, 1 << max(0, (int(num_docs) // 4).bit_length() - 1))))


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
    scan: float = SCAN,
    impacts: tuple[np.ndarray, np.ndarray] | None = None,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
    budget: float = BUDGET,
    scan_block: int = SCAN_BLOCK,
    wide_span: int = WIDE_SPAN,
    scan_bounded: float = SCAN_BOUNDED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~pyterrier_sparse_eval._topk.top_k_numba`'s result, dropping documents below a running threshold.

    ``block`` is the number of documents scored together (:func:`default_block`). Queries whose terms' postings
    number less than ``light`` times ``num_results`` go to the exhaustive kernel (same result, less bookkeeping);
    those with at least ``scan`` times the documents read back every accumulator of a block instead of a list of the
    documents they touched. ``impacts`` = ``(values, weights)`` (Lucene scoring; see :func:`lucene_impacts`): a query
    term whose weight is ``weights[t]`` adds ``values[p]``, the precomputed ``w - w / (1 + x)`` of posting p, in
    those scanned blocks, which score ``scan_block`` documents at a time (wider than ``block`` if it is). Queries
    whose documents span at least ``wide_span`` ids cut their candidates more often (``SLACK``). With ``bounds``, a
    scanned query scores a block with them once its essential terms hold at most ``scan_bounded`` postings per
    document.
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
    if impacts is not None and (len(impacts[0]) != len(data) or len(impacts[1]) != len(indptr) - 1):
        raise ValueError(
            "impacts must hold one value per posting and one weight per term (see lucene_impacts)."
        )
    if light > 0:
        short = postings_per_row(np.diff(indptr), q_indptr, q_indices) < light * num_results
        if short.all():  # no split (a one-query call: ~50 us)
            return top_k_numba(
                q_indptr, q_indices, q_data, indptr, indices, data, tie_rank, num_results, num_docs, threads,
                rank_to_doc, block=block, lucene=lucene,
            )  # fmt: skip
        if short.any():
            q = sp.csr_matrix((q_data, q_indices, q_indptr), shape=(nq, len(indptr) - 1))
            for rows, threshold in ((np.flatnonzero(short), False), (np.flatnonzero(~short), True)):
                if len(rows):
                    sub = q[rows]
                    common = (sub.indptr, sub.indices, sub.data, indptr, indices, data, tie_rank, num_results)
                    if threshold:
                        got = top_k_pruned(
                            *common, num_docs, threads, rank_to_doc, lucene, block, scan=scan, impacts=impacts,
                            bounds=bounds, budget=budget, scan_block=scan_block, wide_span=wide_span,
                            scan_bounded=scan_bounded,
                        )  # fmt: skip
                    else:
                        got = top_k_numba(*common, num_docs, threads, rank_to_doc, block=block, lucene=lucene)
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
        np.int64(max(1, min(num_docs, block or default_block(num_docs)))),
        *(impacts if lucene and impacts is not None else (_NO_IMPACTS, _NO_IMPACTS)),
        np.int64(min(np.ceil(scan * num_docs), 1 << 62) if num_docs else 1 << 62),  # inf x 0 is NaN
        *((_NO_IMPACTS, _NO_IMPACTS) if bounds is None or not lucene else bounds),
        float(budget),
        np.int64(max(1, min(scan_block, num_docs))),
        np.int64(wide_span),
        float(scan_bounded),
    )
    threads = max(1, min(int(threads), nq))
    if threads == 1:
        _chunk_threshold(0, nq, *args)
    else:
        cuts = np.linspace(0, nq, threads + 1).astype(np.int64)
        with numba_threads(threads):
            _parallel_threshold(cuts, *args)
    return out_docs, out_scores, out_n
