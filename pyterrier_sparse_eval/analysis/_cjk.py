"""Chinese and Korean as Anserini 0.22.1 analyses them (``-language zh`` / ``ko``): Lucene 9.5's ``CJKAnalyzer``.

The chain (``CJKAnalyzer.createComponents``): StandardTokenizer, CJKWidthFilter, LowerCaseFilter,
CJKBigramFilter (default flags: Han, Hiragana, Katakana and Hangul are bigrammed; no unigrams besides lone
characters), StopFilter (``cjk/stopwords.txt``: English function words and "www", "s", "t").

* :func:`cjk_width` ports ``CJKWidthFilter``: fullwidth ASCII (U+FF01..U+FF5E) becomes basic Latin, halfwidth
  katakana (U+FF65..U+FF9F) fullwidth katakana, and a halfwidth (semi-)voiced sound mark composes with the kana
  before it (ｶﾞ -> ガ, ﾊﾟ -> パ) when such a composed kana exists.
* :func:`cjk_bigrams` ports ``CJKBigramFilter``: it reads the StandardTokenizer's token types
  (``<IDEOGRAPHIC>``, ``<HIRAGANA>``, ``<KATAKANA>``, ``<HANGUL>``) and offsets. The code points of CJK tokens that
  touch (a token starts where the previous CJK token ended) form one run, whatever their scripts; a run of two or
  more code points gives its overlapping bigrams ("ABC" -> "AB", "BC"), a run of one code point that code point
  alone. A gap, or any other token, ends the run; other tokens pass through unchanged.

Width folding and lowercasing are per token, so :func:`cjk_terms` (the memoised step) applies them to every
token, with the stop list; :func:`cjk_bigrams` applies them to the CJK tokens first, as the bigrams are built
from the folded text (the width filter may join two characters into one). Both are idempotent.
"""

from __future__ import annotations

from ._base import Language, Token, lower_java, read_word_list

__all__ = ["CHINESE", "CJK_TYPES", "KOREAN", "LANGUAGES", "cjk_bigrams", "cjk_terms", "cjk_width"]

#: the StandardTokenizer types that CJKBigramFilter bigrams by default (HAN | HIRAGANA | KATAKANA | HANGUL)
CJK_TYPES = frozenset(("<IDEOGRAPHIC>", "<HIRAGANA>", "<KATAKANA>", "<HANGUL>"))
_DOUBLE, _SINGLE = "<DOUBLE>", "<SINGLE>"  # CJKBigramFilter.DOUBLE_TYPE / SINGLE_TYPE

# --- CJKWidthFilter -----------------------------------------------------------------------------------------------

# halfwidth kana U+FF65..U+FF9F -> fullwidth (U+FF9E/U+FF9F -> the combining marks when they cannot compose)
_KANA_NORM = (
    0x30FB, 0x30F2, 0x30A1, 0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30E3, 0x30E5,
    0x30E7, 0x30C3, 0x30FC, 0x30A2, 0x30A4, 0x30A6, 0x30A8, 0x30AA, 0x30AB,
    0x30AD, 0x30AF, 0x30B1, 0x30B3, 0x30B5, 0x30B7, 0x30B9, 0x30BB, 0x30BD,
    0x30BF, 0x30C1, 0x30C4, 0x30C6, 0x30C8, 0x30CA, 0x30CB, 0x30CC, 0x30CD,
    0x30CE, 0x30CF, 0x30D2, 0x30D5, 0x30D8, 0x30DB, 0x30DE, 0x30DF, 0x30E0,
    0x30E1, 0x30E2, 0x30E4, 0x30E6, 0x30E8, 0x30E9, 0x30EA, 0x30EB, 0x30EC,
    0x30ED, 0x30EF, 0x30F3, 0x3099, 0x309A,
)  # fmt: skip
# what a following voiced (U+FF9E) / semi-voiced (U+FF9F) mark adds to a kana in U+30A6..U+30FD (0: nothing)
_VOICED = (
    78, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0,
    1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
)  # fmt: skip
_SEMI_VOICED = (
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 2, 0, 0, 2,
    0, 0, 2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
)  # fmt: skip
_FULLWIDTH = str.maketrans({c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)})


