"""Reading local collection files: lines of plain or gzipped UTF-8 text, JSONL records, and the TSV, TREC and JSON
layouts of documents, topics and qrels, each refused with the file, the line and the fix when it is not one
(:mod:`~pyterrier_sparse_eval.collections` assembles them into datasets)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyterrier as pt

__all__ = [
    "DOC_ID_KEYS",
    "FieldError",
    "QUERY_ID_KEYS",
    "QUERY_TEXT_KEYS",
    "json_doc",
    "json_topic",
    "parse_qrels",
    "qrels_frame",
    "topics_frame",
    "tsv_docs",
    "tsv_topics",
]

DOC_ID_KEYS = ("_id", "docno", "doc_id", "docid", "id")
QUERY_ID_KEYS = ("_id", "qid", "query_id")
QUERY_TEXT_KEYS = ("text", "query", "title")
#: the version of how local and hf: documents are read, in their index cache key: 2 (2026-12-03) ends lines at \n
#: only, skips a byte-order mark starting any line, reads JSON NaN and hf: CSV/TSV/JSONL fields as written
READER_VERSION = 2
_INTEGER = re.compile(r"[+-]?[0-9]+")
#: a judgment's label: an integer, or written as a whole float (2.0), as trec_eval's atoi reads both
_LABEL = re.compile(r"[+-]?[0-9]+(\.0*)?")
#: what separates the fields of a TREC or BEIR line: ASCII whitespace, as C's isspace for trec_eval (str.split()
#: would also split on a no-break space, U+0085 or U+2003, which ids may hold)
_FIELD_SPACE = re.compile(r"[ \t\n\r\f\v]+")
_HEADER_IDS = {"_id", "id", "docno", "doc_id", "docid", "pid", "qid", "query_id", "query-id"}


class FieldError(KeyError):
    """Documents, topics or a frame lack a field (or id) they need; the message names the fix."""

    def __str__(self) -> str:  # KeyError's repr-quoting hides the message
        return str(self.args[0]) if self.args else ""


def _open(path: Path, data: bytes | None = None) -> IO[str]:
    """The file as UTF-8 text, a byte-order mark skipped; only ``\n`` ends a line (``\r\n`` too), as the lines
    are counted (Python's default would also end one at a ``\r`` inside a text, making up a record there)."""
    if data is not None:  # a pipe's bytes, read once (gunzipped when they are gzip's)
        return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="\n")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="\n")
    return open(path, encoding="utf-8-sig", newline="\n")


#: what reading a file that is not UTF-8, or a gzip file cut short or damaged, raises
_UNREADABLE = (UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile)


def encoding_fix(path: Path, head: bytes | None = None) -> str:
    """How to make a file that is not UTF-8 readable, told by its first bytes (``head``, else read from ``path``):
    UTF-16 (PowerShell's ``>`` writes it) converted from UTF-16, gzip named *.gz, anything else from Latin-1."""
    if head is None:
        head = b""
        with contextlib.suppress(OSError), open(path, "rb") as f:
            head = f.read(2)
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "it is UTF-16 text: convert it first, e.g. iconv -f utf-16 -t utf-8."
    if head[:2] == b"\x1f\x8b" and path.suffix != ".gz":
        return "it is gzip-compressed: name it *.gz."
    return "convert it first, e.g. iconv -f latin1 -t utf-8."


def _unreadable(path: Path, e: BaseException, where: str = "") -> ValueError:
    """The error for a file :data:`_UNREADABLE` was raised reading, naming it and the fix."""
    if isinstance(e, UnicodeDecodeError):
        fix = encoding_fix(path)
        return ValueError(
            f"{path}{where}: not UTF-8 text ({e.reason}, byte {e.object[e.start : e.end]!r}); {fix}"
        )
    with contextlib.suppress(OSError), open(path, "rb") as f:
        if path.suffix == ".gz" and f.read(2) != b"\x1f\x8b":
            return ValueError(f"{path}: not gzip-compressed, though named *.gz ({e}); rename it without .gz.")
    return ValueError(
        f"{path}{where}: the gzip file is cut short or damaged ({e}); copy or download it again."
    )


