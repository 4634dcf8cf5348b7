"""Documents' terms and weights as arrays: the vocabulary's ids (:func:`term_ids`) and a batch of ``toks`` dicts
flattened (:func:`flatten_toks`), each refusing what an index cannot hold as it arrives, naming it, rather than at
the end of the build (a term UTF-8 cannot store failed the index's JSON, after the whole corpus was encoded)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from ._docno_checks import refuse_unencodable
from ._ray import Encoded

__all__ = ["flatten_toks", "query_weights", "term_ids"]


def term_ids(vocab: dict[str, int], terms: list[Any], names: list[str] | None = None) -> np.ndarray:
    """Map term strings to ids, growing ``vocab`` by the new ones in sorted order (and ``names``, the terms by id,
    when given)."""
    new = set(terms).difference(vocab)
    if new:
        if not all(map(str.__instancecheck__, new)):
            bad = next(t for t in new if not isinstance(t, str))
            raise TypeError(
                f"Terms must be strings, got {type(bad).__name__} {bad!r}; convert token ids to "
                "their vocabulary strings (e.g. tokenizer.convert_ids_to_tokens) before indexing."
            )
        ordered = sorted(new)
        refuse_unencodable(ordered, "term")
        vocab.update(zip(ordered, range(len(vocab), len(vocab) + len(ordered))))
        if names is not None:
            names.extend(ordered)
    return np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32, count=len(terms))


def flatten_toks(docnos: list[str], toks: list[dict[str, float]], missing: int = 0) -> Encoded:
    """{term: weight} dicts as an :data:`Encoded` batch (the same values and lengths as ``_build.add_toks``)."""
    for t in toks:
        if not isinstance(t, dict):
            raise TypeError(f"`toks` must be a dict of term -> weight, got {type(t).__name__}.")
    lengths = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
    offsets = np.zeros(len(toks) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # the batch's terms in first-seen order and each posting's place among them, in C (a generator per posting cost
    # a toks build 30% more); None and NaN, which factorize leaves out, refused as term_ids refuses other non-str
    flat = np.fromiter(itertools.chain.from_iterable(toks), dtype=object, count=int(offsets[-1]))
    idx, names = pd.factorize(flat)
    if (idx < 0).any():
        term_ids({}, flat[idx < 0][:1].tolist())
    try:
        weights = itertools.chain.from_iterable(t.values() for t in toks)
        values = np.fromiter(weights, dtype=np.float64, count=int(offsets[-1]))
    except (TypeError, ValueError, OverflowError):
        _refuse_weights(docnos, toks)
        raise
    if not np.isfinite(values).all():
        _refuse_weights(docnos, toks)
    owner = np.repeat(np.arange(len(toks)), lengths)
    doclen = np.bincount(owner, weights=values, minlength=len(toks))
    return docnos, list(names), idx.astype(np.int32), values, offsets, doclen, missing


def _refuse_weights(docnos: list[str], toks: list[dict[str, Any]]) -> None:
    """Refuse the first weight that is not a finite real number (None, NaN, a complex number, a list...), naming its
    document and term (numpy's conversion had said only that some value was NaN, or what it could not convert)."""
    for docno, t in zip(docnos, toks):
        for term, w in t.items():
            try:
                finite = math.isfinite(float(w))
            except (TypeError, ValueError, OverflowError):
                finite = False
            if not finite:
                raise ValueError(
                    f"Document {docno!r}: term {term!r} has weight {w!r} ({type(w).__name__}); `toks` weights "
                    "must be finite real numbers."
                )


def query_weights(vals: list[Any], cols: list[int], term_ids: dict[str, int]) -> np.ndarray:
    """A batch's query weights (of the term ids ``cols``) as float64, refusing the first that is no finite real
    number, named with its term (a list weight had failed in scipy: "data arrays must be 1-D")."""
    try:
        values = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        values = np.empty((0, 0))
    if values.ndim == 1 and np.isfinite(values).all():
        return values
    vocab = {i: term for term, i in term_ids.items()}
    for w, t in zip(vals, cols):
        try:
            finite = np.ndim(w) == 0 and math.isfinite(float(w))
        except (TypeError, ValueError, OverflowError):
            finite = False
        if not finite:
            raise ValueError(
                f"Query term {vocab[t]!r} has weight {w!r} ({type(w).__name__}); `query_toks` weights must be "
                "finite real numbers."
            )
    raise ValueError("`query_toks` weights must be finite real numbers.")
