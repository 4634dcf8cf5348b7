"""Japanese as Lucene 9.5's ``JapaneseAnalyzer`` analyses it (Anserini's ``-language ja``).

The chain: CJKWidthCharFilter (fullwidth ASCII to ASCII, halfwidth katakana to fullwidth, voiced marks composed),
JapaneseTokenizer (Kuromoji: a Viterbi search over mecab-ipadic-2.7.0-20070801, in SEARCH mode, dropping
punctuation and the compound tokens it splits), JapaneseBaseFormFilter (inflected words become their dictionary
form), JapanesePartOfSpeechStopFilter (Lucene's ``stoptags.txt``: particles, auxiliary verbs, symbols, ...),
StopFilter (Lucene's Japanese ``stopwords.txt``), JapaneseKatakanaStemFilter (a final ``ー`` is dropped from
katakana words of 4 or more characters), LowerCaseFilter.

The tokenizer ports Lucene's ``JapaneseTokenizer`` (Apache-2.0): its Viterbi search (``parse``/``add``), its
unknown-word rule (a run of characters of one character class, split where punctuation starts or stops), its
back-traces at "frontiers" where one path survives, and the search-mode decompounding of ``backtrace`` and
``pruneAndRescore``: when the best path uses a long all-kanji token (more than 2 characters; penalty 3000 per extra
character) or a long other token (more than 7; 1700 per extra character), the path is searched again inside that
token with those penalties, and the split is taken when it costs no more than the compound plus its penalty.
The dictionary (entries, connection costs, character classes, unknown-word entries) is IPADIC as janome 0.5.0
ships it (with 令和 added, as Lucene's build also adds it); Lucene's character classes are IPADIC's ``char.def``
read as Lucene reads it (the last range naming a character wins, ``・`` is a symbol). One surface's entries are
tried in Lucene's order (IPADIC's CSV files by name, then line order), which decides between paths of equal cost.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from ._base import Language, as_java_17, lower_java, read_word_list

__all__ = ["LANGUAGES", "JAPANESE", "japanese_tokens", "width_fold"]

_EXTRA_HINT = 'Japanese analysis needs janome: pip install "pyterrier-sparse-eval[ja]"'

# --- CJKWidthCharFilter ------------------------------------------------------------------------------------------

# halfwidth katakana U+FF65..U+FF9F -> fullwidth (Lucene's KANA_NORM)
_KANA_NORM = (
    "\u30fb\u30f2\u30a1\u30a3\u30a5\u30a7\u30a9\u30e3\u30e5\u30e7\u30c3\u30fc\u30a2\u30a4\u30a6\u30a8\u30aa"
    "\u30ab\u30ad\u30af\u30b1\u30b3\u30b5\u30b7\u30b9\u30bb\u30bd\u30bf\u30c1\u30c4\u30c6\u30c8\u30ca\u30cb"
    "\u30cc\u30cd\u30ce\u30cf\u30d2\u30d5\u30d8\u30db\u30de\u30df\u30e0\u30e1\u30e2\u30e4\u30e6\u30e8\u30e9"
    "\u30ea\u30eb\u30ec\u30ed\u30ef\u30f3\u3099\u309a"
)
# a halfwidth voiced / semi-voiced mark composes with these kana (Lucene's KANA_COMBINE_VOICED / _SEMI_VOICED)
_VOICED = dict(
    zip(
        "ウカキクケコサシスセソタチツテトハヒフヘホワヰヱヲヽ",
        "ヴガギグゲゴザジズゼゾダヂヅデドバビブベボヷヸヹヺヾ",
    )
)
_SEMI_VOICED = dict(zip("ハヒフヘホ", "パピプペポ"))
_WIDE = re.compile("[\uff01-\uff5e\uff65-\uff9f]")


def width_fold(text: str) -> str:
    """Lucene's ``CJKWidthCharFilter``: fullwidth ASCII variants become ASCII, halfwidth katakana become
    fullwidth, and a halfwidth (semi-)voiced mark is composed with the kana before it where such a kana exists."""
    if not _WIDE.search(text):
        return text
    out: list[str] = []
    prev = ""  # the folded character not yet written (it may compose with a voiced mark)
    for c in text:
        if c in "\uff9e\uff9f" and prev:
            composed = (_SEMI_VOICED if c == "\uff9f" else _VOICED).get(prev)
            if composed:
                out.append(composed)
                prev = ""
                continue
        out.append(prev)
        code = ord(c)
        if 0xFF01 <= code <= 0xFF5E:
            prev = chr(code - 0xFEE0)
        elif 0xFF65 <= code <= 0xFF9F:
            prev = _KANA_NORM[code - 0xFF65]
        else:
            prev = c
    out.append(prev)
    return "".join(out)


# --- the dictionary (janome's IPADIC) --------------------------------------------------------------------------

# Java's Character.getType categories that JapaneseTokenizer.isPunctuation counts
_PUNCT_CATEGORIES = frozenset("Zs Zl Zp Cc Cf Pd Ps Pe Pc Po Sm Sc Sk So Pi Pf".split())
_UNKNOWN_MAX = 1024  # MAX_UNKNOWN_WORD_LENGTH
_GAP_MAX = 1024  # MAX_BACKTRACE_GAP
_LOOKUP_CHARS = 50  # longest dictionary match tried (IPADIC's longest entry is shorter)
_INF = 2**63
# IPADIC's EUC-JP dash (0xA1BD) became U+2015 in janome's dictionary and U+2014 in Lucene's (Java's decoder):
# looked up swapped, each dash finds the entries Lucene's dictionary holds for it (checked against Lucene's
# JapaneseAnalyzer; the other EUC-JP characters decoded differently by Java and Python, e.g. the wave dash and
# the full-width minus, give the same tokens)
_DASHES = str.maketrans("\u2014\u2015", "\u2015\u2014")


class _Dictionary:
    """IPADIC as janome stores it, with Lucene's reading of its character classes."""

    def __init__(self) -> None:
        try:
            from janome.fst import Matcher
            from janome.sysdic import all_fstdata, chardef, connections, unknowns
            from janome.system_dic import MMapSystemDictionary, SystemDictionary
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(_EXTRA_HINT) from e
        try:
            self.dic: Any = MMapSystemDictionary.instance()
        except Exception:  # pragma: no cover - platforms without mmap
            self.dic = SystemDictionary.instance()
        self.matcher = Matcher(all_fstdata())
        self._sources: dict[int, int] = {}
        self.conn: list[list[int]] = connections
        categories, ranges = chardef.DATA
        names = list(categories)
        table = bytearray(0x10000)  # class index per UTF-16 unit; DEFAULT where char.def names none
        default = names.index("DEFAULT")
        if default:
            table[:] = bytes([default]) * 0x10000
        for r in ranges:  # Lucene: the last line naming a character sets its class (its first class)
            lo, hi = ord(r["from"]), min(ord(r["to"]), 0xFFFF)
            table[lo : hi + 1] = bytes([names.index(r["cate"])]) * (hi - lo + 1)
        table[0x30FB] = names.index("SYMBOL")  # Lucene's UnknownDictionaryBuilder: Nakaguro is a symbol
        self.table = bytes(table)
        self.invoke = [bool(categories[n]["INVOKE"]) for n in names]
        self.group = [bool(categories[n]["GROUP"]) for n in names]
        self.kanji = frozenset(i for i, n in enumerate(names) if n in ("KANJI", "KANJINUMERIC"))
        # unknown-word entries per class: (left id, cost, info); info < 0 indexes self.unknown_pos
        self.unknown_pos: list[str] = []
        self.unknowns: list[list[tuple[int, int, int]]] = []
        for n in names:
            entries = []
            for left, _right, cost, pos in unknowns.DATA.get(n, ()):
                self.unknown_pos.append(pos)
                entries.append((left, cost, -len(self.unknown_pos)))
            self.unknowns.append(entries)

    def lookup(self, text: str) -> list[tuple[int, int, int, int]]:
        """Dictionary words that start ``text``: (length, left id, cost, entry number), shortest first, the words of
        one surface in Lucene's order (:meth:`source`): where two paths cost the same, the one added first is kept."""
        found = self.dic.lookup(text[:_LOOKUP_CHARS].translate(_DASHES).encode("utf-8"), self.matcher)
        ordered = sorted((len(e[1]), self.source(e[0]), e[0], e[2], e[4]) for e in found)
        return [(n, left, cost, entry) for n, _, entry, left, cost in ordered]

    def source(self, entry: int) -> int:
        """The IPADIC CSV file an entry comes from, as its place among the files' sorted names: Lucene's builder
        reads the files in that order, each in line order (as janome numbers the entries), and a stable sort by
        surface keeps that order for one surface's entries."""
        if (rank := self._sources.get(entry)) is None:
            rank = self._sources[entry] = _IPADIC_FILES.index(_ipadic_file(self.dic.lookup_extra(entry)[0]))
        return rank

    def features(self, info: int) -> tuple[str, str | None]:
        """(Lucene's part-of-speech tag, base form or None) of an entry."""
        if info < 0:
            return _tag(self.unknown_pos[-info - 1]), None
        extra = self.dic.lookup_extra(info)
        base = extra[3]
        return _tag(extra[0]), (None if base == "*" else base)


