"""Hindi, Bengali and Telugu as Anserini 0.22.1 analyses them (``-language hi`` / ``bn`` / ``te``): Lucene 9.5's
``HindiAnalyzer``, ``BengaliAnalyzer`` and ``TeluguAnalyzer`` (ported from Lucene, Apache-2.0).

The chains (``createComponents`` in the 9.5.0 class files; no stem exclusion set, so no SetKeywordMarkerFilter):

- Hindi: StandardTokenizer, LowerCaseFilter, DecimalDigitFilter, IndicNormalizationFilter,
  HindiNormalizationFilter, StopFilter (Lucene's ``hi/stopwords.txt``, Savoy's list), HindiStemFilter;
- Bengali: the same with BengaliNormalizationFilter, ``bn/stopwords.txt`` and BengaliStemFilter;
- Telugu: the same with TeluguNormalizationFilter, ``te/stopwords.txt`` and TeluguStemFilter, but *without*
  LowerCaseFilter (Latin tokens keep their case).

Stopwords are matched after normalisation and before stemming. The stemmers are in :mod:`._indic_stem`.

Sources: ``IndicNormalizer`` follows Unicode 5.2 chapter 6 (South Asian Scripts I) and the graphical
decompositions of http://ldc.upenn.edu/myl/IndianScriptsUnicode.html; ``HindiNormalizer`` implements Prasad
Pingali and Vasudeva Varma, "Word normalization in Indian languages", with additions from Leah S. Larkey, Margaret
E. Connell and Nasreen AbdulJaleel, "Hindi CLIR in Thirty Days"; ``BengaliNormalizer`` follows Naushad UzZaman and
Mumit Khan, "A Double Metaphone encoding for Bangla and its application in spelling checker"; ``TeluguNormalizer``
is Lucene's own (since 9.0).

Every normaliser scans a token left to right and, where it rewrites or deletes, never looks again at what it
wrote; Lucene's look-ahead always sees original characters. So the Indic, Hindi and Telugu normalisers are a
left-to-right regular-expression substitution; the Bengali one, which also looks behind at characters it may
have rewritten, is ported loop for loop (on UTF-16 units, as Java runs it) for tokens with a virama or visarga.
"""

from __future__ import annotations

import re
from array import array
from importlib import resources

from ._base import Language, decimal_digits, lower_java
from ._indic_stem import bengali_stem, hindi_stem, stem_all, telugu_stem

__all__ = [
    "BENGALI",
    "HINDI",
    "LANGUAGES",
    "TELUGU",
    "bengali_normalize",
    "bengali_stem",
    "bengali_terms",
    "hindi_normalize",
    "hindi_stem",
    "hindi_terms",
    "indic_normalize",
    "indic_stopwords",
    "telugu_normalize",
    "telugu_stem",
    "telugu_terms",
]

# --- DecimalDigitFilter (a private copy: this module depends on no other analysis family) ---------------------

# --- IndicNormalizer ------------------------------------------------------------------------------------------

