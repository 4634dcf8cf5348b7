"""TREC run and qrels files as trec_eval reads them: whitespace-separated fields, ids kept as written, labels as
integers; plain, gzip-compressed (by content, whatever the name), or a pipe."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._records import _HEADER_IDS, _UNREADABLE, _lines, _open, _unreadable, encoding_fix, parse_qrels

__all__ = ["read_qrels", "read_run", "refuse_spaced", "trec_run_text"]

#: compressions told by their first bytes (not by the name): those read here, and those refused naming the fix
_READABLE = {"bzip2": (lambda d: d[:3] == b"BZh" and d[4:10] in (b"1AY&SY", b"\x17rE8P\x90"), bz2.decompress),
             "xz": (lambda d: d[:6] == b"\xfd7zXZ\x00", lzma.decompress)}  # fmt: skip
_REFUSED = {"zip": b"PK\x03\x04", "zstd": b"\x28\xb5\x2f\xfd"}
_GZIP = b"\x1f\x8b"
#: a label as trec_eval's atoi reads it alike: an integer, "+2" and "2.0" too (not "1e1", which atoi reads as 1)
_LABEL = re.compile(r"[+-]?[0-9]{1,18}(\.0*)?")


def trec_bytes(path: str, kind: str) -> bytes | None:
    """None for a regular file read by name (plain, or gzip named *.gz); else the bytes of a pipe, a device
    (``/dev/stdin``, ``<(...)``) or a compressed file, read once and decompressed (gzip, bzip2 and xz, told by
    their first bytes; zip and zstd are refused naming the fix). A folder, or a path that is not there, is
    refused."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{kind} file {path} is a directory: give the {kind.lower()} file in it.")
    if not os.path.exists(path):
        stdin = " (to read standard input, give /dev/stdin)" if str(path) == "-" else ""
        raise FileNotFoundError(f"{kind} file not found: {path}{stdin}.")
    if os.path.isfile(path) and not os.path.abspath(path).startswith(("/dev/", "/proc/")):
        with open(path, "rb") as f:  # (/dev/stdin redirected from a file is a regular file too: read once)
            start = f.read(10)
        if str(path).endswith(".gz") or not (start[:2] == _GZIP or _compression(start)):
            return None
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == _GZIP:
        try:
            data = gzip.decompress(data)
        except _UNREADABLE as e:
            raise _unreadable(Path(path), e) from None
    name = _compression(data)
    if name in _REFUSED:
        raise ValueError(
            f"{kind} file {path} is {name}-compressed: decompress it, or compress it with gzip (read as it is)."
        )
    if name:
        try:
            data = _READABLE[name][1](data)
        except (EOFError, OSError, lzma.LZMAError) as e:
            raise ValueError(f"{kind} file {path}: the {name} data is cut short or damaged ({e}).") from None
    return data


def _compression(start: bytes) -> str:
    """The compression other than gzip (read apart) the first bytes of a file tell, or ""."""
    readable = (name for name, (test, _) in _READABLE.items() if test(start))
    refused = (name for name, magic in _REFUSED.items() if start.startswith(magic))
    return next(readable, "") or next(refused, "")


_FEEDS = bytes.maketrans(b"\f\v", b"  ")
_SEPARATORS = re.compile(r"[ \t]+")


