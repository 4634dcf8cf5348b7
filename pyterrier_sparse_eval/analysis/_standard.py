"""Lucene's StandardTokenizer: Unicode word segmentation (UAX #29), as a regular expression.

Lucene 9.5's ``StandardTokenizerImpl.jflex`` is a JFlex grammar over Unicode properties; this module writes the
same grammar for the ``regex`` module (which knows ``Word_Break``, ``Line_Break``, ``Script`` and the emoji
properties) and keeps what the grammar keeps:

* words (``<ALPHANUM>``, ``<NUM>``, ``<HANGUL>``, ``<KATAKANA>``): letters and digits joined by the UAX #29 rules
  WB5–WB13b — "1,000,000", "3.14", "u.s.a", "don't", "a:b", "x_y" are one token each;
* runs of South-East-Asian letters (Thai, Lao, Khmer, Myanmar; ``<SOUTHEAST_ASIAN>``), kept whole;
* each Han ideograph and each hiragana on its own (``<IDEOGRAPHIC>``, ``<HIRAGANA>``);
* emoji sequences (``<EMOJI>``);
* and drops everything else (spaces, punctuation, symbols). Combining marks, format characters and ZWJ stay
  with the character before them (WB4). A token longer than 255 UTF-16 units is cut as Lucene's
  ``maxTokenLength`` cuts it: the longest token within the first 255 units (so never after a joiner), then the
  rest is scanned again.

JFlex takes the longest match among its rules; here the word rule is tried first, which gives the same token
text (the rules start with disjoint classes except keycap emoji, where both match the same text). The Unicode
tables are the ``regex`` module's, newer than those of Lucene 9.5's grammar (Unicode 12.1 and its emoji data), so
where they differ Lucene's own behaviour is read off Lucene (``tools/make_standard_unicode.py``, every code point in
seven contexts): the characters Lucene puts in no token that the tables here (or those of a later ``regex``
release, whose Unicode may assign them) would put in one (assigned since 12.1, such as U+A7C7 or the CJK Extension G
ideographs, of another class since, or still unassigned) become spaces before tokenising, and the symbols of Lucene's
emoji data that are no emoji here (U+2605 BLACK STAR ...) or may not be in a later Unicode (reserved code points it
counts as pictographs) are emoji; and the few characters whose class changed since (number signs such as U+0600,
the vertical comma U+FE10, digits that were a South-East-Asian letter or reserved pictographs) keep Lucene's
(_FORMAT_12, _MIDNUM_12, _SA_12, _PICTOGRAPH_12). Then every code point, alone, between two letters and between two
digits, is tokenised as Lucene tokenises it. ``tests/test_standard_tokenizer.py`` compares with Lucene's own output.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import regex

from ._base import Token, code_point_ranges, utf16_len

__all__ = ["standard_tokens", "standard_words", "simple_classes", "MAX_TOKEN_LENGTH"]

#: Lucene's StandardTokenizer.DEFAULT_MAX_TOKEN_LENGTH
MAX_TOKEN_LENGTH = 255

# Characters whose word-break class changed after Lucene's Unicode 12.1 (and 15.0, regex 2023.3.22's) and that a
# newer table gives another class: read off Lucene (tests/test_standard_tokenizer.py, three contexts each). Arabic,
# Syriac and Kaithi number signs (U+0600-U+0605 ...) are Format there (Numeric since Unicode 15.1); the vertical
# comma and semicolon U+FE10 and U+FE14 are MidNum there (no class since)
_FORMAT_12 = "\u0600-\u0605\u06dd\u070f\u08e2\U000110bd\U000110cd"
_MIDNUM_12 = "\ufe10\ufe14"
# and digits since: U+19DA (New Tai Lue digit one) is a South-East-Asian letter there (Line_Break SA, Word_Break
# Other: a run of them is a token); the segmented digits U+1FBF0-U+1FBF9 (Unicode 13) are reserved code points its
# emoji data counts as pictographs (a token each; see _EMOJI_RANGES)
_SA_12 = "\u19da"
_PICTOGRAPH_12 = (0x1FBF0, 0x1FBF9)
# the classes with Lucene's overrides, used by the grammar and by simple_classes alike
_FORMAT_EXTEND = rf"\p{{WB=Format}}\p{{WB=Extend}}{_FORMAT_12}"  # a class body
_ALETTER = rf"[\p{{WB=ALetter}}--[{_FORMAT_12}]]"  # (U+070F is ALetter in some tables)
_DIGIT = (
    rf"[[\p{{WB=Numeric}}[\p{{Blk=HalfAndFullForms}}&&\p{{Nd}}]]"
    rf"--[{_FORMAT_12}{_SA_12}{chr(_PICTOGRAPH_12[0])}-{chr(_PICTOGRAPH_12[1])}]]"
)
_SOUTHEAST_ASIAN = rf"[\p{{lb=SA}}{_SA_12}]"
_MIDNUM_ONLY = rf"[\p{{WB=MidNum}}{_MIDNUM_12}]"
_X = rf"[{_FORMAT_EXTEND}\p{{WB=ZWJ}}]*+"  # WB4: X (Extend | Format | ZWJ)* -> X

_HANGUL = r"[\p{sc=Hangul}&&[\p{WB=ALetter}\p{WB=Hebrew_Letter}]]" + _X
_NUMERIC = _DIGIT + _X
_KATAKANA = r"\p{WB=Katakana}" + _X
_MIDLETTER = r"[\p{WB=MidLetter}\p{WB=MidNumLet}\p{WB=Single_Quote}]" + _X
_MIDNUM = rf"[{_MIDNUM_ONLY}\p{{WB=MidNumLet}}\p{{WB=Single_Quote}}]" + _X
_ENL = r"\p{WB=ExtendNumLet}" + _X
_HEBREW = r"\p{WB=Hebrew_Letter}" + _X
_SQUOTE = r"\p{WB=Single_Quote}" + _X
_DQUOTE = r"\p{WB=Double_Quote}" + _X
_RI = r"\p{WB=Regional_Indicator}" + _X
# a letter for the general word rule: not a Hebrew letter that the Hebrew rules (WB7a-c) continue with a quote,
# so that the longest match (JFlex's) is found without backtracking
_AHLETTER = rf"(?:{_ALETTER}{_X}|\p{{WB=Hebrew_Letter}}{_X}(?!{_SQUOTE}|{_DQUOTE}\p{{WB=Hebrew_Letter}}))"

_CORE = (
    f"(?:{_KATAKANA}(?:(?:{_ENL})*{_KATAKANA})*"
    f"|(?:{_HEBREW}(?:{_SQUOTE}|{_DQUOTE}{_HEBREW})"
    f"|{_NUMERIC}(?:(?:(?:{_ENL})*|{_MIDNUM}){_NUMERIC})*"
    f"|{_AHLETTER}(?:(?:(?:{_ENL})*|{_MIDLETTER}){_AHLETTER})*)+)"
)
_WORD = f"(?:{_ENL})*{_CORE}(?:(?:{_ENL})+{_CORE})*(?:{_ENL})*"


def _class(ranges: list[tuple[int, int]]) -> str:
    """A character class body (``re`` and ``regex`` alike) of code point ranges."""
    return "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges)


#: characters Lucene's grammar puts in no token, which the tables here would (assigned after Unicode 12.1, or
#: of another word-break class since), or which a later Unicode may assign (unassigned here): each becomes a
#: space before tokenising (one character for one: offsets unchanged)
_OTHER_RANGES = code_point_ranges("standard_other.txt")
#: code points Lucene's emoji data has (a token each) that the tables here no longer count as emoji, or may not
#: in a later Unicode (reserved code points it counts as pictographs)
_EMOJI_RANGES = sorted([*code_point_ranges("standard_emoji.txt"), _PICTOGRAPH_12])


def _emoji(extra: str) -> str:
    """The emoji rule, its emoji characters those of the ``regex`` module's tables and the class body ``extra``."""
    char = (
        r"[\p{Extended_Pictographic}[\p{Emoji}--[\p{WB=Regional_Indicator}0-9#*\u00a9\u00ae\u2122\u3030\u303d"
        rf"\p{{Emoji_Modifier}}]]{extra}]"
    )
    # WB4 inside emoji sequences: without the presentation selectors, and a ZWJ only when no emoji follows it
    # (then it joins the next element of a ZWJ sequence)
    start = rf"\p{{WB=ZWJ}}*(?:{char}|\p{{Emoji_Modifier_Base}}|\p{{Emoji_Modifier}})"
    xe = rf"(?:[[{_FORMAT_EXTEND}]--[\uFE0E\uFE0F]]|\p{{WB=ZWJ}}(?!{start}))*+"
    element = (
        rf"(?:(?:\p{{WB=ZWJ}}*\p{{Emoji_Modifier_Base}}{xe})?\p{{Emoji_Modifier}}{xe}"
        rf"|\p{{WB=ZWJ}}*{char}{xe}\uFE0F?)"
    )
    return (
        rf"{element}(?:[\U000E0020-\U000E007E]+\U000E007F|(?:\p{{WB=ZWJ}}{element})*)"
        rf"|[0-9#*]{xe[:-1]}\uFE0F?\u20E3{xe}"  # not possessive: the keycap U+20E3 is itself an Extend
        rf"|{_RI}{_RI}"
    )