#: IPADIC's CSV files in the order of their names, as Lucene's ``TokenInfoDictionaryBuilder`` reads them
_IPADIC_FILES = (
    "Adj", "Adnominal", "Adverb", "Auxil", "Conjunction", "Filler", "Interjection", "Noun.adjv", "Noun.adverbal",
    "Noun", "Noun.demonst", "Noun.nai", "Noun.name", "Noun.number", "Noun.org", "Noun.others", "Noun.place",
    "Noun.proper", "Noun.verbal", "Others", "Postp-col", "Postp", "Prefix", "Suffix", "Symbol", "Verb",
)  # fmt: skip
_NOUN_FILES = {
    "形容動詞語幹": "Noun.adjv", "副詞可能": "Noun.adverbal", "一般": "Noun", "代名詞": "Noun.demonst",
    "ナイ形容詞語幹": "Noun.nai", "数": "Noun.number", "サ変接続": "Noun.verbal", "接尾": "Suffix",
}  # fmt: skip
_PROPER_FILES = {"人名": "Noun.name", "組織": "Noun.org", "地域": "Noun.place"}
_FILES = {
    "形容詞": "Adj", "連体詞": "Adnominal", "副詞": "Adverb", "助動詞": "Auxil", "接続詞": "Conjunction",
    "フィラー": "Filler", "感動詞": "Interjection", "その他": "Others", "接頭詞": "Prefix", "記号": "Symbol",
    "動詞": "Verb",
}  # fmt: skip


