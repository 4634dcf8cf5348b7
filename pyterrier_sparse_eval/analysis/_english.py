"""English as Anserini analyses it (``DefaultEnglishAnalyzer``), with Lucene's Porter stemmer.

The chain: StandardTokenizer, EnglishPossessiveFilter (a trailing ``'s``, ``’s`` or ``＇s`` is removed),
LowerCaseFilter, StopFilter (Lucene's 33 English stopwords), PorterStemFilter.

Lucene's ``PorterStemmer`` is Martin Porter's reference implementation (release 3 of his C/Java code), which
departs from the published algorithm that Snowball's ``porter`` implements in four places: words of one or two
letters are left alone ("bs" stays "bs"), ``-bli`` becomes ``-ble`` (not ``-abli`` -> ``-able``), ``-logi``
becomes ``-log``, and every double consonant but l, s, z is undoubled after ``-ed``/``-ing`` ("mislukking" ->
"misluk"). :func:`porter_stem` ports it; for speed, words that none of the departures can touch go
through PyStemmer's compiled ``porter`` (identical on them: ``tests/test_standard_tokenizer.py`` checks both
against Lucene's own stems).
"""

from __future__ import annotations

import re

import numpy as np
import Stemmer

from ._base import Language, from_utf16_units, lower_java, utf16_units

__all__ = ["LUCENE_ENGLISH_STOPWORDS", "porter_stem", "porter_stems", "strip_possessive", "ENGLISH"]

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (the default of Anserini's BEIR regressions).
LUCENE_ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)

_SNOWBALL_PORTER = Stemmer.Stemmer("porter")
# words where Porter's reference code and Snowball's porter may differ: -bli/-logi (step 2 departures) and the
# double consonants that only the reference code undoubles after -ed/-ing (it undoubles every one but l, s, z;
# Snowball only bb dd ff gg mm nn pp rr tt)
_DEPARTS = re.compile(r"bl|log|cc|hh|jj|kk|qq|vv|ww|xx|yy")
_APOSTROPHES = ("'", "\u2019", "\uff07")


def strip_possessive(token: str) -> str:
    """Lucene's EnglishPossessiveFilter: drop a trailing 's / 'S after ', ’ or ＇."""
    if len(token) >= 2 and token[-1] in "sS" and token[-2] in _APOSTROPHES:
        return token[:-2]
    return token