def _token_pattern(extra_emoji: str) -> regex.Pattern[str]:
    return regex.compile(
        rf"(?P<w>{_WORD})|(?P<e>{_emoji(extra_emoji)})|(?P<s>(?:{_SOUTHEAST_ASIAN}{_X})+)|(?P<h>\p{{sc=Han}}{_X})"
        rf"|(?P<k>\p{{sc=Hiragana}}{_X})",
        regex.V1,
    )


# The symbols' ranges (2,388 code points in 110 ranges), tested at every position, make the expression slower on
# non-ASCII text (benchmarks/bench_tokenizer.py), so it is used only for a text holding one of them; on any other
# text the two expressions match alike (the ranges are only ever a class's)
_TOKEN = _token_pattern("")
_TOKEN_LUCENE_EMOJI = _token_pattern(_class(_EMOJI_RANGES))
#: the emoji rule alone, for each token expression: Lucene takes the longer of a word and an emoji sequence, which
#: differ only from a character both a letter and an emoji (:data:`_LETTER_EMOJI`) joined by a ZWJ to the next
_EMOJI_OF = {
    _TOKEN: regex.compile(_emoji(""), regex.V1),
    _TOKEN_LUCENE_EMOJI: regex.compile(_emoji(_class(_EMOJI_RANGES)), regex.V1),
}
#: the characters both WB=ALetter and Emoji: the six of every code point tried before ZWJ + U+1F600 against Lucene
#: that it tokenises otherwise, and the regex module's [\p{WB=ALetter}&&\p{Emoji}] (a test keeps the two equal)
_LETTER_EMOJI = frozenset("\u2139\u24c2\U0001f170\U0001f171\U0001f17e\U0001f17f")


