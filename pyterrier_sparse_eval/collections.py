"""Collections held as local files, next to ``irds:`` identifiers.

- ``beir:PATH[:SPLIT]``: a BEIR folder (``corpus.jsonl[.gz]`` with ``_id``, ``title``, ``text``;
  ``queries.jsonl[.gz]`` with ``_id``, ``text``; ``qrels/SPLIT.tsv`` with the header ``query-id corpus-id
  score``; default split ``test``). As ``ir_datasets``' BEIR: the topics are the queries judged in the split.
- ``files:CORPUS,TOPICS,QRELS``: a corpus as JSONL (``_id``/``docno``/``doc_id``/``docid``, ``title``, ``text``) or TSV
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
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

__all__ = ["FieldError", "LocalDataset", "is_local_spec", "load_local", "LOCAL_PREFIXES"]

LOCAL_PREFIXES = ("beir:", "files:")
DOC_ID_KEYS = ("_id", "docno", "doc_id", "docid")
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
        return gzip.open(path, "rt", encoding="utf-8-sig")  # utf-8, a byte-order mark skipped
    return open(path, encoding="utf-8-sig")


#: what reading a file that is not UTF-8, or a gzip file cut short or damaged, raises
_UNREADABLE = (UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile)


def _unreadable(path: Path, e: BaseException, where: str = "") -> ValueError:
    """The error for a file :data:`_UNREADABLE` was raised reading, naming it and the fix."""
    if isinstance(e, UnicodeDecodeError):
        return ValueError(
            f"{path}{where}: not UTF-8 text ({e.reason}, byte {e.object[e.start : e.end]!r}); convert it first, "
            "e.g. iconv -f latin1 -t utf-8."
        )
    return ValueError(
        f"{path}{where}: the gzip file is cut short or damaged ({e}); copy or download it again."
    )


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline) for each non-blank line; a file that is not UTF-8, or a gzip
    file cut short or damaged, is refused naming the file and the line reached."""
    n = 0
    try:
        with _open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield n, line
    except _UNREADABLE as e:
        raise _unreadable(path, e, f", after line {n}") from None


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


def _pick(
    record: dict[str, Any],
    keys: tuple[str, ...],
    where: Any,
    n: int,
    what: str,
    kinds: Counter[str] | None = None,
) -> str:
    """The first of ``keys`` the record has, as a string; ids must be JSON strings or integers (``kinds`` counts
    which, for :func:`_warn_mixed_ids`)."""
    for k in keys:
        value = record.get(k)
        if value is None or str(value) == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise FieldError(
                f"{where}, line {n}: the {what} {value!r} is a JSON {type(value).__name__}; ids must be strings "
                f"(or integers): write it as {json.dumps(str(value))}."
            )
        if kinds is not None:
            kinds["number" if isinstance(value, int) else "string"] += 1
        return str(value)
    raise FieldError(
        f"{where}, line {n}: no {what} (looked for {' / '.join(repr(k) for k in keys)}; the record has "
        f"{sorted(record)}); rename the field to {keys[0]!r}."
    )


def _warn_mixed_ids(kinds: Counter[str], what: str, where: str) -> None:
    """A counted warning when a JSONL file writes some ids as numbers and others as strings."""
    if kinds["number"] and kinds["string"]:
        warnings.warn(
            f"{kinds['number']} of {kinds['number'] + kinds['string']} {what} ids in {where} are JSON numbers and "
            f"the others strings: every id is read as a string (7 -> '7'), so an id written '007' elsewhere will "
            "not match; write all ids as strings.",
            stacklevel=3,
        )