def _lines(path: Path, data: bytes | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline) for each non-blank line (of ``data``, a pipe's bytes, when given);
    a file that is not UTF-8, or a gzip file cut short or damaged, is refused naming the file and the line
    reached."""
    n = 0
    try:
        with _open(path, data) as f:
            for n, line in enumerate(f, 1):
                # a byte-order mark starting a later line: files joined with cat, each with its own
                line = line.rstrip("\r\n").removeprefix("\ufeff")
                if line.strip():
                    yield n, line
    except _UNREADABLE as e:
        raise _unreadable(path, e, f", after line {n}" if n else "") from None


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
    unit: str = "line",
) -> str:
    """The first of ``keys`` the record has, as a string; ids must be JSON strings or integers (``kinds`` counts
    which, for :func:`_warn_mixed_ids`)."""
    for k in keys:
        value = record.get(k)
        if value is None or str(value).strip() == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            whole = isinstance(value, float) and value.is_integer()
            raise FieldError(
                f"{where}, {unit} {n}: the {what} {value!r} is a {'JSON ' if unit == 'line' else ''}"
                f"{type(value).__name__}; ids must be strings (or integers): write it as "
                f"{json.dumps(str(int(value)) if whole else str(value))}"
                + (
                    " (pandas makes an integer column with a gap float: fill it and cast, .astype('int64'))."
                    if whole
                    else "."
                )
            )
        if kinds is not None:
            kinds["number" if isinstance(value, int) else "string"] += 1
        return str(value).strip()  # as TSV ids and qrels ids (split on whitespace) are read
    raise FieldError(
        f"{where}, {unit} {n}: no {what} (looked for {' / '.join(repr(k) for k in keys)}; the record has "
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
    """A JSON field's text: null, and NaN (which json.dumps writes for pandas' missing values), are missing."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _check_file(path: Path, what: str) -> Path:
    """``path``, a regular file: a folder, or a pipe (read more than once here), is refused naming the fix."""
    if path.is_dir():
        raise IsADirectoryError(f"{what} file {path} is a directory: give the {what.lower()} file in it.")
    if path.exists() and not path.is_file():
        raise ValueError(
            f"{what} file {path} is not a regular file (a pipe?): it is read more than once; save it to a file "
            "and give that."
        )
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}.")
    return path


def _sample(ids: set[str] | list[str]) -> str:
    return ", ".join(repr(i) for i in sorted(ids)[:3])


def json_doc(
    rec: dict[str, Any], where: Any, n: int, kinds: Counter[str] | None = None, unit: str = "line"
) -> tuple[int, str, str, str]:
    """(line, docno, title, text) of a JSON document (``_id``/``docno``/``doc_id``/``docid``/``id``, ``title``,
    ``text``; Anserini's JsonCollection ``id`` and ``contents`` too); errors name the ``unit`` ``n`` (a line of a
    file, or a row of a collection read through the ``datasets`` library)."""
    field = "text" if "text" in rec else "contents" if "contents" in rec else None
    if field is None:
        raise FieldError(
            f"{where}, {unit} {n}: the document has no 'text' field (it has {sorted(rec)}); "
            "BEIR corpora need 'text' (and optionally 'title'), Anserini's JsonCollection 'contents'."
        )
    for name in ("title", field):
        if isinstance(rec.get(name), (list, dict)):  # str() would index its Python repr
            raise FieldError(
                f"{where}, {unit} {n}: the document's {name!r} is a JSON {type(rec[name]).__name__}; give a string "
                "(e.g. join a list of passages with spaces)."
            )
    docno = _pick(rec, DOC_ID_KEYS, where, n, "document id", kinds, unit)
    return n, docno, _text(rec.get("title")), _text(rec[field])


def tsv_docs(lines: Iterable[tuple[int, str]], where: Any) -> Iterator[tuple[int, str, str, str]]:
    """(line, docno, title, text) of ``docno<TAB>text`` or ``docno<TAB>title<TAB>text`` lines (a header row,
    such as ``id<TAB>text``, is skipped; one of ``id<TAB>text<TAB>title``, DPR's, reads that order)."""
    columns, swapped = 0, False
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
                if len(parts) > 3:
                    raise ValueError(
                        f"{where}, line {n}: the header names {len(parts)} columns; corpus lines are docno<TAB>text "
                        f"or docno<TAB>title<TAB>text: remove the other columns ({', '.join(parts[3:])!s})."
                    )
                swapped = names[1:] == ["text", "title"]
                if names[1:] != ["title", "text"][-(columns - 1) :] and not swapped:
                    layout = "docno<TAB>text" if columns == 2 else "docno<TAB>title<TAB>text (or text, title)"
                    raise ValueError(
                        f"{where}, line {n}: the header {line.strip()!r} does not name the columns as read: "
                        f"{layout}; rename them so, or remove the header (then read as docno, title, text)."
                    )
                continue
            # docno, title, text and more: the others would be read into the text
            if len(parts) > 3:
                raise ValueError(
                    f"{where}, line {n}: {len(parts)} tab-separated columns; corpus lines are docno<TAB>text or "
                    "docno<TAB>title<TAB>text: remove the other columns (if texts hold tabs, start the file with "
                    "its header row, 'docno<TAB>text' or 'docno<TAB>title<TAB>text')."
                )
        docno, *rest = line.split("\t", columns - 1)
        if len(rest) != columns - 1 or not docno.strip():
            raise ValueError(
                f"{where}, line {n}: expected {columns} tab-separated columns like the first line"
                + (
                    " (read as docno, title, text: if the first document's text holds a tab, start the file with "
                    "the header row 'docno<TAB>text')."
                    if columns == 3
                    else "."
                )
            )
        title, text = (rest[0], rest[-1]) if columns == 3 else ("", rest[-1])
        yield (
            (n, docno.strip(), text, title) if swapped else (n, docno.strip(), title, text)
        )  # ids: no whitespace


