"""Features of a full-corpus run for SDM's covariate: each retrieved document's count of the query's terms.

A lexical system's score of a document rests on which of the query's terms it holds; a pooling run's score mixes
that with their idf and the document's length, so two documents of the same pooling score can hold one rare term
or three common ones, which a system without idf, or with another analyzer, ranks far apart. The count is cheap
to read off the full index the pooling run came from, for every document the run ranks, and
``sdm.evaluate(..., covariate=run)`` uses it beside the pooling score (``_covariate``'s docstring, step 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyterrier as pt

from ._index import SparseIndex
from ._sharded import ShardedIndex

__all__ = ["MatchedTerms", "feature_matrix"]


class MatchedTerms(pt.Transformer):
    """Appends to each row's ``features`` (PyTerrier's column, made if absent) the number of distinct terms of
    the query (those the encoder gives a positive weight) that the document holds in ``index``::

        pooling = bm25.retriever(full_index, num_results=1000) >> pse.sdm.MatchedTerms(full_index, bm25)
        sdm.evaluate(run, qrels, pool, covariate=pooling(topics))

    ``index``: the index the run's documents are in (single or sharded); ``encoder``: what encodes its queries
    (``pse.BM25(...)``, ``pse.Splade(...)``: anything with ``query_encoder()``).
    """

    def __init__(self, index: SparseIndex | ShardedIndex, encoder: Any):
        if not isinstance(index, (SparseIndex, ShardedIndex)):
            raise TypeError(
                f"MatchedTerms needs a pse.SparseIndex or pse.ShardedIndex, not {type(index).__name__}."
            )
        if not callable(getattr(encoder, "query_encoder", None)):
            raise TypeError(
                f"MatchedTerms needs the encoder of the run's queries (e.g. pse.BM25()), not {type(encoder).__name__}."
            )
        self.index = index
        self.encoder = encoder

    def __repr__(self) -> str:
        return f"MatchedTerms({self.index!r}, {self.encoder!r})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        missing = [c for c in ("qid", "query", "docno") if c not in inp.columns]
        if missing:
            raise ValueError(
                f"MatchedTerms reads a run with qid, query and docno columns; this one lacks {missing}: put it "
                "after the retriever (retriever >> MatchedTerms(index, encoder))."
            )
        out = inp.reset_index(drop=True)
        count = np.zeros(len(out))
        if len(out):
            queries = out[["qid", "query"]].drop_duplicates("qid")
            toks = self.encoder.query_encoder().transform(queries)
            terms = {
                str(q): [t for t, v in d.items() if v > 0] for q, d in zip(toks["qid"], toks["query_toks"])
            }
            shards = self.index.shards if isinstance(self.index, ShardedIndex) else [self.index]
            docnos = out["docno"].astype(str).to_numpy(dtype=object)
            qids = out["qid"].astype(str).to_numpy(dtype=object)
            found = np.zeros(len(out), dtype=bool)
            for shard in shards:
                _count_in(shard, qids, docnos, terms, count, found)
            if not found.all():
                raise ValueError(
                    f"{int((~found).sum())} retrieved documents (e.g. {docnos[~found][0]!r}) are not in {self.index!r}: "
                    "give MatchedTerms the index the run was retrieved from."
                )
        before = feature_matrix(out)  # the features already there, kept
        if before is None:
            before = np.zeros((len(out), 0))
        out["features"] = list(np.column_stack([before, count]))
        return out


def _count_in(
    index: SparseIndex,
    qids: np.ndarray,
    docnos: np.ndarray,
    terms: dict[str, list[str]],
    count: np.ndarray,
    found: np.ndarray,
) -> None:
    """The counts of the rows whose documents ``index`` holds, into ``count``; those rows marked in ``found``."""
    doc = pd.Index(np.asarray(index.docnos, dtype=object)).get_indexer(docnos)  # -1: not in this index
    here = np.flatnonzero(doc >= 0)
    found[here] = True
    term_ids = index.term_ids
    postings = index.postings  # term-major; each term's doc ids ascending (the index checks it)
    for q, pos in pd.Series(here).groupby(qids[here], sort=False).indices.items():
        rows = here[pos]
        for t in {term_ids[t] for t in terms.get(q, []) if t in term_ids}:
            start, end = postings.indptr[t], postings.indptr[t + 1]
            if end == start:  # a term of the vocabulary none of these documents holds (a subset's index)
                continue
            docs = postings.indices[start:end]
            at = np.minimum(np.searchsorted(docs, doc[rows]), end - start - 1)
            count[rows] += (docs[at] == doc[rows]) & (postings.data[start:end][at] != 0)


def feature_matrix(run: Any) -> np.ndarray | None:
    """A run frame's ``features`` column as rows x features (None: no such column)."""
    if not isinstance(run, pd.DataFrame) or "features" not in run.columns:
        return None
    try:
        rows = [np.atleast_1d(np.asarray(f, dtype=np.float64)) for f in run["features"]]
        feats = np.vstack(rows) if rows else np.zeros((0, 0))
    except (TypeError, ValueError):
        raise ValueError(
            "The run's features column must hold a numeric array of the same length on every row "
            "(PyTerrier's features), e.g. from pse.sdm.MatchedTerms."
        ) from None
    if not np.isfinite(feats).all():
        raise ValueError("The run's features hold NaN or infinite values; fill or drop them first.")
    return feats
