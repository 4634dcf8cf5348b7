"""A batch's documents checked as it arrives: their fields (:func:`check_docs`), their docnos' types
(:func:`batch_docnos`), and duplicates, refused with 8 bytes per document (about 23 at the peak of a merge of the
largest runs).

An index refuses a docno given twice. The exact check sorts every docno once the corpus is read (``_spill``), which
for a corpus encoded by a model (SPLADE, on Ray) throws the whole encoding away at the end; here each batch's docnos
are hashed (64 bits) and looked up among those of the batches before, kept as sorted runs merged like a binary
counter (O(log n) runs, O(n log n) work in all). A hash found again is confirmed against the docnos written so far,
so a collision of two docnos' hashes (about n^2 / 2^65: 3e-6 at ten million documents) costs one read of them and
never refuses a corpus. It costs about 0.3 us a document: 4-14% of a BM25 build, whose analysis is that cheap (so
BM25 builds keep only the exact check at the end), nothing next to a model's encoding.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .datasets import FieldError

__all__ = [
    "SeenDocnos",
    "batch_docnos",
    "check_docs",
    "corpus_positions",
    "early_check",
    "iter_docs",
    "refuse_unencodable",
]


def refuse_unencodable(values: list[str], what: str = "docno") -> None:
    """Refuse a docno (or a term: ``what="term"``) UTF-8 cannot store (a lone surrogate, from
    ``errors='surrogateescape'``), naming it: the index's JSON could not be written at the end of the build."""
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        for d in values:
            try:
                d.encode("utf-8")
            except UnicodeEncodeError:
                source = "ids" if what == "docno" else "text"
                raise ValueError(
                    f"Invalid {what} {d!r}: it holds a lone surrogate, which UTF-8 cannot store (text decoded with "
                    f"errors='surrogateescape'?): decode the {source} as UTF-8, or replace those characters."
                ) from None


def check_docs(docs: list[dict[str, Any]], fields: Iterable[str], hint: str) -> None:
    """Every document has ``fields``; else an error naming the first that does not: by its docno, or without one
    by its place (in the batch; :func:`corpus_positions` makes it the corpus's)."""
    for position, doc in enumerate(docs):
        missing = [f for f in fields if f not in doc]
        if missing and "docno" in doc:
            raise FieldError(f"Document {doc['docno']!r} is missing {missing} (it has {sorted(doc)}). {hint}")
        if missing:
            raise _refused(FieldError, position, f"is missing {missing} (it has {sorted(doc)}). {hint}")


def early_check(encoder: dict[str, Any]) -> SeenDocnos | None:
    """The duplicate check of a build as its batches arrive, where a batch costs a model's encoding (SPLADE,
    precomputed toks); None for BM25, whose analysis is as cheap as the check (the exact check at the end
    serves)."""
    return None if encoder.get("type") == "bm25" else SeenDocnos()


def batch_docnos(batch: Sequence[dict[str, Any]]) -> list[str]:
    """The batch's docnos as str: str and whole numbers (``1`` is ``"1"``) as they are; a missing docno, and
    values whose text would match no qrels (bytes as ``"b'd1'"``, None as ``"None"``, NaN as ``"nan"``, a float
    column's ``"1.0"``), refused naming the document and the fix."""
    out = []
    for position, doc in enumerate(batch):
        docno = doc.get("docno") if isinstance(doc, Mapping) else None
        if isinstance(docno, str):
            out.append(str(docno))  # numpy's str_ too
        elif isinstance(docno, (int, np.integer)) and not isinstance(docno, (bool, np.bool_)):
            out.append(str(int(docno)))
        elif not isinstance(doc, Mapping) or "docno" not in doc:
            has = (
                f"it has {sorted(map(str, doc))[:8]}"
                if isinstance(doc, Mapping)
                else f"a {type(doc).__name__}"
            )
            raise _refused(FieldError, position, f"has no 'docno' field ({has}): give every document its id.")
        else:
            raise _refused(
                ValueError,
                position,
                f"has docno {docno!r} ({type(docno).__name__}): docnos are str (or whole numbers). Give them as "
                "text: df['docno'].astype(str) (a column of numbers with a gap is float: fill or drop the gap "
                "first), bytes decoded with .decode('utf-8').",
            )
    return out


def _refused(kind: type[Exception], position: int, detail: str) -> Exception:
    """An error about document ``position`` of a batch; :func:`corpus_positions` renames it by its place in the
    corpus (the attributes survive the pickling of a Ray task's error)."""
    error = kind(f"Document {position + 1} of a batch {detail}")
    error.batch_position, error.detail = position, detail  # type: ignore[attr-defined]
    return error


@contextlib.contextmanager
def corpus_positions(before: Callable[[], int]) -> Iterator[None]:
    """An indexing loop's refusal of a document names its place in the corpus (``before()``: the documents of
    the batches before the failing one), where a batch's encoder knows only its place in the batch."""
    try:
        yield
    except Exception as error:
        position, detail = getattr(error, "batch_position", None), getattr(error, "detail", None)
        if position is None or detail is None:
            raise
        raise type(error)(f"Document {before() + position + 1:,} of the corpus {detail}") from None


class SeenDocnos:
    """The docnos added so far, as hashes; :meth:`add` refuses a batch holding one of them, or one twice."""

    def __init__(self) -> None:
        self._runs: list[np.ndarray] = []

    def add(self, docnos: list[str], written: Callable[[set[str]], Iterable[str]]) -> None:
        """Record a batch; ``written(candidates)`` gives those of ``candidates`` among the docnos written before it
        (read back only when a hash is found again)."""
        if not docnos:
            return
        hashes = np.fromiter((hash(d) for d in docnos), dtype=np.int64, count=len(docnos))
        batch = np.sort(hashes)
        twice = set()
        if (batch[1:] == batch[:-1]).any():  # a hash twice in the batch: which docnos, exactly
            twice = {d for d, n in Counter(docnos).items() if n > 1}
        again = np.zeros(len(hashes), dtype=bool)
        for run in self._runs:
            at = np.minimum(np.searchsorted(run, hashes), len(run) - 1)
            again |= run[at] == hashes
        if again.any():
            twice |= set(written({d for d, hit in zip(docnos, again.tolist()) if hit}))
        if twice:
            raise ValueError(
                f"Duplicate docnos in the corpus, e.g. {sorted(twice)[:5]}; docnos must be unique."
            )
        self._runs.append(batch)
        while len(self._runs) > 1 and len(self._runs[-2]) <= 2 * len(self._runs[-1]):
            last = self._runs.pop()
            self._runs[-1] = np.sort(np.concatenate([self._runs[-1], last]), kind="mergesort")


def iter_docs(docs: Any) -> Iterator[dict[str, Any]]:
    """Documents from an iterable of dicts or a DataFrame (the first one checked to be a dict: a string's fields
    had been named as its letters)."""
    if isinstance(docs, pd.DataFrame):
        return iter(docs.to_dict(orient="records"))
    if isinstance(docs, (str, bytes, Mapping)):
        raise TypeError(
            f"Give the documents as an iterable of dicts or a DataFrame, not one {type(docs).__name__}."
        )
    it = iter(docs)
    first = next(it, it)  # the iterator itself: there is no first document
    if first is it:
        return iter(())
    if not isinstance(first, Mapping):
        raise TypeError(
            f"Documents must be dicts such as {{'docno': 'd1', 'text': '...'}} (or rows of a DataFrame), got a "
            f"{type(first).__name__}: {str(first)[:60]!r}."
        )
    return itertools.chain([first], it)
