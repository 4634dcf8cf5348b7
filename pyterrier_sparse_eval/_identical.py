"""A query's own document left out of its results, as BEIR evaluates (``ignore_identical_ids``) and Anserini's BEIR
runs retrieve (``-removeQuery``): in ArguAna every query is also a document, which would rank first."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyterrier as pt

__all__ = ["IgnoreIdenticalIds", "drop_identical_ids", "ignores_identical_ids", "ignoring_identical_ids"]


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


def drop_identical_ids(run: pd.DataFrame) -> pd.DataFrame:
    """``run`` without the rows whose docno is their query's id, ranks renumbered (0-based, in order)."""
    if not len(run) or not {"qid", "docno"} <= set(run.columns):
        return run
    same = run["qid"].astype(str).to_numpy() == run["docno"].astype(str).to_numpy()
    if not same.any():
        return run
    kept = run[~same].reset_index(drop=True)
    if "rank" in kept.columns:
        kept["rank"] = kept.groupby("qid", sort=False)["rank"].rank(method="first").astype(int) - 1
    return kept


class IgnoreIdenticalIds(pt.Transformer):
    """Results -> the same results without a query's own document (``retriever >> pse.IgnoreIdenticalIds()``);
    ``removed_`` counts the rows it left out; ``verbose``: say so the first time it leaves one out."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose
        self.removed_ = 0

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        out = drop_identical_ids(inp)
        if self.verbose and not self.removed_ and len(out) < len(inp):
            print(
                "Queries that are also documents: each query's own document is left out of its results, as BEIR "
                "evaluates (ignore_identical_ids) and Anserini's BEIR runs retrieve (-removeQuery)."
            )
        self.removed_ += len(inp) - len(out)
        return out


def ignoring_identical_ids(retrievers: list[Any], dataset: Any, verbose: bool) -> list[Any]:
    """``retrievers``, each followed by one :class:`IgnoreIdenticalIds` when ``dataset`` is BEIR's."""
    if not ignores_identical_ids(dataset):
        return retrievers
    drop = IgnoreIdenticalIds(verbose)
    return [r >> drop for r in retrievers]
