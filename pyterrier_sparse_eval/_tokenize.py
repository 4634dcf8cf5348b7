"""Lexical analysis: lowercasing, Unicode word tokenisation, stopwords and Snowball/Porter stemming.

The default pipeline mirrors the analyzer Anserini uses for its BEIR "flat" BM25 regressions (Lucene's
``EnglishAnalyzer`` chain): Unicode word tokens, English possessive removal, lowercasing, Lucene's 33-word
English stopword list, and the original Porter stemmer. Stemming goes through PyStemmer (the Snowball C
implementations), memoised per distinct token, so a corpus costs one regex pass per document and one dict
lookup per token; there is no per-character Python.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import Stemmer

__all__ = ["Analyzer", "LUCENE_ENGLISH_STOPWORDS"]

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (the default of Anserini's BEIR regressions).
LUCENE_ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

# Unicode word characters, with inner apostrophes and periods kept as Unicode's word-break rules do
# ("don't", "3.14", "u.s"). `\w` is Unicode-aware for str patterns.
_TOKEN_RE = re.compile(r"\w+(?:[.'\u2019]\w+)*")
# Lucene's EnglishPossessiveFilter removes a trailing 's (and the curly-quote variant).
_POSSESSIVE_RE = re.compile(r"['\u2019]s$")

_STEMMER_NONE = {None, "none", False}

#: bumped whenever the analysis of some text changes (tokens, stopwords, stemming): indexes and caches
#: built by another version are then rebuilt rather than reused
ANALYZER_VERSION = 1
_MAX_CACHE = 2_000_000


class Analyzer:
    """Turns text into index terms.

    Args:
        lowercase: lowercase the text before tokenising.
        stopwords: ``"lucene"`` (Lucene's 33 English stopwords, Anserini's default), ``"terrier"`` (Terrier's
            733-word list, PyTerrier's and PISA's default), ``None`` for none, or any iterable of words
            (compared after lowercasing, before stemming).
        stemmer: a PyStemmer algorithm name (``"porter"``, the original Porter stemmer as in Lucene's
            ``PorterStemFilter``; ``"english"``, Snowball's Porter2; ``"french"``, ...) or ``None``.

    Example:
        >>> Analyzer()("The runner's shoes were running.")
        ['runner', 'shoe', 'were', 'run']
    """

    def __init__(
        self,
        *,
        lowercase: bool = True,
        stopwords: str | Iterable[str] | None = "lucene",
        stemmer: str | None = "porter",
    ):
        self.lowercase = lowercase
        self.stopwords = stopwords
        self.stemmer = stemmer
        self._stop = _resolve_stopwords(stopwords)
        if stemmer in _STEMMER_NONE:
            self._stemmer = None
        else:
            if stemmer not in Stemmer.algorithms():
                raise ValueError(
                    f"Unknown stemmer {stemmer!r}; choose one of {sorted(Stemmer.algorithms())} or None."
                )
            self._stemmer = Stemmer.Stemmer(stemmer)
        # raw token -> final term ("" for a stopword); bounded so that huge vocabularies cannot grow it forever
        self._cache: dict[str, str] = {}

    def config(self) -> dict[str, Any]:
        """A JSON-serialisable description, stored with an index so queries get the same analysis."""
        stop = self.stopwords
        if stop is not None and not isinstance(stop, str):
            stop = sorted(self._stop)
        return {"lowercase": self.lowercase, "stopwords": stop, "stemmer": self.stemmer}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Analyzer:
        return cls(**config)

    def __repr__(self) -> str:
        stop = self.stopwords if self.stopwords is None or isinstance(self.stopwords, str) else "custom"
        return f"Analyzer(lowercase={self.lowercase}, stopwords={stop!r}, stemmer={self.stemmer!r})"

    def __call__(self, text: str) -> list[str]:
        return self.analyze_batch([text])[0]

    def analyze_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """Analyse many texts at once (distinct tokens are stemmed once per batch, then memoised)."""
        raw = self.tokenize_batch(texts)
        cache = self._cache
        self.learn(raw)
        return [[term for term in map(cache.__getitem__, toks) if term] for toks in raw]

    def tokenize_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """The raw tokens of each text (lowercased when configured), before stopping and stemming."""
        if self.lowercase:
            return [_TOKEN_RE.findall(t.lower()) if t else [] for t in texts]
        return [_TOKEN_RE.findall(t) if t else [] for t in texts]

    def learn(self, raw: Sequence[Sequence[str]]) -> list[str]:
        """Make sure every raw token's term is memoised; returns the tokens that were new (sorted)."""
        cache = self._cache
        new = set(itertools.chain.from_iterable(raw))
        new.difference_update(cache)
        if not new:
            return []
        if len(cache) + len(new) > _MAX_CACHE:
            cache.clear()
            new = set(itertools.chain.from_iterable(raw))
        ordered = sorted(new)
        self._learn(ordered)
        return ordered

    def term_of(self, token: str) -> str:
        """The term of a raw token already seen by :meth:`learn` ("" for a stopword)."""
        return self._cache[token]

    def _learn(self, tokens: list[str]) -> None:
        stripped = [_POSSESSIVE_RE.sub("", t) for t in tokens]
        stop = self._stop
        stemmed = self._stemmer.stemWords(stripped) if self._stemmer is not None else stripped
        for tok, base, term in zip(tokens, stripped, stemmed):
            self._cache[tok] = "" if (not base or base in stop) else term


@functools.cache
def terrier_stopwords() -> frozenset[str]:
    """Terrier's standard English stopword list (733 words; PyTerrier's and PISA's default)."""
    text = resources.files("pyterrier_sparse_eval").joinpath("data/stopwords_terrier.txt").read_text("utf-8")
    return frozenset(w for w in text.split("\n") if w and not w.startswith("#"))


def _resolve_stopwords(stopwords: str | Iterable[str] | None) -> frozenset[str]:
    if stopwords is None or stopwords is False:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords == "lucene":
            return LUCENE_ENGLISH_STOPWORDS
        if stopwords == "none":
            return frozenset()
        if stopwords == "terrier":
            return terrier_stopwords()
        raise ValueError(
            f"Unknown stopword list {stopwords!r}; pass 'lucene', 'terrier', None, or an iterable of words."
        )
    return frozenset(w.lower() for w in stopwords)