def cjk_width(token: str) -> str:
    """Lucene's ``CJKWidthFilter`` on one token: fullwidth ASCII variants to basic Latin, halfwidth katakana to
    fullwidth, composing a halfwidth voiced / semi-voiced sound mark with the kana before it when it can."""
    if token.isascii() or max(token) < "\uff01":
        return token
    token = token.translate(_FULLWIDTH)
    if max(token) < "\uff65":
        return token
    out: list[str] = []
    for c in token:
        cp = ord(c)
        if 0xFF65 <= cp <= 0xFF9F:
            if (cp == 0xFF9E or cp == 0xFF9F) and out:
                prev = ord(out[-1])
                if 0x30A6 <= prev <= 0x30FD:
                    diff = (_SEMI_VOICED if cp == 0xFF9F else _VOICED)[prev - 0x30A6]
                    if diff:
                        out[-1] = chr(prev + diff)
                        continue
            c = chr(_KANA_NORM[cp - 0xFF65])
        out.append(c)
    return "".join(out)


# --- CJKBigramFilter ----------------------------------------------------------------------------------------------


def cjk_bigrams(tokens: list[Token]) -> list[Token]:
    """Lucene's ``CJKBigramFilter`` (default flags, no extra unigrams) on StandardTokenizer tokens, after
    CJKWidthFilter and LowerCaseFilter on the CJK ones (the other tokens pass unchanged: :func:`cjk_terms`
    folds them). Offsets need only be consistent (code points or UTF-16 units): the filter compares a token's
    start with the previous CJK token's end."""
    out: list[Token] = []
    run: list[Token] = []  # the current run of touching CJK tokens (text folded)
    last_end = 0  # CJKBigramFilter.lastEndOffset: the end of the last CJK token
    for tok in tokens:
        if tok.type not in CJK_TYPES:
            if run:
                _flush(run, out)
            out.append(tok)
            continue
        if tok.start != last_end and run:
            _flush(run, out)
        last_end = tok.end
        text = tok.text
        if max(text) >= "\uff01":  # fullwidth or halfwidth forms (or supplementary characters)
            text = cjk_width(text)
        if text.lower() != text:
            text = lower_java([text])[0]
        run.append(tok if text is tok.text else tok._replace(text=text))
    if run:
        _flush(run, out)
    return out


def _flush(run: list[Token], out: list[Token]) -> None:
    """The bigrams of a run of touching CJK tokens (its unigram if it is one code point), then clear it."""
    if len(run) == 1 and len(run[0].text) == 1:  # a lone CJK character
        out.append(run[0]._replace(type=_SINGLE))
        run.clear()
        return
    text = "".join(t.text for t in run)
    starts: list[int] = []
    ends: list[int] = []
    for t in run:
        n = len(t.text)
        if n == t.end - t.start:  # an offset per code point, as Lucene's refill (per UTF-16 unit there)
            starts.extend(range(t.start, t.end))
            ends.extend(range(t.start + 1, t.end + 1))
        else:  # the width filter changed the length: every code point gets the token's offsets
            starts.extend([t.start] * n)
            ends.extend([t.end] * n)
    out.extend(Token(text[i : i + 2], _DOUBLE, starts[i], ends[i + 1]) for i in range(len(text) - 1))
    run.clear()


# --- the analyzer -------------------------------------------------------------------------------------------------

_STOP: list[frozenset[str]] = []


def _stopwords() -> frozenset[str]:
    if not _STOP:
        # Lucene's WordlistLoader.getWordSet(reader, "#")
        _STOP.append(read_word_list("lucene/cjk_stopwords.txt"))
    return _STOP[0]


def cjk_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's CJKAnalyzer for the tokens :func:`cjk_bigrams` gives (``""`` = dropped):
    CJKWidthFilter and LowerCaseFilter (already done for bigrams and unigrams; idempotent), StopFilter."""
    stop = _stopwords()
    return ["" if t in stop else t for t in lower_java([cjk_width(t) for t in tokens])]


CHINESE = Language(
    code="zh", name="Chinese", lucene="Lucene 9.5 CJKAnalyzer", term=cjk_terms, sequence=cjk_bigrams
)
KOREAN = Language(
    code="ko", name="Korean", lucene="Lucene 9.5 CJKAnalyzer", term=cjk_terms, sequence=cjk_bigrams
)

LANGUAGES: dict[str, Language] = {"zh": CHINESE, "ko": KOREAN}