def _read_trec(path: str, columns: int, layout: str, kind: str, data: bytes | None) -> pd.DataFrame | None:
    """A whitespace-separated TREC file (``data``: its bytes, when it is a pipe) as string columns, exactly as
    written ("NA" stays "NA", "007" stays "007"; a quote is part of an id, as trec_eval splits fields); None when
    empty. Not ``pt.io.read_results`` / ``read_qrels``: they parse the rank column as an integer (trec_eval ignores
    it) and read ids or tags such as "NA" and "null" as missing values, refusing runs that trec_eval reads."""
    expected = f"expected {columns} columns '{layout}' on every line"
    try:
        frame = pd.read_csv(
            path if data is None else io.BytesIO(data),
            # gzip by its name (a gzip file named otherwise comes as data); pandas would guess from any suffix
            compression="gzip" if data is None and str(path).endswith(".gz") else None,
            sep=r"\s+",
            header=None,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            engine="c",
            quoting=csv.QUOTE_NONE,
        )
    except pd.errors.EmptyDataError:
        return None
    except pd.errors.ParserError:  # a line with more fields than the first
        frame = None
    except UnicodeDecodeError as e:
        raise _not_utf8(path, data, kind, e) from None
    except _UNREADABLE as e:  # a .gz cut short (an interrupted copy) or damaged; not UTF-8 is caught above
        raise _unreadable(Path(path), e) from None
    if frame is not None and frame.empty:
        return None
    # "" pads lines with fewer fields
    if frame is None or frame.shape[1] != columns or (frame == "").to_numpy().any():
        raw = data if data is not None else _raw_bytes(path)
        # trec_eval separates fields by any ASCII whitespace, pandas by spaces and tabs: form feeds and vertical
        # tabs are read as spaces (a line of them is blank), on this rare path only
        if b"\f" in raw or b"\v" in raw:
            return _read_trec(path, columns, layout, kind, raw.translate(_FEEDS))
        try:  # the line is named in the text as read; a byte that is not UTF-8 there (pandas stopped before it)
            where = _bad_line(path, data, columns)
        except UnicodeDecodeError as e:
            raise _not_utf8(path, data, kind, e) from None
        raise ValueError(f"{path} is not a TREC {kind.lower()} file{where}: {expected}.")
    return frame


def _not_utf8(path: str, data: bytes | None, kind: str, e: UnicodeDecodeError) -> ValueError:
    fix = encoding_fix(Path(path), None if data is None else data[:2])
    return ValueError(
        f"{path} is not UTF-8 text (byte {e.object[e.start]:#04x}): is it a TREC {kind.lower()} file? "
        f"{fix[0].upper()}{fix[1:]}"
    )


def _bad_line(path: str, data: bytes | None, columns: int) -> str:
    """Where the first line without ``columns`` fields is, split as pandas splits them, on spaces and tabs
    (pandas' parser names the line after a short first one); a line holding other whitespace says so."""
    with _open(Path(path), data) as f:
        for n, line in enumerate(f, 1):
            line = line.strip(" \t\r\n")
            count = len(_SEPARATORS.split(line)) if line else columns
            if count != columns:
                odd = sorted({repr(c) for c in line if c.isspace() and c not in " \t"})
                hint = f"; it holds {', '.join(odd)}, which separates no fields" if odd else ""
                return f", line {n} ({count} columns{hint})"
    return ""


def _raw_bytes(path: str) -> bytes:
    """A regular file's bytes, gunzipped when it is named *.gz (as :func:`_read_trec` reads it by name)."""
    if str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read()
    return Path(path).read_bytes()


def _line_number(path: str, row: int, data: bytes | None) -> int:
    """The line of the file (of ``data``, a pipe's bytes) holding the ``row``-th (0-based) record: blank lines
    hold none."""
    for i, (n, _) in enumerate(_lines(Path(path), data)):
        if i == row:
            return n
    return row + 1  # pragma: no cover - the file changed since it was read


def _is_nan(text: str) -> bool:
    try:
        return math.isnan(float(text))
    except ValueError:
        return False