# Unicode blocks (128 code points each) and Lucene's flag bits
_BASES = {
    1: 0x0900,
    2: 0x0980,
    4: 0x0A00,
    8: 0x0A80,
    16: 0x0B00,
    32: 0x0B80,
    64: 0x0C00,
    128: 0x0C80,
    256: 0x0D00,
}
# Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam
_DEV, _BEN, _GUR, _GUJ, _ORI, _TAM, _TEL, _KAN, _MAL = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_ZWJ = 0xFF
# IndicNormalizer.decompositions (read from the 9.5.0 class): offsets into the script's block of the decomposed
# characters (the third -1 = none, 0xFF = zero-width joiner), the offset of the composed character, and the scripts
# it applies to. At each position the first matching row (in this order) replaces the two or three characters.
_DECOMPOSITIONS = (
    (0x05, 0x3E, 0x45, 0x11, _DEV | _GUJ),
    (0x05, 0x3E, 0x46, 0x12, _DEV),
    (0x05, 0x3E, 0x47, 0x13, _DEV | _GUJ),
    (0x05, 0x3E, 0x48, 0x14, _DEV | _GUJ),
    (0x05, 0x3E, -1, 0x06, _DEV | _BEN | _GUR | _GUJ | _ORI),
    (0x05, 0x45, -1, 0x72, _DEV),
    (0x05, 0x45, -1, 0x0D, _GUJ),
    (0x05, 0x46, -1, 0x04, _DEV),
    (0x05, 0x47, -1, 0x0F, _GUJ),
    (0x05, 0x48, -1, 0x10, _GUR | _GUJ),
    (0x05, 0x49, -1, 0x11, _DEV | _GUJ),
    (0x05, 0x4A, -1, 0x12, _DEV),
    (0x05, 0x4B, -1, 0x13, _DEV | _GUJ),
    (0x05, 0x4C, -1, 0x14, _DEV | _GUR | _GUJ),
    (0x06, 0x45, -1, 0x11, _DEV | _GUJ),
    (0x06, 0x46, -1, 0x12, _DEV),
    (0x06, 0x47, -1, 0x13, _DEV | _GUJ),
    (0x06, 0x48, -1, 0x14, _DEV | _GUJ),
    (0x07, 0x57, -1, 0x08, _MAL),
    (0x09, 0x41, -1, 0x0A, _DEV),
    (0x09, 0x57, -1, 0x0A, _TAM | _MAL),
    (0x0E, 0x46, -1, 0x10, _MAL),
    (0x0F, 0x45, -1, 0x0D, _DEV),
    (0x0F, 0x46, -1, 0x0E, _DEV),
    (0x0F, 0x47, -1, 0x10, _DEV),
    (0x0F, 0x57, -1, 0x10, _ORI),
    (0x12, 0x3E, -1, 0x13, _MAL),
    (0x12, 0x4C, -1, 0x14, _TEL | _KAN),
    (0x12, 0x55, -1, 0x13, _TEL),
    (0x12, 0x57, -1, 0x14, _TAM | _MAL),
    (0x13, 0x57, -1, 0x14, _ORI),
    (0x15, 0x3C, -1, 0x58, _DEV),
    (0x16, 0x3C, -1, 0x59, _DEV | _GUR),
    (0x17, 0x3C, -1, 0x5A, _DEV | _GUR),
    (0x1C, 0x3C, -1, 0x5B, _DEV | _GUR),
    (0x21, 0x3C, -1, 0x5C, _DEV | _BEN | _ORI),
    (0x22, 0x3C, -1, 0x5D, _DEV | _BEN | _ORI),
    (0x23, 0x4D, _ZWJ, 0x7A, _MAL),
    (0x24, 0x4D, _ZWJ, 0x4E, _BEN),
    (0x28, 0x3C, -1, 0x29, _DEV),
    (0x28, 0x4D, _ZWJ, 0x7B, _MAL),
    (0x2B, 0x3C, -1, 0x5E, _DEV | _GUR),
    (0x2F, 0x3C, -1, 0x5F, _DEV | _BEN),
    (0x2C, 0x41, 0x41, 0x0B, _TEL),
    (0x30, 0x3C, -1, 0x31, _DEV),
    (0x30, 0x4D, _ZWJ, 0x7C, _MAL),
    (0x32, 0x4D, _ZWJ, 0x7D, _MAL),
    (0x33, 0x3C, -1, 0x34, _DEV),
    (0x33, 0x4D, _ZWJ, 0x7E, _MAL),
    (0x35, 0x41, -1, 0x2E, _TEL),
    (0x3E, 0x45, -1, 0x49, _DEV | _GUJ),
    (0x3E, 0x46, -1, 0x4A, _DEV),
    (0x3E, 0x47, -1, 0x4B, _DEV | _GUJ),
    (0x3E, 0x48, -1, 0x4C, _DEV | _GUJ),
    (0x3F, 0x55, -1, 0x40, _KAN),
    (0x41, 0x41, -1, 0x42, _GUR),
    (0x46, 0x3E, -1, 0x4A, _TAM | _MAL),
    (0x46, 0x42, 0x55, 0x4B, _KAN),
    (0x46, 0x42, -1, 0x4A, _KAN),
    (0x46, 0x46, -1, 0x48, _MAL),
    (0x46, 0x55, -1, 0x47, _TEL | _KAN),
    (0x46, 0x56, -1, 0x48, _TEL | _KAN),
    (0x46, 0x57, -1, 0x4C, _TAM | _MAL),
    (0x47, 0x3E, -1, 0x4B, _BEN | _ORI | _TAM | _MAL),
    (0x47, 0x57, -1, 0x4C, _BEN | _ORI),
    (0x4A, 0x55, -1, 0x4B, _KAN),
    (0x72, 0x3F, -1, 0x07, _GUR),
    (0x72, 0x40, -1, 0x08, _GUR),
    (0x72, 0x47, -1, 0x0F, _GUR),
    (0x73, 0x41, -1, 0x09, _GUR),
    (0x73, 0x42, -1, 0x0A, _GUR),
    (0x73, 0x4B, -1, 0x13, _GUR),
)


