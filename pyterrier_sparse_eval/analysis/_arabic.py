"""Arabic and Persian as Anserini 0.22.1 analyses them (``-language ar`` / ``-language fa``): Lucene 9.5's
``ArabicAnalyzer`` and ``PersianAnalyzer``.

Arabic (``ArabicAnalyzer.createComponents``): StandardTokenizer, LowerCaseFilter, DecimalDigitFilter,
StopFilter (Lucene's ``ar/stopwords.txt``, Savoy's list, matched before normalisation), ArabicNormalizationFilter,
ArabicStemFilter (the light stemmer of Larkey, Ballesteros & Connell, "Improving Stemming for Arabic
Information Retrieval: Light Stemming and Co-occurrence Analysis", SIGIR 2002).

Persian (``PersianAnalyzer``): PersianCharFilter (zero-width non-joiner U+200C -> space, before tokenising),
StandardTokenizer, LowerCaseFilter, DecimalDigitFilter, ArabicNormalizationFilter, PersianNormalizationFilter,
StopFilter (Lucene's ``fa/stopwords.txt``, Savoy's list, matched *after* normalisation). Lucene 9.5 ships a
PersianStemFilter, but its PersianAnalyzer does not apply it (checked in the 9.5 bytecode and with Lucene).

The normalisers and the stemmer work on Java ``char`` s (UTF-16 units); every character they look at or delete
is in the BMP, so only the stemmer's length checks need UTF-16 lengths (:func:`utf16_len`). As in Lucene, a
token that normalisation empties (a lone tatweel, ``"ـ"``) becomes the empty term, which Lucene indexes: it counts
in the document's length, and a document of nothing else counts in the document count. ``""`` is "dropped" in
the :class:`~._base.Language` contract, so the chains give :data:`EMPTY` for it (a tatweel, which normalisation
leaves in no other term), the language's ``empty`` term: indexed, never a query term (Anserini's queries leave
the empty term out).
"""

from __future__ import annotations

from ._base import Language, decimal_digits, lower_java, read_word_list, utf16_len

__all__ = [
    "ARABIC",
    "LANGUAGES",
    "PERSIAN",
    "arabic_normalize",
    "arabic_stem",
    "arabic_terms",
    "decimal_digits",
    "persian_char_filter",
    "persian_normalize",
    "persian_terms",
]

# --- DecimalDigitFilter ---------------------------------------------------------------------------------------

# --- ArabicNormalizer / PersianNormalizer ---------------------------------------------------------------------

# Lucene's ArabicNormalizer: alef madda / hamza above / hamza below -> alef, dotless yeh (alef maksura) -> yeh,
# teh marbuta -> heh; tatweel and the harakat (fathatan, dammatan, kasratan, fatha, damma, kasra, shadda,
# sukun) deleted.
_ARABIC_NORM: dict[int, str | None] = {
    0x0622: "\u0627",
    0x0623: "\u0627",
    0x0625: "\u0627",
    0x0649: "\u064a",
    0x0629: "\u0647",
    **{c: None for c in (0x0640, 0x064B, 0x064C, 0x064D, 0x064E, 0x064F, 0x0650, 0x0651, 0x0652)},
}
# Lucene's PersianNormalizer: farsi yeh and yeh barree -> yeh, keheh -> kaf, heh with yeh above and heh goal
# -> heh, hamza above (U+0654) deleted.
_PERSIAN_NORM: dict[int, str | None] = {
    0x06CC: "\u064a",
    0x06D2: "\u064a",
    0x06A9: "\u0643",
    0x06C0: "\u0647",
    0x06C1: "\u0647",
    0x0654: None,
}


def arabic_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``ArabicNormalizer`` (ArabicNormalizationFilter) on each token."""
    table = _ARABIC_NORM
    return [t if t.isascii() else t.translate(table) for t in tokens]


def persian_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``PersianNormalizer`` (PersianNormalizationFilter) on each token."""
    table = _PERSIAN_NORM
    return [t if t.isascii() else t.translate(table) for t in tokens]


# --- ArabicStemmer (Larkey et al.'s light stemmer) ------------------------------------------------------------

_ALEF, _BEH, _TEH_MARBUTA, _TEH, _FEH = "\u0627", "\u0628", "\u0629", "\u062a", "\u0641"
_KAF, _LAM, _NOON, _HEH, _WAW, _YEH = "\u0643", "\u0644", "\u0646", "\u0647", "\u0648", "\u064a"

