"""Spanish, French, Italian and Portuguese as Anserini 0.22.1 analyses them (``-language es/fr/it/pt``):
Lucene 9.5's ``SpanishAnalyzer``, ``FrenchAnalyzer``, ``ItalianAnalyzer`` and ``PortugueseAnalyzer``.

The chains (each analyzer's ``createComponents``, checked in the 9.5 bytecode and against Lucene):

- es: StandardTokenizer, LowerCaseFilter, StopFilter, SpanishLightStemFilter;
- fr: StandardTokenizer, ElisionFilter (``FrenchAnalyzer.DEFAULT_ARTICLES``), LowerCaseFilter, StopFilter,
  FrenchLightStemFilter;
- it: StandardTokenizer, ElisionFilter (``ItalianAnalyzer.DEFAULT_ARTICLES``), LowerCaseFilter, StopFilter,
  ItalianLightStemFilter;
- pt: StandardTokenizer, LowerCaseFilter, StopFilter, PortugueseLightStemFilter.

The stop lists are Snowball's, as shipped in Lucene (``snowball/{spanish,french,italian,portuguese}_stop.txt``).
The stemmers port Lucene's ``SpanishLightStemmer`` and ``ItalianLightStemmer`` (Jacques Savoy, "Report on
CLEF-2001 Experiments"), ``FrenchLightStemmer`` and ``PortugueseLightStemmer`` (the "UniNE" algorithm of Savoy,
"Light Stemming Approaches for the French, Portuguese, German and Hungarian Languages", ACM SAC 2006); Lucene's
code follows Savoy's (Copyright (c) 2005, Jacques Savoy, BSD licence). PortugueseAnalyzer uses the light
stemmer, not the RSLP ones (``PortugueseStemmer``/``PortugueseMinimalStemmer``), so no rule file is needed.

The stemmers work on Java ``char`` s (UTF-16 units): a token holding a supplementary character is stemmed as its
UTF-16 units (:func:`~._base.utf16_units`), so that length checks count two units for it, as in Lucene.
"""

from __future__ import annotations

from collections.abc import Callable

from ._base import Language, from_utf16_units, lower_java, read_word_list, utf16_units

__all__ = [
    "FRENCH",
    "FRENCH_ARTICLES",
    "ITALIAN",
    "ITALIAN_ARTICLES",
    "LANGUAGES",
    "PORTUGUESE",
    "SPANISH",
    "elide",
    "french_light_stem",
    "italian_light_stem",
    "portuguese_light_stem",
    "spanish_light_stem",
]


def _on_units(stem: Callable[[str], str]) -> Callable[[str], str]:
    """``stem`` (written for strings of BMP characters) applied to the UTF-16 units of any word."""

    def wrapped(word: str) -> str:
        if word.isascii() or max(word) <= "\uffff":
            return stem(word)
        return from_utf16_units(stem(utf16_units(word)))

    wrapped.__name__ = stem.__name__.lstrip("_")
    wrapped.__doc__ = stem.__doc__
    return wrapped


# --- ElisionFilter ---------------------------------------------------------------------------------------------

#: ``FrenchAnalyzer.DEFAULT_ARTICLES``
FRENCH_ARTICLES = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
#: ``ItalianAnalyzer.DEFAULT_ARTICLES``
ITALIAN_ARTICLES = frozenset(
    "c l all dall dell nell sull coll pell gl agl dagl degl negl sugl un m t s v d".split()
)  # fmt: skip


def elide(tokens: list[str], articles: frozenset[str]) -> list[str]:
    """Lucene's ``ElisionFilter``: if the text before a token's first apostrophe (``'`` or ``’``) is one of
    ``articles`` (compared ignoring case, as its CharArraySet does), it is removed with the apostrophe."""
    out = []
    for t in tokens:
        if "'" in t or "\u2019" in t:
            i, j = t.find("'"), t.find("\u2019")
            k = j if i < 0 else i if j < 0 else min(i, j)
            if lower_java([t[:k]])[0] in articles:
                t = t[k + 1 :]
        out.append(t)
    return out


# --- SpanishLightStemmer / ItalianLightStemmer (Savoy, CLEF 2001) ----------------------------------------------