def _bmp_class(ranges: list[tuple[int, int]]) -> re.Pattern[str]:
    """A stdlib ``re`` class of the BMP part of ``ranges`` (re's classes with characters beyond the BMP are slow:
    0.6 us a character)."""
    bmp = [(a, min(b, 0xFFFF)) for a, b in ranges if a < 0x10000]
    return re.compile(f"[{_class(bmp)}]" if bmp else "(?!)")


_OTHER_BMP = _bmp_class(_OTHER_RANGES)
_EMOJI_BMP = _bmp_class(_EMOJI_RANGES)
_RARE_BMP = _bmp_class(_OTHER_RANGES + _EMOJI_RANGES)
#: per code point, for the characters beyond the BMP: 1 if in :data:`_OTHER_RANGES`, 2 if in :data:`_EMOJI_RANGES`
_RARE = np.zeros(0x110000, dtype=np.uint8)
for _a, _b in _OTHER_RANGES:
    _RARE[_a : _b + 1] |= 1
for _a, _b in _EMOJI_RANGES:
    _RARE[_a : _b + 1] |= 2
_RARE_OF = _RARE.tobytes()  # indexed by code point: an int, without numpy's per-call cost
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # one range: fast, unlike a class of many beyond the BMP
_NUM_ONLY = regex.compile(
    rf"(?:{_ENL})*{_NUMERIC}(?:(?:(?:{_ENL})*|{_MIDNUM}){_NUMERIC})*(?:{_ENL})*", regex.V1
)
_HANGUL_ONLY = regex.compile(f"(?:{_HANGUL})+", regex.V1)
_KATAKANA_ONLY = regex.compile(f"(?:{_KATAKANA})+", regex.V1)
_TYPES = {"e": "<EMOJI>", "s": "<SOUTHEAST_ASIAN>", "h": "<IDEOGRAPHIC>", "k": "<HIRAGANA>"}


# The word rule above restricted to ASCII, where only letters, digits, "_" (ExtendNumLet), ":" (MidLetter), "."
# (MidNumLet), "'" (Single_Quote), "," and ";" (MidNum) have a word-break class of their own (no Hebrew letters,
# katakana, combining marks, emoji or South-East-Asian letters): the same expression, written with stdlib ``re``
# classes, about 3x faster (tests/test_standard_tokenizer.py checks it against the full one and Lucene).
_ASCII_CORE = r"(?:[0-9](?:(?:_*|[,;.'])[0-9])*|[A-Za-z](?:(?:_*|[:.'])[A-Za-z])*)+"
_ASCII_WORD = re.compile(rf"_*{_ASCII_CORE}(?:_+{_ASCII_CORE})*_*")


