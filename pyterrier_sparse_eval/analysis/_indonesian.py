"""Indonesian as Anserini 0.22.1 analyses it (``-language id``): Lucene 9.5's ``IndonesianAnalyzer``.

The chain (``IndonesianAnalyzer.createComponents``): StandardTokenizer, LowerCaseFilter, StopFilter (Lucene's
``id/stopwords.txt``, from appendix D of Tala's thesis), SetKeywordMarkerFilter (empty set: no effect),
IndonesianStemFilter with derivational stemming on.

:func:`indonesian_stem` ports Lucene's ``IndonesianStemmer``, which implements the stemmer of Fadillah Z. Tala,
"A Study of Stemming Effects on Information Retrieval in Bahasa Indonesia" (M.Sc. thesis, University of
Amsterdam, 2003; Tala's adaptation of the Porter stemmer to Indonesian): particles (-kah, -lah, -pun), possessive
pronouns (-ku, -mu, -nya), first-order prefixes (meng-, meny-, men-, mem-, me-, peng-, peny-, pen-, pem-, di-,
ter-, ke-), second-order prefixes (ber-, be-, per-, pe-) and suffixes (-kan, -an, -i), each only while the word
keeps more than two vowels ("syllables"). Lucene works on Java ``char`` s, so the port works on UTF-16 units
(a supplementary character counts two, as in Lucene's length tests).
"""

from __future__ import annotations

from ._base import Language, from_utf16_units, lower_java, read_word_list, utf16_units

__all__ = ["INDONESIAN", "LANGUAGES", "indonesian_stem", "indonesian_terms"]

_VOWELS = frozenset("aeiou")
_KE, _PENG, _DI, _MENG, _TER, _BER, _PE = 1, 2, 4, 8, 16, 32, 64  # IndonesianStemmer's flags


def _first_order_prefix(s: str) -> tuple[str, int]:
    """removeFirstOrderPrefix: the word without the prefix and the flag of the removed prefix (0: none)."""
    n = len(s)
    if s.startswith("meng"):
        return s[4:], _MENG
    if s.startswith("meny") and n > 4 and s[4] in _VOWELS:
        return "s" + s[4:], _MENG
    if s.startswith(("men", "mem")):
        return s[3:], _MENG
    if s.startswith("me"):
        return s[2:], _MENG
    if s.startswith("peng"):
        return s[4:], _PENG
    if s.startswith("peny") and n > 4 and s[4] in _VOWELS:
        return "s" + s[4:], _PENG
    if s.startswith("peny"):
        return s[4:], _PENG
    if s.startswith("pen") and n > 3 and s[3] in _VOWELS:
        return "t" + s[3:], _PENG
    if s.startswith(("pen", "pem")):
        return s[3:], _PENG
    if s.startswith("di"):
        return s[2:], _DI
    if s.startswith("ter"):
        return s[3:], _TER
    if s.startswith("ke"):
        return s[2:], _KE
    return s, 0


def _second_order_prefix(s: str) -> tuple[str, int, bool]:
    """removeSecondOrderPrefix: the word, the flag set (0: none) and whether a prefix was removed."""
    n = len(s)
    if s.startswith("ber") or (n == 7 and s == "belajar"):
        return s[3:], _BER, True
    if s.startswith("be") and n > 4 and s[2] not in _VOWELS and s[3] == "e" and s[4] == "r":
        return s[2:], _BER, True
    if s.startswith("per") or (n == 7 and s == "pelajar"):
        return s[3:], 0, True
    if s.startswith("pe"):
        return s[2:], _PE, True
    return s, 0, False


def _suffix(s: str, flags: int) -> str:
    """removeSuffix: -kan (not after ke-, peng-, pe-), -an (not after di-, meng-, ter-), -i (not -si; not after
    ber-, ke-, peng-)."""
    if s.endswith("kan") and not flags & (_KE | _PENG | _PE):
        return s[:-3]
    if s.endswith("an") and not flags & (_DI | _MENG | _TER):
        return s[:-2]
    if s.endswith("i") and not s.endswith("si") and not flags & (_BER | _KE | _PENG):
        return s[:-1]
    return s


def indonesian_stem(word: str, derivational: bool = True) -> str:
    """Lucene's ``IndonesianStemmer.stem`` on a lowercase word (``derivational``: also prefixes and suffixes, as
    IndonesianAnalyzer does)."""
    s = utf16_units(word)
    syllables = sum(c in _VOWELS for c in s)
    if syllables > 2 and s.endswith(("kah", "lah", "pun")):  # particle
        s, syllables = s[:-3], syllables - 1
    if syllables > 2:  # possessive pronoun
        if s.endswith(("ku", "mu")):
            s, syllables = s[:-2], syllables - 1
        elif s.endswith("nya"):
            s, syllables = s[:-3], syllables - 1
    if not derivational or syllables <= 2:
        return from_utf16_units(s)
    flags = 0
    s, flag = _first_order_prefix(s)
    if flag:  # a rule fired: suffix, then (if a suffix went) a second-order prefix
        flags |= flag
        syllables -= 1
        if syllables > 2:
            shorter = _suffix(s, flags)
            if shorter != s:
                s, syllables = shorter, syllables - 1
                if syllables > 2:
                    s = _second_order_prefix(s)[0]
    else:  # second-order prefix, then suffix
        s, flag, removed = _second_order_prefix(s)
        if removed:
            flags |= flag
            syllables -= 1
        if syllables > 2:
            s = _suffix(s, flags)
    return from_utf16_units(s)


_STOP: list[frozenset[str]] = []


def _stopwords() -> frozenset[str]:
    if not _STOP:
        # Lucene's WordlistLoader.getWordSet(reader, "#"): one word a line, "#" lines are comments
        _STOP.append(read_word_list("lucene/id_stopwords.txt"))
    return _STOP[0]


def indonesian_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's IndonesianAnalyzer for raw StandardTokenizer tokens (``""`` = dropped)."""
    stop = _stopwords()
    return ["" if t in stop else indonesian_stem(t) for t in lower_java(tokens)]


INDONESIAN = Language(
    code="id", name="Indonesian", lucene="Lucene 9.5 IndonesianAnalyzer", term=indonesian_terms
)

LANGUAGES: dict[str, Language] = {"id": INDONESIAN}