@lru_cache(maxsize=512)
def _ipadic_file(pos: str) -> str:
    """The IPADIC CSV file (its name less ``.csv``) holding the entries of a part of speech."""
    p = pos.split(",")
    if p[0] == "名詞":
        if p[1] == "固有名詞":
            return _PROPER_FILES.get(p[2], "Noun.proper")
        return _NOUN_FILES.get(p[1], "Noun.others")
    if p[0] == "助詞":
        return "Postp-col" if p[2] == "連語" else "Postp"
    return _FILES.get(p[0], "Others")


@lru_cache(maxsize=512)
def _tag(pos: str) -> str:
    return "-".join(p for p in pos.split(",") if p != "*")


@lru_cache(maxsize=1)
def _dictionary() -> _Dictionary:
    return _Dictionary()


@lru_cache(maxsize=1)
def _stoptags() -> frozenset[str]:
    return read_word_list("lucene/ja_stoptags.txt")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return read_word_list("lucene/ja_stopwords.txt")


# --- JapaneseTokenizer ------------------------------------------------------------------------------------------

# an arc arriving at a position: (path cost, word id (left = right id in IPADIC), start position, index of the
# arc it continues at the start position, word cost, entry info)
_Arc = tuple[int, int, int, int, int, int]
_BOS: _Arc = (0, 0, -1, -1, 0, 0)