_ACCENTS_ES_IT = str.maketrans("àáâäòóôöèéêëùúûüìíîï", "aaaaooooeeeeuuuuiiii")


def _spanish_light_stem(s: str) -> str:
    """Lucene's ``SpanishLightStemmer.stem`` on a lowercase word: words under five units are left alone; the
    others have their accents folded and lose a final -o/-a/-e, -es after -es- (``-eses`` -> ``-es``), -ces
    (-> -z), or -os/-as/-es."""
    n = len(s)
    if n < 5:
        return s
    if not s.isascii():
        s = s.translate(_ACCENTS_ES_IT)
    last = s[-1]
    if last in "oae":
        return s[:-1]
    if last == "s":
        if s[-2] == "e" and s[-3] == "s" and s[-4] == "e":
            return s[:-2]
        if s[-2] == "e" and s[-3] == "c":
            return s[:-3] + "z"
        if s[-2] in "oae":
            return s[:-2]
    return s


def _italian_light_stem(s: str) -> str:
    """Lucene's ``ItalianLightStemmer.stem`` on a lowercase word: words under six units are left alone; the
    others have their accents folded and lose -ie/-he/-e, -hi/-ii/-i, -ia/-a or -io/-o."""
    n = len(s)
    if n < 6:
        return s
    if not s.isascii():
        s = s.translate(_ACCENTS_ES_IT)
    last, before = s[-1], s[-2]
    if last == "e":
        return s[:-2] if before in "ih" else s[:-1]
    if last == "i":
        return s[:-2] if before in "hi" else s[:-1]
    if last in "ao":
        return s[:-2] if before == "i" else s[:-1]
    return s


# --- FrenchLightStemmer (Savoy's UniNE) ------------------------------------------------------------------------

_ACCENTS_FR = str.maketrans("àáâôèéêùûîç", "aaaoeeeuuic")
#: BMP letters of Unicode 14 (Python 3.11's ``str.isalpha``) that Java 17's ``Character.isLetter`` (Unicode 13)
#: does not know; checked over the whole BMP with the oracle.
_NOT_JAVA17_LETTERS = frozenset(
    chr(c)
    for a, b in (
        (0x0870, 0x0887), (0x0889, 0x088E), (0x08B5, 0x08B5), (0x08C8, 0x08C9), (0x0C5D, 0x0C5D), (0x0CDD, 0x0CDD),
        (0x170D, 0x170D), (0x171F, 0x171F), (0x1B4C, 0x1B4C), (0x2C2F, 0x2C2F), (0x2C5F, 0x2C5F), (0x9FFD, 0x9FFF),
        (0xA7C0, 0xA7C1), (0xA7D0, 0xA7D1), (0xA7D3, 0xA7D3), (0xA7D5, 0xA7D9), (0xA7F2, 0xA7F4),
    )
    for c in range(a, b + 1)
)  # fmt: skip


def _is_letter(c: str) -> bool:
    """Java 17's ``Character.isLetter(char)`` (false for a lone surrogate, as ``str.isalpha``)."""
    return c.isalpha() and (c < "\u0870" or c not in _NOT_JAVA17_LETTERS)


