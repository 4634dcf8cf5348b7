"""German as Anserini 0.22.1 analyses it (``-language de``): Lucene 9.5's ``GermanAnalyzer``.

The chain (``GermanAnalyzer.createComponents``): StandardTokenizer, LowerCaseFilter, StopFilter (the Snowball
German stop list shipped in Lucene, ``snowball/german_stop.txt``), SetKeywordMarkerFilter (empty set: no
effect), GermanNormalizationFilter, GermanLightStemFilter.

:func:`german_normalize` ports Lucene's ``GermanNormalizationFilter`` (the umlaut heuristics of Snowball's German2
algorithm) and :func:`german_light_stem` its ``GermanLightStemmer``, which implements the "UniNE" light stemmer
of Jacques Savoy, "Light Stemming Approaches for the French, Portuguese, German and Hungarian Languages"
(ACM SAC 2006); Lucene's code follows Savoy's (Copyright (c) 2005, Jacques Savoy, BSD licence). Both work on
Java ``char`` s (UTF-16 units), so a token holding a supplementary character is handled as its UTF-16 units
(:func:`~._base.utf16_units`), as Lucene does: its length checks count two units for such a character.
"""

from __future__ import annotations

from ._base import Language, from_utf16_units, lower_java, read_word_list, utf16_units

__all__ = ["GERMAN", "LANGUAGES", "german_light_stem", "german_normalize", "german_terms"]


# --- GermanNormalizationFilter ----------------------------------------------------------------------------------

# Lucene's states: ordinary, "stops u from entering umlaut state", umlaut (e may be deleted)
_N, _V, _U = 0, 1, 2
_UMLAUTS = {"ä": "a", "ö": "o", "ü": "u"}
_NORM_TRIGGERS = frozenset("eäöüß")


def german_normalize(token: str) -> str:
    """Lucene's ``GermanNormalizationFilter`` on one token: ß -> ss; ä, ö, ü -> a, o, u; 'ae', 'oe' -> a, o;
    'ue' -> u unless the u follows a vowel or q (a three-state automaton, ported as it is)."""
    if _NORM_TRIGGERS.isdisjoint(token):
        return token  # nothing to change: only e, ä, ö, ü and ß are ever rewritten
    out: list[str] = []
    state = _N
    for c in token:
        if c == "a" or c == "o":
            state = _U
        elif c == "u":
            state = _U if state == _N else _V
        elif c == "e":
            if state == _U:
                state = _V
                continue  # deleted
            state = _V
        elif c == "i" or c == "q" or c == "y":
            state = _V
        elif c in _UMLAUTS:
            c = _UMLAUTS[c]
            state = _V
        elif c == "ß":
            c = "ss"
            state = _N
        else:
            state = _N
        out.append(c)
    return "".join(out)


# --- GermanLightStemmer (Savoy's UniNE light stemmer) ------------------------------------------------------------

_ACCENTS = str.maketrans("äàáâöòóôïìíîüùúû", "aaaaooooiiiiuuuu")
_ST_ENDING = frozenset("bdfghklmnt")


def german_light_stem(word: str) -> str:
    """Lucene's ``GermanLightStemmer.stem`` on a lowercase word: accents folded (ä à á â -> a, ...), then step 1
    (-ern, -em/-en/-er/-es, -e, -s after b d f g h k l m n t) and step 2 (-est, -er/-en, -st after those)."""
    s = utf16_units(word)
    if not s.isascii():
        s = s.translate(_ACCENTS)
    s = _step2(_step1(s))
    return from_utf16_units(s)


def _step1(s: str) -> str:
    n = len(s)
    if n > 5 and s.endswith("ern"):
        return s[:-3]
    if n > 4 and s[-2] == "e" and s[-1] in "mnrs":
        return s[:-2]
    if n > 3 and s[-1] == "e":
        return s[:-1]
    if n > 3 and s[-1] == "s" and s[-2] in _ST_ENDING:
        return s[:-1]
    return s


def _step2(s: str) -> str:
    n = len(s)
    if n > 5 and s.endswith("est"):
        return s[:-3]
    if n > 4 and s[-2] == "e" and s[-1] in "rn":
        return s[:-2]
    if n > 4 and s.endswith("st") and s[-3] in _ST_ENDING:
        return s[:-2]
    return s


# --- the analyzer ----------------------------------------------------------------------------------------------

_STOP: list[frozenset[str]] = []


def _stopwords() -> frozenset[str]:
    if not _STOP:
        # Lucene's WordlistLoader.getSnowballWordSet: "|" starts a comment, several words a line
        _STOP.append(read_word_list("lucene/de_stopwords.txt", comment="|"))
    return _STOP[0]


def german_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's GermanAnalyzer for raw StandardTokenizer tokens (``""`` = dropped)."""
    stop = _stopwords()
    return ["" if t in stop else german_light_stem(german_normalize(t)) for t in lower_java(tokens)]


GERMAN = Language(code="de", name="German", lucene="Lucene 9.5 GermanAnalyzer", term=german_terms)

LANGUAGES: dict[str, Language] = {"de": GERMAN}
