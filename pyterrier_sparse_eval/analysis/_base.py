"""What a language analyzer is: a tokenizer plus token filters, described so that indexing can memoise it.

Lucene analyzers are a tokenizer followed by token filters. Almost every filter maps one token to zero or one
token without looking at its neighbours (lowercasing, normalisation, stopwords, stemming), so the project
applies such a chain once per *distinct* raw token and memoises it (:attr:`Language.term`). Filters that look
at neighbours (CJK bigrams) go in :attr:`Language.sequence`; whole-text tokenizers (Japanese, Thai) in
:attr:`Language.tokenize`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

__all__ = ["Language", "Token", "read_word_list"]


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
    with Unicode's simple case mapping. Python's ``str.lower`` differs in two places only: it turns a final
    capital sigma into ς (Java: σ) and İ into i + combining dot (Java: i)."""
    joined = "".join(tokens)
    if "\u03a3" in joined or "\u0130" in joined:
        return [_lower(t) for t in tokens]
    return list(map(str.lower, tokens))


def _lower(token: str) -> str:
    if "\u03a3" in token or "\u0130" in token:
        return "".join("i" if c == "\u0130" else c.lower() for c in token)
    return token.lower()
