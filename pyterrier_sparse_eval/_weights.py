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