class _Parser:
    """One run of Lucene's ``JapaneseTokenizer.parse`` over a whole text (SEARCH mode, punctuation dropped)."""

    def __init__(self, d: _Dictionary, text: str) -> None:
        self.d, self.s = d, text
        self.cls = [d.table[ord(c)] for c in text]
        # Java 17's categories: a character of a later Unicode is unassigned there, not punctuation (U+20C0)
        self.punct = [unicodedata.category(c) in _PUNCT_CATEGORIES for c in as_java_17(text)]
        self.arcs: list[list[_Arc]] = [[] for _ in range(len(text) + 1)]
        self.arcs[0].append(_BOS)
        self.reach = 0  # the furthest position an arc reaches
        self.last = 0  # lastBackTracePos
        self.tokens: list[tuple[int, int, int]] = []  # (start, end, info), in text order

    def penalty(self, pos: int, length: int) -> int:
        """``computePenalty``: the search-mode cost of a long token."""
        if length > 2:
            kanji = self.d.kanji
            if all(self.cls[p] in kanji for p in range(pos, pos + length)):
                return (length - 2) * 3000
            if length > 7:
                return (length - 7) * 1700
        return 0

    def add(
        self, src: list[_Arc], start: int, end: int, wid: int, wcost: int, info: int, extra: int = 0
    ) -> None:
        row_cost, best_i = _INF, -1
        conn = self.d.conn
        for i, a in enumerate(src):
            c = a[0] + conn[a[1]][wid]
            if c < row_cost:
                row_cost, best_i = c, i
        self.arcs[end].append((row_cost + wcost + extra, wid, start, best_i, wcost, info))
        if end > self.reach:
            self.reach = end

    def run(self) -> list[tuple[int, int, int]]:
        d, s, arcs, cls, punct = self.d, self.s, self.arcs, self.cls, self.punct
        n = len(s)
        pos = 0
        while pos < n:
            here = arcs[pos]
            if not here:
                pos += 1
                continue
            if pos > self.last and len(here) == 1 and self.reach <= pos:
                self.backtrace(pos, 0)  # a frontier: every path goes through this arc
                # the back-trace's rescoring put a new list at arcs[pos]: its cost is the one reset (resetting the
                # old list had left the search-mode penalty in the next compound decision's costs)
                here = arcs[pos]
                here[0] = (0,) + here[0][1:]
            if pos - self.last >= _GAP_MAX:
                pos = self.force_backtrace(pos)
                continue
            matched = False
            for length, wid, wcost, info in d.lookup(s[pos:]):
                self.add(here, pos, pos + length, wid, wcost, info)
                matched = True
            c = cls[pos]
            if not matched or d.invoke[c]:
                end = pos + 1
                if d.group[c]:
                    p = punct[pos]
                    while end < n and end - pos < _UNKNOWN_MAX and cls[end] == c and punct[end] == p:
                        end += 1
                for wid, wcost, info in d.unknowns[c]:
                    self.add(here, pos, end, wid, wcost, info)
            pos += 1
        if n and n != self.last:
            conn = d.conn
            costs = [a[0] + conn[a[1]][0] for a in arcs[n]]
            self.backtrace(n, costs.index(min(costs)))
        return self.tokens

    def force_backtrace(self, pos: int) -> int:
        """The safety back-trace after 1024 characters without a frontier: commit to the cheapest partial path."""
        arcs = self.arcs
        best, best_pos, best_i = _INF, -1, -1
        for p in range(pos, self.reach + 1):
            for i, a in enumerate(arcs[p]):
                if a[0] < best:
                    best, best_pos, best_i = a[0], p, i
        for p in range(pos, self.reach + 1):
            arcs[p] = [arcs[p][best_i]] if p == best_pos else []
        self.backtrace(best_pos, 0)
        arcs[best_pos][0] = (0,) + arcs[best_pos][0][1:]
        return best_pos

    def backtrace(self, end: int, idx: int) -> None:
        """``backtrace``: the best path back to the last back-trace, decompounding long tokens (SEARCH mode)."""
        arcs, conn = self.arcs, self.d.conn
        pos, alt_start, next_left = end, -1, -1
        out: list[tuple[int, int, int]] = []
        while pos > self.last:
            arc = arcs[pos][idx]
            if alt_start < 0:
                penalty = self.penalty(arc[2], pos - arc[2])
                if penalty > 0:
                    max_cost = arc[0] + penalty + (conn[arc[1]][next_left] if next_left != -1 else 0)
                    self.prune_and_rescore(arc[2], pos, arc[3])
                    best, best_i = _INF, -1
                    for i, a in enumerate(arcs[pos]):
                        c = a[0] + (conn[a[1]][next_left] if next_left != -1 else 0)
                        if c < best:
                            best, best_i = c, i
                    if best_i != -1 and best <= max_cost and arcs[pos][best_i][2] != arc[2]:
                        alt_start = arc[2]  # the compound is dropped (discardCompoundToken)
                        arc = arcs[pos][best_i]
            start = arc[2]
            if alt_start >= start:
                alt_start = -1
            if not self.punct[start]:
                out.append((start, pos, arc[5]))
            next_left = arc[1]
            pos, idx = start, arc[3]
        out.reverse()
        self.tokens.extend(out)
        self.last = end

    def prune_and_rescore(self, start: int, end: int, start_idx: int) -> None:
        """``pruneAndRescore``: re-run the search over [start, end] with the search-mode penalties, keeping only
        arcs inside the span and, at its start, the arc the best path came through."""
        arcs, conn = self.arcs, self.d.conn
        forward: dict[int, list[tuple[int, int, int, int]]] = {}
        for pos in range(end, start, -1):
            for a in arcs[pos]:
                if a[2] >= start:
                    forward.setdefault(a[2], []).append((pos, a[1], a[4], a[5]))
            arcs[pos] = []
        for pos in range(start, end):
            here = arcs[pos]
            moves = forward.pop(pos, [])
            if not here:
                continue
            if pos == start:
                first = here[start_idx]
                right = 0 if start == 0 else first[1]
                for to, wid, wcost, info in moves:
                    cost = first[0] + wcost + conn[right][wid] + self.penalty(pos, to - pos)
                    arcs[to].append((cost, wid, pos, start_idx, wcost, info))
            else:
                for to, wid, wcost, info in moves:
                    self.add(here, pos, to, wid, wcost, info, self.penalty(pos, to - pos))


