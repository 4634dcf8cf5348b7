"""Make the German / Spanish / French / Italian / Portuguese goldens with Lucene itself (Anserini 0.22.1's fat
jar, Lucene 9.5.0, via pyjnius).

Runnable only where the oracle is (``/tmp/work/oracle/jl.py`` and the jar, or set ``LUCENE_ORACLE``); CI never
runs it. From the repository root:

    python tests/goldens/make_lang_european.py            # writes tests/goldens/lucene/{de,es,fr,it,pt}.standard.tsv
    python tests/goldens/make_lang_european.py --words    # prints the oracle's outputs for the unit-test words
    python tests/goldens/make_lang_european.py --fuzz     # compares the ports with Lucene on many words

``LANG.standard.tsv`` holds, for each shared text (``../shared/data/lucene/tokens/LANG.tsv``), its id, the text
and the JSON list of Lucene's StandardTokenizer tokens ``[text, type, start, end]``. The ``--words`` output is
pasted into ``tests/test_lang_european.py``; ``--fuzz`` is a development check (every token of the shared texts
of all languages, plus words built from the stemmers' suffixes, through each single Lucene filter).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene"
ORACLE = os.environ.get("LUCENE_ORACLE", "/tmp/work/oracle")
LANGS = ("de", "es", "fr", "it", "pt")
# Lucene's factory names of the single filters the ports follow
FILTERS = {
    "de_norm": ("germanNormalization",),
    "de_stem": ("germanLightStem",),
    "es_stem": ("spanishLightStem",),
    "fr_stem": ("frenchLightStem",),
    "it_stem": ("italianLightStem",),
    "pt_stem": ("portugueseLightStem",),
}


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


def _chain(jl, *filters: str):
    """A Lucene analyzer: KeywordTokenizer (the whole input is one token) then the named token filters."""
    builder = jl.autoclass("org.apache.lucene.analysis.custom.CustomAnalyzer").builder()
    hashmap = jl.autoclass("java.util.HashMap")
    builder = builder.withTokenizer("keyword", hashmap())
    for f in filters:
        builder = builder.addTokenFilter(f, hashmap())
    return builder.build()


def _elision(jl, lang: str):
    """ElisionFilter with the analyzer's default articles behind a KeywordTokenizer."""
    cls = jl.autoclass(
        "org.apache.lucene.analysis.fr.FrenchAnalyzer"
        if lang == "fr"
        else "org.apache.lucene.analysis.it.ItalianAnalyzer"
    )
    articles = cls.DEFAULT_ARTICLES

    def run(word: str) -> str:
        tok = jl.autoclass("org.apache.lucene.analysis.core.KeywordTokenizer")()
        tok.setReader(jl.autoclass("java.io.StringReader")(word))
        ts = jl.autoclass("org.apache.lucene.analysis.util.ElisionFilter")(tok, articles)
        cta = jl.cast(
            "org.apache.lucene.analysis.tokenattributes.CharTermAttribute",
            ts.addAttribute(jl.autoclass("org.apache.lucene.analysis.tokenattributes.CharTermAttribute")),
        )
        ts.reset()
        assert ts.incrementToken()
        out = cta.toString()
        ts.end()
        ts.close()
        return out

    return run


def _one(jl, an, w: str) -> str:
    out = jl.analyze_with(an, w)
    assert len(out) == 1, (w, out)
    return out[0]


def print_words(jl) -> None:
    """Print the ``ORACLE_*`` blocks of ``tests/test_lang_european.py`` (pairs ``word=output``)."""
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    import test_lang_european as t  # noqa: PLC0415

    def pairs(mapping: dict[str, str]) -> str:
        lines, line = [], ""
        for w, out in mapping.items():
            item = f"{w}={out}"
            if line and len(line) + len(item) > 100:
                lines.append(line)
                line = ""
            line = f"{line} {item}" if line else item
        lines.append(line)
        return "\n".join(f"        {json.dumps(x + ' ', ensure_ascii=False)}" for x in lines)

    print("ORACLE_FILTERS: dict[str, str] = {")
    for key, words in t.WORDS.items():
        an = _chain(jl, *FILTERS[key])
        print(f'    "{key}": (\n{pairs({w: _one(jl, an, w) for w in words.split()})}\n    ),')
    print("}")
    print("ORACLE_ELISION: dict[str, str] = {")
    for lang in ("fr", "it"):
        run = _elision(jl, lang)
        print(f'    "{lang}": (\n{pairs({w: run(w) for w in t.ELISION_WORDS.split()})}\n    ),')
    print("}")
    print("ORACLE_EDGE: dict[str, list[tuple[str, list[str], list[str]]]] = {")
    for lang in LANGS:
        an = jl.language_analyzer(lang)
        print(f'    "{lang}": [')
        for text in t.EDGE_TEXTS[lang]:
            toks = [x[0] for x in jl.standard_tokens(text)]
            out = list(jl.analyze_with(an, text))
            print(
                f"        ({json.dumps(text, ensure_ascii=False)}, {json.dumps(toks, ensure_ascii=False)}, {json.dumps(out, ensure_ascii=False)}),"
            )
        print("    ],")
    print("}")


