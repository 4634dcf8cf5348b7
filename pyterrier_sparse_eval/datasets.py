"""Datasets by spec (``irds:ID``, ``beir:PATH[:SPLIT]``, ``files:CORPUS,TOPICS,QRELS``), with the guards
evaluation needs (local collections: see :mod:`.collections`).

- every query and document id is a string (an int qid never silently fails to match a str one);
- topics with several text fields get a sensible default field, reported, and the user may pick another;
- topics and qrels that only partly overlap are reported ("evaluating X of Y queries").

Offline or air-gapped use: point ``IR_DATASETS_HOME`` at a pre-filled ``ir_datasets`` cache before
``ir_datasets`` is imported (see README).
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Container, Iterator
from typing import Any

import pandas as pd
import pyterrier as pt

from ._fields import DEFAULT_DOC_FIELDS, doc_texts, resolve_fields, warn_empty, watch_fields
from ._records import READER_VERSION, FieldError, _as_text
from ._trec_files import read_qrels, read_run
from .collections import LocalDataset, is_local_spec, load_local, warn_missing_judged
from .console import HF_OFFLINE_HINT, OFFLINE_HINT, OfflineError, looks_like_network
from .hf import load_hf
from .measures._frames import no_all_negative_query

__all__ = [
    "OfflineError",
    "load_dataset",
    "get",
    "dataset_identity",
    "corpus_spec",
    "get_topics",
    "get_qrels",
    "corpus_iter",
    "require_documents",
    "require_parts",
    "dataset_doc_fields",
    "align_topics_qrels",
    "num_docs",
    "resolve_fields",
    "watch_fields",
    "warn_empty",
    "doc_texts",
    "FieldError",
    "read_run",
    "read_qrels",
]


# Preferred topic fields, in order, when a collection offers several (TREC: title is the short keyword query).
TOPIC_FIELD_PREFERENCE = ("query", "title", "text")


def load_dataset(dataset: str | Any) -> Any:
    """The dataset of a spec: ``irds:ID`` (``pt.get_dataset``, with an error that says what identifiers look
    like), a :class:`~.collections.LocalDataset` for ``beir:PATH[:SPLIT]`` and ``files:CORPUS,TOPICS,QRELS``
    (its files must exist; they are read when first used), or a :class:`~.hf.HFDataset` for ``hf:miracl:LANG``,
    ``hf:mmarco:LANG`` and ``hf:REPO[:SPLIT]``. A loaded dataset is returned as it is."""
    if not isinstance(dataset, str):
        return dataset
    if is_local_spec(dataset):
        return load_local(dataset)
    if dataset.startswith("hf:"):
        with _downloading(dataset, "files"):  # MIRACL and mMARCO look at the hub when loaded
            return load_hf(dataset)
    name = dataset if ":" in dataset else f"irds:{dataset}"
    try:
        return pt.get_dataset(name)
    except KeyError as e:
        raise ValueError(
            f"Unknown dataset {dataset!r}; use an ir_datasets identifier such as 'irds:beir/scifact/test' or "
            "'irds:vaswani' (list them with `ir_datasets list`), beir:PATH[:SPLIT] for a BEIR folder, "
            "files:CORPUS,TOPICS,QRELS, or hf:miracl:LANG, hf:mmarco:LANG, hf:REPO[:SPLIT] on the Hugging Face hub."
        ) from e


get = load_dataset


def dataset_identity(dataset: str | Any) -> str:
    """What identifies a dataset's documents in an index cache key: their spec (:func:`corpus_spec`), with, for
    local files and ``hf:``, the version of their reader and the corpus files' paths, sizes and mtimes (an edited
    corpus, or one read otherwise since, is never served a stale index) and a loaded ``hf:`` dataset's configs and columns (``identity()``)."""
    if is_local_spec(dataset) or str(dataset).startswith("hf:") or isinstance(dataset, LocalDataset):
        ds = load_dataset(dataset)
        return f"{ds.corpus_spec}|reader={READER_VERSION}|{ds.identity()}"
    try:
        spec = corpus_spec(dataset)
    except TypeError:
        return str(dataset)
    # an index of the dataset's own fields is not the title-only one cached before they were read
    fields = dataset_doc_fields(dataset)
    spec = f"{spec}|fields={'+'.join(fields)}" if fields else spec
    # a dataset registered over local files (ir_datasets.create_dataset): an edited corpus is another
    local = _local_doc_files(dataset)
    return f"{spec}|files={'|'.join(local)}" if local else spec


