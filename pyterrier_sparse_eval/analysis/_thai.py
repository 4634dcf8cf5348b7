"""Thai as Lucene 9.5's ``ThaiAnalyzer`` analyses it (Anserini's ``-language th``).

The chain: ThaiTokenizer, LowerCaseFilter, DecimalDigitFilter, StopFilter (Lucene's Thai ``stopwords.txt``).

Lucene's ``ThaiTokenizer`` reads the text in buffers of 1024 characters (cut after the last line break, as
``SegmentingTokenizerBase`` does), splits them into sentences and each sentence into words with the JDK's
``BreakIterator.getWordInstance(th)``, and keeps the words whose first character is a letter or digit. The JDK's
Thai word iterator is the dictionary-based break iterator IBM wrote for ICU4J and gave to the JDK: rules split the
text into runs (a run of Thai letters, a Latin word with inner ``-``, ``.``, ``'``; a number with inner ``.``
and ``,``; a whitespace run; single punctuation marks; combining marks and format characters stay with the
character before them), and each run of Thai letters is divided with a word list: longest words first,
backtracking to shorter ones when the rest of the run cannot be matched, and, when nothing matches all the way,
the words that got furthest are kept and matching restarts one character after the furthest point, so an
unknown word is glued to the word that follows it (``ไบต์ไม่``). When a run ends the text, the JDK's character
iterator does not move past the last character, which shifts that last attempt back by one (the run's last two
pieces then stay together).

:func:`thai_words` ports ``divideUpDictionaryRange`` from ICU4J's ``com.ibm.icu.text.DictionaryBasedBreakIterator``
(ICU 2.x, Copyright IBM Corp. and others, ICU license) and writes its word rules (ICU4J's
``BreakIteratorRules_th``) as regular expressions. The word list decides the words. Lucene's is the JDK's Thai dictionary, which is GPL (with the Classpath
exception) and cannot ship in this MIT package; ``data/lucene/th_words.txt`` is built from permissively licensed
lists only (``tools/make_th_words.py``): the words of ICU's Thai break dictionary (Unicode License) that are also
in PyThaiNLP's two CC0 word lists, plus the consonant letters and doubled forms, the combination that agreed best
with Lucene among those tried. Where the lists differ (ICU knows modern loanwords the JDK splits; the JDK keeps
compounds ICU lacks) the words differ: on the 400 shared texts 58% come out identical to Lucene's tokens, mean
token F1 0.872 (the JDK's own list would give 99%, F1 0.997). Thai through this analyzer is therefore close to
Lucene's, not equal to it.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left
from functools import lru_cache

import regex

from ._base import (
    Language,
    as_java_17,
    decimal_digits,
    from_utf16_units,
    lower_java,
    read_word_list,
    utf16_units,
)

__all__ = ["LANGUAGES", "THAI", "thai_words"]

# --- the word list ----------------------------------------------------------------------------------------------

# characters the JDK dictionary's trie has columns for; any other character ends a word
_COLUMNS = frozenset("กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรฤลฦวศษสหฬอฮฯะัาำิีึืฺุูเแโใไๅๆ็่้๊๋์๑")


class _WordList:
    """The dictionary as a trie walked one character at a time (a state is the prefix read so far)."""

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self.sorted = sorted(words)

    def step(self, state: str, c: str) -> str | None:
        """The next state; ``None`` is the error state, ``""`` the end-of-word state (``c`` ends a word)."""
        if c in _COLUMNS:
            p = state + c
            i = bisect_left(self.sorted, p)
            return p if i < len(self.sorted) and self.sorted[i].startswith(p) else None
        return "" if state in self.words else None


@lru_cache(maxsize=1)
def _word_list() -> _WordList:
    return _WordList(read_word_list("lucene/th_words.txt"))


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return read_word_list("lucene/th_stopwords.txt")


# --- the JDK's Thai word rules ---------------------------------------------------------------------------------

_DICT = "\u0e01-\u0e2e\u0e30-\u0e3a\u0e40-\u0e44\u0e47-\u0e4e"  # $_dictionary_: the characters the word list divides
_IS_DICT = regex.compile(f"[{_DICT}]")
# $_ignore_: never a break before these (combining and format characters other than Thai ones)
# (the soft hyphen and the kana voicing marks are named in other rules, so they are not ignored)
_IGNORE = regex.compile(rf"[[\p{{Mn}}\p{{Me}}\p{{Cf}}\udc00-\udfff]--[{_DICT}\u00ad\u3099\u309a]]", regex.V1)
_LET = (
    rf"[[\p{{L}}\p{{Mc}}]--[\u3005\u4e00-\u9fa5\uf900-\ufa2d\u30a1-\u30fa\u3041-\u3094\u3099-\u309c{_DICT}]]"
)
_WORD = rf"(?:{_LET}+(?:[\p{{Pd}}\u00ad\u2027\"'.]{_LET}+)*[\u0964\u0965]?)"
_NUMBER = r"(?:\p{N}+(?:[\"',\u066b.]\p{N}+)*)"
_POST_NUM = r"[%&\u00a2\u066a\u2030\u2031]"
_RULES = [
    regex.compile(r, regex.V1)
    for r in (
        # words and numbers joined, with a final number suffix
        rf"{_WORD}?(?:{_NUMBER}{_WORD})*(?:{_NUMBER}{_POST_NUM}?)?",
        rf"[[\p{{Sc}}#.]--[\u00a2]](?:{_NUMBER}{_WORD})*(?:{_NUMBER}{_POST_NUM}?)?",
        # a Thai run, with a final ๆ or ฯๆ, or a final ฯ when ฯลฯ does not follow
        rf"[{_DICT}]+(?:\u0e2f?\u0e46)?",
        rf"[{_DICT}]+\u0e2f(?=[^\u0e25\u0e46]|\u0e25[^\u0e2f]|$)",
        "\u0e2f\u0e25\u0e2f",
        r"[\p{Zs}\t]*\r?[\n\f\u2028\u2029]?",
        r"[\u30a1-\u30fa\u3099-\u309c]*",
        r"[\u3041-\u3094\u3099-\u309c]*",
        r"[\u3005\u4e00-\u9fa5\uf900-\ufa2d]*",
    )
]
_BUFFER = 1024  # SegmentingTokenizerBase.BUFFERMAX
_SAFE_END = frozenset("\r\n\x85\u2028\u2029")


def _chunks(text: str) -> list[str]:
    """``SegmentingTokenizerBase.refill``: buffers of 1024 UTF-16 units (Java chars: a character beyond U+FFFF is
    two, and a cut may fall between them), each cut after its last line break if the text goes on (a buffer
    without one is cut at 1024 units)."""
    units = utf16_units(text)
    if units is not text:
        # a buffer that starts inside a pair: its lone low surrogate starts no word, and Lucene keeps the word after
        # it (the port's rules would have joined the two)
        return [c[1:] if "\udc00" <= c[:1] <= "\udfff" else c for c in map(from_utf16_units, _chunks(units))]
    out: list[str] = []
    buf, src = "", 0
    while True:
        requested = _BUFFER - len(buf)
        got = text[src : src + requested]
        src += len(got)
        buf += got
        if not buf:
            return out
        usable = len(buf)
        if len(got) == requested:
            for i in range(len(buf) - 1, -1, -1):
                if buf[i] in _SAFE_END:
                    usable = i + 1
                    break
        out.append(buf[:usable])
        buf = buf[usable:]


def _runs(text: str) -> list[tuple[int, int]]:
    """The rule-based break iterator's spans: the longest rule match at each point, over the text with the
    ignorable characters left out (they stay with the character before them)."""
    keep = [i for i, c in enumerate(text) if not _IGNORE.match(c)]
    if not keep:
        return [(0, len(text))] if text else []
    skeleton = "".join(text[i] for i in keep)
    spans: list[tuple[int, int]] = []
    i, n = 0, len(skeleton)
    while i < n:
        length = 1
        for rule in _RULES:
            m = rule.match(skeleton, i)
            if m is not None and m.end() - i > length:
                length = m.end() - i
        # ignorable characters at the start of the text stay with the first span
        spans.append((keep[i] if i else 0, keep[i + length] if i + length < n else len(text)))
        i += length
    return spans


def _divide(words: _WordList, text: str, start: int, end: int) -> list[int]:
    """ICU4J's ``DictionaryBasedBreakIterator.divideUpDictionaryRange``: the break positions after ``start`` in
    the Thai run [start, end) of ``text`` (the text the iterator sees: it does not step past its last
    character)."""
    n = len(text)

    def advance(i: int) -> tuple[int, str]:  # CharacterIterator.next() as the JDK's iterator does it
        return (i, "\uffff") if i + 1 >= n else (i + 1, text[i + 1])

    i, c = start, text[start]
    while not _IS_DICT.match(c) and c != "\uffff":  # seek the first Thai letter
        i, c = advance(i)
    current: list[int] = []
    possible: list[int] = []
    wrong: set[int] = set()
    best: list[int] | None = None
    farthest = i
    state: str | None = ""
    while True:
        assert state is not None
        if state in words.words:
            possible.append(i)  # a word ends here
        state = words.step(state, c)
        if state == "" and c not in _COLUMNS:  # the run ends after a whole word: done
            current.append(i)
            break
        if state is None or i >= end:
            if i > farthest:
                farthest, best = i, list(current)
            while possible and possible[-1] in wrong:
                possible.pop()
            if not possible:
                if best is not None:  # bless the breaks that got furthest, restart after the furthest point
                    current = best
                    if farthest < end:
                        i = farthest + 1
                    else:
                        break
                else:
                    if (not current or current[-1] != i) and i != start:
                        current.append(i)
                    i, _ = advance(i)
                    current.append(i)
            else:  # back up to the last possible word end and try from there
                back = possible.pop()
                while current and back < current[-1]:
                    wrong.add(current.pop())
                current.append(back)
                i = back
            c = text[i] if i < n else "\uffff"
            state = ""
            if i >= end:
                break
        else:
            i, c = advance(i)
    if current:
        current.pop()
    current.append(end)
    return current


def _is_letter_or_digit(c: str) -> bool:
    """Java's ``Character.isLetterOrDigit``."""
    cat = unicodedata.category(c)
    return cat[0] == "L" or cat == "Nd"


