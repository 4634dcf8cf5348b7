"""Language analyzers equal to Lucene's, as Anserini 0.22.1 picks them with ``-language xx``.

``LANGUAGES`` maps ISO 639-1 codes to :class:`Language` chains: English (Anserini's default analyzer, also used
for Vietnamese, as Anserini does), the MIRACL languages and the mMARCO ones. :func:`analyze` runs one
text through a language's chain; :class:`pyterrier_sparse_eval.Analyzer` is the memoising, batched form that
indexing and retrieval use.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Sequence

from ._base import Language, Token, lower_java
from ._english import ENGLISH
from ._snowball import whitespace_tokens
from ._standard import standard_tokens, standard_words

__all__ = [
    "LANGUAGES",
    "Language",
    "Token",
    "analyze",
    "get_language",
    "language_code",
    "tokenize_texts",
    "lower_java",
]

# code -> (module, name) of the chains written per language family; loaded on first use
_MODULES = (
    "_arabic",
    "_indic",
    "_romance",
    "_german",
    "_snowball",
    "_indonesian",
    "_cjk",
    "_japanese",
    "_thai",
)

#: Anserini analyses these with its default English analyzer
_AS_ENGLISH = {"vi": "Vietnamese"}


def _load() -> dict[str, Language]:
    langs: dict[str, Language] = {"en": ENGLISH}
    for code, name in _AS_ENGLISH.items():
        langs[code] = dataclasses.replace(ENGLISH, code=code, name=name)
    for mod in _MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as e:  # a family not written yet
            if e.name != f"{__name__}.{mod}":
                raise
            continue
        langs.update(getattr(module, "LANGUAGES", {}))
    return dict(sorted(langs.items()))


LANGUAGES: dict[str, Language] = _load()

#: ISO 639-2 and 639-3 codes of the supported languages (cards written by MTEB declare ``eng``, ``deu``...),
#: with the bibliographic ones (``ger``, ``fre``) and the individual languages a card may name (Standard Arabic,
#: Iranian Persian, Swahili, Mandarin)
_THREE_LETTER = {
    "ara": "ar", "arb": "ar", "ben": "bn", "deu": "de", "ger": "de", "eng": "en", "spa": "es", "fas": "fa",
    "per": "fa", "pes": "fa", "fin": "fi", "fra": "fr", "fre": "fr", "hin": "hi", "ind": "id", "ita": "it",
    "jpn": "ja", "kor": "ko", "nld": "nl", "dut": "nl", "por": "pt", "rus": "ru", "swa": "sw", "swh": "sw",
    "tel": "te", "tha": "th", "vie": "vi", "yor": "yo", "zho": "zh", "chi": "zh", "cmn": "zh",
}  # fmt: skip
#: other English names of supported languages, as dataset cards and users write them
_OTHER_NAMES = {"farsi": "fa", "bangla": "bn", "mandarin": "zh", "kiswahili": "sw", "bahasa indonesia": "id"}
#: a surrogate code unit (a lone one is valid JSON: a truncated emoji in a web dump)
_SURROGATE = re.compile("[\ud800-\udfff]")


def language_code(code: str, what: str = "language") -> str:
    """The supported ISO 639-1 code that ``code`` names, in any case and with any region (``"FR"`` and ``"fr-FR"``
    are ``"fr"``, ``"pt_BR"`` is ``"pt"``, as a dataset card's language is read), or its ISO 639-2/3 code
    (``"deu"`` is ``"de"``) or English name (``"German"``, ``"Farsi"``): the one check of a language
    however it is given (``BM25(language=)``, a system spec, ``--language``). A ValueError names what was unknown
    (``what``, e.g. ``"--language"``) and lists the supported codes."""
    # a language subtag, then subtags of region, script or variant (BCP 47's shape): "fr-", "en-fr,de" are no code
    match = re.fullmatch(r"([a-z]{2,3})(?:[-_][a-z0-9]{1,8})*", str(code).strip().lower())
    normal = match.group(1) if match else str(code).strip().lower()
    normal = _THREE_LETTER.get(normal, _OTHER_NAMES.get(normal, normal))
    normal = next((c for c, lang in LANGUAGES.items() if lang.name.lower() == normal), normal)  # "german": de
    if normal not in LANGUAGES:
        raise ValueError(f"Unknown {what} {code!r}; supported: {', '.join(LANGUAGES)}.")
    return normal


def get_language(code: str) -> Language:
    """The :class:`Language` for an ISO 639-1 code (any case, a region dropped: see :func:`language_code`); a
    ValueError lists the supported ones."""
    return LANGUAGES[language_code(code)]


def tokenize_texts(lang: Language, texts: Sequence[str]) -> list[list[str]]:
    """The raw tokens of each text (after the char filter, tokenizer and sequence steps, before :attr:`term`)."""
    out: list[list[str]] = []
    cf = lang.char_filter
    for text in texts:
        if not text:
            out.append([])
            continue
        # the text as Java holds it: pairs joined, a lone surrogate one character, which Kuromoji and the Thai
        # break iterator drop and the WhitespaceTokenizer keeps, stored in a UTF-8 term as U+FFFD (the standard
        # tokenizer's regexes drop it as Lucene does)
        if lang.tokenizer != "standard" and not text.isascii() and _SURROGATE.search(text):
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        if cf is not None:
            text = cf(text)
        if lang.tokenizer == "custom":
            assert lang.tokenize is not None
            out.append(lang.tokenize(text))
        elif lang.tokenizer == "whitespace":
            out.append(whitespace_tokens(text))
        elif lang.sequence is not None:
            out.append([t.text for t in lang.sequence(standard_tokens(text))])
        else:
            out.append(standard_words(text))
    return out


def analyze(text: str, language: str = "en") -> list[str]:
    """The terms Lucene's analyzer for ``language`` makes of ``text`` (no memoisation; for one-off use), as a query
    is analysed: without the empty term Lucene indexes for a token its chain empties (:attr:`Language.empty`)."""
    lang = get_language(language)
    raw = tokenize_texts(lang, [text])[0]
    if not raw:
        return []
    return [t for t in lang.term(raw) if t and t != lang.empty]