def _trec_topics(path: Path) -> list[tuple[str, str]]:
    """(qid, title) of a TREC topic file (``<top> <num> Number: 301 <title> ... </top>``), as trec_eval's
    collections give them; the title is the query."""
    try:
        with _open(path) as f:
            text = f.read()
    except _UNREADABLE as e:
        raise _unreadable(path, e) from None
    rows: list[tuple[str, str]] = []
    # a block ends at its </top>, or where the next begins (a </top> left out had run two topics into one)
    for block in (re.split(r"</top>", b, flags=re.I)[0] for b in re.split(r"<top>", text, flags=re.I)[1:]):
        # both with and without closing tags (<num> 301 <title> ... as in TREC's files, or <num>301</num>)
        num = re.search(r"<num>\s*(?:Number:)?\s*([^\s<]+)", block, flags=re.I)
        title = re.search(r"<title>\s*(?:Topic:)?(.*?)(?=</?[a-z]+>|$)", block, flags=re.S | re.I)
        if num is None or title is None:
            raise ValueError(f"{path}: a <top> block without <num> or <title>: {block.strip()[:80]!r}.")
        # line breaks and ASCII spaces are one space; a no-break space (U+00A0, U+202F: "1 000") stays, as in
        # Anserini's TrecTopicReader (it joins words and digits for the tokenizer)
        rows.append((num.group(1), re.sub(r"[\x00-\x20]+", " ", title.group(1)).strip(" ")))
    if not rows:
        raise ValueError(f"{path}: no <top> ... </top> topics found.")
    if len(rows) != len(re.findall(r"</top>", text, flags=re.I)):
        warnings.warn(
            f"{path}: some <top> blocks have no </top>; each was read up to the next <top>.", stacklevel=3
        )
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
    if isinstance(text, (list, dict, bool)):  # str() would search its Python repr
        raise FieldError(
            f"{where}, line {n}: the query's text is a JSON {type(text).__name__}; give a string."
        )
    return _pick(rec, QUERY_ID_KEYS, where, n, "query id", kinds), _text(text)


def tsv_topics(lines: Iterable[tuple[int, str]], where: Any) -> list[tuple[str, str]]:
    """(qid, query) of ``qid<TAB>query`` lines (a ``qid<TAB>query`` header row is skipped)."""
    rows: list[tuple[str, str]] = []
    for n, line in lines:
        qid, *query = line.split("\t")
        while len(query) > 1 and not query[-1]:  # trailing tabs (an empty query keeps its one)
            query.pop()
        if len(query) != 1 or not qid.strip():  # a third column (a description, answers) is not the query's
            raise ValueError(f"{where}, line {n}: expected 'qid<TAB>query' lines (two columns: cut -f1,2).")
        qid = qid.strip()
        if not rows and qid.lower() in _HEADER_IDS and query[0].strip().lower() in QUERY_TEXT_KEYS:
            continue  # a header row
        rows.append((qid, query[0]))
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
    first = True
    for n, line in lines:
        # ids stripped as the corpus and topics readers strip them (of a no-break space too); a line of three
        # tab-separated fields is BEIR's TSV, read on tabs as BEIR reads it (an id may hold a space)
        tabbed = line.strip("\r\n").split("\t")
        fields = tabbed if len(tabbed) == 3 else _FIELD_SPACE.split(line.strip(" \t\n\r\f\v"))
        parts = [p.strip() for p in fields]
        if not width:
            width = len(parts)
            if width not in (3, 4):
                raise ValueError(f"{where}, line {n}: expected {layout}.")
            if parts[0].lower() in _HEADER_IDS and not _LABEL.fullmatch(parts[-1]):
                first = False
                continue  # a header row (BEIR's query-id corpus-id score)
        if len(parts) != width:
            like = "'qid 0 docno label' (TREC)" if width == 4 else "'query-id corpus-id score' (BEIR TSV)"
            raise ValueError(f"{where}, line {n}: expected {width} columns like the first line: {like}.")
        # as trec_eval's atoi reads it: +1 too
        if not _LABEL.fullmatch(parts[-1]):
            header = " (a header row? remove it, or name its first column query-id)" if first else ""
            raise ValueError(f"{where}, line {n}: the label {parts[-1]!r} must be an integer{header}.")
        first = False
        rows.append((parts[0], parts[-2], int(parts[-1].split(".")[0])))
    return qrels_frame(rows, where)


