"""The text fields of documents: which to index (given, the dataset's own, or title and text), the later batches
watched for a field the first had none of, the warnings of text left out or missing, and the texts joined."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ._records import FieldError, _as_text
from .measures._warn import user_stacklevel

__all__ = ["DEFAULT_DOC_FIELDS", "resolve_fields", "watch_fields", "warn_empty", "doc_texts"]

# Document fields joined (with a space) into the indexed text by default: BEIR's title + " " + text.
DEFAULT_DOC_FIELDS = ("title", "text")


def resolve_fields(
    docs: dict[str, Any] | Sequence[dict[str, Any]],
    fields: Sequence[str] | None,
    hint: str | None = None,
    default: Sequence[str] | None = None,
) -> tuple[str, ...]:
    """The text fields to index, judged from a sample of documents (a list, e.g. the first batch, or one).

    ``fields`` when given (one at least must occur in the sample: a field first found after it is watched by
    :func:`watch_fields`); else those of ``default`` the sample has (the dataset's own, :func:`dataset_doc_fields`);
    else ``title`` and ``text``, each kept when any sampled document has it (BEIR's title + " " + text): a first
    document without a text field does not decide for the whole corpus. A field left out that holds more text
    than those taken (a ``body``, an ``abstract``) is warned of. ``hint``: the call that names the fields, for the
    errors (default BM25's).
    """
    sample = [docs] if isinstance(docs, dict) else list(docs)
    keys = set().union(*(d.keys() for d in sample)) if sample else set()
    if fields is not None:
        missing = [f for f in fields if f not in keys]
        if len(missing) == len(fields):
            raise FieldError(
                f"Documents have no field(s) {missing}; available: {sorted(keys)}. Name fields they have, e.g. "
                f"{hint or 'pse.BM25(fields=[...])'}."
            )
        return tuple(fields)
    chosen = tuple(f for f in default or () if f in keys)
    if chosen:
        return chosen
    chosen = tuple(f for f in DEFAULT_DOC_FIELDS if any(_as_text(d.get(f)) for d in sample))
    if not chosen:
        chosen = tuple(f for f in DEFAULT_DOC_FIELDS if f in keys)
    if not chosen:
        text_like = sorted({k for d in sample for k, v in d.items() if isinstance(v, str) and k != "docno"})
        raise FieldError(
            f"Documents have neither 'title' nor 'text' (fields: {sorted(keys)}); name the fields to index, e.g. "
            + (
                f"{hint}."
                if hint
                else f"pse.BM25(fields={text_like[:2]}) (SPLADE: splade.indexer(index, fields=[...]))."
            )
        )
    _warn_left_out(sample, chosen, hint)
    return chosen


def _warn_left_out(sample: list[dict[str, Any]], chosen: tuple[str, ...], hint: str | None) -> None:
    """With no ``text`` field, warn of the fields not in ``chosen`` (ids and URLs apart) that hold more of the
    sample's text (msmarco-document's ``body`` beside its ``title``)."""
    if "text" in chosen:  # the text itself (TREC's marked-up copy of it apart)
        return

    def size(field: str) -> int:
        return sum(len(v) for d in sample if isinstance(v := d.get(field), str))

    taken = sum(size(f) for f in chosen)
    keys = dict.fromkeys(k for d in sample for k in d)
    ids = ("docno", "doc_id", "_id", "id")
    left = [
        k for k in keys if k not in chosen and k not in ids and "url" not in k.lower() and size(k) > taken
    ]
    if left:
        warnings.warn(
            f"The documents hold more text in {' + '.join(map(repr, left))} than in the field"
            f"{'s' * (len(chosen) > 1)} indexed by default, {' + '.join(map(repr, chosen))}: to index "
            f"{'it' if len(left) == 1 else 'them'}, name the fields ({hint or 'pse.BM25(fields=[...])'}), e.g. "
            f"fields={[*chosen, *left]}. (pse.datasets.corpus_iter gives an irds: dataset's own fields.)",
            stacklevel=user_stacklevel(),
        )


def watch_fields(batches: Iterator[list[dict[str, Any]]], indexer: Any) -> Iterator[Any]:
    """``batches``, counting in ``indexer.late_fields_`` ({field: documents}) the documents after the first batch
    with text in a field the first batch had none of (``indexer.fields_`` is set while the first batch is used):
    of the fields given (``indexer.fields``; none for ``toks``), those; with none given (None), a default field
    (``title``, ``text``) not chosen. See :func:`warn_empty`."""
    given = getattr(indexer, "fields", ())
    indexer.late_fields_ = counts = {}
    first = next(batches, None)
    if first is None:
        return
    yield first
    chosen = getattr(indexer, "fields_", None) or DEFAULT_DOC_FIELDS
    if given is None and getattr(indexer, "default_fields_", None):  # the dataset's own fields
        watched = []
    elif given is None:
        watched = [f for f in DEFAULT_DOC_FIELDS if f not in chosen]
    else:
        watched = [f for f in given if not any(_as_text(d.get(f)) for d in first)]
    counts.update(dict.fromkeys(watched, 0))
    for batch in batches:
        for f in watched:
            counts[f] += sum(1 for d in batch if _as_text(d.get(f)))
        yield batch


def warn_empty(
    empty: int,
    total: int,
    fields: Sequence[str],
    late: dict[str, int] | None = None,
    given: bool = False,
    pruned: str = "",
) -> None:
    """Say once how many documents had no text in the indexed fields; and, of the fields the first batch had no
    text in (``late``, from :func:`watch_fields`), a default one that later documents have (not indexed), or one
    ``given`` that no document has (a misspelt name?). ``pruned``: the pruning that can also leave a document no
    term (a model's ``doc_threshold``)."""
    for field, n in (late or {}).items():
        if given and not n:
            warnings.warn(
                f"No document has text in the field {field!r} given in fields={list(fields)}: is it misspelt? The "
                f"index holds the other field{'s' * (len(fields) > 2)}.",
                stacklevel=3,
            )
        elif not given and n:
            warnings.warn(
                f"{n:,} of {total:,} documents have text in {field!r}, which is not indexed: the fields were chosen "
                f"from the first batch ({' + '.join(map(repr, fields))}), where no document has it. To index it, "
                f"build again with fields={sorted({*fields, field}, key=DEFAULT_DOC_FIELDS.index)}.",
                stacklevel=3,
            )
    if empty:
        warnings.warn(
            f"{empty:,} of {total:,} documents have no text in field{'s' * (len(fields) > 1)} "
            f"{' + '.join(map(repr, fields))} (missing, None, NaN or blank; "
            f"for a model, no text it encodes{pruned}): they are indexed empty and can never be retrieved.",
            stacklevel=3,
        )


def doc_texts(docs: Sequence[dict[str, Any]], fields: Sequence[str]) -> tuple[list[str], int]:
    """Each document's ``fields`` joined by a space, and how many have none (missing, None, NaN, blank: "")."""
    texts, empty = [], 0
    try:
        if len(fields) == 1:
            f = fields[0]
            for d in docs:
                text = _as_text(d.get(f))
                empty += not text or text.isspace()
                texts.append(text)
            return texts, empty
        for d in docs:
            parts = [_as_text(d.get(f)) for f in fields]
            empty += all(not p or p.isspace() for p in parts)
            texts.append(" ".join(parts))
    except ValueError as e:  # name the document
        raise ValueError(f"Document {d.get('docno', '(no docno)')!r}: {e}") from None
    return texts, empty
