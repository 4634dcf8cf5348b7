"""What a language analyzer is: a tokenizer plus token filters, described so that indexing can memoise it.

Lucene analyzers are a tokenizer followed by token filters. Almost every filter maps one token to zero or one
token without looking at its neighbours (lowercasing, normalisation, stopwords, stemming), so the project
applies such a chain once per *distinct* raw token and memoises it (:attr:`Language.term`). Filters that look
at neighbours (CJK bigrams) go in :attr:`Language.sequence`; whole-text tokenizers (Japanese, Thai) in
:attr:`Language.tokenize`.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

__all__ = [
    "Language",
    "Token",
    "as_java_17",
    "code_point_ranges",
    "decimal_digits",
    "from_utf16_units",
    "lower_java",
    "read_word_list",
    "utf16_len",
    "utf16_units",
]


class Token(NamedTuple):
    """A token as Lucene's StandardTokenizer emits it: text, type (``"<ALPHANUM>"``, ``"<NUM>"``,
    ``"<SOUTHEAST_ASIAN>"``, ``"<IDEOGRAPHIC>"``, ``"<HIRAGANA>"``, ``"<KATAKANA>"``, ``"<HANGUL>"``,
    ``"<EMOJI>"``) and character offsets [start, end) in the text."""

    text: str
    type: str
    start: int
    end: int


@dataclass(frozen=True)
class Language:
    """One language's analysis, equal to a Lucene analyzer.

    Attributes:
        code: ISO 639-1 code (``"fr"``).
        name: English name (``"French"``).
        lucene: what it reproduces, e.g. ``"Lucene 9.5 FrenchAnalyzer"``.
        term: maps a list of distinct raw tokens (as the tokenizer emits them, original case) to their terms,
            ``""`` for a dropped token; must depend on each token alone (it is memoised per token).
        tokenizer: ``"standard"`` (UAX #29, Lucene's StandardTokenizer), ``"whitespace"`` (Lucene's
            WhitespaceTokenizer) or ``"custom"`` (then :attr:`tokenize` is used).
        char_filter: applied to the text before tokenising (Lucene char filters), or None.
        sequence: a context-dependent step on the token list, run before :attr:`term` (CJK bigrams), or None.
        tokenize: whole-text tokenizer for ``tokenizer="custom"``: text -> raw tokens.
        extra: the optional dependency group it needs (``"ja"``), named in the ImportError when missing.
        lowercases: whether the chain lowercases every token (the compiled ASCII scanner may then lowercase
            the text in place, which saves memo entries).
        empty: the term :attr:`term` gives for a token that the chain empties but Lucene keeps as the empty
            term (Arabic and Persian normalisation of a lone tatweel): a document's term, counted in its length
            and document count as Lucene indexes it, never a query term (Anserini's queries leave empty terms
            out); None where no token is emptied.
    """

    code: str
    name: str
    lucene: str
    term: Callable[[list[str]], list[str]]
    tokenizer: str = "standard"
    char_filter: Callable[[str], str] | None = None
    sequence: Callable[[list[Token]], list[Token]] | None = None
    tokenize: Callable[[str], list[str]] | None = None
    extra: str | None = None
    lowercases: bool = True
    empty: str | None = None


def utf16_len(s: str) -> int:
    """The length of ``s`` in UTF-16 units (Java's ``String.length``)."""
    n = len(s)
    if s.isascii() or max(s) <= "\uffff":
        return n
    return n + sum(1 for c in s if c > "\uffff")


def utf16_units(s: str) -> str:
    """``s`` as Java holds it, one character per UTF-16 unit (a supplementary character becomes two lone
    surrogates)."""
    if s.isascii() or max(s) <= "\uffff":
        return s
    return "".join(map(chr, array("H", s.encode("utf-16-le", "surrogatepass"))))


def from_utf16_units(s: str) -> str:
    """Inverse of :func:`utf16_units`: surrogate pairs joined (a lone surrogate stays)."""
    if s.isascii() or not any("\ud800" <= c <= "\udfff" for c in s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def code_point_ranges(name: str) -> list[tuple[int, int]]:
    """The code point ranges of ``data/lucene/NAME`` (lines ``XXXX`` or ``XXXX-YYYY``, in hex; ``#`` comments)."""
    text = resources.files("pyterrier_sparse_eval").joinpath(f"data/lucene/{name}").read_text("utf-8")
    out = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            a, _, b = line.partition("-")
            out.append((int(a, 16), int(b or a, 16)))
    return out


@functools.cache
def _java_17_unassigned() -> dict[int, int]:
    # U+0378 is unassigned in every Unicode so far
    return {c: 0x378 for a, b in code_point_ranges("java17_unassigned.txt") for c in range(a, b + 1)}


def as_java_17(text: str) -> str:
    """``text`` with each character Java 17 (Unicode 13.0, Lucene's here) leaves unassigned and a later Unicode
    assigns as an unassigned one (U+0378), one for one: for an analyzer that classifies characters with Python's
    newer Unicode (``tools/make_java_unassigned.py``)."""
    return text if text.isascii() else text.translate(_java_17_unassigned())


def read_word_list(name: str, *, comment: str = "#") -> frozenset[str]:
    """A word list shipped in ``pyterrier_sparse_eval/data/`` (one word per line; Snowball lists put several
    words per line and comment with ``|``)."""
    text = resources.files("pyterrier_sparse_eval").joinpath(f"data/{name}").read_text("utf-8")
    words: set[str] = set()
    for line in text.splitlines():
        line = line.split(comment, 1)[0].strip()
        words.update(line.split())
    return frozenset(words)


def lower_java(tokens: Sequence[str]) -> list[str]:
    """Lowercase as Java's ``Character.toLowerCase`` (Lucene's LowerCaseFilter): code point by code point,
    with Unicode's simple case mapping. On the characters Lucene's tokenizer keeps (Unicode 12.1: see
    ``_standard``), Python's ``str.lower`` differs in two places only: it turns a final capital sigma into ς
    (Java: σ) and İ into i + combining dot (Java: i)."""
    joined = "".join(tokens)
    if "\u03a3" in joined or "\u0130" in joined:
        return [_lower(t) for t in tokens]
    return list(map(str.lower, tokens))


def _lower(token: str) -> str:
    if "\u03a3" in token or "\u0130" in token:
        return "".join("i" if c == "\u0130" else c.lower() for c in token)
    return token.lower()


#: The code points of digit zero of every run of ten decimal digits (general category Nd) in Java 17's
#: Unicode 13.0 tables, beyond ASCII. Fixed here rather than taken from :mod:`unicodedata`, whose Unicode
#: version follows Python's (3.11 has 14.0, which adds the Tangsa digits U+16AC0..U+16AC9; Java 17 leaves them).
_JAVA17_DIGIT_ZEROS = (
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0,
    0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50,
    0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50,
    0x11D50, 0x11DA0, 0x16A60, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0,
    0x1E950, 0x1FBF0,
)  # fmt: skip
_DIGIT_TABLE: dict[int, str] = {z + d: str(d) for z in _JAVA17_DIGIT_ZEROS for d in range(10)}
_DIGIT_FIRST = min(_JAVA17_DIGIT_ZEROS)


def decimal_digits(tokens: list[str]) -> list[str]:
    """Lucene's ``DecimalDigitFilter``: every non-ASCII decimal digit (``Character.isDigit``, i.e. general
    category Nd in Java 17) becomes the ASCII digit of its value (``Character.getNumericValue``); a digit
    outside the BMP (two UTF-16 units) becomes one ASCII digit, as Lucene deletes its low surrogate."""
    table = _DIGIT_TABLE
    first = chr(_DIGIT_FIRST)
    return [t.translate(table) if not t.isascii() and max(t) >= first else t for t in tokens]