def qrels_frame(rows: list[tuple[str, str, int]], where: Any) -> pd.DataFrame:
    """The qrels frame of (qid, docno, label) rows; none at all is a ValueError."""
    if not rows:
        raise ValueError(f"Qrels {where} have no judgments.")
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    qrels["label"] = qrels["label"].astype(int)
    return qrels


def _as_text(value: Any) -> str:
    """A field's text: strings as they are; UTF-8 bytes decoded; None, NaN and pandas' NA as "" (missing, never
    the word "nan"); numbers as written (a whole float as an int: a numeric column with a gap is read as floats);
    a list, dict or array refused (its repr is not a text)."""
    if type(value) is str:
        return value
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating)) and value != value):
        return ""
    if isinstance(value, (bytes, bytearray)):  # str() would index its repr, "b'caf\\xc3\\xa9'"
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(
                f"A text (a document's or a query's) is bytes that are not UTF-8 ({e}): decode them first, e.g. "
                "text.decode('latin-1')."
            ) from None
    # str() would index the repr of a list, a dict or an array
    if isinstance(value, (list, tuple, dict, set, frozenset, np.ndarray, pd.Series)):
        raise ValueError(
            f"A text (a document's or a query's) is a {type(value).__name__}, not a string: {str(value)[:60]!r}. "
            "Join its parts into one string first, e.g. ' '.join(parts)."
        )
    # a column of whole numbers with a missing value is read as floats: 5.0 was written 5
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)  # a number, e.g. a title column read as int


def column_texts(frame: pd.DataFrame, column: str) -> list[str]:
    """A frame's text column as :func:`_as_text` reads each (``query``: a topic's), the row named by its ``qid``
    (or ``docno``) when one is refused."""
    texts = []
    for i, value in enumerate(frame[column].tolist()):
        try:
            texts.append(_as_text(value))
        except ValueError as e:
            key = next((k for k in ("qid", "docno") if k in frame.columns), None)
            where = f"{key} {frame[key].iloc[i]!r}" if key else f"row {i + 1}"
            raise ValueError(f"The {column!r} of {where}: {e}") from None
    return texts


class ResultFrameError(pt.validate.InputValidationError, ValueError):
    """A result frame given to a retriever: PyTerrier's validation error (so that pt.Experiment's check of a
    pipeline before it runs still refuses it), with a message naming what to give."""

    def __str__(self) -> str:
        return str(self.args[0])


def validate_queries(
    inp: pd.DataFrame, transformer: Any, columns: Sequence[str] = ("query_toks", "query")
) -> None:
    """PyTerrier's check that the input of a retriever (or of SPLADE's query encoder, the first stage of its
    retriever: ``columns=("query",)``) is a query frame with one of ``columns``; a result frame
    (``first % 50 >> retriever``) is told that a retriever does not re-rank, and what to give (pt's own refusal
    named no fix)."""
    try:
        with pt.validate.any(inp) as v:
            for column in columns:
                v.query_frame(extra_columns=[column], mode=column)
    except pt.validate.InputValidationError as e:
        if "docno" not in inp.columns:
            raise
        role = (
            "retrieves" if "query_toks" in columns else "encodes the queries for a retriever that retrieves"
        )
        toks = " or an encoder's query_toks frame" if "query_toks" in columns else ""
        raise ResultFrameError(
            f"{transformer!r} {role} from its index for each query; it does not re-rank a result frame (this one "
            f"has {list(inp.columns)}). Give it the queries: topics (qid, query){toks}, e.g. topics >> retriever, "
            "not first_stage >> retriever; to combine two systems' results: first + retriever (PyTerrier's sum of "
            "their scores).",
            e.modes,
        ) from None