def _count_records(path: Path) -> int:
    """Non-blank lines of a corpus file (gzipped or not), less a TSV header row."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    count, first = 0, b""
    try:
        with opener(path, "rb") as f:
            for line in f:
                if line.strip():
                    if not count:
                        first = line
                    count += 1
    except _UNREADABLE as e:
        raise _unreadable(path, e) from None
    if count and not _is_jsonl(path):
        parts = first.decode("utf-8-sig", "replace").rstrip("\r\n").split("\t")
        if parts[0].strip().lower() in _HEADER_IDS:  # a header row (tsv_docs skips it or refuses it)
            count -= 1
    return count


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
        missing = judged - found
        if missing:
            warnings.warn(
                f"{len(missing)} of {len(judged)} judged documents in {self.qrels_name} are not in the corpus "
                f"(e.g. {_sample(missing)}): they count as relevant documents never retrieved; check that "
                "qrels and corpus belong together.",
                stacklevel=2,
            )

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


def json_doc(
    rec: dict[str, Any], where: Any, n: int, kinds: Counter[str] | None = None
) -> tuple[int, str, str, str]:
    """(line, docno, title, text) of a JSON document (``_id``/``docno``/``doc_id``/``docid``, ``title``, ``text``)."""
    if "text" not in rec:
        raise FieldError(
            f"{where}, line {n}: the document has no 'text' field (it has {sorted(rec)}); "
            "BEIR corpora need 'text' (and optionally 'title')."
        )
    docno = _pick(rec, DOC_ID_KEYS, where, n, "document id", kinds)
    return n, docno, _text(rec.get("title")), _text(rec["text"])


def tsv_docs(lines: Iterable[tuple[int, str]], where: Any) -> Iterator[tuple[int, str, str, str]]:
    """(line, docno, title, text) of ``docno<TAB>text`` or ``docno<TAB>title<TAB>text`` lines (a header row,
    such as ``id<TAB>text``, is skipped)."""
    columns = 0
    for n, line in lines:
        parts = line.split("\t")
        if not columns:
            columns = min(len(parts), 3)
            if columns < 2:
                raise ValueError(
                    f"{where}, line {n}: expected 'docno<TAB>text' (or docno, title, text) lines."
                )
            if parts[0].strip().lower() in _HEADER_IDS:  # a header row
                names = [p.strip().lower() for p in parts[:columns]]
                if names[1:] != ["title", "text"][-(columns - 1) :]:
                    layout = "docno<TAB>text" if columns == 2 else "docno<TAB>title<TAB>text"
                    raise ValueError(
                        f"{where}, line {n}: the header {line.strip()!r} does not name the text column; columns "
                        f"are read as {layout}: rename the header to that, or remove it."
                    )
                continue
        parts = line.split("\t", columns - 1)
        if len(parts) != columns or not parts[0]:
            raise ValueError(
                f"{where}, line {n}: expected {columns} tab-separated columns like the first line."
            )
        yield n, parts[0], parts[1] if columns == 3 else "", parts[-1]


def _trec_topics(path: Path) -> list[tuple[str, str]]:
    """(qid, title) of a TREC topic file (``<top> <num> Number: 301 <title> ... </top>``), as trec_eval's
    collections give them; the title is the query."""
    try:
        with _open(path) as f:
            text = f.read()
    except _UNREADABLE as e:
        raise _unreadable(path, e) from None
    rows: list[tuple[str, str]] = []
    for block in re.findall(r"<top>(.*?)</top>", text, flags=re.S | re.I):
        # both with and without closing tags (<num> 301 <title> ... as in TREC's files, or <num>301</num>)
        num = re.search(r"<num>\s*(?:Number:)?\s*([^\s<]+)", block, flags=re.I)
        title = re.search(r"<title>\s*(?:Topic:)?(.*?)(?=</?[a-z]+>|$)", block, flags=re.S | re.I)
        if num is None or title is None:
            raise ValueError(f"{path}: a <top> block without <num> or <title>: {block.strip()[:80]!r}.")
        rows.append((num.group(1), " ".join(title.group(1).split())))
    if not rows:
        raise ValueError(f"{path}: no <top> ... </top> topics found.")
    return rows


def json_topic(rec: dict[str, Any], where: Any, n: int, kinds: Counter[str] | None = None) -> tuple[str, str]:
    """(qid, query) of a JSON query (``_id``/``qid``/``query_id`` and ``text``/``query``/``title``)."""
    text = next((rec[k] for k in QUERY_TEXT_KEYS if k in rec), None)
    if text is None and any(k in rec for k in QUERY_TEXT_KEYS):
        raise FieldError(f"{where}, line {n}: the query's text is null; give it a text (a string).")
    if text is None:
        raise FieldError(
            f"{where}, line {n}: the query has no text (looked for {list(QUERY_TEXT_KEYS)}; it has "
            f"{sorted(rec)}); rename its field to 'text'."
        )
    return _pick(rec, QUERY_ID_KEYS, where, n, "query id", kinds), _text(text)


def tsv_topics(lines: Iterable[tuple[int, str]], where: Any) -> list[tuple[str, str]]:
    """(qid, query) of ``qid<TAB>query`` lines (a ``qid<TAB>query`` header row is skipped)."""
    rows: list[tuple[str, str]] = []
    for n, line in lines:
        parts = line.split("\t", 1)
        if len(parts) != 2 or not parts[0]:
            raise ValueError(f"{where}, line {n}: expected 'qid<TAB>query' lines.")
        if (
            not rows
            and parts[0].strip().lower() in _HEADER_IDS
            and parts[1].strip().lower() in QUERY_TEXT_KEYS
        ):
            continue  # a header row
        rows.append((parts[0], parts[1]))
    return rows


def topics_frame(rows: Iterable[tuple[str, str]], where: Any) -> pd.DataFrame:
    """``qid``, ``query`` (str) from (qid, query) pairs; a repeated qid is a ValueError."""
    topics = pd.DataFrame(list(rows), columns=["qid", "query"], dtype=object)
    dup = topics["qid"][topics["qid"].duplicated()]
    if len(dup):
        raise ValueError(f"{where}: query ids repeat ({_sample(set(dup))}); each query needs its own id.")
    return topics


def parse_qrels(lines: Iterable[tuple[int, str]], where: Any) -> pd.DataFrame:
    """``qid``, ``docno`` (str), ``label`` (int) from TREC qrels lines or a BEIR TSV (with its header)."""
    rows: list[tuple[str, str, int]] = []
    layout = "'qid 0 docno label' (TREC) or 'query-id corpus-id score' (BEIR TSV, with a header)"
    width = 0
    for n, line in lines:
        parts = line.split()
        if not width:
            width = len(parts)
            if width not in (3, 4):
                raise ValueError(f"{where}, line {n}: expected {layout}.")
            if parts[0].lower() in _HEADER_IDS and not parts[-1].lstrip("-").isdigit():
                continue  # a header row (BEIR's query-id corpus-id score)
        if len(parts) != width:
            raise ValueError(f"{where}, line {n}: expected {width} columns like the first line: {layout}.")
        if not parts[-1].lstrip("-").isdigit():
            raise ValueError(f"{where}, line {n}: the label {parts[-1]!r} must be an integer.")
        rows.append((parts[0], parts[-2], int(parts[-1])))
    return qrels_frame(rows, where)


def qrels_frame(rows: list[tuple[str, str, int]], where: Any) -> pd.DataFrame:
    """The qrels frame of (qid, docno, label) rows; none at all is a ValueError."""
    if not rows:
        raise ValueError(f"Qrels {where} have no judgments.")
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