def _french_light_stem(s: str) -> str:
    """Lucene's ``FrenchLightStemmer.stem`` on a lowercase word, rule by rule (plural -x/-s, then the first of
    its derivational suffixes that applies, then :func:`_french_norm`)."""
    if len(s) > 5 and s[-1] == "x":
        if s[-3] == "a" and s[-2] == "u" and s[-4] != "e":
            s = s[:-2] + "l" + s[-1]
        s = s[:-1]
    if len(s) > 3 and s[-1] == "x":
        s = s[:-1]
    if len(s) > 3 and s[-1] == "s":
        s = s[:-1]
    n = len(s)
    if n > 9 and s.endswith("issement"):
        return _french_norm(s[:-7] + "r")  # -issement -> -ir
    if n > 8 and s.endswith("issant"):
        return _french_norm(s[:-5] + "r")  # -issant -> -ir
    if n > 6 and s.endswith("ement"):
        s = s[:-4]
        if len(s) > 3 and s.endswith("ive"):
            s = s[:-2] + "f"  # -ivement -> -if
        return _french_norm(s)
    if n > 11 and s.endswith("ficatrice"):
        return _french_norm(s[:-7] + "er")  # -ficatrice -> -fier
    if n > 10 and s.endswith("ficateur"):
        return _french_norm(s[:-6] + "er")  # -ficateur -> -fier
    if n > 9 and s.endswith("catrice"):
        return _french_norm(s[:-7] + "quer")  # -catrice -> -quer
    if n > 8 and s.endswith("cateur"):
        return _french_norm(s[:-6] + "quer")  # -cateur -> -quer
    if n > 8 and s.endswith("atrice"):
        return _french_norm(s[:-6] + "er")  # -atrice -> -er
    if n > 7 and s.endswith("ateur"):
        return _french_norm(s[:-5] + "er")  # -ateur -> -er
    if n > 6 and s.endswith("trice"):
        s = s[:-4] + "eur"  # -trice -> -teur, and go on
        n = len(s)
    if n > 5 and s.endswith("ième"):
        return _french_norm(s[:-4])
    if n > 7 and s.endswith("teuse"):
        return _french_norm(s[:-3] + "r")  # -teuse -> -ter
    if n > 6 and s.endswith("teur"):
        return _french_norm(s[:-2] + "r")  # -teur -> -ter
    if n > 5 and s.endswith("euse"):
        return _french_norm(s[:-2])  # -euse -> -eu
    if n > 8 and s.endswith("ère"):
        return _french_norm(s[:-3] + "er")  # -ère -> -er
    if n > 7 and s.endswith("ive"):
        return _french_norm(s[:-2] + "f")  # -ive -> -if
    if n > 4 and (s.endswith("folle") or s.endswith("molle")):
        return _french_norm(s[:-3] + "u")  # -folle -> -fou
    if n > 9 and s.endswith("nnelle"):
        return _french_norm(s[:-5])
    if n > 9 and s.endswith("nnel"):
        return _french_norm(s[:-3])
    if n > 4 and s.endswith("ète"):
        s = s[:-3] + "et"  # -ète -> -et, and go on
        n = len(s)
    if n > 8 and s.endswith("ique"):
        s = s[:-4]
        n = len(s)
    if n > 8 and s.endswith("esse"):
        return _french_norm(s[:-3])
    if n > 7 and s.endswith("inage"):
        return _french_norm(s[:-3])
    if n > 9 and s.endswith("isation"):
        s = s[:-7]
        if len(s) > 5 and s.endswith("ual"):
            s = s[:-2] + "el"
        return _french_norm(s)
    if n > 9 and s.endswith("isateur"):
        return _french_norm(s[:-7])
    if n > 8 and (s.endswith("ation") or s.endswith("ition")):
        return _french_norm(s[:-5])
    return _french_norm(s)


def _french_norm(s: str) -> str:
    """``FrenchLightStemmer.norm``: beyond four units, fold accents and squeeze runs of a repeated letter
    (``Character.isLetter``); then drop -ie, and a final -r, -e, -e and one of a final doubled letter."""
    if len(s) > 4:
        if not s.isascii():
            s = s.translate(_ACCENTS_FR)
        out = [s[0]]
        for c in s[1:]:
            if c != out[-1] or not _is_letter(c):
                out.append(c)
        if len(out) < len(s):
            s = "".join(out)
    if len(s) > 4 and s.endswith("ie"):
        s = s[:-2]
    if len(s) > 4:
        if s[-1] == "r":
            s = s[:-1]
        if s[-1] == "e":
            s = s[:-1]
        if s[-1] == "e":
            s = s[:-1]
        if s[-1] == s[-2] and _is_letter(s[-1]):
            s = s[:-1]
    return s


# --- PortugueseLightStemmer (Savoy's UniNE) --------------------------------------------------------------------

_ACCENTS_PT = str.maketrans("àáâäãòóôöõèéêëùúûüìíîïç", "aaaaaoooooeeeeuuuuiiiic")


def _portuguese_light_stem(s: str) -> str:
    """Lucene's ``PortugueseLightStemmer.stem`` on a lowercase word: words under four units are left alone; the
    others lose a plural (:func:`_pt_remove_suffix`), have a feminine -a normalised (:func:`_pt_norm_feminine`),
    lose a final -e/-a/-o beyond four units, and have their accents folded."""
    if len(s) < 4:
        return s
    s = _pt_remove_suffix(s)
    if len(s) > 3 and s[-1] == "a":
        s = _pt_norm_feminine(s)
    if len(s) > 4 and s[-1] in "eao":
        s = s[:-1]
    if not s.isascii():
        s = s.translate(_ACCENTS_PT)
    return s