def _fuzz_words() -> list[str]:
    """Every lowercase token of the shared texts, and words made of stems and the stemmers' suffixes."""
    sys.path.insert(0, str(REPO))
    from pyterrier_sparse_eval.analysis._base import lower_java  # noqa: PLC0415

    words: set[str] = set()
    for f in SHARED.glob("*.lucene.tsv"):
        for line in f.read_text("utf-8").splitlines():
            words.update(line.partition("\t")[2].split())
    for f in SHARED.glob("*.tsv"):
        if not f.name.endswith(".lucene.tsv"):
            for line in f.read_text("utf-8").splitlines():
                words.update(lower_java(line.partition("\t")[2].split()))
    suffixes = (
        "issement issant ement ivement ficatrice ficateur catrice cateur atrice ateur trice ième teuse teur euse "
        "ère ive folle molle nnelle nnel ète ique esse inage isation isateur ation ition ualisation aux eaux x s ie "
        "es ns eis éis ais óis is ões ães mente inha iaca eira osa ica ida ada iva ama ona ora esa na e a o "
        "eses ces os as ie he hi ii ia io i ern em en er est st bs ds ts ae oe ue äe öe üe ß qu ll rr ee"
    ).split()
    stems = [
        "",
        "a",
        "b",
        "ab",
        "abc",
        "bl",
        "abcd",
        "qu",
        "ou",
        "abcde",
        "e\U0001f600",
        "\U0001d400",
        "aé",
        "ìé",
        "kl",
    ]
    words.update(a + b for a in stems for b in suffixes)
    words.update(a + b + c for a in stems[:8] for b, c in itertools.product(suffixes, repeat=2))
    rnd = random.Random(0)
    alphabet = "aeiouäöüßàáâãéêèëíìîïóòôõöúùûüçnsrltxzhmqy\U0001f600-'"
    for _ in range(20000):
        words.add("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12))))
    words.discard("")
    return sorted(w for w in words if w == w.strip() and not any(c.isspace() for c in w))


def fuzz(jl) -> None:
    sys.path.insert(0, str(REPO))
    from pyterrier_sparse_eval.analysis import _german, _romance  # noqa: PLC0415

    ports = {
        "de_norm": _german.german_normalize,
        "de_stem": _german.german_light_stem,
        "es_stem": _romance.spanish_light_stem,
        "fr_stem": _romance.french_light_stem,
        "it_stem": _romance.italian_light_stem,
        "pt_stem": _romance.portuguese_light_stem,
    }
    words = _fuzz_words()
    print(len(words), "words")
    for key, port in ports.items():
        an = _chain(jl, *FILTERS[key])
        diffs = [(w, _one(jl, an, w), port(w)) for w in words if _one(jl, an, w) != port(w)]
        print(key, "differences:", len(diffs), diffs[:10])
    for lang, arts in (("fr", _romance.FRENCH_ARTICLES), ("it", _romance.ITALIAN_ARTICLES)):
        run = _elision(jl, lang)
        cases = [
            a + q + w
            for a in sorted(arts | {"L", "QU", "Dell", "x", "", "\u0130", "\u212a"})
            for q in "'\u2019"
            for w in ("abc", "", "d'x")
        ]
        bad = [(w, run(w)) for w in cases if run(w) != _romance.elide([w], arts)[0]]
        print(lang, "elision differences:", len(bad), bad[:10])


if __name__ == "__main__":
    oracle = _oracle()
    if "--words" in sys.argv:
        print_words(oracle)
    elif "--fuzz" in sys.argv:
        fuzz(oracle)
    else:
        write_goldens(oracle)
