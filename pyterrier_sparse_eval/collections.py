"""Collections held as local files, next to ``irds:`` identifiers.

- ``beir:PATH[:SPLIT]``: a BEIR folder (``corpus.jsonl[.gz]`` with ``_id``, ``title``, ``text``;
  ``queries.jsonl[.gz]`` with ``_id``, ``text``; ``qrels/SPLIT.tsv`` with the header ``query-id corpus-id
  score``; default split ``test``). As ``ir_datasets``' BEIR: the topics are the queries judged in the split.
- ``files:CORPUS,TOPICS,QRELS``: a corpus as JSONL (``_id``/``docno``/``doc_id``/``docid``/``id``, ``title``,
  ``text``, or Anserini's ``contents``) or TSV
  (``docno<TAB>text`` or ``docno<TAB>title<TAB>text``), topics as TSV (``qid<TAB>query``), JSONL or a TREC topic
  file (``<top>``; the title is the query), qrels as TREC (``qid 0 docno label``) or BEIR TSV (with its header);
  any file may be gzipped (``.gz``).

:class:`LocalDataset` is shaped like a PyTerrier dataset (``get_corpus_iter()``, ``get_topics()``,
``get_qrels()``, ``language``). Every id is a string; documents come out as ``{"docno", "title", "text"}``.
Bad input is a :class:`FieldError` or ``ValueError`` naming the file, the line and the fix; qrels that name
unknown queries or documents are counted in a warning.
"""

from __future__ import annotations

import os
import warnings
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._records import (
    FieldError,
    _check_file,
    _count_records,
    _is_jsonl,
    _json_records,
    _lines,
    _sample,
    _trec_topics,
    _warn_mixed_ids,
    json_doc,
    json_topic,
    parse_qrels,
    topics_frame,
    tsv_docs,
    tsv_topics,
)

__all__ = ["FieldError", "LocalDataset", "is_local_spec", "load_local", "LOCAL_PREFIXES"]

LOCAL_PREFIXES = ("beir:", "files:")


def is_local_spec(spec: Any) -> bool:
    """Whether ``spec`` names a collection of local files (``beir:`` or ``files:``)."""
    return isinstance(spec, str) and spec.startswith(LOCAL_PREFIXES)


def warn_missing_judged(judged: set[str], found: set[str], qrels_name: str) -> None:
    """A counted warning, once a corpus has been read whole, for the judged documents it lacks (``found``: those
    read)."""
    if missing := judged - found:
        warnings.warn(
            f"{len(missing)} of {len(judged)} judged documents in {qrels_name} are not in the corpus "
            f"(e.g. {_sample(missing)}): the relevant ones count as never retrieved; check that "
            "qrels and corpus belong together.",
            stacklevel=3,
        )


