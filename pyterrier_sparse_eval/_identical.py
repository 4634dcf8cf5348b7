"""A query's own document left out of its results, as BEIR evaluates (``ignore_identical_ids``) and Anserini's BEIR
runs retrieve (``-removeQuery``): in ArguAna every query is also a document, which would rank first."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyterrier as pt

__all__ = [
    "IgnoreIdenticalIds",
    "drop_identical_ids",
    "identical_rows",
    "ignores_identical_ids",
    "ignoring_identical_ids",
]


def ignores_identical_ids(dataset: Any) -> bool:
    """Whether ``dataset`` is evaluated as BEIR evaluates: a BEIR folder (``beir:``) or ``irds:beir/...`` (MTEB leaves
    a query's own id out only in the tasks that say so: follow the retrievers with :class:`IgnoreIdenticalIds` for
    those)."""
    from .datasets import dataset_spec

    try:
        spec = dataset_spec(dataset)
    except TypeError:
        return False
    return spec.startswith(("beir:", "irds:beir/"))


def identical_rows(run: pd.DataFrame) -> np.ndarray:
    """Which rows of ``run`` list their query's own id as docno (none without both columns)."""
    if not len(run) or not {"qid", "docno"} <= set(run.columns):
        return np.zeros(0, dtype=bool)
    return run["qid"].astype(str).to_numpy() == run["docno"].astype(str).to_numpy()


def drop_identical_ids(
    run: pd.DataFrame, num_results: int | None = None, same: np.ndarray | None = None
) -> pd.DataFrame:
    """``run`` without the rows whose docno is their query's id (``same``: :func:`identical_rows`, when known), ranks
    renumbered (0-based, in order); with ``num_results``, at most that many rows per query are kept (from a run one
    deeper, as BEIR's search retrieves k + 1 so that k documents other than the query remain)."""
    same = identical_rows(run) if same is None else same
    if not len(same) or (not same.any() and num_results is None):
        return run
    kept = run[~same].reset_index(drop=True)
    by_query = kept.groupby("qid", sort=False, dropna=False)
    if "rank" in kept.columns:
        kept["rank"] = by_query["rank"].rank(method="first").astype(int) - 1
    if num_results is not None:
        # a run without ranks: its best scores (in row order among equal ones), else its first rows
        if "rank" in kept.columns:
            place = kept["rank"]
        elif "score" in kept.columns:
            score = pd.to_numeric(kept["score"], errors="coerce")
            place = (
                score.groupby(kept["qid"], sort=False, dropna=False).rank(
                    method="first", ascending=False, na_option="bottom"
                )
                - 1
            )
        else:
            place = by_query.cumcount()
        kept = kept[place < num_results]
    return kept.reset_index(drop=True)


class IgnoreIdenticalIds(pt.Transformer):
    """Results -> the same results without a query's own document (``retriever >> pse.IgnoreIdenticalIds()``);
    ``removed_`` counts the rows it left out as a query's own (not those cut by ``num_results``); ``verbose``: say
    so the first time it leaves one out; ``num_results``: keep at most that many results per query, the best scores
    of a run without ranks (give the retriever one more, as BEIR's search does: ``retriever(num_results=k + 1) >>
    pse.IgnoreIdenticalIds(num_results=k)``, so that k documents other than the query remain)."""

    def __init__(self, verbose: bool = False, num_results: int | None = None) -> None:
        self.verbose = verbose
        self.num_results = num_results
        self.removed_ = 0

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        same = identical_rows(inp)
        out = drop_identical_ids(inp, self.num_results, same)
        if self.verbose and not self.removed_ and same.any():
            print(
                "Queries that are also documents: each query's own document is left out of its results, as BEIR "
                "evaluates (ignore_identical_ids) and Anserini's BEIR runs retrieve (-removeQuery)."
            )
        self.removed_ += int(same.sum())
        return out


def ignoring_identical_ids(
    retrievers: list[Any], dataset: Any, verbose: bool, num_results: int | None = None
) -> list[Any]:
    """``retrievers``, each followed by one :class:`IgnoreIdenticalIds` (keeping ``num_results``) when ``dataset``
    is BEIR's (the retrievers then retrieve ``num_results + 1``)."""
    if not ignores_identical_ids(dataset):
        return retrievers
    drop = IgnoreIdenticalIds(verbose, num_results)
    return [r >> drop for r in retrievers]