# Lucene's ArabicStemmer.prefixes, in its order: the first that matches is removed (one at most)
_PREFIXES = (
    _ALEF + _LAM,
    _WAW + _ALEF + _LAM,
    _BEH + _ALEF + _LAM,
    _KAF + _ALEF + _LAM,
    _FEH + _ALEF + _LAM,
    _LAM + _LAM,
    _WAW,
)
# Lucene's ArabicStemmer.suffixes, in its order: each is tried once, in turn, on what the previous left
_SUFFIXES = (
    _HEH + _ALEF,
    _ALEF + _NOON,
    _ALEF + _TEH,
    _WAW + _NOON,
    _YEH + _NOON,
    _YEH + _HEH,
    _YEH + _TEH_MARBUTA,
    _HEH,
    _TEH_MARBUTA,
    _YEH,
)
_PREFIX_FIRST = frozenset(p[0] for p in _PREFIXES)
_SUFFIX_LAST = frozenset(s[-1] for s in _SUFFIXES)


def arabic_stem(word: str) -> str:
    """Lucene's ``ArabicStemmer.stem``: strip one prefix (the first of :data:`_PREFIXES` that matches, if at least
    two characters remain, three for wa-), then try each suffix of :data:`_SUFFIXES` in turn, stripping it
    where at least two characters remain (Larkey, Ballesteros & Connell's light stemming)."""
    n = utf16_len(word)
    for p in _PREFIXES:
        if (n >= 4 if len(p) == 1 else n >= len(p) + 2) and word.startswith(p):
            word = word[len(p) :]
            n -= len(p)
            break
    for s in _SUFFIXES:
        if n >= len(s) + 2 and word.endswith(s):
            word = word[: -len(s)]
            n -= len(s)
    return word


def _arabic_stems(tokens: list[str]) -> list[str]:
    first, last = _PREFIX_FIRST, _SUFFIX_LAST
    return [arabic_stem(t) if t and (t[0] in first or t[-1] in last) else t for t in tokens]


# --- the analyzers --------------------------------------------------------------------------------------------

_STOP_CACHE: dict[str, frozenset[str]] = {}


def _stopwords(code: str) -> frozenset[str]:
    words = _STOP_CACHE.get(code)
    if words is None:
        # Lucene's WordlistLoader skips lines starting with "#" and trims the rest; the lists hold one word a line
        words = _STOP_CACHE[code] = read_word_list(f"lucene/{code}_stopwords.txt")
    return words


#: the term standing for Lucene's empty term (see the module's docstring)
EMPTY = "\u0640"


def _emptied(before: list[str], after: list[str]) -> list[str]:
    """``after`` (normalised ``before``) with :data:`EMPTY` for each token normalisation emptied."""
    return [EMPTY if not a and b else a for b, a in zip(before, after)]


def _drop(tokens: list[str], stop: frozenset[str]) -> list[str]:
    return ["" if t in stop else t for t in tokens]


def arabic_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's ArabicAnalyzer for raw StandardTokenizer tokens (``""`` = dropped)."""
    terms = _drop(decimal_digits(lower_java(tokens)), _stopwords("ar"))
    return _arabic_stems(_emptied(terms, arabic_normalize(terms)))


def persian_char_filter(text: str) -> str:
    """Lucene's ``PersianCharFilter``: each zero-width non-joiner (U+200C) becomes a space (offsets unchanged)."""
    return text.replace("\u200c", " ")


def persian_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's PersianAnalyzer for raw StandardTokenizer tokens of the char-filtered text."""
    lowered = decimal_digits(lower_java(tokens))
    return _drop(_emptied(lowered, persian_normalize(arabic_normalize(lowered))), _stopwords("fa"))


ARABIC = Language(
    code="ar", name="Arabic", lucene="Lucene 9.5 ArabicAnalyzer", term=arabic_terms, empty=EMPTY
)
PERSIAN = Language(
    code="fa",
    name="Persian",
    lucene="Lucene 9.5 PersianAnalyzer",
    term=persian_terms,
    char_filter=persian_char_filter,
    empty=EMPTY,
)

LANGUAGES: dict[str, Language] = {"ar": ARABIC, "fa": PERSIAN}