# Where no "_" occurs and no ":", ".", "'", "," or ";" stands between two letters or digits, the ASCII rule's words
# are the maximal runs of letters and digits (letters and digits join; nothing else does): a simpler expression,
# about 2x faster again, for most queries and documents.
_ASCII_MID = re.compile(r"[_:.',;]")
_ASCII_RUN = re.compile(r"[A-Za-z0-9]+")


def _ascii_joins(text: str) -> bool:
    """Whether the ASCII ``text`` holds a "_" or a ":", ".", "'", "," or ";" between two letters or digits
    (``re.search(r"_|[A-Za-z0-9][:.',;][A-Za-z0-9]", text)``, which tests/test_standard_tokenizer.py compares it
    with): the candidates found first, their neighbours checked (2-2.5x faster than that expression on SciFact's and
    Vaswani's topics and SciFact's documents, which end sentences and claims with a full stop)."""
    last = len(text) - 1
    for m in _ASCII_MID.finditer(text):
        i = m.start()
        if text[i] == "_" or (0 < i < last and text[i - 1].isalnum() and text[i + 1].isalnum()):
            return True
    return False


def standard_words(text: str) -> list[str]:
    """The token texts of ``text`` (see :func:`standard_tokens`), without types and offsets."""
    if text.isascii():
        out = (_ASCII_WORD if _ascii_joins(text) else _ASCII_RUN).findall(text)
    elif "\u200d" in text and not _LETTER_EMOJI.isdisjoint(text):
        return [t.text for t in standard_tokens(text)]
    else:
        # findall returns group tuples for a pattern with groups: the matched alternative is the non-empty one
        lucene, token_re = _as_lucene(text)
        out = ["".join(g) for g in token_re.findall(lucene)]
    # a token longer than Lucene's limit (UTF-16 units) is cut and scanned again; none is under half the limit,
    # and none under it without characters beyond the BMP (two units each)
    if len(text) > MAX_TOKEN_LENGTH // 2 and any(
        len(t) > MAX_TOKEN_LENGTH or (len(t) > MAX_TOKEN_LENGTH // 2 and utf16_len(t) > MAX_TOKEN_LENGTH)
        for t in out
    ):
        return [t.text for t in standard_tokens(text)]
    return out


def standard_tokens(text: str) -> list[Token]:
    """Lucene's StandardTokenizer tokens of ``text``: (text, type, start, end), offsets in code points."""
    out: list[Token] = []
    pos = 0
    n = len(text)
    text, token_re = (text, _TOKEN) if text.isascii() else _as_lucene(text)
    joined = "\u200d" in text and not _LETTER_EMOJI.isdisjoint(text)
    while pos < n:
        m = token_re.search(text, pos)
        if m is None:
            break
        start, end = m.span()
        if end - start > MAX_TOKEN_LENGTH // 2 and utf16_len(text[start:end]) > MAX_TOKEN_LENGTH:
            # Lucene's maxTokenLength (UTF-16 units): JFlex's buffer holds that many, and it takes the longest
            # token inside them (never ending with a joiner such as "." or ","), then scans again after it
            m = token_re.match(text[start : start + _window(text, start)])
            assert m is not None  # the token's first element fits
            end = start + m.end()
        kind = m.lastgroup or "w"
        word = m.group()
        if joined and kind == "w" and word[0] in _LETTER_EMOJI:
            longer = _EMOJI_OF[token_re].match(text, start)
            if longer is not None and longer.end() > end:
                kind, word, end = "e", longer.group(), longer.end()
        out.append(Token(word, _word_type(word) if kind == "w" else _TYPES[kind], start, end))
        pos = end
    return out


def _as_lucene(text: str) -> tuple[str, regex.Pattern[str]]:
    """The non-ASCII ``text`` with a space for each character Lucene's grammar puts in no token
    (:data:`_OTHER_RANGES`), and the token expression for it: with the symbols of Lucene's emoji data only if it
    holds one. Both kinds are looked for in one pass first (most texts hold neither)."""
    rare = 0
    if max(text) > "\uffff":
        for c in set(_ASTRAL.findall(text)):
            rare |= _RARE_OF[ord(c)]
    if not rare and _RARE_BMP.search(text) is None:
        return text, _TOKEN
    if rare & 1:
        text = _ASTRAL.sub(_astral_as_lucene, text)
    text = _OTHER_BMP.sub(" ", text)
    return text, _TOKEN_LUCENE_EMOJI if rare & 2 or _EMOJI_BMP.search(text) is not None else _TOKEN


