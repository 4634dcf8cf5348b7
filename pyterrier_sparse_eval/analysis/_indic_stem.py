"""The light stemmers of Lucene 9.5's Hindi, Bengali and Telugu analyzers (ported from Lucene, Apache-2.0).

Each of Lucene's ``HindiStemmer``, ``BengaliStemmer`` and ``TeluguStemmer`` is a cascade of suffix groups: the first
group whose length condition holds (the token, in UTF-16 units, is longer than the suffix length plus one) and one
of whose suffixes ends the token removes that many characters; at most one suffix goes. The suffix strings below
were read from the Lucene 9.5.0 class files; the Bengali ones spell YYA as the precomposed U+09DF, written as an
escape so that no Unicode normalisation of this file can decompose it. The order inside a group does not matter,
as every suffix of a group has the group's length.

- ``HindiStemmer``: Ananthakrishnan Ramanathan and Durgesh D. Rao, "A Lightweight Stemmer for Hindi", EACL 2003
  workshop on Computational Linguistics for South-Asian Languages.
- ``BengaliStemmer``: after P. Sengupta and B. B. Chaudhuri, "Natural Language Processing in an Indian Language
  (Bengali)-I: Verb Phrase Analysis", with criteria from Jacques Savoy's light Bengali stemmer.
- ``TeluguStemmer``: Lucene's own (since 9.0).
"""

from __future__ import annotations

from ._base import utf16_len

__all__ = ["bengali_stem", "hindi_stem", "stem_all", "telugu_stem"]

# (characters removed, suffixes); a group applies to tokens longer than its length + 1 (UTF-16 units)
_Groups = tuple[tuple[int, tuple[str, ...]], ...]

_HINDI: _Groups = (
    (5, ("ाएंगी", "ाएंगे", "ाऊंगी", "ाऊंगा", "ाइयाँ", "ाइयों", "ाइयां")),
    (4, (
        "ाएगी", "ाएगा", "ाओगी", "ाओगे", "एंगी", "ेंगी", "एंगे", "ेंगे", "ूंगी", "ूंगा", "ातीं", "नाओं", "नाएं",
        "ताओं", "ताएं", "ियाँ", "ियों", "ियां",
    )),
    (3, (
        "ाकर", "ाइए", "ाईं", "ाया", "ेगी", "ेगा", "ोगी", "ोगे", "ाने", "ाना", "ाते", "ाती", "ाता", "तीं", "ाओं",
        "ाएं", "ुओं", "ुएं", "ुआं",
    )),
    (2, ("कर", "ाओ", "िए", "ाई", "ाए", "ने", "नी", "ना", "ते", "ीं", "ती", "ता", "ाँ", "ां", "ों", "ें")),
    (1, ("ो", "े", "ू", "ु", "ी", "ि", "ा")),
)  # fmt: skip

_BENGALI: _Groups = (
    (8, ("ি\u09dfাছিলাম", "িতেছিলাম", "িতেছিলেন", "ইতেছিলেন", "ি\u09dfাছিলেন", "ই\u09dfাছিলেন")),
    (7, ("িতেছিলি", "িতেছিলে", "ি\u09dfাছিলা", "ি\u09dfাছিলে", "িতেছিলা", "ি\u09dfাছিলি", "\u09dfেদেরকে")),
    (6, ("িতেছিস", "িতেছেন", "ি\u09dfাছিস", "ি\u09dfাছেন", "েছিলাম", "েছিলেন", "েদেরকে")),
    (5, (
        "িতেছি", "িতেছা", "িতেছে", "ছিলাম", "ছিলেন", "ি\u09dfাছি", "ি\u09dfাছা", "ি\u09dfাছে", "েছিলে", "েছিলা",
        "\u09dfেদের", "দেরকে",
    )),
    (4, (
        "িলাম", "িলেন", "িতাম", "িতেন", "িবেন", "ছিলি", "ছিলে", "ছিলা", "তেছে", "িতেছ", "খানা", "খানি", "গুলো",
        "গুলি", "\u09dfেরা", "েদের",
    )),
    (3, (
        "লাম", "িলি", "ইলি", "িলে", "ইলে", "লেন", "িলা", "ইলা", "তাম", "িতি", "ইতি", "িতে", "ইতে", "তেন", "িতা",
        "িবা", "ইবা", "িবি", "ইবি", "বেন", "িবে", "ইবে", "ছেন", "\u09dfোন", "\u09dfের", "েরা", "দের",
    )),
    (2, (
        "িস", "েন", "লি", "লে", "লা", "তি", "তে", "তা", "বি", "বে", "বা", "ছি", "ছা", "ছে", "ুন", "ুক", "টা", "টি",
        "নি", "ের", "রা", "কে",
    )),
    (1, ("ি", "ী", "া", "ো", "ে", "ব", "ত")),
)  # fmt: skip

_TELUGU: _Groups = (
    (4, ("ళ్ళు", "డ్లు")),
    (2, ("డు", "ము", "వు", "లు", "ని", "ను", "చే", "కై", "లో", "ది", "కి", "సు", "వై", "పై")),
    (1, ("ి", "ీ", "ు", "ూ", "ె", "ే", "ొ", "ో", "ా")),
)  # fmt: skip

for _groups in (_HINDI, _BENGALI, _TELUGU):
    assert all(len(s) == cut for cut, sfx in _groups for s in sfx)
del _groups


def _stem(word: str, groups: _Groups) -> str:
    n = utf16_len(word)
    for cut, suffixes in groups:
        if n > cut + 1 and word.endswith(suffixes):
            return word[:-cut]
    return word


def hindi_stem(word: str) -> str:
    """Lucene's ``HindiStemmer.stem`` (Ramanathan & Rao's light stemmer)."""
    return _stem(word, _HINDI)


def bengali_stem(word: str) -> str:
    """Lucene's ``BengaliStemmer.stem``."""
    return _stem(word, _BENGALI)


def telugu_stem(word: str) -> str:
    """Lucene's ``TeluguStemmer.stem``."""
    return _stem(word, _TELUGU)


_TABLES = {"hi": _HINDI, "bn": _BENGALI, "te": _TELUGU}
# the last characters of any suffix, per language: a token ending otherwise is left alone (fast path)
_LAST = {code: frozenset(s[-1] for _, sfx in groups for s in sfx) for code, groups in _TABLES.items()}


def stem_all(tokens: list[str], code: str) -> list[str]:
    """The stemmer of language ``code`` (``"hi"``, ``"bn"``, ``"te"``) on each token (``""`` stays ``""``)."""
    groups, last = _TABLES[code], _LAST[code]
    return [_stem(t, groups) if t and t[-1] in last else t for t in tokens]