def _pt_remove_suffix(s: str) -> str:
    n = len(s)
    if n > 4 and s.endswith("es") and s[-3] in "rslz":
        return s[:-2]
    if n > 3 and s.endswith("ns"):
        return s[:-2] + "m"
    if n > 4 and (s.endswith("eis") or s.endswith("éis")):
        return s[:-3] + "el"
    if n > 4 and s.endswith("ais"):
        return s[:-2] + "l"
    if n > 4 and s.endswith("óis"):
        return s[:-3] + "ol"
    if n > 4 and s.endswith("is"):
        return s[:-1] + "l"
    if n > 3 and (s.endswith("ões") or s.endswith("ães")):
        return s[:-3] + "ão"
    if n > 6 and s.endswith("mente"):
        return s[:-5]
    if n > 3 and s[-1] == "s":
        return s[:-1]
    return s


def _pt_norm_feminine(s: str) -> str:
    n = len(s)
    if n > 7 and (s.endswith("inha") or s.endswith("iaca") or s.endswith("eira")):
        return s[:-1] + "o"
    if n > 6:
        if s.endswith(("osa", "ica", "ida", "ada", "iva", "ama")):
            return s[:-1] + "o"
        if s.endswith("ona"):
            return s[:-3] + "ão"
        if s.endswith("ora"):
            return s[:-1]
        if s.endswith("esa"):
            return s[:-3] + "ês"
        if s.endswith("na"):
            return s[:-1] + "o"
    return s


spanish_light_stem = _on_units(_spanish_light_stem)
italian_light_stem = _on_units(_italian_light_stem)
french_light_stem = _on_units(_french_light_stem)
portuguese_light_stem = _on_units(_portuguese_light_stem)


# --- the analyzers ---------------------------------------------------------------------------------------------

_STOP_FILES = {"es": "spanish", "fr": "french", "it": "italian", "pt": "portuguese"}
_STOP_CACHE: dict[str, frozenset[str]] = {}


def _stopwords(code: str) -> frozenset[str]:
    words = _STOP_CACHE.get(code)
    if words is None:
        # Lucene's WordlistLoader.getSnowballWordSet: "|" starts a comment, several words a line
        words = _STOP_CACHE[code] = read_word_list(f"lucene/{code}_stopwords.txt", comment="|")
    return words


def _chain(
    code: str, stem: Callable[[str], str], articles: frozenset[str] | None
) -> Callable[[list[str]], list[str]]:
    def terms(tokens: list[str]) -> list[str]:
        stop = _stopwords(code)
        lowered = lower_java(elide(tokens, articles) if articles else tokens)
        return ["" if t in stop or not t else stem(t) for t in lowered]

    terms.__name__ = f"{_STOP_FILES[code]}_terms"
    terms.__doc__ = (
        f"The terms of Lucene 9.5's {_STOP_FILES[code].title()}Analyzer for raw tokens ('' = dropped)."
    )
    return terms


SPANISH = Language(
    code="es",
    name="Spanish",
    lucene="Lucene 9.5 SpanishAnalyzer",
    term=_chain("es", spanish_light_stem, None),
)
FRENCH = Language(
    code="fr",
    name="French",
    lucene="Lucene 9.5 FrenchAnalyzer",
    term=_chain("fr", french_light_stem, FRENCH_ARTICLES),
)
ITALIAN = Language(
    code="it",
    name="Italian",
    lucene="Lucene 9.5 ItalianAnalyzer",
    term=_chain("it", italian_light_stem, ITALIAN_ARTICLES),
)
PORTUGUESE = Language(
    code="pt",
    name="Portuguese",
    lucene="Lucene 9.5 PortugueseAnalyzer",
    term=_chain("pt", portuguese_light_stem, None),
)

LANGUAGES: dict[str, Language] = {"es": SPANISH, "fr": FRENCH, "it": ITALIAN, "pt": PORTUGUESE}
