"""Collections held as local files, next to ``irds:`` identifiers.

- ``beir:PATH[:SPLIT]``: a BEIR folder (``corpus.jsonl[.gz]`` with ``_id``, ``title``, ``text``;
  ``queries.jsonl[.gz]`` with ``_id``, ``text``; ``qrels/SPLIT.tsv`` with the header ``query-id corpus-id
  score``; default split ``test``). As ``ir_datasets``' BEIR: the topics are the queries judged in the split.
- ``files:CORPUS,TOPICS,QRELS``: a corpus as JSONL (``_id``/``docno``/``doc_id``, ``title``, ``text``) or TSV
  (``docno<TAB>text`` or ``docno<TAB>title<TAB>text``), topics as TSV (``qid<TAB>query``), JSONL or a TREC topic
  file (``<top>``; the title is the query), qrels as TREC (``qid 0 docno label``) or BEIR TSV (with its header);
  any file may be gzipped (``.gz``).

:class:`LocalDataset` is shaped like a PyTerrier dataset (``get_corpus_iter()``, ``get_topics()``,
``get_qrels()``, ``language``). Every id is a string; documents come out as ``{"docno", "title", "text"}``.
Bad input is a :class:`FieldError` or ``ValueError`` naming the file, the line and the fix; qrels that name
unknown queries or documents are counted in a warning.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pandas as pd

__all__ = ["FieldError", "LocalDataset", "is_local_spec", "load_local", "LOCAL_PREFIXES"]

LOCAL_PREFIXES = ("beir:", "files:")
DOC_ID_KEYS = ("_id", "docno", "doc_id")
QUERY_ID_KEYS = ("_id", "qid", "query_id")
QUERY_TEXT_KEYS = ("text", "query", "title")
_HEADER_IDS = {"_id", "id", "docno", "doc_id", "docid", "pid", "qid", "query_id", "query-id"}


class FieldError(KeyError):
    """Documents, topics or a frame lack a field (or id) they need; the message names the fix."""

    def __str__(self) -> str:  # KeyError's repr-quoting hides the message
        return str(self.args[0]) if self.args else ""


def is_local_spec(spec: Any) -> bool:
    """Whether ``spec`` names a collection of local files (``beir:`` or ``files:``)."""
    return isinstance(spec, str) and spec.startswith(LOCAL_PREFIXES)


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline) for each non-blank line."""
    with _open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line.strip():
                yield n, line


def _is_jsonl(path: Path) -> bool:
    """JSONL by extension (``.jsonl``, ``.json``), TSV by extension (``.tsv``, ``.txt``), else by the first line."""
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix in (".jsonl", ".json"):
        return True
    if suffix in (".tsv", ".txt", ".qrels", ".trec"):
        return False
    return next((line.lstrip().startswith("{") for _, line in _lines(path)), False)


def _json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in _lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(
                f"{path}, line {n}: not a JSON object ({e.msg}); JSONL wants one per line."
            ) from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}, line {n}: not a JSON object; JSONL wants one per line.")
        yield n, record


def _pick(record: dict[str, Any], keys: tuple[str, ...], path: Path, n: int, what: str) -> str:
    for k in keys:
        value = record.get(k)
        if value is not None and str(value) != "":
            return str(value)
    raise FieldError(
        f"{path}, line {n}: no {what} (looked for {' / '.join(repr(k) for k in keys)}; the record has "
        f"{sorted(record)}); rename the field to {keys[0]!r}."
    )


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _check_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}.")
    return path


def _file_in(folder: Path, name: str) -> Path:
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{folder} is not a BEIR folder: it has no {name} (nor {name}.gz).")


def _sample(ids: set[str] | list[str]) -> str:
    return ", ".join(repr(i) for i in sorted(ids)[:3])