def _compile_indic() -> tuple[re.Pattern[str], dict[str, str]]:
    """The decompositions as one alternation, rows in table order. ``IndicNormalizer.compose`` needs the
    following characters in the block of the first (ZWJ aside), which spelling each row's characters out in
    that block ensures; a row with no third character matches whatever follows."""
    alternatives: list[str] = []
    composed: dict[str, str] = {}
    for ch0, ch1, ch2, res, flags in _DECOMPOSITIONS:
        for flag, base in _BASES.items():
            if flags & flag:
                seq = chr(base + ch0) + chr(base + ch1)
                if ch2 >= 0:
                    seq += "\u200d" if ch2 == _ZWJ else chr(base + ch2)
                alternatives.append(seq)
                composed[seq] = chr(base + res)
    return re.compile("|".join(alternatives)), composed


_INDIC_RE, _INDIC_COMPOSED = _compile_indic()
# a token holding no Indic character (U+0900..U+0D7F) is left alone
_INDIC_ANY = re.compile("[\u0900-\u0d7f]")


def indic_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``IndicNormalizer`` (IndicNormalizationFilter) on each token: decomposed vowels, nukta forms and
    chillus of the nine Indic scripts are composed."""
    sub, composed, anyc = _INDIC_RE.sub, _INDIC_COMPOSED, _INDIC_ANY.search
    repl = lambda m: composed[m.group()]  # noqa: E731
    return [sub(repl, t) if anyc(t) else t for t in tokens]


# --- HindiNormalizer ------------------------------------------------------------------------------------------

# Lucene's HindiNormalizer, character by character: candrabindu -> anusvara; nukta, virama, ZWJ and ZWNJ deleted;
# the nukta letters (precomposed) -> their base letters; candra / short vowels -> the long ones; long independent
# and dependent vowels -> the short ones. NA + virama -> anusvara is done first (see :func:`hindi_normalize`).
_HINDI_NORM: dict[int, str | None] = {
    0x0901: "\u0902",
    **{c: None for c in (0x093C, 0x094D, 0x200C, 0x200D)},
    0x0929: "\u0928",
    0x0931: "\u0930",
    0x0934: "\u0933",
    0x0958: "\u0915",
    0x0959: "\u0916",
    0x095A: "\u0917",
    0x095B: "\u091c",
    0x095C: "\u0921",
    0x095D: "\u0922",
    0x095E: "\u092b",
    0x095F: "\u092f",
    0x0945: "\u0947",
    0x0946: "\u0947",
    0x0949: "\u094b",
    0x094A: "\u094b",
    0x090D: "\u090f",
    0x090E: "\u090f",
    0x0911: "\u0913",
    0x0912: "\u0913",
    0x0972: "\u0905",
    0x0906: "\u0905",
    0x0908: "\u0907",
    0x090A: "\u0909",
    0x0960: "\u090b",
    0x0961: "\u090c",
    0x0910: "\u090f",
    0x0914: "\u0913",
    0x0940: "\u093f",
    0x0942: "\u0941",
    0x0944: "\u0943",
    0x0963: "\u0962",
    0x0948: "\u0947",
    0x094C: "\u094b",
}
_HINDI_ANY = re.compile("[\u0900-\u097f\u200c\u200d]")


def hindi_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``HindiNormalizer`` (HindiNormalizationFilter) on each token. NA followed by virama (as written,
    before any deletion) becomes anusvara; every other rule maps one character regardless of its neighbours."""
    table, anyc = _HINDI_NORM, _HINDI_ANY.search
    return [t.replace("\u0928\u094d", "\u0902").translate(table) if anyc(t) else t for t in tokens]