def porter_stems(words: list[str]) -> list[str]:
    """Lucene's Porter stems of lowercase words (see the module docstring)."""
    out = _SNOWBALL_PORTER.stemWords(words)
    if not words:
        return out
    # the words the departures may touch, found in one pass over the joined words (no per-word Python call)
    joined = "\n".join(words)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    starts = np.zeros(len(words), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    hits = np.searchsorted(starts, [m.start() for m in _DEPARTS.finditer(joined)], side="right") - 1
    if not joined.isascii() and max(joined) > "\uffff":
        # Lucene's stemmer counts a character beyond U+FFFF as two consonants (two UTF-16 units): the port does
        hits = np.union1d(hits, [i for i, w in enumerate(words) if max(w, default="") > "\uffff"])
    for i in np.union1d(hits, np.flatnonzero(lengths <= 2)).tolist():
        out[i] = porter_stem(words[i])
    return out


def porter_stem(word: str) -> str:
    """Lucene's ``PorterStemmer.stem`` (Porter's reference implementation, release 3), ported line by line, over
    the word's UTF-16 units as Lucene's."""
    return from_utf16_units(_Porter(utf16_units(word)).stem())


class _Porter:
    # names follow Lucene's PorterStemmer: b the buffer, k the last index, j the stem end, k0 = 0
    def __init__(self, word: str):
        self.b = list(word)
        self.k = len(word) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        c = self.b[i]
        if c in "aeiou":
            return False
        if c == "y":
            return True if i == 0 else not self.cons(i - 1)
        return True

    def m(self) -> int:
        n, i, j = 0, 0, self.j
        while True:
            if i > j:
                return n
            if not self.cons(i):
                break
            i += 1
        i += 1
        while True:
            while True:
                if i > j:
                    return n
                if self.cons(i):
                    break
                i += 1
            i += 1
            n += 1
            while True:
                if i > j:
                    return n
                if not self.cons(i):
                    break
                i += 1
            i += 1

    def vowelinstem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def doublec(self, j: int) -> bool:
        return j >= 1 and self.b[j] == self.b[j - 1] and self.cons(j)

    def cvc(self, i: int) -> bool:
        if i < 2 or not self.cons(i) or self.cons(i - 1) or not self.cons(i - 2):
            return False
        return self.b[i] not in "wxy"

    def ends(self, s: str) -> bool:
        o = self.k - len(s) + 1
        if o < 0 or "".join(self.b[o : self.k + 1]) != s:
            return False
        self.j = self.k - len(s)
        return True

    def setto(self, s: str) -> None:
        o = self.j + 1
        self.b[o : o + len(s)] = list(s)
        self.k = self.j + len(s)

    def r(self, s: str) -> None:
        if self.m() > 0:
            self.setto(s)

    def step1(self) -> None:
        b = self.b
        if b[self.k] == "s":
            if self.ends("sses"):
                self.k -= 2
            elif self.ends("ies"):
                self.setto("i")
            elif b[self.k - 1] != "s":
                self.k -= 1
        if self.ends("eed"):
            if self.m() > 0:
                self.k -= 1
        elif (self.ends("ed") or self.ends("ing")) and self.vowelinstem():
            self.k = self.j
            if self.ends("at"):
                self.setto("ate")
            elif self.ends("bl"):
                self.setto("ble")
            elif self.ends("iz"):
                self.setto("ize")
            elif self.doublec(self.k):
                ch = b[self.k]
                self.k -= 1
                if ch in "lsz":
                    self.k += 1
            elif self.m() == 1 and self.cvc(self.k):
                self.setto("e")

    def step2(self) -> None:
        if self.ends("y") and self.vowelinstem():
            self.b[self.k] = "i"

    _STEP3 = {
        "a": (("ational", "ate"), ("tional", "tion")),
        "c": (("enci", "ence"), ("anci", "ance")),
        "e": (("izer", "ize"),),
        "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
        "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
        "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
        "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
        "g": (("logi", "log"),),
    }
    _STEP4 = {
        "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
        "i": (("iciti", "ic"),),
        "l": (("ical", "ic"), ("ful", "")),
        "s": (("ness", ""),),
    }
    _STEP5 = {
        "a": ("al",),
        "c": ("ance", "ence"),
        "e": ("er",),
        "i": ("ic",),
        "l": ("able", "ible"),
        "n": ("ant", "ement", "ment", "ent"),
        "s": ("ism",),
        "t": ("ate", "iti"),
        "u": ("ous",),
        "v": ("ive",),
        "z": ("ize",),
    }

    def _replace(self, rules: tuple[tuple[str, str], ...]) -> None:
        for suffix, repl in rules:
            if self.ends(suffix):
                self.r(repl)
                return

    def step3(self) -> None:
        if self.k == 0:
            return
        self._replace(self._STEP3.get(self.b[self.k - 1], ()))

    def step4(self) -> None:
        self._replace(self._STEP4.get(self.b[self.k], ()))

    def step5(self) -> None:
        if self.k == 0:
            return
        c = self.b[self.k - 1]
        if c == "o":
            hit = (self.ends("ion") and self.j >= 0 and self.b[self.j] in "st") or self.ends("ou")
        else:
            hit = any(self.ends(s) for s in self._STEP5.get(c, ()))
        if hit and self.m() > 1:
            self.k = self.j

    def step6(self) -> None:
        self.j = self.k
        if self.b[self.k] == "e":
            a = self.m()
            if a > 1 or (a == 1 and not self.cvc(self.k - 1)):
                self.k -= 1
        if self.b[self.k] == "l" and self.doublec(self.k) and self.m() > 1:
            self.k -= 1

    def stem(self) -> str:
        if self.k > 1:
            self.step1()
            self.step2()
            self.step3()
            self.step4()
            self.step5()
            self.step6()
        return "".join(self.b[: self.k + 1])


def _english_terms(tokens: list[str]) -> list[str]:
    apostrophes = _APOSTROPHES
    words = lower_java(
        [
            t[:-2] if t[-1:] in ("s", "S") and t[-2:-1] in apostrophes else t for t in tokens
        ]  # strip_possessive
    )
    keep = [i for i, w in enumerate(words) if w and w not in LUCENE_ENGLISH_STOPWORDS]
    out = [""] * len(tokens)
    for i, stem in zip(keep, porter_stems([words[i] for i in keep])):
        out[i] = stem
    return out


ENGLISH = Language(
    code="en",
    name="English",
    lucene="Anserini 0.22.1 DefaultEnglishAnalyzer (Lucene 9.5 StandardTokenizer, EnglishPossessiveFilter, "
    "LowerCaseFilter, StopFilter, PorterStemFilter)",
    term=_english_terms,
)