def read_run(path: str) -> pd.DataFrame:
    """A TREC run file (``qid Q0 docno rank score tag``) as a ``qid``, ``docno``, ``score`` frame.

    Ids are kept as the strings written; the rank column is ignored (as trec_eval ignores it); an empty file
    gives an empty run. A pipe (``/dev/stdin``, ``<(...)``) is read too. Raises ``FileNotFoundError``,
    ``IsADirectoryError``, or a ``ValueError`` naming the expected layout or the bad score.
    """
    data = trec_bytes(path, "Run")
    frame = _read_trec(path, 6, "qid Q0 docno rank score tag", "Run", data)
    if frame is None:
        return pd.DataFrame(
            {
                "qid": pd.Series([], dtype=object),
                "docno": pd.Series([], dtype=object),
                "score": pd.Series([], dtype=np.float64),
            }
        )
    scores = pd.to_numeric(frame[4], errors="coerce")
    bad = scores.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        where = f"{path}, line {_line_number(path, row, data)}: the score (5th column) {frame[4].iloc[row]!r}"
        if _is_nan(frame[4].iloc[row]):
            raise ValueError(
                f"{where} is NaN, which trec_eval cannot rank ({int(bad.sum())} rows in all): drop those rows or "
                "give them a score."
            )
        header = (
            "; a header row? a TREC run file has none: remove it"
            if row == 0
            else "; trec_eval cannot rank it"
        )
        raise ValueError(f"{where} is not a number{header}.")
    return pd.DataFrame({"qid": frame[0], "docno": frame[2], "score": scores.astype(np.float64)})


def read_qrels(path: str) -> pd.DataFrame:
    """A TREC qrels file (``qid iteration docno label``), or a BEIR TSV, as a ``qid``, ``docno``, ``label`` (int)
    frame.

    Ids are kept as the strings written; a pipe is read too. Raises ``FileNotFoundError``, ``IsADirectoryError``,
    or a ``ValueError`` for an empty file, a wrong layout or a label that is not an integer (trec_eval reads
    labels as integers).
    """
    data = trec_bytes(path, "Qrels")
    try:
        frame = _read_trec(path, 4, "qid iteration docno label", "Qrels", data)
    except ValueError as e:
        try:  # a BEIR TSV ('query-id corpus-id score', with its header), as beir: and files: read it
            return parse_qrels(_lines(Path(path), data), path)
        except ValueError as beir:
            # a file with BEIR's header gets the BEIR reader's error, which names its bad row; any other, TREC's
            first = next((line.split() for _, line in _lines(Path(path), data)), [""])
            raise (beir if len(first) == 3 and first[0].lower() in _HEADER_IDS else e) from None
    if frame is None:
        raise ValueError(f"Qrels file {path} is empty.")
    bad = ~frame[3].str.fullmatch(_LABEL)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        header = "; a header row? a TREC qrels file has none: remove it" if row == 0 else ""
        raise ValueError(
            f"{path}, line {_line_number(path, row, data)}: the label (4th column) {frame[3].iloc[row]!r} must be an "
            f"integer (of at most 18 digits){header}."
        )
    labels = frame[3].str.replace(r"\.0*$", "", regex=True).astype(np.int64)
    return pd.DataFrame({"qid": frame[0], "docno": frame[2], "label": labels})


_SPACE = re.compile(r"\s")


def refuse_spaced(values: Iterable[Any], column: str, option: str = "") -> None:
    """A ValueError naming an id among ``values`` that holds whitespace, which a TREC run file (whitespace-separated
    fields) cannot hold; ``option`` names the argument that asked for run files."""
    ids = pd.unique(pd.Series(np.asarray(values, dtype=object)).astype(str))
    if not _SPACE.search("".join(ids)):
        return
    example = next(v for v in ids if _SPACE.search(v))
    fix = f" ({option} writes run files): rename it, or leave out {option}" if option else ""
    raise ValueError(f"A TREC run file cannot hold a {column} with whitespace, e.g. {example!r}{fix}.")


def trec_run_text(run: pd.DataFrame, tag: str) -> str:
    """A run as a TREC run file: ``qid Q0 docno rank score tag`` (rank from 1), scores at full float64 precision."""
    tag = "".join(c if not c.isspace() else "_" for c in tag) or "run"
    for column in ("qid", "docno"):
        refuse_spaced(run[column], column)
    lines = [
        f"{q} Q0 {d} {r + 1} {s!r} {tag}\n"
        for q, d, r, s in zip(
            run["qid"], run["docno"], run["rank"].tolist(), run["score"].astype(float).tolist()
        )
    ]
    return "".join(lines)
