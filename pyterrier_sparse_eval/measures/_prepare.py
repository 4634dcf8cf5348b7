"""Turning a run and qrels (DataFrames or dicts) into flat, trec_eval-ordered arrays.

All metrics in this package work on a :class:`JudgedRun`: one row per retrieved document, sorted as trec_eval
sorts (query, then score descending, then docno descending; any rank column is ignored), with its judgment
joined in (numpy/pandas operations over all queries at once)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._order import is_contiguous, trec_order
from ._warn import user_stacklevel, warn_once

__all__ = ["JudgedRun", "prepare", "single_precision", "to_run_frame", "to_qrels_frame", "user_stacklevel"]

_RUN_COLS = {"query_id": "qid", "doc_id": "docno"}


def single_precision(scores: Any) -> np.ndarray:
    """Scores rounded to trec_eval's single precision (as :func:`prepare` ranks them), kept as float64: what a
    score compared with a judged row's must be rounded to, so that equal scores stay equal."""
    x = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore"):
        single = x.astype(np.float32).astype(np.float64)
    beyond = np.isinf(single) & np.isfinite(x)
    if beyond.any():
        raise ValueError(
            f"{int(beyond.sum())} scores are beyond single precision's range (|score| > 3.4e38, e.g. "
            f"{x[beyond][0]:g}): trec_eval ranks scores in float32, where they would all tie at infinity. Rescale "
            "the scores (a monotone transform, e.g. divide by a constant, keeps the ranking)."
        )
    below = (single == 0.0) & (x != 0.0)
    if below.any():
        raise ValueError(
            f"{int(below.sum())} nonzero scores are below single precision's range (|score| < 1.4e-45, e.g. "
            f"{x[below][0]:g}): trec_eval ranks scores in float32, where they would all tie at 0. Rescale the "
            "scores (a monotone transform, e.g. their logarithm for probabilities, keeps the ranking)."
        )
    return single


_QREL_COLS = {"query_id": "qid", "doc_id": "docno", "relevance": "label"}


def _select(
    frame: pd.DataFrame, renames: dict[str, str], needed: tuple[str, ...], what: str, ir_names: str
) -> pd.DataFrame:
    """The ``needed`` columns of a frame in PyTerrier naming (ir_measures names are renamed)."""
    for ir_name, name in renames.items():
        if ir_name in frame.columns and name in frame.columns:
            a, b = frame[ir_name], frame[name]
            # numbers compared as numbers (a label 1 and a relevance 1.0: one judgment), ids as text
            kind = float if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b) else str
            if not a.astype(kind).equals(b.astype(kind)):
                raise ValueError(
                    f"{what} has both a {name} column (PyTerrier) and a {ir_name} column (ir_measures) that differ: "
                    f"drop the one that is not meant (e.g. frame.drop(columns=[{ir_name!r}]))."
                )
            frame = frame.drop(columns=[ir_name])
    out = frame.rename(columns=renames)
    missing = [c for c in needed if c not in out.columns]
    if missing:
        raise ValueError(
            f"{what} is missing columns {missing} (has {list(frame.columns)}); expected {', '.join(needed)} "
            f"(PyTerrier) or {ir_names} (ir_measures)."
        )
    return out[list(needed)]