def japanese_tokens(text: str) -> list[str]:
    """Kuromoji's tokens of ``text`` (already width-folded) after JapaneseBaseFormFilter and
    JapanesePartOfSpeechStopFilter: base forms (surface forms where there is none), punctuation and stop-tagged
    tokens dropped."""
    if not text:
        return []
    d = _dictionary()
    units: list[str] | None = None
    if any(ord(c) > 0xFFFF for c in text):  # Java sees two UTF-16 units, of class DEFAULT and not punctuation
        units = []
        for c in text:
            units.extend((c, "") if ord(c) > 0xFFFF else (c,))
        text = "".join("\ue000\ue000" if ord(c) > 0xFFFF else c for c in text)
    stoptags = _stoptags()
    out: list[str] = []
    for start, end, info in _Parser(d, text).run():
        tag, base = d.features(info)
        if tag in stoptags:
            continue
        out.append(base if base is not None else ("".join(units[start:end]) if units else text[start:end]))
    return out


def _terms(tokens: list[str]) -> list[str]:
    """StopFilter, JapaneseKatakanaStemFilter and LowerCaseFilter on each token."""
    stop = _stopwords()
    out: list[str] = []
    for t in tokens:
        if t in stop:
            out.append("")
            continue
        if len(t) >= 4 and t[-1] == "\u30fc" and all("\u30a0" <= c <= "\u30ff" for c in t):
            t = t[:-1]
        out.append(t)
    return lower_java(out)


JAPANESE = Language(
    code="ja",
    name="Japanese",
    lucene="Lucene 9.5 JapaneseAnalyzer (Kuromoji, IPADIC, search mode)",
    term=_terms,
    tokenizer="custom",
    char_filter=width_fold,
    tokenize=japanese_tokens,
    extra="ja",
    lowercases=False,
)

LANGUAGES: dict[str, Language] = {"ja": JAPANESE}
