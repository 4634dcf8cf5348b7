"""Inputs ir_measures' gdeval provider cannot evaluate, refused before any run is computed.

gdeval (a Perl script; ir_measures' provider of ``ERR@k`` and of ``nDCG(dcg='exp-log2')@k``) reads a query id as
the digits after its last ``-`` and stops on any other id, and on labels above 4: "format error" in a
``CalledProcessError``, after every system has run. Ids such as ``a-1`` and ``b-1`` it merges silently into one
query ``1``, a mean over the wrong queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import ir_measures
import pandas as pd

_MAX_LABEL = 4  # gdeval.pl's $MAX_JUDGMENT


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
    ids = pd.Series(list(qids), dtype=object).drop_duplicates().astype(str)
    if len(bad := ids[~ids.str.fullmatch(r"[0-9]+")]):
        raise ValueError(
            f"{served[0]} is computed by ir_measures' gdeval, which reads only query ids made of digits (it merges "
            f"'a-1' and 'b-1' into one query '1'); these are not: {list(bad[:3])}. Map the qids to numbers in the "
            "topics and qrels, e.g. qrels['qid'] = qrels['qid'].map(codes), or drop the measure."
        )
    values = pd.to_numeric(pd.Series(list(labels), dtype=object), errors="coerce")
    if len(bad := values[~((values % 1 == 0) & (values <= _MAX_LABEL))]):
        raise ValueError(
            f"{served[0]} is computed by ir_measures' gdeval, which reads only whole labels of at most "
            f"{_MAX_LABEL}; the qrels hold {list(bad.drop_duplicates()[:3])}. Clip or map the labels, e.g. "
            f"qrels['label'] = qrels['label'].clip(upper={_MAX_LABEL}), or drop the measure."
        )