class LocalDataset:
    """A collection of local files, shaped like a PyTerrier dataset; see the module docstring."""

    language: str | None = None
    unit = "line"  # what a record number counts in messages

    def __init__(self, spec: str, corpus: Path, topics: Path, qrels: Path, *, judged_topics_only: bool):
        self.spec = spec
        self.corpus_path, self.topics_path, self.qrels_path = corpus, topics, qrels
        self.corpus_name, self.topics_name, self.qrels_name = str(corpus), str(topics), str(qrels)
        self._id_kinds: Counter[str] = Counter()
        self.judged_topics_only = judged_topics_only  # BEIR: the split's topics are the queries it judges
        self._topics: pd.DataFrame | None = None
        self._qrels: pd.DataFrame | None = None
        self._count: int | None = None

    def __repr__(self) -> str:
        return f"LocalDataset({self.spec!r})"

    @property
    def corpus_spec(self) -> str:
        """The spec of its documents alone, which names the folder of their cached indexes: every split of a BEIR
        folder, and every ``files:`` spec of one corpus file, share it (topics and qrels change no index)."""
        # the absolute path: a corpus named relatively and absolutely (or from another folder) is one entry
        if self.spec.startswith("beir:"):
            return f"beir:{self.corpus_path.parent.resolve()}"
        if self.spec.startswith("files:"):
            return f"files:{self.corpus_path.resolve()}"
        return self.spec

    def identity(self) -> str:
        """What identifies the indexed documents: the corpus file's absolute path, size, mtime and ctime (ns), so
        that an edited corpus gets a new index cache entry; the ctime, which no user call sets, also catches an
        edit that keeps the size and puts the mtime back (``touch -r``, ``cp -p`` of an edited copy)."""
        st = self.corpus_path.stat()
        return f"corpus={self.corpus_path.resolve()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"

    # documents

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        path = self.corpus_path
        if _is_jsonl(path):
            for n, rec in _json_records(path):
                yield json_doc(rec, path, n, self._id_kinds)
            return
        yield from tsv_docs(_lines(path), path)

    def get_corpus_iter(self, verbose: bool = True) -> Iterator[dict[str, Any]]:
        """The documents as ``{"docno", "title", "text"}``, streamed (memory stays bounded: 8 bytes per document
        for the duplicate check). A repeated id is a ValueError naming both lines, raised once the corpus has been
        read (so an index built from it fails and is never written); judged documents missing from the corpus and
        ids that mix JSON numbers and strings are counted in warnings at the end."""
        judged = set(self.get_qrels()["docno"])
        found: set[str] = set()
        hashes = array("q")
        self._id_kinds = Counter()
        records = self._records()
        if verbose:
            from tqdm.auto import tqdm

            records = tqdm(records, desc=f"{self.spec} documents", unit="doc", total=self.num_docs())
        for _, docno, title, text in records:
            hashes.append(hash(docno))
            if docno in judged:
                found.add(docno)
            yield {"docno": docno, "title": title, "text": text}
        self._check_unique(hashes)
        _warn_mixed_ids(self._id_kinds, "document", self.corpus_name)
        warn_missing_judged(judged, found, self.qrels_name)

    def _check_unique(self, hashes: array) -> None:
        """Refuse repeated document ids: equal hashes are re-checked on a second pass that names the lines."""
        values = np.frombuffer(hashes, dtype=np.int64) if len(hashes) else np.empty(0, np.int64)
        ordered = np.sort(values)
        suspects = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
        if not suspects:
            return
        first: dict[str, int] = {}
        for n, docno, _, _ in self._records():
            if hash(docno) in suspects:
                if docno in first:
                    raise ValueError(
                        f"{self.corpus_name}, {self.unit} {n}: duplicate document id {docno!r} (first on "
                        f"{self.unit} {first[docno]}); ids must be unique (remove or rename the repeated document)."
                    )
                first[docno] = n

    def num_docs(self) -> int | None:
        """The number of documents, counted once from the corpus file's non-blank lines (gzip included; a TSV
        header row is not counted), so that progress bars know their total."""
        if self._count is None:
            self._count = _count_records(self.corpus_path)
        return self._count

    # topics and qrels

    def _read_topics(self) -> pd.DataFrame:
        path = self.topics_path
        first = next((line for _, line in _lines(path) if line.strip()), "")
        if first.lstrip().lower().startswith("<top"):
            return topics_frame(_trec_topics(path), path)
        if _is_jsonl(path):
            kinds: Counter[str] = Counter()
            rows = [json_topic(rec, path, n, kinds) for n, rec in _json_records(path)]
            _warn_mixed_ids(kinds, "query", str(path))
            return topics_frame(rows, path)
        return topics_frame(tsv_topics(_lines(path), path), path)

    def get_topics(self, variant: str | None = None) -> pd.DataFrame:
        """``qid`` and ``query`` (str); for a BEIR split, the queries it judges (in the file's order)."""
        if self._topics is None:
            topics = self._read_topics()
            judged = set(self.get_qrels()["qid"])
            unknown = judged - set(topics["qid"])
            if unknown:
                warnings.warn(
                    f"{len(unknown)} judged queries in {self.qrels_name} are not in {self.topics_name} (e.g. "
                    f"{_sample(unknown)}): they cannot be evaluated; add them to the topics or use the matching "
                    "qrels.",
                    stacklevel=2,
                )
            if self.judged_topics_only:
                topics = topics[topics["qid"].isin(judged)].reset_index(drop=True)
            self._topics = topics
        return self._topics.copy()

    def _read_qrels(self) -> pd.DataFrame:
        return parse_qrels(_lines(self.qrels_path), self.qrels_path)

    def get_qrels(self, variant: str | None = None) -> pd.DataFrame:
        """``qid``, ``docno`` (str) and ``label`` (int) from TREC qrels or a BEIR TSV (with its header)."""
        if self._qrels is None:
            self._qrels = self._read_qrels()
        return self._qrels.copy()


