"""Term-weighting formulas as pure array functions.

Each function states its formula and where it comes from, so that an index's numbers can be checked by hand.
"""

from __future__ import annotations

import numpy as np

__all__ = ["idf_lucene", "bm25_saturation"]


def idf_lucene(df: np.ndarray, num_docs: int) -> np.ndarray:
    """Lucene's (and Qdrant's IDF modifier's) non-negative BM25 IDF.

    idf_t = ln(1 + (N - df_t + 0.5) / (df_t + 0.5))

    Source: Lucene ``BM25Similarity.idf``; Qdrant ``Modifier.IDF``. Always > 0, even for a term that occurs
    in every document. Terms with df = 0 get the largest value, ln(1 + (N + 0.5) / 0.5), but never match.

    >>> round(float(idf_lucene(np.array([1]), 10)[0]), 6)   # ln(1 + 9.5 / 1.5)
    1.99243
    """
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((num_docs - df + 0.5) / (df + 0.5))


def bm25_saturation(tf: np.ndarray, doclen: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    """BM25's saturated, length-normalised term frequency (Robertson et al.; Lucene before 8.0).

    w = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    Multiplied by ``idf_lucene`` and summed over the query's terms (each weighted by its count in the query)
    this is Lucene's BM25 score up to the constant factor (k1 + 1), which Lucene 8 dropped and which does not
    change any ranking. Document lengths are exact token counts (Lucene stores them in one lossy byte).
    """
    tf = np.asarray(tf, dtype=np.float64)
    norm = k1 * (1.0 - b + b * (np.asarray(doclen, dtype=np.float64) / avgdl))
    return tf * (k1 + 1.0) / (tf + norm)


# --- Lucene's BM25 (Lucene 8+ BM25Similarity), float for float -------------------------------------------------
_NUM_FREE_VALUES = 255 - 231  # SmallFloat: 255 - longToInt4(Integer.MAX_VALUE)


def _long_to_int4(i: np.ndarray) -> np.ndarray:
    # SmallFloat.longToInt4: 4 significant bits (the leading one implicit) and a 4-bit shift
    i = np.asarray(i, dtype=np.int64)
    bits = np.zeros(i.shape, dtype=np.int64)
    nz = i > 0
    bits[nz] = np.floor(np.log2(i[nz].astype(np.float64))).astype(np.int64) + 1
    # log2 of integers near powers of two can round the wrong way: fix the bit count exactly
    bits = np.where((bits > 0) & ((np.int64(1) << np.maximum(bits - 1, 0)) > i), bits - 1, bits)
    bits = np.where((bits < 63) & ((np.int64(1) << np.minimum(bits, 62)) <= i) & nz, bits + 1, bits)
    shift = np.maximum(bits - 4, 0)
    normal = ((i >> shift) & 0x07) | ((shift + 1) << 3)
    return np.where(bits < 4, i, normal)


def _int4_to_long(i: np.ndarray) -> np.ndarray:
    i = np.asarray(i, dtype=np.int64)
    bits = i & 0x07
    shift = (i >> 3) - 1
    return np.where(shift == -1, bits, (bits | 0x08) << np.maximum(shift, 0))


def length_to_norm(length: np.ndarray) -> np.ndarray:
    """Lucene's one-byte length norm, ``SmallFloat.intToByte4`` (lengths up to 2^31 - 1; uint8).

    Exact up to 40 tokens (below 24 stored as they are, then length - 24 to 4 significant bits: 41 is stored as
    40); lengths 24..2^31 share 231 codes.
    """
    length = np.asarray(length, dtype=np.int64)
    if (length < 0).any():
        raise ValueError("Document lengths must be non-negative.")
    small = length < _NUM_FREE_VALUES
    big = _NUM_FREE_VALUES + _long_to_int4(np.maximum(length - _NUM_FREE_VALUES, 0))
    return np.where(small, length, big).astype(np.uint8)


def norm_to_length(norm: np.ndarray) -> np.ndarray:
    """``SmallFloat.byte4ToInt``: the length Lucene scores a norm byte with (the smallest length of its code)."""
    norm = np.asarray(norm, dtype=np.int64)
    return np.where(norm < _NUM_FREE_VALUES, norm, _NUM_FREE_VALUES + _int4_to_long(norm - _NUM_FREE_VALUES))


#: ``BM25Similarity.LENGTH_TABLE``: the decoded length of each of the 256 norm bytes
LENGTH_TABLE = norm_to_length(np.arange(256))


def lucene_avgdl(sum_total_term_freq: int, doc_count: int) -> np.float32:
    """``BM25Similarity.avgFieldLength``: (float) (sumTotalTermFreq / (double) docCount); 1 when empty."""
    if doc_count <= 0:
        return np.float32(1.0)
    return np.float32(sum_total_term_freq / float(doc_count))


def lucene_idf(df: np.ndarray, doc_count: int) -> np.ndarray:
    """``BM25Similarity.idf`` as Lucene computes it: (float) Math.log(1 + (docCount - df + 0.5D) / (df + 0.5D)),
    where docCount counts the documents that have at least one term (float32)."""
    df = np.asarray(df, dtype=np.float64)
    return np.log(1.0 + (doc_count - df + 0.5) / (df + 0.5)).astype(np.float32)


def lucene_norm_inverse(lengths: np.ndarray, avgdl: np.float32, k1: float, b: float) -> np.ndarray:
    """1 / (k1 * ((1 - b) + b * dl / avgdl)) in float32, operation by operation as Lucene's BM25 ``cache``."""
    f32 = np.float32
    k1f, bf = f32(k1), f32(b)
    dl = np.asarray(lengths).astype(np.float32)
    with np.errstate(divide="ignore", over="ignore"):
        return (f32(1.0) / (k1f * ((f32(1.0) - bf) + (bf * dl) / f32(avgdl)))).astype(np.float32)


def lucene_tf_factor(tf: np.ndarray, norm_inverse: np.ndarray) -> np.ndarray:
    """The per-posting value a Lucene-scored index stores: x = freq * normInverse (float32). A query term of
    weight w (= boost * idf, float32) then adds ``w - w / (1 + x)`` to the score: Lucene's
    ``BM25Scorer.score``, which is idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) without BM25's (k1 + 1)."""
    return (np.asarray(tf).astype(np.float32) * np.asarray(norm_inverse, dtype=np.float32)).astype(np.float32)
