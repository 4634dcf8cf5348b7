"""Build-time sorts: doc-major spilled chunks -> term-major postings (counting sorts when numba is installed,
numpy otherwise, with the same output)."""

from __future__ import annotations

import numpy as np

from ._numba import have_numba

__all__ = ["sort_by_term", "place_postings"]

HAVE_NUMBA = have_numba()  # read at call time: the tests switch it off

if HAVE_NUMBA:
    from numba import njit

    @njit(cache=True, nogil=True)
    def _counting_sort(terms, docs, values, n_terms):
        counts = np.zeros(n_terms + 1, dtype=np.int64)
        for t in terms:
            counts[t + 1] += 1
        for t in range(n_terms):
            counts[t + 1] += counts[t]
        n = len(terms)
        t_out = np.empty(n, dtype=terms.dtype)
        d_out = np.empty(n, dtype=docs.dtype)
        v_out = np.empty(n, dtype=values.dtype)
        for i in range(n):
            t = terms[i]
            p = counts[t]
            counts[t] = p + 1
            t_out[p] = t
            d_out[p] = docs[i]
            v_out[p] = values[i]
        return t_out, d_out, v_out

    @njit(cache=True, nogil=True)
    def _place(terms, docs, values, t0, cursor, out_docs, out_values):
        for i in range(len(terms)):
            j = terms[i] - t0
            p = cursor[j]
            cursor[j] = p + 1
            out_docs[p] = docs[i]
            out_values[p] = values[i]


def sort_by_term(
    terms: np.ndarray, docs: np.ndarray, values: np.ndarray, n_terms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Postings ordered by term, keeping their order within a term (a stable sort)."""
    if HAVE_NUMBA and n_terms <= 4 * len(terms) + 1024:
        return _counting_sort(terms, docs, values, n_terms)
    order = np.argsort(terms, kind="stable")
    return terms[order], docs[order], values[order]


def place_postings(
    terms: np.ndarray,
    docs: np.ndarray,
    values: np.ndarray,
    t0: int,
    cursor: np.ndarray,
    out_docs: np.ndarray,
    out_values: np.ndarray,
) -> None:
    """Append term-sorted postings of terms >= t0 at ``cursor[term - t0]`` (advanced in place)."""
    if HAVE_NUMBA:
        _place(terms, docs, values, t0, cursor, out_docs, out_values)
        return
    local = terms.astype(np.int64) - t0
    counts = np.bincount(local, minlength=len(cursor))
    first = np.zeros(len(cursor), dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    pos = cursor[local] + (np.arange(len(terms)) - first[local])
    out_docs[pos] = docs
    out_values[pos] = values
    cursor += counts