class LocalDataset:
    """A collection of local files, shaped like a PyTerrier dataset; see the module docstring."""

    language: str | None = None

    def __init__(self, spec: str, corpus: Path, topics: Path, qrels: Path, *, judged_topics_only: bool):
        self.spec = spec
        self.corpus_path, self.topics_path, self.qrels_path = corpus, topics, qrels
        self.judged_topics_only = judged_topics_only  # BEIR: the split's topics are the queries it judges
        self._topics: pd.DataFrame | None = None
        self._qrels: pd.DataFrame | None = None
        self._count: int | None = None

    def __repr__(self) -> str:
        return f"LocalDataset({self.spec!r})"

    def identity(self) -> str:
        """What identifies the indexed documents: the corpus file's absolute path, size and mtime (ns), so that
        an edited corpus gets a new index cache entry."""
        st = self.corpus_path.stat()
        return f"corpus={self.corpus_path.resolve()}:{st.st_size}:{st.st_mtime_ns}"

    # documents

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        path = self.corpus_path
        if _is_jsonl(path):
            for n, rec in _json_records(path):
                if "text" not in rec:
                    raise FieldError(
                        f"{path}, line {n}: the document has no 'text' field (it has {sorted(rec)}); "
                        "BEIR corpora need 'text' (and optionally 'title')."
                    )
                yield (
                    n,
                    _pick(rec, DOC_ID_KEYS, path, n, "document id"),
                    _text(rec.get("title")),
                    _text(rec["text"]),
                )
            return
        columns = 0
        for n, line in _lines(path):
            parts = line.split("\t")
            if not columns:
                columns = min(len(parts), 3)
                if columns < 2:
                    raise ValueError(
                        f"{path}, line {n}: expected 'docno<TAB>text' (or docno, title, text) lines."
                    )
                if parts[0].strip().lower() in _HEADER_IDS and "text" in (p.strip().lower() for p in parts):
                    continue  # a header row
            parts = line.split("\t", columns - 1)
            if len(parts) != columns or not parts[0]:
                raise ValueError(
                    f"{path}, line {n}: expected {columns} tab-separated columns like the first line."
                )
            yield n, parts[0], parts[1] if columns == 3 else "", parts[-1]

    def get_corpus_iter(self, verbose: bool = True) -> Iterator[dict[str, Any]]:
        """The documents as ``{"docno", "title", "text"}``; refuses a repeated id; warns (once, at the end) with
        the number of judged documents that are not in the corpus."""
        judged = set(self.get_qrels()["docno"])
        seen: set[str] = set()
        records = self._records()
        if verbose:
            from tqdm.auto import tqdm

            records = tqdm(records, desc=f"{self.spec} documents", unit="doc", total=self.num_docs())
        for n, docno, title, text in records:
            if docno in seen:
                raise ValueError(
                    f"{self.corpus_path}, line {n}: duplicate document id {docno!r}; ids must be unique "
                    "(remove or rename the repeated document)."
                )
            seen.add(docno)
            yield {"docno": docno, "title": title, "text": text}
        missing = judged - seen
        if missing:
            warnings.warn(
                f"{len(missing)} of {len(judged)} judged documents in {self.qrels_path} are not in the corpus "
                f"(e.g. {_sample(missing)}): they count as relevant documents never retrieved; check that "
                "qrels and corpus belong together.",
                stacklevel=2,
            )

    def num_docs(self) -> int | None:
        """The number of documents: non-blank lines of an uncompressed JSONL corpus (counted once), else None."""
        if self._count is None and self.corpus_path.suffix != ".gz" and _is_jsonl(self.corpus_path):
            with open(self.corpus_path, "rb") as f:
                self._count = sum(1 for line in f if line.strip())
        return self._count

    # topics and qrels

    def _read_topics(self) -> pd.DataFrame:
        path = self.topics_path
        rows: list[tuple[str, str]] = []
        first = next((line for _, line in _lines(path) if line.strip()), "")
        if first.lstrip().lower().startswith("<top"):
            rows = _trec_topics(path)
        elif _is_jsonl(path):
            for n, rec in _json_records(path):
                text = next((rec[k] for k in QUERY_TEXT_KEYS if k in rec), None)
                if text is None:
                    raise FieldError(
                        f"{path}, line {n}: the query has no text (looked for {list(QUERY_TEXT_KEYS)}; it has "
                        f"{sorted(rec)}); rename its field to 'text'."
                    )
                rows.append((_pick(rec, QUERY_ID_KEYS, path, n, "query id"), _text(text)))
        else:
            for n, line in _lines(path):
                parts = line.split("\t", 1)
                if len(parts) != 2 or not parts[0]:
                    raise ValueError(f"{path}, line {n}: expected 'qid<TAB>query' lines.")
                if (
                    not rows
                    and parts[0].strip().lower() in _HEADER_IDS
                    and parts[1].strip().lower() in QUERY_TEXT_KEYS
                ):
                    continue  # a header row
                rows.append((parts[0], parts[1]))
        topics = pd.DataFrame(rows, columns=["qid", "query"], dtype=object)
        dup = topics["qid"][topics["qid"].duplicated()]
        if len(dup):
            raise ValueError(f"{path}: query ids repeat ({_sample(set(dup))}); each query needs its own id.")
        return topics

    def get_topics(self, variant: str | None = None) -> pd.DataFrame:
        """``qid`` and ``query`` (str); for a BEIR split, the queries it judges (in the file's order)."""
        if self._topics is None:
            topics = self._read_topics()
            judged = set(self.get_qrels()["qid"])
            unknown = judged - set(topics["qid"])
            if unknown:
                warnings.warn(
                    f"{len(unknown)} judged queries in {self.qrels_path} are not in {self.topics_path} (e.g. "
                    f"{_sample(unknown)}): they cannot be evaluated; add them to the topics or use the matching "
                    "qrels.",
                    stacklevel=2,
                )
            if self.judged_topics_only:
                topics = topics[topics["qid"].isin(judged)].reset_index(drop=True)
            self._topics = topics
        return self._topics.copy()

    def get_qrels(self, variant: str | None = None) -> pd.DataFrame:
        """``qid``, ``docno`` (str) and ``label`` (int) from TREC qrels or a BEIR TSV (with its header)."""
        if self._qrels is None:
            self._qrels = _read_qrels(self.qrels_path)
        return self._qrels.copy()