def _local_doc_files(dataset: str | Any) -> list[str]:
    """The path, size, mtime and ctime of each local file (``ir_datasets``' ``LocalDownload``) an ``irds:`` dataset reads its
    documents from: those of a dataset registered over a user's files, which can be edited under one id."""
    try:
        irds = _irds(load_dataset(dataset))
        handler = irds.docs_handler() if irds is not None and irds.has_docs() else None
        from ir_datasets.util import LocalDownload
    except Exception:  # not a dataset: said where it is loaded
        return []
    found, seen = [], set()

    def walk(obj: Any, depth: int) -> None:
        if depth < 0 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, LocalDownload):
            # a folder (TrecDocs' path_globs) by the files in it
            paths = sorted(obj._path.rglob("*")) if obj._path.is_dir() else [obj._path]
            for path in paths:
                with contextlib.suppress(OSError):
                    st = path.stat()
                    found.append(f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        elif isinstance(obj, (list, tuple, dict)):
            for value in obj.values() if isinstance(obj, dict) else obj:
                walk(value, depth - 1)
        elif type(obj).__module__.startswith("ir_datasets") and hasattr(obj, "__dict__"):
            for value in vars(obj).values():
                walk(value, depth - 1)

    walk(handler, 4)
    return sorted(found)


def corpus_spec(dataset: str | Any) -> str:
    """The spec of a dataset's documents, shared by the datasets of one corpus (their cached indexes are one):
    ``irds:msmarco-passage`` for ``irds:msmarco-passage/dev`` or ``msmarco-passage/trec-dl-2019`` (``ir_datasets.
    docs_parent_id``), a BEIR folder's for its splits, a ``files:`` spec's corpus file's, ``hf:miracl:sw`` for
    ``hf:miracl:sw:dev`` (an ``hf:`` repository's for its splits)."""
    if isinstance(dataset, LocalDataset):
        return str(dataset.corpus_spec)
    spec = dataset_spec(dataset)
    if is_local_spec(spec) or spec.startswith("hf:"):
        return str(load_dataset(dataset).corpus_spec)
    if spec.startswith("irds:") or ":" not in spec:  # load_dataset reads "ID" as "irds:ID"
        import ir_datasets

        # not an id (load_dataset says so where it loads it), or no documents (said where they are read)
        with contextlib.suppress(KeyError, ValueError, AttributeError):
            return "irds:" + ir_datasets.docs_parent_id(spec.removeprefix("irds:"))
    return spec


def dataset_spec(dataset: str | Any) -> str:
    """A dataset's spec: as given, or that of a loaded one (``pse.datasets.get(...)``, ``pt.get_dataset("irds:..")``),
    which names its index cache folder (the pipelines read the loaded one itself, not the spec reloaded)."""
    if isinstance(dataset, str):
        return dataset
    irds_id = getattr(dataset, "_irds_id", None)
    spec = getattr(dataset, "spec", None) or (f"irds:{irds_id}" if isinstance(irds_id, str) else None)
    if isinstance(spec, str):
        return spec
    raise TypeError(
        f"dataset= {type(dataset).__name__!r}: give the dataset's id (e.g. 'irds:beir/scifact/test', 'beir:PATH', "
        "'files:CORPUS,TOPICS,QRELS'), or what pse.datasets.get(id) returned; its cached indexes are named by it."
    )


def _irds(dataset: Any) -> Any:
    ref = getattr(dataset, "irds_ref", None)
    return ref() if ref is not None else None


def dataset_language(dataset: str | Any) -> str | None:
    """The language a collection declares for its documents (ISO 639-1), or None; an ``irds:`` dataset that declares
    none for them, that of its topics (istella22's Italian)."""
    ds = load_dataset(dataset)
    irds = _irds(ds)
    if irds is None:
        return getattr(ds, "language", None)
    try:
        lang = irds.docs_lang() if irds.has_docs() else None
        lang = lang or (irds.queries_lang() if irds.has_queries() else None)
    except (AttributeError, NotImplementedError):
        return None
    # ir_datasets' mMARCO names its Dutch "dt" (irds:mmarco/v2/dt), not ISO 639-1's "nl"
    return {"dt": "nl"}.get(str(lang), str(lang)) if lang else None


def topic_fields(dataset: Any) -> tuple[str, ...]:
    """The text fields of a dataset's topics (``()`` when unknown)."""
    ds = _irds(dataset)
    if ds is None or not ds.has_queries():
        return ()
    return tuple(ds.queries_cls()._fields[1:])


@contextlib.contextmanager
def _downloading(dataset: Any, what: str) -> Iterator[None]:
    """A failed download (an offline machine) re-raised as :class:`OfflineError`, saying what to do."""
    try:
        yield
    except OfflineError:
        raise
    except Exception as e:
        if looks_like_network(e):
            name = _name(dataset)
            hint = HF_OFFLINE_HINT if name.startswith("hf:") else OFFLINE_HINT
            raise OfflineError(f"{name}'s {what}: {hint}.") from e
        raise


def get_topics(dataset: str | Any, field: str | None = None, *, verbose: bool = True) -> pd.DataFrame:
    """Topics as ``qid`` (str) + ``query`` (str), choosing a text field when there are several.

    Args:
        dataset: a spec (``irds:``, ``beir:``, ``files:``, ``hf:``; see :func:`load_dataset`) or a loaded dataset.
        field: the topic field to use as ``query``; default: the only field, else the fields the dataset's own
            query text joins (``ir_datasets``' ``default_text()``: TREC's title, BEIR trec-covid's text, TREC PM
            2018's disease + gene + demographic, 2017's + other), else the first of ``query``, ``title``, ``text`` that exists, else the
            first field.
        verbose: say which field was chosen when the topics have several and ``field`` is not given.
    """
    ds = load_dataset(dataset)
    _refuse_missing(ds, "queries", "topics (queries)")
    fields = topic_fields(ds)
    chosen: tuple[str, ...] = () if field is None else (field,)
    if field is None and len(fields) > 1:
        own = _own_fields(_irds(ds).queries_cls())
        chosen = own or (next((f for f in TOPIC_FIELD_PREFERENCE if f in fields), fields[0]),)
        if verbose:
            whose = " (the dataset's own query text)" if own else ""
            print(
                f"Topics have fields {list(fields)}; using {' + '.join(map(repr, chosen))}{whose} as the query "
                "(field=/--topic-field)."
            )
    if field is not None and fields and field not in fields:
        raise ValueError(f"Topics have no field {field!r}; available: {list(fields)}.")
    if field not in (None, "query") and isinstance(ds, LocalDataset):  # it would be read as the query
        raise ValueError(
            f"{ds.spec}'s topics have one text field, the query (a TREC topic file's <title>): there is no "
            f"{field!r} to choose. Leave out field= (--topic-field), or write the queries you want as qid<TAB>query lines."
        )
    with _downloading(ds, "topics"):
        # read once, the fields with text joined by a space (as default_text() joins them)
        if len(chosen) > 1:
            rows = pd.DataFrame(_irds(ds).queries_iter())
            joined = (
                rows[list(chosen)].map(_as_text).agg(lambda r: " ".join(t for t in r if t.strip()), axis=1)
            )
            topics = pd.DataFrame({"qid": rows["query_id"], "query": joined})
        else:
            topics = ds.get_topics(*chosen) if chosen and len(fields) > 1 else ds.get_topics()
    if "query" not in topics.columns:
        raise ValueError(f"Topics have no 'query' column (columns: {list(topics.columns)}); pass field=.")
    topics = topics[["qid", "query"]].copy()
    topics["qid"] = topics["qid"].astype(str)
    if len(twice := topics["qid"][topics["qid"].duplicated()]):  # pt would merge their rankings
        raise ValueError(
            f"{_name(ds)}'s topics repeat query ids ({list(dict.fromkeys(twice))[:3]}): each query needs its own "
            "id, or their rankings are merged into one."
        )
    if (listed := topics["query"].map(lambda v: isinstance(v, (list, tuple, dict, set)))).any():
        row = topics[listed].iloc[0]
        fix = (
            f"choose a text field (field=/--topic-field; fields: {list(fields)})"
            if len(fields) > 1
            else "give text"
        )
        raise ValueError(
            f"{_name(ds)}'s topic {row['qid']!r} has a {type(row['query']).__name__} as its query, not a text: {fix}."
        )
    topics["query"] = topics["query"].fillna("").astype(str)
    topics = topics.reset_index(drop=True)
    # the field(s) used, for reports: " + "-joined when several are joined
    topics.attrs["topic_field"] = (
        " + ".join(chosen) if chosen else (fields[0] if len(fields) == 1 else "query")
    )
    return topics


def _name(ds: Any) -> str:
    """A dataset's name in messages: its ``irds:`` id or spec."""
    irds = _irds(ds)
    if irds is not None:
        return f"irds:{irds.dataset_id()}"
    return ds if isinstance(ds, str) else str(getattr(ds, "spec", None) or "the collection")


def _refuse_missing(ds: Any, part: str, what: str) -> None:
    """A ValueError when an ``irds:`` dataset has no ``part`` (docs, queries, qrels), naming subsets that have
    queries and judgments (a corpus id given for one of its query sets)."""
    irds = _irds(ds)
    if irds is None or getattr(irds, f"has_{part}")():
        return
    root = irds.dataset_id()
    if part == "docs":
        raise ValueError(
            f"irds:{root} has no documents in ir_datasets (its topics and judgments only): index a copy of its "
            "corpus you have, as files: or beir: (README, 'Collections'), with these topics and qrels."
        )
    import ir_datasets

    splits, roots = [], [root]
    with contextlib.suppress(Exception):  # a query set's hint: its corpus's other sets (msmarco-passage/eval)
        roots.append(ir_datasets.docs_parent_id(root))
    for sub in (i for i in ir_datasets.registry if any(i.startswith(f"{r}/") for r in roots) and i != root):
        with contextlib.suppress(Exception):
            if (d := ir_datasets.load(sub)).has_queries() and d.has_qrels():
                splits.append(sub)
    hint = (
        f"e.g. {', '.join(f'irds:{s}' for s in sorted(splits, key=len)[:3])}"
        if splits
        else "`ir_datasets list`"
    )
    raise ValueError(f"irds:{root} has no {what}; use a split that has them ({hint}).")


def get_qrels(dataset: str | Any) -> pd.DataFrame:
    """Qrels as ``qid`` (str), ``docno`` (str), ``label`` (int). Labels <= 0 mark judged non-relevant documents; a
    query judged only below 0 has its labels as 0 (the same for every trec_eval measure: pytrec_eval crashes on it)."""
    ds = load_dataset(dataset)
    _refuse_missing(ds, "qrels", "relevance judgments")
    with _downloading(ds, "qrels"):
        qrels = ds.get_qrels()
    if not len(qrels):
        raise ValueError(f"{_name(ds)}'s qrels hold no judgment: evaluation needs judged queries.")
    qrels = qrels[["qid", "docno", "label"]].copy()
    qrels["qid"] = qrels["qid"].astype(str)
    qrels["docno"] = qrels["docno"].astype(str)
    qrels["label"] = qrels["label"].astype(int)
    qrels = no_all_negative_query(qrels)  # pytrec_eval (pt.Experiment's) would crash on one
    if (twice := qrels.duplicated(["qid", "docno"], keep="last")).any():  # once here, for every measure
        example = qrels[twice].iloc[0]
        warnings.warn(
            f"The qrels judge {int(twice.sum())} document{'s' * (int(twice.sum()) != 1)} again for a query (e.g. query {example['qid']!r}, "
            f"document {example['docno']!r}): the last judgment is used, as pytrec_eval and the in-house measures "
            "use it.",
            stacklevel=2,
        )
        qrels = qrels[~twice]
    return qrels.reset_index(drop=True)


class Corpus:
    """The documents of a dataset, iterable (again and again) and sized when the dataset knows its size,
    so that indexers show a progress bar with a total. ``default_fields``: the text fields the dataset names
    (:func:`dataset_doc_fields`), which the indexers take when given no ``fields``. ``keep``: the docnos to
    yield, when not all (a pool's)."""

    def __init__(self, dataset: Any, count: int | None, verbose: bool, keep: Container[str] | None = None):
        self.dataset = dataset
        self.count = count
        self.verbose = verbose
        self.keep = keep
        self.default_fields = dataset_doc_fields(dataset)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # an irds: dataset's judged documents the corpus lacks are counted as a local dataset's are (qrels at hand)
        irds, judged, found = _irds(self.dataset) if self.keep is None else None, set(), set()
        with contextlib.suppress(Exception):
            judged = {q.doc_id for q in irds.qrels_iter()} if irds is not None and irds.has_qrels() else set()
        with _downloading(self.dataset, "documents"):
            for doc in self.dataset.get_corpus_iter(verbose=self.verbose):
                if not isinstance(doc["docno"], str):
                    doc = {**doc, "docno": str(doc["docno"])}
                if doc["docno"] in judged:
                    found.add(doc["docno"])
                if self.keep is None or doc["docno"] in self.keep:
                    yield doc
        warn_missing_judged(judged, found, f"{_name(self.dataset)}'s qrels")

    def __len__(self) -> int:
        if self.count is None:
            raise TypeError("this corpus does not know its size")
        return self.count


def corpus_iter(dataset: str | Any, *, verbose: bool = False) -> Corpus:
    """The documents of a dataset as dicts with a str ``docno`` and the dataset's text fields (an iterable
    with ``len()`` when ``ir_datasets`` knows the number of documents). Indexed without ``fields=``, they give
    the fields the dataset's own text joins (:func:`dataset_doc_fields`: msmarco-document's title + body), where
    PyTerrier's ``get_corpus_iter()`` leaves the indexers to take title and text."""
    ds = load_dataset(dataset)
    require_documents(ds)
    return Corpus(ds, num_docs(ds), verbose)


def require_documents(dataset: Any) -> None:
    """A ValueError, before anything is read, for an ``irds:`` dataset whose documents ir_datasets does not give."""
    _refuse_missing(dataset, "docs", "documents")


def require_parts(dataset: str | Any) -> None:
    """A ValueError naming the fix, before anything is read, for an ``irds:`` dataset without documents, topics or
    judgments: what an evaluation needs (an unknown one is said where it is loaded)."""
    try:
        ds = load_dataset(dataset)
    except (ValueError, OSError, KeyError):
        return
    require_documents(ds)
    _refuse_missing(ds, "queries", "topics (queries)")
    _refuse_missing(ds, "qrels", "relevance judgments")


def dataset_doc_fields(dataset: str | Any) -> tuple[str, ...] | None:
    """The document fields an ``irds:`` dataset's own text joins (``ir_datasets``' ``default_text()``), when they go
    beyond ``title`` and ``text``: msmarco-document's title + body, cord19's title + abstract. None otherwise, or
    when that text is more than fields joined by spaces (an HTML body parsed, a list joined): the indexers then
    take title and text (:func:`resolve_fields`)."""
    try:
        ds = _irds(load_dataset(dataset))
        fields = _own_fields(ds.docs_cls()) if ds is not None and ds.has_docs() else None
    except Exception:  # an id that is no dataset: said where the documents are read
        return None
    return fields if fields and set(fields) - set(DEFAULT_DOC_FIELDS) else None


def _own_fields(cls: Any) -> tuple[str, ...] | None:
    """The fields (the id apart) that an ``ir_datasets`` document or query class's ``default_text()`` joins, in
    order; None when it has none, or its text is more than the fields joined by spaces."""
    try:
        names = cls._fields
        # each field a mark that any parsing, escaping or spacing alters: the text tells which fields it joins
        text = cls(*(f"\ue000<p>&amp;{i}  A</p>\ue001" for i in range(len(names)))).default_text()
    except Exception:  # no such method, or one that needs real values
        return None
    mark = r"\ue000<p>&amp;(\d+)  A</p>\ue001"
    if not isinstance(text, str) or not re.fullmatch(rf"\s*(?:{mark}\s*)+", text):
        return None
    return tuple(dict.fromkeys(names[int(i)] for i in re.findall(mark, text) if int(i))) or None


def num_docs(dataset: str | Any) -> int | None:
    """The number of documents in a dataset's corpus, when known without parsing the corpus."""
    ds = load_dataset(dataset)
    if isinstance(ds, LocalDataset):
        return ds.num_docs()
    ds = _irds(ds)
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
        extra = "; ".join(
            part
            for n, part in (
                (len(tq - rq), f"{len(tq - rq)} topics have no judgments"),
                (len(rq - tq), f"{len(rq - tq)} judged queries are not in the topics"),
            )
            if n
        )
        if not both:
            extra += " (no query id in common: are topics and qrels from the same split, with str ids?)"
        extra += _as_numbers(tq - rq, rq - tq)
        warnings.warn(f"evaluating {len(both)} of {len(tq)} queries: {extra}.", stacklevel=2)
    return topics[topics["qid"].astype(str).isin(both)].reset_index(drop=True)


def _as_numbers(topics_only: set[str], qrels_only: set[str]) -> str:
    """A hint when ids that do not match as text match as numbers ('001' and '1')."""
    numbers = {int(q): q for q in qrels_only if q.isdigit()}
    pairs = [(q, numbers[int(q)]) for q in sorted(topics_only) if q.isdigit() and int(q) in numbers]
    if not pairs:
        return ""
    return (
        f"; {len(pairs)} topic ids equal qrels ids as numbers, not as text (e.g. topic {pairs[0][0]!r}, qrels "
        f"{pairs[0][1]!r}): ids match as text, so write them alike (e.g. without leading zeros on both sides)"
    )


def judged_topics(dataset: str, topics: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """:func:`align_topics_qrels` for a command that evaluates ``dataset``: none judged is refused (before any
    index is built), with the fix named."""
    topics_all, topics = topics, align_topics_qrels(topics, qrels)
    if topics.empty:
        raise ValueError(
            f"{dataset}: no topic has judgments (topics and qrels share no query id): nothing to evaluate; "
            "check that both come from the same split and name queries alike"
            + _as_numbers(set(topics_all["qid"].astype(str)), set(qrels["qid"].astype(str)))
            + "."
        )
    return topics
