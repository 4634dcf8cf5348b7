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

__all__ = ["MatchedTerms"]


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
        self._sorted: dict[
            str, tuple[np.ndarray, np.ndarray]
        ] = {}  # per shard: its docnos in order, their ids

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
                _count_in(shard, self._order(shard), qids, docnos, terms, count, found)
            if not found.all():
                raise ValueError(
                    f"{int((~found).sum())} retrieved documents (e.g. {docnos[~found][0]!r}) are not in {self.index!r}: "
                    "give MatchedTerms the index the run was retrieved from."
                )
        old = out["features"].tolist() if "features" in out.columns else [np.zeros(0)] * len(out)
        out["features"] = [np.append(np.asarray(f, dtype=np.float64), c) for f, c in zip(old, count)]
        return out

    def _order(self, shard: SparseIndex) -> tuple[np.ndarray, np.ndarray]:
        """A shard's docnos in ascending order and the internal id of each (sorted once per transformer)."""
        key = str(shard.directory)
        if key not in self._sorted:
            names = np.asarray(shard.docnos, dtype=object)
            order = np.argsort(names, kind="stable")
            self._sorted[key] = (names[order], order)
        return self._sorted[key]


def _count_in(
    index: SparseIndex,
    ordered: tuple[np.ndarray, np.ndarray],
    qids: np.ndarray,
    docnos: np.ndarray,
    terms: dict[str, list[str]],
    count: np.ndarray,
    found: np.ndarray,
) -> None:
    """The counts of the rows whose documents ``index`` holds (``ordered``: its docnos sorted, and their ids),
    into ``count``; those rows marked in ``found``."""
    sorted_names, order = ordered
    at = np.minimum(np.searchsorted(sorted_names, docnos), len(order) - 1)
    here = np.flatnonzero(sorted_names[at] == docnos)
    found[here] = True
    doc = order[at]
    term_ids = index.term_ids
    postings = index.postings
    for q, pos in pd.Series(here).groupby(qids[here], sort=False).indices.items():
        ids = sorted({term_ids[t] for t in terms.get(q, []) if t in term_ids})
        if ids:
            rows = here[pos]
            count[rows] = np.asarray((postings[ids][:, doc[rows]] != 0).sum(axis=0)).ravel()