def _trec_topics(path: Path) -> list[tuple[str, str]]:
    """(qid, title) of a TREC topic file (``<top> <num> Number: 301 <title> ... </top>``), as trec_eval's
    collections give them; the title is the query."""
    with _open(path) as f:
        text = f.read()
    rows: list[tuple[str, str]] = []
    for block in re.findall(r"<top>(.*?)</top>", text, flags=re.S | re.I):
        num = re.search(r"<num>\s*(?:Number:)?\s*(\S+)", block, flags=re.I)
        title = re.search(r"<title>\s*(?:Topic:)?(.*?)(?=<[a-z]+>|$)", block, flags=re.S | re.I)
        if num is None or title is None:
            raise ValueError(f"{path}: a <top> block without <num> or <title>: {block.strip()[:80]!r}.")
        rows.append((num.group(1), " ".join(title.group(1).split())))
    if not rows:
        raise ValueError(f"{path}: no <top> ... </top> topics found.")
    return rows


def _read_qrels(path: Path) -> pd.DataFrame:
    rows: list[tuple[str, str, int]] = []
    layout = "'qid 0 docno label' (TREC) or 'query-id corpus-id score' (BEIR TSV, with a header)"
    width = 0
    for n, line in _lines(path):
        parts = line.split()
        if not width:
            width = len(parts)
            if width not in (3, 4):
                raise ValueError(f"{path}, line {n}: expected {layout}.")
            if parts[0].lower() in _HEADER_IDS and not parts[-1].lstrip("-").isdigit():
                continue  # a header row (BEIR's query-id corpus-id score)
        if len(parts) != width:
            raise ValueError(f"{path}, line {n}: expected {width} columns like the first line: {layout}.")
        if not parts[-1].lstrip("-").isdigit():
            raise ValueError(f"{path}, line {n}: the label {parts[-1]!r} must be an integer.")
        rows.append((parts[0], parts[-2], int(parts[-1])))
    if not rows:
        raise ValueError(f"Qrels file {path} has no judgments.")
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    qrels["label"] = qrels["label"].astype(int)
    return qrels


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


def _files(spec: str) -> LocalDataset:
    parts = [p.strip() for p in spec.removeprefix("files:").split(",")]
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"{spec!r}: expected files:CORPUS,TOPICS,QRELS (three paths, comma-separated).")
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
