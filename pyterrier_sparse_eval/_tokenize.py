"""Lexical analysis: the Analyzer that indexing and retrieval use, memoised per distinct raw token.

By default it is Lucene's: Anserini's English analyzer (StandardTokenizer per UAX #29, possessive filter,
lowercasing, Lucene's 33 English stopwords, Lucene's Porter stemmer), or with ``language=`` the Lucene analyzer
Anserini uses for that language (see :mod:`pyterrier_sparse_eval.analysis`). A corpus costs one tokenizer pass
per document and one dict lookup per token: each distinct raw token goes through the filter chain once.

``tokenizer="word"`` with ``stemmer="snowball:porter"`` is the analysis of releases before Lucene parity
(``\\w+`` words joined by inner apostrophes and periods, Snowball's Porter); indexes built with it keep it.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import Stemmer

from .analysis import LANGUAGES, Language, get_language, tokenize_texts
from .analysis._english import LUCENE_ENGLISH_STOPWORDS, porter_stems, strip_possessive

__all__ = [
    "Analyzer",
    "EnglishOptionsError",
    "LUCENE_ENGLISH_STOPWORDS",
    "ANALYZER_VERSION",
    "MARKS_SEARCHED_WITHOUT",
]

# The "word" tokenizer (releases before Lucene parity): Unicode word characters, with inner apostrophes and
# periods kept ("don't", "3.14", "u.s").
_TOKEN_RE = re.compile(r"\w+(?:[.'\u2019]\w+)*")
_POSSESSIVE_RE = re.compile(r"['\u2019]s$")

_STEMMER_NONE = {None, "none", False}
_TOKENIZERS = ("standard", "word")

#: bumped whenever the analysis of some text changes (tokens, stopwords, stemming): indexes and caches
#: built by another version are then rebuilt rather than reused. 2: Lucene's StandardTokenizer and Porter.
#: 3 (2026-11-29): long tokens cut as Lucene cuts them, keycaps, the characters of Unicode newer than Lucene's.
#: 4: Lucene's tokens with newer Unicode in the installed ``regex`` (with regex 2026.5.9: six reserved code points,
#: U+1FB93 and U+1FBFB-U+1FBFF, now emoji; number signs such as U+0600 Format again, U+FE10/U+FE14 MidNum again;
#: with 2026.11.19 also 578 characters Lucene puts in no token). 5: U+19DA a South-East-Asian letter, U+1FBF0-U+1FBF9
#: emoji (tokens of their own, as in Lucene; digits joined to letters before). 6 (2026-12-03): a letter-emoji (Ⓜ, 🅰,
#: ...) joined by ZWJ to an emoji is one token; Porter, and the Thai tokenizer's buffers, count UTF-16 units;
#: Kuromoji's compound splits after a long unknown or punctuation run; Japanese and Thai read a character Java 17
#: leaves unassigned as an unassigned one.
ANALYZER_VERSION = 6
#: recorded with an index of these languages: their chain changed on 2026-11-29, so an index recorded without it
#: is told apart (the CLI's cache key changes: a new entry is built). yo: the English analyzer before, Lucene's
#: WhitespaceAnalyzer since, as Anserini indexes it (an index without the mark is refused: its terms are not the
#: queries'); ar, fa: lone tatweels had been dropped, they are Lucene's empty term since (in lengths and the
#: document count; queries are analysed as before, so such an index is still searched)
#: ja (2026-12-02): one surface's dictionary entries in Lucene's order, which decides ties between paths of equal
#: cost (an index without the mark is refused by a BM25: its terms may not be the queries')
_CHAIN_MARKS = {
    "yo": {"chain": "whitespace"},
    "ar": {"chain": "empty-term"},
    "fa": {"chain": "empty-term"},
    "ja": {"chain": "entry-order"},
}
#: the languages whose index without its mark is still searched (queries are analysed as before)
MARKS_SEARCHED_WITHOUT = ("ar", "fa")


def missing_mark(recorded: dict[str, Any]) -> str | None:
    """For an analyzer config recorded with an index: the chain mark of its language that it lacks and a BM25
    needs to search it (its terms may not be this version's), else None."""
    language = recorded.get("language")
    mark = _CHAIN_MARKS.get(language, {}).get("chain") if isinstance(language, str) else None
    if mark is None or language in MARKS_SEARCHED_WITHOUT or recorded.get("chain") == mark:
        return None
    return f"{language} analysis without {mark!r}"


#: tokens an analyzer (and a retriever's token-to-term-id memo) keeps before starting afresh
MAX_CACHE = 2_000_000


class EnglishOptionsError(ValueError):
    """Options that customise the English analyzer (tokenizer, lowercase, stopwords, stemmer) given with another
    language's analyzer."""


class Analyzer:
    """Turns text into index terms, as Lucene's analyzer for the language does.

    Args:
        language: ISO 639-1 code of a Lucene analyzer (``"en"``, ``"fr"``, ``"zh"``, ...; see
            ``pse.analysis.LANGUAGES``; any case, a region dropped: ``"fr-FR"`` is ``"fr"``). The options below
            customise English only; other languages are Lucene's chains as they are.
        tokenizer: ``"standard"`` (Lucene's StandardTokenizer, UAX #29 word boundaries: "1,000,000" is one token)
            or ``"word"`` (``\\w+`` words joined by inner ``'`` and ``.``: the analysis before Lucene parity).
        lowercase: lowercase tokens.
        stopwords: ``"lucene"`` (Lucene's 33 English stopwords, Anserini's default), ``"terrier"`` (Terrier's
            733-word list, PyTerrier's and PISA's default), ``None`` for none, or any iterable of words
            (compared after lowercasing, before stemming).
        stemmer: ``"porter"`` (Lucene's PorterStemFilter: Porter's reference implementation), a Snowball
            algorithm from PyStemmer (``"english"`` = Porter2, ``"french"``, ...; ``"snowball:porter"`` is
            Snowball's Porter), or ``None``.

    Example:
        >>> Analyzer()("The runner's shoes were running.")
        ['runner', 'shoe', 'were', 'run']
        >>> Analyzer()("It's 1,000,000 analogies, e.g. U.S.A.")
        ['1,000,000', 'analog', 'e.g', 'u.s.a']
    """

    def __init__(
        self,
        language: str = "en",
        *,
        tokenizer: str = "standard",
        lowercase: bool = True,
        stopwords: str | Iterable[str] | None = "lucene",
        stemmer: str | None = "porter",
    ):
        self.language = get_language(language).code
        self._lang: Language = LANGUAGES[self.language]
        english = self._lang.term is LANGUAGES["en"].term
        custom = (tokenizer, lowercase, stopwords, stemmer) != ("standard", True, "lucene", "porter")
        if custom and not english:
            raise EnglishOptionsError(
                f"tokenizer/lowercase/stopwords/stemmer customise the English analyzer; language={language!r} is "
                "Lucene's analyzer for that language as it is (leave them at their defaults)."
            )
        if tokenizer not in _TOKENIZERS:
            raise ValueError(f"tokenizer must be 'standard' or 'word', got {tokenizer!r}.")
        self.tokenizer = tokenizer
        self.lowercase = lowercase
        self.stopwords = stopwords
        self.stemmer = stemmer
        self._stop = _resolve_stopwords(stopwords)
        self._stemmer: Any = None
        if isinstance(stemmer, str) and stemmer not in ("none", "porter"):
            name = stemmer[len("snowball:") :] if stemmer.startswith("snowball:") else stemmer
            if name not in Stemmer.algorithms():
                raise ValueError(
                    f"Unknown stemmer {stemmer!r}; choose 'porter' (Lucene's), one of {sorted(Stemmer.algorithms())} "
                    "(Snowball, also as 'snowball:NAME') or None."
                )
            self._stemmer = Stemmer.Stemmer(name)
        # the chain as Lucene has it: unchanged for the default English analyzer and for other languages
        self._lucene = not custom
        # raw token -> final term ("" for a dropped token); bounded so that huge vocabularies cannot grow it forever
        self._cache: dict[str, str] = {}

    def __getstate__(self) -> dict[str, Any]:
        # sent to other processes (Ray workers) without the memo, and without the language chain and the Snowball
        # stemmer (closures and a C object that cannot be pickled), which are found again from their names
        return {**self.__dict__, "_cache": {}, "_stemmer": None, "_lang": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lang = LANGUAGES[self.language]
        if isinstance(self.stemmer, str) and self.stemmer not in ("none", "porter"):
            self._stemmer = Stemmer.Stemmer(self.stemmer.removeprefix("snowball:"))

    @property
    def compiled_rule(self) -> int | None:
        """The compiled ASCII scanner's rule for this analyzer (1: UAX #29, 0: the "word" rule), or None when
        its tokens cannot be found that way (whitespace and dictionary tokenizers)."""
        if self._lang.tokenizer != "standard":
            return None
        return 1 if self.tokenizer == "standard" else 0

    @property
    def lowercases(self) -> bool:
        """Whether every token is lowercased (the compiled scanner may then lowercase ASCII text in place)."""
        return self.lowercase and self._lang.lowercases

    def config(self) -> dict[str, Any]:
        """A JSON-serialisable description, stored with an index so queries get the same analysis."""
        if self.language != "en" and self._lucene:
            return {
                "language": self.language,
                "version": ANALYZER_VERSION,
                **_CHAIN_MARKS.get(self.language, {}),
            }
        stop = self.stopwords
        if stop is not None and not isinstance(stop, str):
            stop = sorted(self._stop)
        config: dict[str, Any] = {"lowercase": self.lowercase, "stopwords": stop, "stemmer": self.stemmer}
        if self.language != "en":
            config["language"] = self.language
        return {**config, "tokenizer": self.tokenizer, "version": ANALYZER_VERSION}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Analyzer:
        config = dict(config)
        mark = config.pop("chain", None)
        if config.get("language") == "yo" and mark is None:
            raise ValueError(
                f"This index was built with the English analyzer for language={config['language']!r}, as releases "
                "before 2026-11-29 analysed it; Anserini analyses that language with Lucene's WhitespaceAnalyzer, as "
                "this release does: build it again (pse.BM25(language=...).indexer(index, mode='overwrite'))."
            )
        # recorded before Lucene parity: the word tokenizer, Snowball's Porter
        if config.pop("version", 1) == 1:
            config.setdefault("tokenizer", "word")
            if config.get("stemmer") == "porter":
                config["stemmer"] = "snowball:porter"
        return cls(**config)

    def __repr__(self) -> str:
        if self.language != "en" and self._lucene:
            return f"Analyzer(language={self.language!r})"
        stop = self.stopwords if self.stopwords is None or isinstance(self.stopwords, str) else "custom"
        lang = f"language={self.language!r}, " if self.language != "en" else ""
        return (
            f"Analyzer({lang}tokenizer={self.tokenizer!r}, lowercase={self.lowercase}, stopwords={stop!r}, "
            f"stemmer={self.stemmer!r})"
        )

    def __call__(self, text: str) -> list[str]:
        return self.analyze_batch([text])[0]

    def analyze_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """Analyse many texts at once (distinct tokens are analysed once per batch, then memoised), as queries are:
        without the empty term (:attr:`empty_term`), which only indexing keeps."""
        raw = self.tokenize_batch(texts)
        cache, empty = self._cache, self.empty_term
        self.learn(raw)
        if empty is not None:
            return [[term for term in map(cache.__getitem__, toks) if term and term != empty] for toks in raw]
        return [[term for term in map(cache.__getitem__, toks) if term] for toks in raw]

    @property
    def empty_term(self) -> str | None:
        """The term that stands for Lucene's empty term in this language's documents (Arabic and Persian: a lone
        tatweel, which normalisation empties; :attr:`Language.empty`): indexed, never a query term."""
        return self._lang.empty if self._lucene else None

    def tokenize_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """The raw tokens of each text, before the per-token filters (stopping, stemming, ...)."""
        if self.tokenizer == "word":
            if self.lowercase:
                return [_TOKEN_RE.findall(t.lower()) if t else [] for t in texts]
            return [_TOKEN_RE.findall(t) if t else [] for t in texts]
        return tokenize_texts(self._lang, texts)

    def learn(self, raw: Iterable[Iterable[str]]) -> list[str]:
        """Make sure every raw token's term is memoised; returns the tokens that were new (sorted)."""
        new = _new_tokens(raw, self._cache)
        if not new:
            return []
        ordered = sorted(new)
        self._learn(ordered)
        return ordered

    def term_of(self, token: str) -> str:
        """The term of a raw token already seen by :meth:`learn` ("" for a dropped token)."""
        return self._cache[token]

    def terms(self, tokens: list[str]) -> list[str]:
        """The term of each raw token ("" for a dropped token), without the memo of :meth:`learn`: for callers
        that keep their own (the compiled token tables)."""
        if self._lucene:
            return list(self._lang.term(tokens))
        if self.tokenizer == "word":
            return self._terms_word(tokens)
        return self._terms_english(tokens)

    def _learn(self, tokens: list[str]) -> None:
        self._cache.update(zip(tokens, self.terms(tokens)))

    def _stem(self, words: list[str]) -> list[str]:
        if self.stemmer == "porter":
            return porter_stems(words)
        return self._stemmer.stemWords(words) if self._stemmer is not None else words

    def _terms_english(self, tokens: list[str]) -> list[str]:
        # Lucene's order: possessive, lowercase, stop, stem
        from .analysis import lower_java

        words = [strip_possessive(t) for t in tokens]
        if self.lowercase:
            words = lower_java(words)
        keep = [i for i, w in enumerate(words) if w and w not in self._stop]
        out = [""] * len(tokens)
        for i, term in zip(keep, self._stem([words[i] for i in keep])):
            out[i] = term
        return out

    def _terms_word(self, tokens: list[str]) -> list[str]:
        # the analysis before Lucene parity (tokens are already lowercased by tokenize_batch when configured)
        stripped = [_POSSESSIVE_RE.sub("", t) for t in tokens]
        stemmed = self._stem(stripped)
        return ["" if (not base or base in self._stop) else term for base, term in zip(stripped, stemmed)]


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


def _new_tokens(raw: Iterable[Iterable[str]], memo: dict[str, Any]) -> set[str]:
    """The tokens of ``raw`` missing from ``memo``; a memo that would grow past :data:`MAX_CACHE` is cleared first
    (then every token of ``raw`` is new)."""
    new = set(itertools.chain.from_iterable(raw))
    new.difference_update(memo)
    if new and len(memo) + len(new) > MAX_CACHE:
        memo.clear()
        new = set(itertools.chain.from_iterable(raw))
    return new
