"""Make the Arabic / Persian goldens with Lucene itself (Anserini 0.22.1's fat jar, Lucene 9.5.0, via pyjnius).

Runnable only where the oracle is (``/tmp/work/oracle/jl.py`` and the jar, or set ``LUCENE_ORACLE``); CI never
runs it. From the repository root:

    python tests/goldens/make_lang_arabic.py            # writes tests/goldens/lucene/{ar,fa}.standard.tsv
    python tests/goldens/make_lang_arabic.py --words    # prints the oracle's outputs for the unit-test words

``LANG.standard.tsv`` holds, for each shared text (``../shared/data/lucene/tokens/LANG.tsv``), its id, the text
and the JSON list of Lucene's StandardTokenizer tokens ``[text, type, start, end]``. For Persian the tokens are
those of the text after Lucene's PersianCharFilter (run in Java), as PersianAnalyzer tokenises it.
The ``--words`` output is pasted into ``tests/test_lang_arabic.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene"
ORACLE = os.environ.get("LUCENE_ORACLE", "/tmp/work/oracle")


def _oracle():
    sys.path.insert(0, ORACLE)
    import jl  # noqa: PLC0415  (the oracle's pyjnius wrapper)

    return jl


def persian_char_filter_java(jl, text: str) -> str:
    """The text as Lucene's PersianCharFilter reads it."""
    reader = jl.autoclass("org.apache.lucene.analysis.fa.PersianCharFilter")(
        jl.autoclass("java.io.StringReader")(text)
    )
    out = []
    while (c := reader.read()) != -1:
        out.append(chr(c))
    # Java chars are UTF-16 units: rejoin surrogate pairs
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def write_goldens(jl) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for lang in ("ar", "fa"):
        rows = []
        for line in (SHARED / f"{lang}.tsv").read_text("utf-8").splitlines():
            doc_id, text = line.split("\t", 1)
            src = persian_char_filter_java(jl, text) if lang == "fa" else text
            toks = [list(t) for t in jl.standard_tokens(src)]
            rows.append(f"{doc_id}\t{text}\t{json.dumps(toks, ensure_ascii=False)}\n")
        (OUT / f"{lang}.standard.tsv").write_text("".join(rows), "utf-8")
        print(f"{lang}: {len(rows)} texts")


def _chain(jl, *filters: str):
    """A Lucene analyzer: KeywordTokenizer (the whole input is one token) then the named token filters."""
    builder = jl.autoclass("org.apache.lucene.analysis.custom.CustomAnalyzer").builder()
    hashmap = jl.autoclass("java.util.HashMap")
    builder = builder.withTokenizer("keyword", hashmap())
    for f in filters:
        builder = builder.addTokenFilter(f, hashmap())
    return builder.build()


def print_words(jl) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from test_lang_arabic import DIGIT_WORDS, EDGE_TEXTS, NORM_WORDS, STEM_WORDS  # noqa: PLC0415

    def one(an, w: str) -> str:
        out = jl.analyze_with(an, w)
        assert len(out) == 1, (w, out)
        return out[0]

    stem, anorm, pnorm, digits = (
        _chain(jl, "arabicStem"),
        _chain(jl, "arabicNormalization"),
        _chain(jl, "persianNormalization"),
        _chain(jl, "decimalDigit"),
    )
    print("ORACLE_STEMS = ", {w: one(stem, w) for w in STEM_WORDS})
    print("ORACLE_ARABIC_NORM = ", {w: one(anorm, w) for w in NORM_WORDS})
    print("ORACLE_PERSIAN_NORM = ", {w: one(pnorm, w) for w in NORM_WORDS})
    print("ORACLE_DIGITS = ", {w: one(digits, w) for w in DIGIT_WORDS})
    for lang in ("ar", "fa"):
        an = jl.language_analyzer(lang)
        edge = {}
        for text in EDGE_TEXTS:
            src = persian_char_filter_java(jl, text) if lang == "fa" else text
            edge[text] = ([t[0] for t in jl.standard_tokens(src)], list(jl.analyze_with(an, text)))
        print(f"ORACLE_{lang.upper()}_EDGE = ", edge)


if __name__ == "__main__":
    oracle = _oracle()
    if "--words" in sys.argv:
        print_words(oracle)
    else:
        write_goldens(oracle)
