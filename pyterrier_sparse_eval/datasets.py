"""Datasets by ``irds:`` identifier, with the guards evaluation needs.

- every query and document id is a string (an int qid never silently fails to match a str one);
- topics with several text fields get a sensible default field, reported, and the user may pick another;
- topics and qrels that only partly overlap are reported ("evaluating X of Y queries").

Offline or air-gapped use: point ``IR_DATASETS_HOME`` at a pre-filled ``ir_datasets`` cache before
``ir_datasets`` is imported (see README).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyterrier as pt

__all__ = ["load_dataset", "get_topics", "get_qrels", "corpus_iter", "align_topics_qrels", "num_docs"]

# Preferred topic fields, in order, when a collection offers several (TREC: title is the short keyword query).
TOPIC_FIELD_PREFERENCE = ("query", "title", "text")


def load_dataset(dataset: str | Any) -> Any:
    """``pt.get_dataset`` with an error that says what identifiers look like."""
    if not isinstance(dataset, str):
        return dataset
    name = dataset if ":" in dataset else f"irds:{dataset}"
    try:
        return pt.get_dataset(name)
    except KeyError as e:
        raise ValueError(
            f"Unknown dataset {dataset!r}; use an ir_datasets identifier such as 'irds:beir/scifact/test' or "
            "'irds:vaswani' (list them with `ir_datasets list`)."
        ) from e


def _irds(dataset: Any) -> Any:
    ref = getattr(dataset, "irds_ref", None)
    return ref() if ref is not None else None


def topic_fields(dataset: Any) -> tuple[str, ...]:
    """The text fields of a dataset's topics (``()`` when unknown)."""
    ds = _irds(dataset)
    if ds is None or not ds.has_queries():
        return ()
    return tuple(ds.queries_cls()._fields[1:])


def get_topics(dataset: str | Any, field: str | None = None, *, verbose: bool = True) -> pd.DataFrame:
    """Topics as ``qid`` (str) + ``query`` (str), choosing a text field when there are several.

    Args:
        dataset: an ``irds:`` identifier or a PyTerrier dataset.
        field: the topic field to use as ``query``; default: the only field, else the first of
            ``query``, ``title``, ``text`` that exists, else the first field.
    """
    ds = load_dataset(dataset)
    fields = topic_fields(ds)
    if field is None and len(fields) > 1:
        field = next((f for f in TOPIC_FIELD_PREFERENCE if f in fields), fields[0])
        if verbose:
            print(f"Topics have fields {list(fields)}; using {field!r} as the query (pass field= to change).")
    if field is not None and fields and field not in fields:
        raise ValueError(f"Topics have no field {field!r}; available: {list(fields)}.")
    topics = ds.get_topics(field) if field is not None and len(fields) > 1 else ds.get_topics()
    if "query" not in topics.columns:
        raise ValueError(f"Topics have no 'query' column (columns: {list(topics.columns)}); pass field=.")
    topics = topics[["qid", "query"]].copy()
    topics["qid"] = topics["qid"].astype(str)
    topics["query"] = topics["query"].fillna("").astype(str)
    return topics.reset_index(drop=True)


def get_qrels(dataset: str | Any) -> pd.DataFrame:
    """Qrels as ``qid`` (str), ``docno`` (str), ``label`` (int). Labels <= 0 mark judged non-relevant documents."""
    ds = load_dataset(dataset)
    qrels = ds.get_qrels()
    qrels = qrels[["qid", "docno", "label"]].copy()
    qrels["qid"] = qrels["qid"].astype(str)
    qrels["docno"] = qrels["docno"].astype(str)
    qrels["label"] = qrels["label"].astype(int)
    return qrels.reset_index(drop=True)


def corpus_iter(dataset: str | Any, *, verbose: bool = False) -> Iterator[dict[str, Any]]:
    """The documents of a dataset as dicts with a str ``docno`` and the dataset's text fields."""
    ds = load_dataset(dataset)
    for doc in ds.get_corpus_iter(verbose=verbose):
        if not isinstance(doc["docno"], str):
            doc = {**doc, "docno": str(doc["docno"])}
        yield doc


def num_docs(dataset: str | Any) -> int | None:
    """The number of documents in a dataset's corpus, when ir_datasets knows it without reading the corpus."""
    ds = _irds(load_dataset(dataset))
    if ds is None or not ds.has_docs():
        return None
    try:
        return int(ds.docs_count())
    except Exception:  # some providers cannot count without reading everything
        return None


def align_topics_qrels(topics: pd.DataFrame, qrels: pd.DataFrame, *, warn: bool = True) -> pd.DataFrame:
    """The topics that have judgments, with a warning when topics and qrels only partly overlap.

    Queries without judgments cannot be evaluated (trec_eval skips them); judged queries missing from the
    topics usually mean the wrong split. The warning says how many queries are evaluated.
    """
    tq = set(topics["qid"].astype(str))
    rq = set(qrels["qid"].astype(str))
    both = tq & rq
    if warn and (both != tq or both != rq):
        extra = (
            f"{len(tq - rq)} topics have no judgments; {len(rq - tq)} judged queries are not in the topics"
        )
        if not both:
            extra += " (no query id in common: are topics and qrels from the same split, with str ids?)"
        warnings.warn(f"evaluating {len(both)} of {len(tq)} queries: {extra}.", stacklevel=2)
    return topics[topics["qid"].astype(str).isin(both)].reset_index(drop=True)
