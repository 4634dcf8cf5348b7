"""The topics and qrels frames of an experiment, checked (or made readable) before any run is computed.

- query ids of different kinds in the topics and the qrels (int and str), which would match nothing;
- labels given as floats or text ("1", 1.0: a CSV's), which pytrec_eval refuses ("Expected relevance to be
  integer"): made integers when they are whole numbers, else refused as the in-house measures refuse them;
- inputs ir_measures' gdeval provider cannot evaluate. gdeval (a Perl script; ir_measures' provider of ``ERR@k`` and of ``nDCG(dcg='exp-log2')@k``) reads a query id as
the digits after its last ``-`` and stops on any other id, and on labels above 4: "format error" in a
``CalledProcessError``, after every system has run. Ids such as ``a-1`` and ``b-1`` it merges silently into one
query ``1``, a mean over the wrong queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import ir_measures
import numpy as np
import pandas as pd

from ._prepare import _id_types

_MAX_LABEL = 4  # gdeval.pl's $MAX_JUDGMENT


def check_qid_types(topics: Any, qrels: Any, filter_by_topics: bool) -> None:
    """Topics and qrels whose qids are of different kinds (int and str): pt.Experiment's join fails with pandas'
    merge error, or matches nothing; said with the cast instead. Qrels with other than str qids fail whatever
    the topics: pt's evaluation merges them with the run, or pytrec_eval refuses them; and so are qrels with other
    than str docnos (pt.Experiment makes a run's docnos str)."""
    if not all(isinstance(f, pd.DataFrame) and "qid" in f.columns for f in (topics, qrels)):
        return  # pt.Experiment's own checks
    kinds = [_id_types(f["qid"]) for f in (topics, qrels)]
    # without filter_by_topics pt evaluates the qrels' queries, whatever the topics hold
    if filter_by_topics and kinds[0] != kinds[1]:
        raise TypeError(
            f"qid types differ: the topics have {sorted(kinds[0])} and the qrels have {sorted(kinds[1])}, so no "
            "query would match. Cast both to str, e.g. qrels['qid'] = qrels['qid'].astype(str) (and the same for "
            "the topics); pse.datasets.get_topics and get_qrels give str ids."
        )
    # pt.Experiment makes a run's docnos str (in the caller's frame), which other qrels docnos match in no measure
    if "docno" in qrels.columns and (docnos := _id_types(qrels["docno"]) - {"str"}):
        raise TypeError(
            f"The qrels have {sorted(docnos)} docnos: pt.Experiment makes every run's docnos str, so no document "
            "would match (pytrec_eval stops with 'Expected mapping of document id'). Cast them to str, e.g. "
            "qrels['docno'] = qrels['docno'].astype(str); pse.datasets.get_qrels gives str ids."
        )
    # pt's runs have str qids, which such qrels match in no measure (pytrec_eval refuses)
    if kinds[1] - {"str"}:
        which = "topics and qrels" if kinds[0] == kinds[1] else "qrels"
        raise TypeError(
            f"The {which} have {sorted(kinds[1] - {'str'})} qids: PyTerrier's runs and pytrec_eval key "
            "queries by str, so no query would match (pytrec_eval stops with 'Expected string as key'). Cast both "
            "to str, e.g. qrels['qid'] = qrels['qid'].astype(str) and topics['qid'] = topics['qid'].astype(str); "
            "pse.datasets.get_topics and get_qrels give str ids."
        )


def experiment_frames(
    topics: Any, qrels: Any, runs: Sequence[Any], measures: Sequence[Any], options: dict[str, Any]
) -> tuple[Any, Any]:
    """The topics and qrels of ``pt.Experiment(runs, topics, qrels, measures, **options)`` checked and filtered as
    pt filters them (``filter_by_topics``: the topics' judgments; ``filter_by_qrels``: the judged topics), so
    that runs computed here match pt's, and labels of queries not evaluated are not read; the labels made
    integers (:func:`integer_labels`); gdeval's inputs checked, the query ids of ``runs`` given as frames too."""
    by_topics = options.get("filter_by_topics", True)
    check_columns(topics, qrels)
    check_qid_types(topics, qrels, by_topics)
    if all(isinstance(f, pd.DataFrame) and "qid" in f.columns for f in (topics, qrels)):
        if by_topics:
            qrels = qrels[qrels["qid"].astype(str).isin(set(topics["qid"].astype(str)))]
        if options.get("filter_by_qrels"):
            topics = topics[topics["qid"].astype(str).isin(set(qrels["qid"].astype(str)))]
    qrels = no_all_negative_query(integer_labels(qrels))
    check_gdeval(
        measures,
        topics,
        qrels,
        filter_by_topics=by_topics,
        filter_by_qrels=options.get("filter_by_qrels", False),
    )
    if (
        frames := [r["qid"] for r in runs if isinstance(r, pd.DataFrame) and "qid" in r.columns]
    ) and isinstance(qrels, pd.DataFrame):
        check_gdeval_inputs(measures, pd.concat([*frames, qrels["qid"]]), [])
    return topics, qrels


def check_columns(topics: Any, qrels: Any) -> None:
    """Topics with a ``qid`` column, each query once, and qrels with PyTerrier's (or ir_measures') columns: pt had
    failed with a pandas MergeError (or ir_measures naming columns the user never used), and merged the rankings
    of a repeated qid in silence."""
    if isinstance(topics, pd.DataFrame):
        if "qid" not in topics.columns:
            raise ValueError(
                f"The topics have no qid column (they have {list(topics.columns)}): give qid, query."
            )
        if len(repeated := topics["qid"][topics["qid"].duplicated()]):
            raise ValueError(
                f"The topics' query ids repeat ({list(dict.fromkeys(repeated.astype(str)))[:3]}): each query needs "
                "its own id (pt would merge their rankings into one)."
            )
    if isinstance(qrels, pd.DataFrame):
        cols = set(qrels.columns)
        if not {"qid", "docno", "label"} <= cols and not {"query_id", "doc_id", "relevance"} <= cols:
            raise ValueError(
                f"The qrels need qid, docno, label columns (PyTerrier; query_id, doc_id, relevance in ir_measures), "
                f"and have {list(qrels.columns)}: name them (a TREC qrels file read by pandas: "
                "frame.set_axis(['qid', 'iter', 'docno', 'label'], axis=1)), or read it with pt.io.read_qrels."
            )


def integer_labels(qrels: Any) -> Any:
    """``qrels`` with its labels as integers when they are whole numbers given as floats or text; a ValueError
    naming the first that is not (trec_eval reads labels as integers)."""
    if not isinstance(qrels, pd.DataFrame) or "label" not in qrels.columns:
        return qrels
    # numpy's integers as they are (pandas' nullable Int64 too is refused by pytrec_eval)
    if isinstance(qrels["label"].dtype, np.dtype) and qrels["label"].dtype.kind in "iu":
        return qrels
    labels = pd.to_numeric(qrels["label"], errors="coerce").to_numpy(dtype=np.float64)
    if len(bad := np.flatnonzero(~np.isfinite(labels) | (labels != np.round(labels)))):
        row = qrels.iloc[bad[0]]
        # a missing label is no fraction to round (round() keeps it missing)
        fix = (
            "qrels = qrels.dropna(subset=['label'])"
            if pd.isna(row["label"])
            else "qrels['label'] = qrels['label'].round()"
        )
        raise ValueError(
            f"Qrels row {bad[0]} (qid {row['qid']!r}, docno {row['docno']!r}) has label {row['label']}: labels "
            f"must be integers, as trec_eval reads them; fix the qrels, e.g. {fix}."
        )
    return qrels.assign(label=labels.astype(np.int64))


def no_all_negative_query(qrels: Any) -> Any:
    """``qrels`` with the labels of a query judged only below 0 (Touché's -2 for spam) as 0: pytrec_eval crashes
    the process (a segmentation fault) on such a query after another, and trec_eval reads a label below 0 as it
    reads 0 (judged, not relevant, no gain), so every trec_eval measure is unchanged."""
    if not isinstance(qrels, pd.DataFrame) or not {"qid", "label"} <= set(qrels.columns) or not len(qrels):
        return qrels
    labels = pd.to_numeric(qrels["label"], errors="coerce")
    negative = labels.groupby(qrels["qid"]).transform("max") < 0
    return qrels.assign(label=qrels["label"].where(~negative, 0)) if negative.any() else qrels


def _provider(measure: Any) -> str | None:
    """The name of the provider ir_measures' default pipeline evaluates ``measure`` with, None if none does."""
    for provider in getattr(ir_measures.DefaultPipeline, "providers", []):
        if provider.supports(measure) and provider.is_available():
            return str(provider.NAME)
    return None


def check_gdeval(
    measures: Sequence[Any],
    topics: Any,
    qrels: Any,
    *,
    filter_by_topics: bool = True,
    filter_by_qrels: bool = False,
) -> None:
    """:func:`check_gdeval_inputs` on what ``pt.Experiment`` gives gdeval: the judgments of the topics (all of them
    without ``filter_by_topics``) and the topics' query ids (those judged with ``filter_by_qrels``)."""
    if not all(isinstance(f, pd.DataFrame) and "qid" in f.columns for f in (topics, qrels)):
        return  # pt.Experiment's own checks
    judged = (
        qrels[qrels["qid"].astype(str).isin(set(topics["qid"].astype(str)))] if filter_by_topics else qrels
    )
    asked = [] if filter_by_qrels else list(topics["qid"])
    check_gdeval_inputs(
        measures, [*asked, *judged["qid"]], judged["label"] if "label" in judged.columns else []
    )


def check_gdeval_inputs(measures: Sequence[Any], qids: Iterable[Any], labels: Iterable[Any]) -> None:
    """A ValueError naming the measure and the fix when one of ``measures`` is gdeval's and a query id (of the
    topics and their qrels) is not all digits, or a label is not a whole number of at most 4."""
    served = [m for m in measures if isinstance(m, ir_measures.measures.Measure) and _provider(m) == "gdeval"]
    if not served:
        return
    ids = pd.Series(list(qids), dtype=object).astype(str).drop_duplicates()
    digits = ids.str.fullmatch(r"[0-9]+")
    # gdeval compares ids as numbers: '1' and '01' are one query
    if len(bad := ids[~digits]) or len(bad := ids[digits][ids[digits].map(int).duplicated(keep=False)]):
        raise ValueError(
            f"{served[0]} is computed by ir_measures' gdeval, which reads only query ids made of digits, as numbers "
            f"(it merges 'a-1' and 'b-1' into one query '1', and '01' with '1'); these are not read apart: "
            f"{list(bad[:3])}. Map the qids to distinct numbers in the topics, qrels and runs, e.g. "
            "qrels['qid'] = qrels['qid'].map(codes), or drop the measure."
        )
    values = pd.to_numeric(pd.Series(list(labels), dtype=object), errors="coerce")
    if len(bad := values[~((values % 1 == 0) & (values <= _MAX_LABEL))]):
        raise ValueError(
            f"{served[0]} is computed by ir_measures' gdeval, which reads only whole labels of at most "
            f"{_MAX_LABEL}; the qrels hold {list(bad.drop_duplicates()[:3])}. Clip or map the labels, e.g. "
            f"qrels['label'] = qrels['label'].clip(upper={_MAX_LABEL}), or drop the measure."
        )
