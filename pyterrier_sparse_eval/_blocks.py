"""Block scorers of the threshold kernel (:mod:`~pyterrier_sparse_eval._prune`): a scanned block (no touched list,
read back in chunks) and a bounded block (MaxScore's non-essential terms add to candidates only), with the per-term
bounds and the precomputed Lucene contributions they use."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._topk import HAVE_NUMBA

__all__ = ["lucene_impacts", "term_bounds"]

_CHUNK = 64  # documents read back together in a scanned block
#: candidates kept past the k best before the next cut: max(2k, this) on queries whose documents span at least
#: ``WIDE_SPAN`` ids, max(2k, ``NARROW_SLACK``) on the others. A cut raises the threshold, and the sooner it rises the
#: fewer documents are keyed and the fewer scanned chunks have any document to key; a cut of a few hundred keys
#: costs a few microseconds (``_kth_score``), which a wide span pays back and a narrow one does not. Against 4,096
#: everywhere (old and new package in one process, passes alternated, best of 30; 1M documents): frequent-term
#: queries 1.03x at k = 10 and 1.12x at k = 100, long ones 1.04x and 1.12x; best of 9: light ones 1.07x at k = 100,
#: k = 1000 and learned-sparse queries 0.95-1.04x (noise). On SciFact and Vaswani (narrow) a slack of 128 measured
#: 0.86-0.95x at k = 100 and 1000 in separate processes, hence the narrow slack there
SLACK = 128
NARROW_SLACK = 4096
WIDE_SPAN = 1 << 16

if HAVE_NUMBA:
    from numba import njit
    from numba.cpython.unsafe.numbers import trailing_zeros

    from ._topk import _block_end, _keep_best, _ordered, _unordered

    @njit(nogil=True, cache=True)
    def _next_cap(m, k, slack):
        """The buffer size at which to cut again, ``m`` candidates kept: ``slack`` (see ``SLACK``) or 2k more, or
        m more when documents tied with the k-th keep m beyond those (a cut keeps every tie: cutting again after a
        fixed number of candidates cost time quadratic in the ties, 1.9 s for a word in half of 1M documents)."""
        return m + max(2 * k, slack, m)

    @njit(nogil=True, cache=True)
    def _cut(keys, n, k, slack, fbuf, ubuf):
        """Keep the candidates scoring at least the k-th best of the ``n`` keys (ties with it included): the new
        count, the buffer size at which to cut again (``slack``: see ``SLACK``), the threshold score and (float64)
        the float32 below it."""
        m, cut = _keep_best(keys, n, k)
        ubuf[0] = np.uint32(_unordered(cut - np.uint64(1)))
        # the float32 just below the threshold: a float64 sum above it may round to it
        below = np.float64(fbuf[0])
        ubuf[0] = np.uint32(_unordered(cut))
        return m, _next_cap(m, k, slack), fbuf[0], below

    @njit(nogil=True, cache=True)
    def _term_bounds(indptr, data):
        """Each term's largest and smallest positive posting value (0 and inf for a term without any) and whether
        any value is negative."""
        nt = len(indptr) - 1
        hi = np.zeros(nt, dtype=np.float32)
        lo = np.full(nt, np.inf, dtype=np.float32)
        negative = False
        for t in range(nt):
            a = np.float32(0.0)
            b = np.float32(np.inf)
            for p in range(indptr[t], indptr[t + 1]):
                x = data[p]
                a = max(a, x)
                if x > 0:
                    b = min(b, x)
                negative |= x < 0
            hi[t] = a
            lo[t] = b
        return hi, lo, negative

    @njit(nogil=True, cache=True)
    def _seek(indices, p, end, d):
        """The first position from ``p`` (up to ``end``) whose document is at least ``d``: galloping, then binary
        search."""
        step = 1
        bound = p
        while bound < end and indices[bound] < d:
            p = bound + 1
            bound += step
            step *= 2
        hi = min(bound, end)
        while p < hi:
            mid = (p + hi) >> 1
            if indices[mid] < d:
                p = mid + 1
            else:
                hi = mid
        return p

    @njit(nogil=True, cache=True)
    def _reaching(docs, n, out, part, mark, first):
        """Copy to ``out`` the first ``n`` of ``docs`` whose partial sum reaches ``first`` (in place if ``out`` is
        ``docs``) and clear the others' sums and marks; their count."""
        c = 0
        for m in range(n):
            d = docs[m]
            if part[d] >= first:
                out[c] = d
                c += 1
            else:
                part[d] = 0.0
                mark[d] = 0
        return c

    @njit(nogil=True, cache=True)
    def _bounded_block(
        q_terms, q_weights, indptr, indices, data, imp, imp_w, order, e, reach, rest, cursor, part, mark, touched, cand,
        b0, b1, theta, keys, n, fbuf, ubuf,
    ):  # fmt: skip
        """Score one block of a Lucene-scored query whose lowest-bound terms (``order[e:]``, MaxScore's
        non-essential terms) cannot bring a document to the threshold on their own: the other terms' postings are
        added as usual; the documents whose partial sum reaches ``reach - rest[e]`` (``reach``: the threshold less
        a margin for rounding; ``rest[i]``: the bounds of ``order[i:]`` summed) are the only candidates, and the
        non-essential terms' postings only add to those (no touched list, no key for the others). After each
        non-essential term, the candidates that the terms left cannot bring to the threshold are dropped, and once
        none is left the other terms' cursors move past the block unread: frequent-term queries at k = 10 1.1x at
        1M and 3M documents, 1.0x elsewhere (old and new package in one process, passes alternated, best of 10).
        The caller checked that the query's float64 sums are exact in any order of addition, so the scores are the
        same float32 bits as the other kernels'.
        Each term's postings in the block are walked in a counted loop (its end found first) with unsigned offsets,
        as in the other blocks: frequent-term queries 1.18x at k = 10 and 1.10-1.15x at k = 100 (1M documents;
        1.21x and 1.18x at 3M), light ones 1.04-1.09x (one process, old and new alternated, best of 20)."""
        one = np.float32(1.0)
        nt = len(q_terms)
        use_imp = len(imp_w) == len(indptr) - 1
        nb = 0
        ub0 = np.uint32(b0)
        for r in range(e):
            j = order[r]
            t = q_terms[j]
            w = q_weights[j]
            p = cursor[j]
            stop = _block_end(indices, p, indptr[t + 1], b1)
            ix = indices[p:stop]
            if use_imp and w == imp_w[t]:
                im = imp[p:stop]
                for i in range(len(ix)):
                    d = np.uint32(ix[i]) - ub0
                    touched[nb] = d
                    nb += 1 - mark[d]
                    mark[d] = 1
                    part[d] += np.float64(im[i])
            else:
                x = data[p:stop]
                for i in range(len(ix)):
                    d = np.uint32(ix[i]) - ub0
                    touched[nb] = d
                    nb += 1 - mark[d]
                    mark[d] = 1
                    part[d] += np.float64(w - w / (one + x[i]))
            cursor[j] = stop
        c = _reaching(touched, nb, cand, part, mark, reach - rest[e])
        for r in range(e, nt):
            j = order[r]
            t = q_terms[j]
            w = q_weights[j]
            p = cursor[j]
            end = indptr[t + 1]
            if c == 0:  # nothing to add to: the cursor moves past the block
                cursor[j] = _seek(indices, p, end, b1)
                continue
            stop = _block_end(indices, p, end, b1)
            ix = indices[p:stop]
            if use_imp and w == imp_w[t]:
                im = imp[p:stop]
                for i in range(len(ix)):
                    d = np.uint32(ix[i]) - ub0
                    if mark[d]:
                        part[d] += np.float64(im[i])
            else:
                x = data[p:stop]
                for i in range(len(ix)):
                    d = np.uint32(ix[i]) - ub0
                    if mark[d]:
                        part[d] += np.float64(w - w / (one + x[i]))
            cursor[j] = stop
            if r + 1 < nt:  # the candidates that the terms left cannot bring to the threshold are dropped
                c = _reaching(cand, c, cand, part, mark, reach - rest[r + 1])
        for m in range(c):
            d = cand[m]
            s = np.float32(part[d])
            part[d] = 0.0
            mark[d] = 0
            if s >= theta and s != 0.0:
                fbuf[0] = s
                keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(d + b0)
                n += 1
        return n

    @njit(nogil=True, cache=True)
    def _scan_block(
        q_terms, q_weights, indptr, indices, data, imp, imp_w, lucene, acc, acc64, cursor, b0, width, theta,
        below, keys, n, k, cap, slack, fbuf, ubuf,
    ):  # fmt: skip
        """Score one block without tracking which documents were touched, then read back all ``width``
        accumulators: for queries that touch a large share of the block, cheaper than a touched list. A Lucene
        term whose query weight is the one ``imp`` was computed with adds the precomputed ``w - w / (1 + x)``."""
        one = np.float32(1.0)
        b1 = b0 + width
        # counted loops over the term's postings in the block (its end found first) with unsigned offsets: LLVM
        # then unrolls the scatter-add and drops the negative-index check (1.3-1.5x per posting on long queries)
        ub0 = np.uint32(b0)
        use_imp = lucene and len(imp_w) == len(indptr) - 1
        for j in range(len(q_terms)):
            t = q_terms[j]
            w = q_weights[j]
            p = cursor[j]
            e = _block_end(indices, p, indptr[t + 1], b1)
            ix = indices[p:e]
            if use_imp and w == imp_w[t]:
                im = imp[p:e]
                for i in range(len(ix)):
                    acc64[np.uint32(ix[i]) - ub0] += np.float64(im[i])
            elif lucene:
                x = data[p:e]
                for i in range(len(ix)):
                    acc64[np.uint32(ix[i]) - ub0] += np.float64(w - w / (one + x[i]))
            else:
                x = data[p:e]
                for i in range(len(ix)):
                    acc[np.uint32(ix[i]) - ub0] += w * x[i]
            cursor[j] = e
        # read back in chunks: a vectorised pass asks whether any document of the chunk reaches the threshold
        # (once it is set, mostly none does); only then are the chunk's documents keyed: branch-free (a key
        # written for every document, kept when it qualifies) when most qualify, else with a branch. Loops run
        # over a view of the chunk: indexing the block at c0 + i keeps LLVM from vectorising them.
        for c0 in range(0, width, _CHUNK):
            c1 = min(c0 + _CHUNK, width)
            reach = 0
            if lucene:
                view64 = acc64[c0:c1]
                # above a non-negative bound is non-zero: one comparison per document (this test 14 -> 9 ns per
                # chunk; long queries at 1M, in one process, best of 30: 1.04x at k = 10 and 100, 1.00x at 1000)
                if below >= 0.0:
                    for i in range(len(view64)):
                        reach += view64[i] > below
                else:
                    for i in range(len(view64)):
                        reach += (view64[i] > below) & (view64[i] != 0.0)
                if reach == len(view64) or (reach and theta == -np.inf):  # most qualify
                    for i in range(len(view64)):
                        s = np.float32(view64[i])
                        fbuf[0] = s
                        keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(c0 + i + b0)
                        n += (s >= theta) & (s != 0.0)  # zero sums (and untouched documents) are dropped
                elif reach:  # a few qualify: their positions as a bit mask, visited bit by bit (no branch per document)
                    mask = np.uint64(0)
                    for i in range(len(view64)):
                        mask |= np.uint64((view64[i] > below) & (view64[i] != 0.0)) << np.uint64(i)
                    while mask:
                        i = trailing_zeros(mask)  # type: ignore[call-arg]  # a numba intrinsic
                        mask &= mask - np.uint64(1)
                        s = np.float32(view64[i])
                        fbuf[0] = s
                        keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(c0 + i + b0)
                        n += s >= theta
                for i in range(len(view64)):
                    view64[i] = 0.0
            else:
                view = acc[c0:c1]
                if theta > 0.0:  # as above
                    for i in range(len(view)):
                        reach += view[i] >= theta
                else:
                    for i in range(len(view)):
                        reach += (view[i] >= theta) & (view[i] != 0.0)
                if reach == len(view) or (reach and theta == -np.inf):
                    for i in range(len(view)):
                        s = view[i]
                        fbuf[0] = s
                        keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(c0 + i + b0)
                        n += (s >= theta) & (s != 0.0)
                elif reach:
                    mask = np.uint64(0)
                    for i in range(len(view)):
                        mask |= np.uint64((view[i] >= theta) & (view[i] != 0.0)) << np.uint64(i)
                    while mask:
                        i = trailing_zeros(mask)  # type: ignore[call-arg]  # a numba intrinsic
                        mask &= mask - np.uint64(1)
                        fbuf[0] = view[i]
                        keys[n] = (_ordered(np.uint64(ubuf[0])) << np.uint64(32)) | np.uint64(c0 + i + b0)
                        n += 1
                for i in range(len(view)):
                    view[i] = 0.0
            # cut as soon as there is a threshold to set (the first chunks of a query: the threshold then prunes the
            # rest of its first block) or the buffer is full
            if n > k and (n >= cap or theta == -np.inf):
                n, cap, theta, below = _cut(keys, n, k, slack, fbuf, ubuf)
        return n, cap, theta, below


def term_bounds(postings: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray] | None:
    """Each term's largest and smallest positive posting value (float32), the ``bounds=`` of :func:`top_k_pruned`;
    None when some value is negative (the bounds would not hold)."""
    if not HAVE_NUMBA:
        raise ImportError("the threshold kernel needs numba: pip install numba")
    hi, lo, negative = _term_bounds(postings.indptr, np.asarray(postings.data, dtype=np.float32))
    return None if negative else (hi, lo)


def lucene_impacts(postings: sp.csr_matrix, weights: np.ndarray) -> np.ndarray:
    """Each posting's Lucene BM25 contribution for a query term of weight ``weights[t]`` (its idf: the term once in
    the query): ``w - w / (1 + x)`` in float32, the same operations as the kernels, so the same bits."""
    one = np.float32(1.0)
    w = np.repeat(np.asarray(weights, dtype=np.float32), np.diff(postings.indptr))
    x = np.asarray(postings.data, dtype=np.float32)
    out = one + x
    np.divide(w, out, out=out)
    np.subtract(w, out, out=out)
    return out