def to_run_frame(run: Any, what: str = "run") -> pd.DataFrame:
    """A run as a ``qid``, ``docno``, ``score`` frame from any accepted shape (``what``: named in the errors).

    Accepted: a DataFrame with ``qid``/``docno``/``score`` (PyTerrier) or ``query_id``/``doc_id``/``score``
    (ir_measures); a dict ``{qid: {docno: score}}`` (pytrec_eval); a dict ``{qid: [(docno, score), ...]}``.
    """
    if isinstance(run, pd.DataFrame):
        frame = _select(run, _RUN_COLS, ("qid", "docno", "score"), "Run", "query_id, doc_id, score")
    elif isinstance(run, Mapping):
        rows_q, rows_d, rows_s = [], [], []
        for qid, docs in run.items():
            mapped = isinstance(docs, Mapping)
            for item in docs.items() if mapped else docs:
                # a bare docno ("d1") would unpack into a docno "d" and a score "1"
                if not mapped and (
                    isinstance(item, (str, bytes))
                    or not isinstance(item, (Sequence, np.ndarray))
                    or len(item) != 2
                ):
                    raise TypeError(
                        f"The {what}'s ranking of query {qid!r} holds {item!r}: give (docno, score) pairs, "
                        "{docno: score}, or a DataFrame (qid, docno, score); a list of docnos has no scores (give "
                        "them descending scores, e.g. {docno: -rank})."
                    )
                rows_q.append(qid)
                rows_d.append(item[0])
                rows_s.append(item[1])
        frame = pd.DataFrame({"qid": rows_q, "docno": rows_d, "score": rows_s})
    else:
        raise TypeError(
            f"Cannot read a run from {type(run).__name__}; pass a DataFrame (qid, docno, score), "
            "{qid: {docno: score}} or {qid: [(docno, score), ...]}."
        )
    frame = frame.astype({"score": np.float64})
    if frame["score"].isna().any():
        raise ValueError(
            f"The {what} has {int(frame['score'].isna().sum())} NaN scores; trec_eval cannot rank them: drop those "
            "rows or give them a score."
        )
    return frame