# --- BengaliNormalizer ----------------------------------------------------------------------------------------

# the rules of Lucene's BengaliNormalizer that ignore the neighbours: chandrabindu deleted, long i / u signs ->
# short, nga -> anusvara, sha / ssa -> sa, nna -> na, rra / rha -> ra, khanda ta -> ta
_BENGALI_NORM: dict[int, str | None] = {
    0x0981: None,
    0x09C0: "\u09bf",
    0x09C2: "\u09c1",
    0x0999: "\u0982",
    0x09B6: "\u09b8",
    0x09B7: "\u09b8",
    0x09A3: "\u09a8",
    0x09DC: "\u09b0",
    0x09DD: "\u09b0",
    0x09CE: "\u09a4",
}
_BENGALI_ANY = re.compile("[\u0980-\u09ff]")
_VIRAMA, _VISARGA = "\u09cd", "\u0983"


def _bengali_normalize_loop(token: str) -> str:
    """``BengaliNormalizer.normalize`` line for line, on the token's UTF-16 units (its lengths are Java's)."""
    if token.isascii() or max(token) <= "\uffff":
        s = list(token)
    else:
        s = [chr(u) for u in array("H", token.encode("utf-16-le"))]
    n = len(s)
    i = 0
    while i < n:
        c = s[i]
        if c == "\u0981":  # chandrabindu: deleted
            del s[i]
            n -= 1
            i -= 1
        elif c == "\u0995":  # KA + virama + I sign ("khio")
            if i + 2 < n and s[i + 1] == _VIRAMA and s[i + 2] == "\u09bf":
                if i == 0:
                    s[i] = "\u0996"
                    del s[i + 1 : i + 3]
                    n -= 2
                else:
                    s[i + 1] = "\u0996"
                    del s[i + 2]
                    n -= 1
        elif c == "\u09af":  # ya-phala
            if i == 2 and s[i - 1] == _VIRAMA:
                s[i - 1] = "\u09c7"
                if i + 1 < n and s[i + 1] == "\u09be":
                    del s[i + 1]
                    n -= 1
                del s[i]
                n -= 1
                i -= 1
            elif i >= 1 and s[i - 1] == _VIRAMA:
                del s[i - 1 : i + 1]
                n -= 2
                i -= 2
        elif c == "\u09ac":  # ba-phala
            if i >= 1 and s[i - 1] == _VIRAMA:
                if i == 2 or (i >= 5 and s[i - 3] == _VIRAMA):
                    del s[i - 1 : i + 1]
                    n -= 2
                    i -= 2
                elif i >= 2:
                    s[i - 1] = s[i - 2]
                    del s[i]
                    n -= 1
                    i -= 1
        elif c == _VISARGA:
            if i == n - 1:
                if n <= 3:
                    s[i] = "\u09b9"
                else:
                    del s[i]
                    n -= 1
            else:
                s[i] = s[i + 1]
        elif c in "\u09c0\u09c2\u0999\u09b6\u09b7\u09a3\u09dc\u09dd\u09ce":
            s[i] = c.translate(_BENGALI_NORM)
        i += 1
    out = "".join(s)
    if any("\ud800" <= u <= "\udfff" for u in s):
        out = out.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return out