def _beir(spec: str) -> LocalDataset:
    rest = os.path.expanduser(spec.removeprefix("beir:"))
    folder, split = Path(rest), "test"
    if not folder.is_dir() and ":" in rest:
        head, _, tail = rest.rpartition(":")
        folder, split = Path(head), tail or "test"
    if not folder.is_dir():
        raise FileNotFoundError(f"BEIR folder not found: {folder} (the spec is beir:PATH[:SPLIT]).")
    corpus, topics = _file_in(folder, "corpus.jsonl"), _file_in(folder, "queries.jsonl")
    qrels_dir = folder / "qrels"
    splits = sorted(p.name.removesuffix(".gz").removesuffix(".tsv") for p in qrels_dir.glob("*.tsv*"))
    qrels = next(
        (p for p in (qrels_dir / f"{split}.tsv", qrels_dir / f"{split}.tsv.gz") if p.is_file()), None
    )
    if qrels is None:
        if not splits:
            raise FileNotFoundError(f"{folder} is not a BEIR folder: {qrels_dir} has no SPLIT.tsv qrels.")
        raise ValueError(
            f"{folder} has no split {split!r}; splits present: {', '.join(splits)} "
            f"(e.g. beir:{folder}:{splits[0]})."
        )
    return LocalDataset(spec, corpus, topics, qrels, judged_topics_only=True)


def _file_in(folder: Path, name: str) -> Path:
    """A BEIR folder's file ``name`` (or ``name.gz``), else a FileNotFoundError naming what the folder holds."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    # a folder of BEIR folders (CQADupStack's 12 forums): each is one dataset, and BEIR reports their mean
    subs = (
        sorted(p.name for p in folder.iterdir() if p.is_dir() and (p / name).is_file())
        if folder.is_dir()
        else []
    )
    inside = (
        f"; it holds BEIR folders ({', '.join(subs[:4])}{'...' * (len(subs) > 4)}): give one, e.g. beir:{folder / subs[0]}"
        if subs
        else ""
    )
    raise FileNotFoundError(f"{folder} is not a BEIR folder: it has no {name} (nor {name}.gz){inside}.")


def _files(spec: str) -> LocalDataset:
    parts = [p.strip() for p in spec.removeprefix("files:").split(",")]
    if len(parts) != 3 or not all(parts):
        raise ValueError(
            f"{spec!r}: expected files:CORPUS,TOPICS,QRELS (three paths, comma-separated: link a path holding ',')."
        )
    corpus, topics, qrels = (
        _check_file(Path(os.path.expanduser(p)), what)
        for p, what in zip(parts, ("Corpus", "Topics", "Qrels"))
    )
    return LocalDataset(spec, corpus, topics, qrels, judged_topics_only=False)


def load_local(spec: str) -> LocalDataset:
    """The dataset of a ``beir:`` or ``files:`` spec; its files must exist (they are read when first used)."""
    if spec.startswith("beir:"):
        return _beir(spec)
    if spec.startswith("files:"):
        return _files(spec)
    raise ValueError(
        f"{spec!r} is not a local collection spec (beir:PATH[:SPLIT] or files:CORPUS,TOPICS,QRELS)."
    )