def to_qrels_frame(qrels: Any) -> pd.DataFrame:
    """Qrels as a ``qid``, ``docno``, ``label`` frame (DataFrame in PyTerrier/ir_measures naming, or
    ``{qid: {docno: label}}``)."""
    if isinstance(qrels, pd.DataFrame):
        frame = _select(qrels, _QREL_COLS, ("qid", "docno", "label"), "Qrels", "query_id, doc_id, relevance")
    elif isinstance(qrels, Mapping):
        frame = pd.DataFrame(
            [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
            columns=["qid", "docno", "label"],
        )
    else:
        raise TypeError(
            f"Cannot read qrels from {type(qrels).__name__}; pass a DataFrame (qid, docno, label) or "
            "{qid: {docno: label}}."
        )
    labels = pd.to_numeric(frame["label"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(labels) | (labels != np.round(labels))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = frame.iloc[i]
        raise ValueError(
            f"Qrels row {i} (qid {row['qid']!r}, docno {row['docno']!r}) has label {row['label']}: labels must be "
            "integers, as trec_eval reads them (a fractional label would make nDCG differ from trec_eval's)."
        )
    return frame.assign(label=labels)


_KINDS = {"string": "str", "integer": "int", "floating": "float", "boolean": "bool"}


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    return "float" if isinstance(value, (float, np.floating)) else type(value).__name__


def _id_types(column: pd.Series) -> set[str]:
    """The kinds of id in a column (str, int, float ...): one C pass, each distinct value seen only if mixed."""
    kind = _KINDS.get(pd.api.types.infer_dtype(column, skipna=False))
    return {kind} if kind else {_kind(x) for x in column.unique()}


def _check_id_types(run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    """Int and str ids never match each other: detect it, explain it, and say how to fix it."""
    for col in ("qid", "docno"):
        for what, frame in (("run", run), ("qrels", qrels)):
            if frame[col].isna().any():
                raise ValueError(
                    f"The {what} has {int(frame[col].isna().sum())} rows without a {col} (None or NaN): drop them "
                    f"(e.g. {what} = {what}.dropna(subset=['{col}']))."
                )
        r_types, q_types = _id_types(run[col]), _id_types(qrels[col])
        if r_types == q_types:
            continue
        experiment = ""  # pt.Experiment turns a run's qids into str, not the qrels'
        if col == "qid" and r_types == {"str"}:
            cast = (
                "astype(str)"
                if q_types == {"int"}
                else "astype(int).astype(str) (floats such as 1.0 read '1.0')"
            )
            experiment = (
                " In pt.Experiment, which gives measures the run's qids as str, pass qrels with str qids: "
                f"qrels['qid'] = qrels['qid'].{cast}."
            )
        raise TypeError(
            f"{col} types differ: the run has {sorted(r_types)} and the qrels have {sorted(q_types)}, so no "
            f"{col} would match. Cast both to str, e.g. run['{col}'] = run['{col}'].astype(str) for a frame, str "
            f"keys for a dict (and the same for the qrels).{experiment}"
        )


@dataclass
class JudgedRun:
    """A run joined with its qrels, in trec_eval order, reduced to what the metrics need.

    Only the retrieved documents that carry a judgment are kept as rows (all others gain nothing and are
    never relevant); their ranks are their positions in the full ranking.

    Attributes:
        qids: the evaluated query ids (in the run and in the qrels), sorted.
        num_retrieved: documents retrieved per query.
        group: query index (into ``qids``) of each judged retrieved document, rows sorted by query then rank.
        rank: its 0-based rank in its query's ranking (trec_eval order).
        label: its judgment.
        score: its score (single precision, as ranked).
        num_rel: number of judged documents with label >= ``rel`` per query.
        ideal_group, ideal_pos, ideal_label: the query's positive judgments sorted by label descending
            (the ideal ranking for nDCG), with their 0-based positions.
        rel: the relevance threshold (trec_eval ``-l``): labels >= rel are relevant.
        missing: query ids with judgments but no retrieved document (trec_eval ``-c`` counts them as 0).
        unjudged_queries: query ids in the run with no judgments at all (trec_eval skips them).
    """

    qids: np.ndarray
    num_retrieved: np.ndarray
    group: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    score: np.ndarray
    num_rel: np.ndarray
    ideal_group: np.ndarray
    ideal_pos: np.ndarray
    ideal_label: np.ndarray
    rel: float
    missing: np.ndarray
    unjudged_queries: np.ndarray

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    @property
    def is_rel(self) -> np.ndarray:
        return self.label >= self.rel

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of judged rows where ``mask`` holds."""
        return np.bincount(self.group[mask], minlength=self.num_queries).astype(np.float64)

    def total(self, values: np.ndarray) -> np.ndarray:
        """Per-query sum of a per-row quantity."""
        return np.bincount(self.group, weights=values, minlength=self.num_queries).astype(np.float64)


def _query_codes(qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code into the distinct query ids (in order of first appearance), and those ids.

    Runs usually hold each query's rows contiguously; then only the block heads are hashed.
    """
    n = len(qids)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    heads = np.concatenate([[0], np.flatnonzero(qids[1:] != qids[:-1]) + 1])
    if len(heads) <= n // 2:
        head_codes, uniques = pd.factorize(qids[heads], use_na_sentinel=False)
        if len(uniques) == len(heads):
            return np.repeat(np.arange(len(heads)), np.diff(np.append(heads, n))), uniques
    codes, uniques = pd.factorize(qids, use_na_sentinel=False)
    return codes.astype(np.int64), uniques


try:  # pandas' C hash table of Python objects: the same lookups as a dict, without a Python call per row
    from pandas._libs.hashtable import PyObjectHashTable as _HashTable
except ImportError:  # pragma: no cover - a pandas without it
    _HashTable = None

_SET_SIZE = 4096  # run rows and judged docnos per hash table: a small table stays in the CPU cache


def _judged_codes(
    docnos: np.ndarray,
    group: np.ndarray,
    qrel_q: np.ndarray,
    d_code: np.ndarray,
    d_names: np.ndarray,
    nq: int,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Per row, the code of its docno among the judged docnos (``d_names``), or -1 when it is not judged for
    any query of its neighbourhood (so rows with a code >= 0 are a superset of the judged rows); and a code of
    its docno that is equal for two rows of the same query exactly when their docnos are (to find documents
    retrieved twice); and whether some query has such rows.

    One hash per row is unavoidable with str ids, and a table of all docnos misses the CPU cache every time
    once there are many queries. Runs keep each query's rows together, so consecutive queries are taken in
    chunks: each chunk's docnos are factorised in a hash table of a few thousand entries, which stays in cache,
    and the chunk's judged docnos are looked up in that table. None when the rows of some query are not
    contiguous.
    """
    n = len(docnos)
    if n == 0 or len(d_code) == 0:
        local = pd.factorize(docnos, use_na_sentinel=False)[0].astype(np.int64)
        return np.full(n, -1, dtype=np.int64), local, True
    heads = np.concatenate([[0], np.flatnonzero(group[1:] != group[:-1]) + 1])
    head_groups = group[heads]
    if not is_contiguous(group, heads):
        return None
    by_query = np.argsort(qrel_q, kind="stable")
    d_sorted, c_sorted = d_names[d_code[by_query]], d_code[by_query]
    q_start = np.searchsorted(qrel_q[by_query], np.arange(nq + 1))
    q_count = np.diff(q_start)
    # chunks of whole queries, about _SET_SIZE run rows and judged docnos each
    per_block = q_count[head_groups] + np.diff(np.append(heads, n))
    chunk = (np.cumsum(per_block) - per_block) // _SET_SIZE
    cuts = np.concatenate([[0], np.flatnonzero(chunk[1:] != chunk[:-1]) + 1, [len(heads)]])
    bounds = np.append(heads, n)
    out = np.empty(n, dtype=np.int64)
    local = np.empty(n, dtype=np.int64)
    repeated = False
    for b0, b1 in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        gs = head_groups[b0:b1]
        counts = q_count[gs]
        # the judged docnos of the chunk's queries: q_start[g] .. q_start[g+1] for each g
        offsets = np.repeat(q_start[gs] - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
        r0, r1 = bounds[b0], bounds[b1]
        out[r0:r1], local[r0:r1] = _chunk_codes(d_sorted[offsets], c_sorted[offsets], docnos[r0:r1])
        repeated = repeated or _has_repeats(group[r0:r1], local[r0:r1])
        local[r0:r1] += r0
    return out, local, repeated


def _has_repeats(group: np.ndarray, local: np.ndarray) -> bool:
    """Whether a chunk's rows repeat a (query, docno code) pair: a count per pair when few, else a sort."""
    g = group - group.min()
    width = int(local.max()) + 1
    key = g * width + local
    if (int(g.max()) + 1) * width <= 16 * len(key):
        return bool(np.bincount(key).max() > 1)
    return len(np.unique(key)) < len(key)


def _chunk_codes(keys: np.ndarray, codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each value (object arrays): ``codes[i]`` where ``values[j] == keys[i]``, else -1; and the index of
    the value among the distinct values (missing values, None or NaN, count as one value)."""
    if _HashTable is not None:
        table = _HashTable(len(values))
        uniques, local = table.factorize(values)
        at = table.lookup(keys)
    else:  # pragma: no cover - a pandas without it
        local, uniques = pd.factorize(values)
        at = pd.Index(uniques, dtype=object).get_indexer(keys)
    local = np.where(local < 0, len(uniques), local).astype(np.int64)
    judged = np.full(len(uniques) + 1, -1, dtype=np.int64)
    judged[at[at >= 0]] = codes[at >= 0]
    return judged[local], local


def _repeated(group: np.ndarray, local: np.ndarray, position: np.ndarray | None) -> np.ndarray:
    """Positions in trec_eval order (ascending) of the rows that repeat the (query, docno) of a better-ranked
    row (``local``: docno codes from :func:`_judged_codes`; ``position``: each row's position in trec_eval
    order, None when the rows are in that order)."""
    n = len(group)
    key = group * np.int64(n + 1) + local
    if position is not None:
        in_order = np.empty(n, dtype=np.int64)
        in_order[position] = key
        key = in_order
    # the first copy in trec_eval order is the best-ranked one
    return np.flatnonzero(pd.Series(key).duplicated().to_numpy())


def prepare(run: Any, qrels: Any, *, rel: float = 1, queries: Any = None, once: bool = False) -> JudgedRun:
    """Join and order a run and qrels for evaluation (see :class:`JudgedRun`). ``queries``: the run's query ids,
    for a frame made from a ``{qid: ranking}`` run whose empty rankings it cannot show (default: the run's).

    A document retrieved twice for the same query counts once, with a warning: its best-ranked copy is kept and
    the documents below the other copies move up, as if the run had been deduplicated first (judged or not:
    duplicates would inflate relevance counts or push documents down). pytrec_eval, fed a dict, keeps one copy
    too (the last one written); trec_eval refuses such runs.
    """
    # a query present with an empty ranking ({qid: {}}) is still evaluated, as trec_eval does (all zeros)
    run_qids: Any = list(run.keys()) if isinstance(run, Mapping) else queries
    given = (run, qrels) if once else None  # once: each measure of pt.Experiment prepares these; warn once
    run = to_run_frame(run)
    qrels = to_qrels_frame(qrels)
    if len(run) and len(qrels):
        _check_id_types(run, qrels)
    # qrels as integer codes: query (in order of appearance) and docno
    qrel_qc, judged_qids = pd.factorize(qrels["qid"].to_numpy(dtype=object), use_na_sentinel=False)
    d_code, d_names = pd.factorize(qrels["docno"].to_numpy(dtype=object), use_na_sentinel=False)
    labels_all = qrels["label"].to_numpy(np.float64)
    n_codes = max(len(d_names), 1)
    qrel_key = qrel_qc.astype(np.int64) * n_codes + d_code
    key_order = np.argsort(qrel_key, kind="stable")
    sorted_keys = qrel_key[key_order]
    last = np.ones(len(sorted_keys), dtype=bool)
    last[:-1] = sorted_keys[1:] != sorted_keys[:-1]
    if not last.all():
        warn_once("Qrels judge some documents twice for the same query; the last judgment is used.", given)
        kept = np.sort(key_order[last])
        qrel_qc, d_code, labels_all = qrel_qc[kept], d_code[kept], labels_all[kept]

    qids = run["qid"].to_numpy(dtype=object)
    q_code, q_uniques = _query_codes(qids)
    if run_qids is None:
        run_qids = q_uniques
    evaluated = np.array(sorted(set(run_qids) & set(judged_qids)), dtype=object)
    missing = np.array(sorted(set(judged_qids) - set(run_qids)), dtype=object)
    unjudged = np.array(sorted(set(run_qids) - set(judged_qids)), dtype=object)
    q_index = pd.Index(evaluated)
    nq = len(evaluated)

    docnos = run["docno"].to_numpy(dtype=object)
    # trec_eval keeps scores in single precision: scores closer than float32 resolution are ties (and scores
    # beyond its range are infinite, as trec_eval and pytrec_eval rank them: numpy's overflow warning not shown)
    with np.errstate(over="ignore"):
        scores = run["score"].to_numpy(dtype=np.float64).astype(np.float32)
    group = q_index.get_indexer(q_uniques).astype(np.int64)[q_code] if len(qids) else q_code
    keep = group >= 0
    if not keep.all():
        group, docnos, scores = group[keep], docnos[keep], scores[keep]
    order = trec_order(group, scores, docnos)
    n = len(group)
    if order is None:  # already in trec_eval order
        group_sorted, position = group, None
    else:
        group_sorted = group[order]
        position = np.empty(n, dtype=np.int64)  # position of each original row in trec order
        position[order] = np.arange(n)
    num_retrieved = np.bincount(group_sorted, minlength=nq)
    starts = np.concatenate([[0], np.cumsum(num_retrieved)[:-1]])

    # judgments of the evaluated queries; rows whose docno is judged for a nearby query get an exact
    # (query, docno) lookup through integer keys
    qrel_q = (
        q_index.get_indexer(judged_qids)[qrel_qc].astype(np.int64)
        if len(qrel_qc)
        else qrel_qc.astype(np.int64)
    )
    in_eval = qrel_q >= 0
    qrel_q, d_code, labels_all = qrel_q[in_eval], d_code[in_eval], labels_all[in_eval]
    found_codes = _judged_codes(docnos, group, qrel_q, d_code, d_names, nq)
    if found_codes is None and order is not None:  # queries interleaved: look rows up in trec_eval order
        docnos, scores, group = docnos[order], scores[order], group_sorted
        position = None
        found_codes = _judged_codes(docnos, group, qrel_q, d_code, d_names, nq)
    if found_codes is None:  # pragma: no cover - rows in trec_eval order are grouped by query
        raise RuntimeError("internal error: rows in trec_eval order are not grouped by query")
    codes, local, repeated = found_codes
    dropped = _repeated(group, local, position) if repeated else np.zeros(0, dtype=np.int64)
    cand = np.flatnonzero(codes >= 0)
    qrel_key = qrel_q * n_codes + d_code
    cand_key = group[cand] * n_codes + codes[cand]
    key_order = np.argsort(qrel_key, kind="stable")
    sorted_keys = qrel_key[key_order]
    at = np.minimum(np.searchsorted(sorted_keys, cand_key), max(len(sorted_keys) - 1, 0))
    found = sorted_keys[at] == cand_key if len(sorted_keys) else np.zeros(len(cand), dtype=bool)
    hit_qrel = key_order[at[found]]
    rows, hit_score = cand[found], scores[cand[found]].astype(np.float64)
    if position is not None:
        rows = position[rows]
    by_pos = np.argsort(rows, kind="stable")
    rows, hit_qrel, hit_score = rows[by_pos], hit_qrel[by_pos], hit_score[by_pos]
    hit_group = group_sorted[rows]
    rank = rows - starts[hit_group]
    if len(dropped):
        # a document retrieved twice: its best-ranked copy counts, later copies leave the ranking (documents
        # below them move up), as if the run had been deduplicated first
        at = np.searchsorted(dropped, rows)
        kept = dropped[np.minimum(at, len(dropped) - 1)] != rows
        judged = len(rows) - int(kept.sum())
        counts = [
            f"{c} {what} documents"
            for c, what in ((judged, "judged"), (len(dropped) - judged, "unjudged"))
            if c
        ]
        warn_once(
            f"The run retrieves {' and '.join(counts)} more than once for the same query; only the best-ranked "
            "copy of each counts, as if the run had been deduplicated first.",
            given,
        )
        before = at - np.searchsorted(dropped, starts[hit_group])
        num_retrieved = num_retrieved - np.bincount(group_sorted[dropped], minlength=nq)
        rows, hit_qrel, hit_group, rank = rows[kept], hit_qrel[kept], hit_group[kept], (rank - before)[kept]
        hit_score = hit_score[kept]

    num_rel = np.bincount(qrel_q[labels_all >= rel], minlength=nq).astype(np.float64)

    # ideal ranking for nDCG: positive labels, per query, descending
    pos_mask = labels_all > 0
    iq, il = qrel_q[pos_mask], labels_all[pos_mask]
    io = np.lexsort((-il, iq))
    iq, il = iq[io], il[io]
    ipos = np.arange(len(iq)) - np.searchsorted(iq, np.arange(nq))[iq] if len(iq) else np.zeros(0, np.int64)

    return JudgedRun(
        qids=evaluated,
        num_retrieved=num_retrieved.astype(np.float64),
        group=hit_group,
        rank=rank,
        label=labels_all[hit_qrel],
        score=hit_score,
        num_rel=num_rel,
        ideal_group=iq,
        ideal_pos=ipos,
        ideal_label=il,
        rel=rel,
        missing=missing,
        unjudged_queries=unjudged,
    )