def _astral_as_lucene(m: re.Match[str]) -> str:
    return " " if _RARE_OF[ord(m.group())] & 1 else m.group()


def _window(text: str, start: int) -> int:
    """How many characters from ``start`` fit in Lucene's token buffer of :data:`MAX_TOKEN_LENGTH` UTF-16 units."""
    n = units = 0
    for c in text[start : start + MAX_TOKEN_LENGTH]:
        units += 2 if c > "\uffff" else 1
        if units > MAX_TOKEN_LENGTH:
            break
        n += 1
    return n


def _word_type(word: str) -> str:
    # the grammar's typing rules (NUM, HANGUL and KATAKANA come before the general word rule)
    if _NUM_ONLY.fullmatch(word):
        return "<NUM>"
    if _HANGUL_ONLY.fullmatch(word):
        return "<HANGUL>"
    if _KATAKANA_ONLY.fullmatch(word):
        return "<KATAKANA>"
    return "<ALPHANUM>"


# --- the simple case, for compiled scanners -------------------------------------------------------------------
#: word-break classes of :func:`simple_classes`
OTHER, LETTER, DIGIT, JOIN, MID_LETTER, MID_NUM, MID_BOTH, SPECIAL = range(8)


@functools.cache
def simple_classes() -> tuple[np.ndarray, re.Pattern[str]]:
    """A class per BMP code point for texts where UAX #29 reduces to the ASCII rule, and a pattern that finds
    the characters for which it does not.

    In a text without those characters, a token is a run of letters, digits and connectors (WB5, WB8-10,
    WB13a/b) in which one MidLetter (or MidNumLet / Single_Quote) may stand between two letters (WB6/7) and one
    MidNum (or MidNumLet / Single_Quote) between two digits (WB11/12); a run of connectors alone is no token.
    Special are the characters with rules of their own: combining and format characters (WB4), Hebrew letters
    (the double quote joins only them),
    katakana, Han, hiragana, South-East-Asian letters, emoji, regional indicators, and everything outside the
    BMP. Returns ``(classes, special)``: uint8 classes (:data:`OTHER` ... :data:`SPECIAL`) of the 65,536 BMP
    code points, and a stdlib ``re`` pattern matching any special character (``special.search(text)``).
    """
    codes = np.concatenate([np.arange(0xD800, dtype=np.uint32), np.arange(0xE000, 0x10000, dtype=np.uint32)])
    chars = codes.tobytes().decode("utf-32-le")
    table = np.zeros(0x10000, dtype=np.uint8)

    def mark(pattern: str, value: int) -> None:
        hits = "".join(regex.findall(f"(?:{pattern})+", chars, flags=regex.V1))
        table[np.frombuffer(hits.encode("utf-32-le"), dtype=np.uint32)] = value

    mark(_ALETTER, LETTER)
    mark(_DIGIT, DIGIT)
    mark(r"\p{WB=ExtendNumLet}", JOIN)
    mark(r"\p{WB=MidLetter}", MID_LETTER)
    mark(_MIDNUM_ONLY, MID_NUM)
    mark(r"[\p{WB=MidNumLet}\p{WB=Single_Quote}]", MID_BOTH)
    mark(
        rf"[{_FORMAT_EXTEND}\p{{WB=ZWJ}}\p{{WB=Hebrew_Letter}}\p{{WB=Katakana}}\p{{WB=Regional_Indicator}}"
        rf"\p{{sc=Han}}\p{{sc=Hiragana}}\p{{sc=Hangul}}{_SOUTHEAST_ASIAN}\p{{Extended_Pictographic}}"
        r"[\p{Emoji}--[0-9#*]]]",
        SPECIAL,
    )
    if _EMOJI_RANGES:
        mark(f"[{_class(_EMOJI_RANGES)}]", SPECIAL)
    # in no token of Lucene's (tools/make_standard_unicode.py)
    table[(_RARE[:0x10000] & 1).astype(bool)] = OTHER
    cps = np.flatnonzero(table == SPECIAL)
    breaks = np.flatnonzero(np.diff(cps) != 1)
    starts, ends = cps[np.r_[0, breaks + 1]], cps[np.r_[breaks, len(cps) - 1]]
    ranges = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in zip(starts.tolist(), ends.tolist())
    )
    pattern = re.compile(f"[{ranges}\U00010000-\U0010ffff\ud800-\udfff]")
    return table, pattern