def bengali_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``BengaliNormalizer`` (BengaliNormalizationFilter) on each token. Its context rules (ya-phala,
    ba-phala, "khio", visarga) all need a virama or a visarga; other tokens only meet the one-character rules."""
    table, anyc = _BENGALI_NORM, _BENGALI_ANY.search
    return [
        t
        if not anyc(t)
        else _bengali_normalize_loop(t)
        if _VIRAMA in t or _VISARGA in t
        else t.translate(table)
        for t in tokens
    ]


# --- TeluguNormalizer -----------------------------------------------------------------------------------------

# Lucene's TeluguNormalizer: candrabindus -> anusvara; visarga, ZWJ, ZWNJ deleted; long vowels (independent and
# signs) -> short; E sign + AI length mark -> AI sign; O + length mark -> OO, O + AU sign -> AU. The pairs are
# listed first: Lucene looks at a pair from its first character and does not look again at what it wrote.
_TELUGU_NORM: dict[str, str] = {
    "\u0c46\u0c56": "\u0c48",
    "\u0c12\u0c55": "\u0c13",
    "\u0c12\u0c4c": "\u0c14",
    "\u0c00": "\u0c02",
    "\u0c01": "\u0c02",
    "\u0c03": "",
    "\u200c": "",
    "\u200d": "",
    "\u0c14": "\u0c13",
    "\u0c10": "\u0c0f",
    "\u0c06": "\u0c05",
    "\u0c08": "\u0c07",
    "\u0c0a": "\u0c09",
    "\u0c40": "\u0c3f",
    "\u0c42": "\u0c41",
    "\u0c47": "\u0c46",
    "\u0c4b": "\u0c4a",
}
_TELUGU_RE = re.compile("|".join(_TELUGU_NORM))
_TELUGU_ANY = re.compile("[\u0c00-\u0c7f\u200c\u200d]")


def telugu_normalize(tokens: list[str]) -> list[str]:
    """Lucene's ``TeluguNormalizer`` (TeluguNormalizationFilter) on each token."""
    sub, table, anyc = _TELUGU_RE.sub, _TELUGU_NORM, _TELUGU_ANY.search
    repl = lambda m: table[m.group()]  # noqa: E731
    return [sub(repl, t) if anyc(t) else t for t in tokens]


# --- stopwords and the analyzers ------------------------------------------------------------------------------

_STOP_CACHE: dict[str, frozenset[str]] = {}


def indic_stopwords(code: str) -> frozenset[str]:
    """Lucene's default stop set of ``code`` (``"hi"``, ``"bn"``, ``"te"``), read as ``WordlistLoader.getWordSet``
    reads it: lines starting with ``#`` skipped, the others trimmed and kept whole (the Telugu list holds two
    two-word entries, which no single token matches)."""
    words = _STOP_CACHE.get(code)
    if words is None:
        text = resources.files("pyterrier_sparse_eval").joinpath(f"data/lucene/{code}_stopwords.txt")
        lines = re.split(r"\r\n|\r|\n", text.read_text("utf-8"))
        # Java's String.trim drops the characters up to U+0020 at both ends
        trimmed = (line.strip("".join(map(chr, range(33)))) for line in lines if not line.startswith("#"))
        words = _STOP_CACHE[code] = frozenset(w for w in trimmed if w)
    return words


def _drop(tokens: list[str], stop: frozenset[str]) -> list[str]:
    return ["" if t in stop else t for t in tokens]


def hindi_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's HindiAnalyzer for raw StandardTokenizer tokens (``""`` = dropped)."""
    terms = hindi_normalize(indic_normalize(decimal_digits(lower_java(tokens))))
    return stem_all(_drop(terms, indic_stopwords("hi")), "hi")


def bengali_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's BengaliAnalyzer for raw StandardTokenizer tokens (``""`` = dropped)."""
    terms = bengali_normalize(indic_normalize(decimal_digits(lower_java(tokens))))
    return stem_all(_drop(terms, indic_stopwords("bn")), "bn")


def telugu_terms(tokens: list[str]) -> list[str]:
    """The terms of Lucene 9.5's TeluguAnalyzer for raw StandardTokenizer tokens (``""`` = dropped); no
    lowercasing, as in Lucene."""
    terms = telugu_normalize(indic_normalize(decimal_digits(list(tokens))))
    return stem_all(_drop(terms, indic_stopwords("te")), "te")


HINDI = Language(code="hi", name="Hindi", lucene="Lucene 9.5 HindiAnalyzer", term=hindi_terms)
BENGALI = Language(code="bn", name="Bengali", lucene="Lucene 9.5 BengaliAnalyzer", term=bengali_terms)
TELUGU = Language(
    code="te", name="Telugu", lucene="Lucene 9.5 TeluguAnalyzer", term=telugu_terms, lowercases=False
)

LANGUAGES: dict[str, Language] = {"hi": HINDI, "bn": BENGALI, "te": TELUGU}