def thai_words(text: str) -> list[str]:
    """Lucene's ``ThaiTokenizer``: the JDK's Thai word breaks of ``text``, without the pieces that do not start
    with a letter or digit."""
    words = _word_list()
    out: list[str] = []
    # characters of a Unicode later than Java 17's are unassigned ones, as for Lucene: in no word (U+A7C0, U+0870)
    for chunk in _chunks(as_java_17(text)):
        for s, e in _runs(chunk):
            thai = sum(1 for c in chunk[s:e] if _IS_DICT.match(c))
            if e < len(chunk) and _IS_DICT.match(chunk[e]):  # the iterator looked at the next character too
                thai += 1
            if thai > 1 and e - s > 1:
                bounds = [s, *_divide(words, chunk, s, e)]
                pieces = [chunk[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
            else:
                pieces = [chunk[s:e]]
            out.extend(p for p in pieces if _is_letter_or_digit(p[0]))
    return out


def _terms(tokens: list[str]) -> list[str]:
    """LowerCaseFilter, DecimalDigitFilter (any decimal digit to its ASCII digit) and StopFilter."""
    stop = _stopwords()
    out: list[str] = []
    for t in decimal_digits(lower_java(tokens)):
        out.append("" if t in stop else t)
    return out


THAI = Language(
    code="th",
    name="Thai",
    lucene="Lucene 9.5 ThaiAnalyzer (JDK dictionary-based word breaks)",
    term=_terms,
    tokenizer="custom",
    tokenize=thai_words,
    lowercases=True,
)

LANGUAGES: dict[str, Language] = {"th": THAI}
