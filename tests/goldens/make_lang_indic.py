"""Make the Hindi / Bengali / Telugu goldens with Lucene itself (Anserini 0.22.1's fat jar, Lucene 9.5.0, via
pyjnius).

Runnable only where the oracle is (``/tmp/work/oracle/jl.py`` and the jar, or set ``LUCENE_ORACLE``); CI never
runs it. From the repository root:

    python tests/goldens/make_lang_indic.py            # writes tests/goldens/lucene/{hi,bn,te}.standard.tsv
    python tests/goldens/make_lang_indic.py --words    # prints the oracle's outputs for the unit-test words

``LANG.standard.tsv`` holds, for each shared text (``../shared/data/lucene/tokens/LANG.tsv``), its id, the text
and the JSON list of Lucene's StandardTokenizer tokens ``[text, type, start, end]``. The ``--words`` output (each
Lucene filter alone behind a KeywordTokenizer, and the whole analyzers on edge texts) is pasted into
``tests/test_lang_indic.py``.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene"
ORACLE = os.environ.get("LUCENE_ORACLE", "/tmp/work/oracle")
LANGS = ("hi", "bn", "te")


def _oracle():
    sys.path.insert(0, ORACLE)
    import jl  # noqa: PLC0415  (the oracle's pyjnius wrapper)

    return jl


def write_goldens(jl) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for lang in LANGS:
        rows = []
        for line in (SHARED / f"{lang}.tsv").read_text("utf-8").splitlines():
            doc_id, text = line.split("\t", 1)
            toks = [list(t) for t in jl.standard_tokens(text)]
            rows.append(f"{doc_id}\t{text}\t{json.dumps(toks, ensure_ascii=False)}\n")
        (OUT / f"{lang}.standard.tsv").write_text("".join(rows), "utf-8")
        print(f"{lang}: {len(rows)} texts")


def _chain(jl, *filters: str, tokenizer: str = "keyword"):
    """A Lucene analyzer: the named tokenizer (KeywordTokenizer: the whole input is one token) and token filters."""
    hashmap = jl.autoclass("java.util.HashMap")
    builder = jl.autoclass("org.apache.lucene.analysis.custom.CustomAnalyzer").builder()
    builder = builder.withTokenizer(tokenizer, hashmap())
    for f in filters:
        builder = builder.addTokenFilter(f, hashmap())
    return builder.build()


def analyze_units(jl, an, text: str) -> list[str]:
    """An analyzer's terms read from the term buffer as UTF-16 units, so that a term holding a lone surrogate
    (Lucene's Bengali visarga rule can copy half a pair) still comes back."""
    cta = jl.autoclass("org.apache.lucene.analysis.tokenattributes.CharTermAttribute")
    ts = an.tokenStream("contents", text)
    term = jl.cast("org.apache.lucene.analysis.tokenattributes.CharTermAttribute", ts.addAttribute(cta))
    ts.reset()
    out = []
    while ts.incrementToken():
        units = "".join(list(term.buffer())[: term.length()])
        out.append(units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass"))
    ts.end()
    ts.close()
    return out


def lit(s: str) -> str:
    """``s`` as a Python string literal: written out if Unicode normalisation (NFC or NFD) leaves it alone and it
    holds only visible BMP characters, else with every non-ASCII character escaped (Indic spellings that NFC
    would compose, such as E sign + AA sign, must survive any editor)."""
    plain = (
        unicodedata.normalize("NFC", s) == s == unicodedata.normalize("NFD", s)
        and s.isprintable()
        and all(c <= "\uffff" and not "\ud800" <= c <= "\udfff" for c in s)
    )
    if plain:
        return json.dumps(s, ensure_ascii=False)
    return '"' + ascii(s)[1:-1].replace('"', '\\"') + '"'


def _py(value) -> str:
    """Python source for the str / list / tuple / dict values printed by ``--words``."""
    if isinstance(value, str):
        return lit(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_py(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner},)" if len(value) == 1 else f"({inner})"
    assert isinstance(value, dict)
    lines, line = [], "   "
    for k, v in value.items():
        item = f" {_py(k)}: {_py(v)},"
        if len(line) + len(item) > 118 and line.strip():
            lines.append(line)
            line = "   "
        line += item
    return "{\n" + "\n".join([*lines, line]) + "\n}"


def print_words(jl) -> None:
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    from test_lang_indic import (  # noqa: PLC0415
        BENGALI_NORM_WORDS,
        DIGIT_WORDS,
        EDGE_TEXTS,
        HINDI_NORM_WORDS,
        INDIC_NORM_WORDS,
        STEM_WORDS,
        TELUGU_NORM_WORDS,
    )

    def one(an, w: str) -> str:
        out = analyze_units(jl, an, w)
        assert len(out) == 1, (w, out)
        return out[0]

    def show(name: str, filt: str, words) -> None:
        an = _chain(jl, filt)
        print(f"{name}: dict[str, str] = {_py({w: one(an, w) for w in words})}  # fmt: skip")

    show("ORACLE_INDIC_NORM", "indicNormalization", INDIC_NORM_WORDS)
    show("ORACLE_HINDI_NORM", "hindiNormalization", HINDI_NORM_WORDS)
    show("ORACLE_BENGALI_NORM", "bengaliNormalization", BENGALI_NORM_WORDS)
    show("ORACLE_TELUGU_NORM", "teluguNormalization", TELUGU_NORM_WORDS)
    for lang, filt in (("hi", "hindiStem"), ("bn", "bengaliStem"), ("te", "teluguStem")):
        show(f"ORACLE_{lang.upper()}_STEM", filt, STEM_WORDS[lang])
    show("ORACLE_DIGITS", "decimalDigit", DIGIT_WORDS)
    for lang in LANGS:
        an = jl.language_analyzer(lang)
        edge = {
            t: ([x[0] for x in jl.standard_tokens(t)], analyze_units(jl, an, t)) for t in EDGE_TEXTS[lang]
        }
        body = "".join(
            f"    {_py(k)}: (\n        {_py(a)},\n        {_py(b)},\n    ),\n" for k, (a, b) in edge.items()
        )
        print(
            f"ORACLE_{lang.upper()}_EDGE: dict[str, tuple[list[str], list[str]]] = {{\n{body}}}  # fmt: skip"
        )


if __name__ == "__main__":
    oracle = _oracle()
    if "--words" in sys.argv:
        print_words(oracle)
    else:
        write_goldens(oracle)
