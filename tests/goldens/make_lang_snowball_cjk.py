"""Make the Finnish / Russian / Dutch / Indonesian / Swahili / Chinese / Korean goldens with Lucene itself
(Anserini 0.22.1's fat jar, Lucene 9.5.0, via pyjnius).

Runnable only where the oracle is (``/tmp/work/oracle/jl.py`` and the jar, or set ``LUCENE_ORACLE``); CI never
runs it. From the repository root:

    python tests/goldens/make_lang_snowball_cjk.py           # writes tests/goldens/lucene/{fi,ru,nl,id,sw,zh,ko}.standard.tsv
    python tests/goldens/make_lang_snowball_cjk.py --words   # prints the oracle's outputs for the unit-test words
    python tests/goldens/make_lang_snowball_cjk.py --fuzz    # compares the ports with Lucene on many words

``LANG.standard.tsv`` holds, for each shared text (``../shared/data/lucene/tokens/LANG.tsv``), its id, the text
and the JSON list of Lucene's tokenizer's tokens ``[text, type, start, end]`` (UTF-16 offsets): the
StandardTokenizer's, except for Swahili, whose analyzer (WhitespaceAnalyzer) has a WhitespaceTokenizer (type
``"word"``). The ``--words`` output is pasted into ``tests/test_lang_snowball_cjk.py``. ``--fuzz`` is a development
check: the stemmers on Snowball's test vocabularies (a ``snowballstem/snowball-data`` checkout in
``SNOWBALL_DATA``, if given), every token of the shared texts and random words, and the CJK filters on random texts.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene"
ORACLE = os.environ.get("LUCENE_ORACLE", "/tmp/work/oracle")
LANGS = ("fi", "ru", "nl", "id", "sw", "zh", "ko")
SNOWBALL = {"fi": "FinnishStemmer", "ru": "RussianStemmer", "nl": "DutchStemmer"}


def _oracle():
    sys.path.insert(0, ORACLE)
    import jl  # noqa: PLC0415  (the oracle's pyjnius wrapper)

    return jl


def tokenizer_tokens(jl, tokenizer, text: str) -> list[list]:
    """[text, type, start, end] of a Lucene Tokenizer's tokens."""
    attr = "org.apache.lucene.analysis.tokenattributes."
    tokenizer.setReader(jl.autoclass("java.io.StringReader")(text))
    term = jl.cast(
        attr + "CharTermAttribute", tokenizer.addAttribute(jl.autoclass(attr + "CharTermAttribute"))
    )
    typ = jl.cast(attr + "TypeAttribute", tokenizer.addAttribute(jl.autoclass(attr + "TypeAttribute")))
    off = jl.cast(attr + "OffsetAttribute", tokenizer.addAttribute(jl.autoclass(attr + "OffsetAttribute")))
    tokenizer.reset()
    out = []
    while tokenizer.incrementToken():
        out.append([term.toString(), typ.type(), off.startOffset(), off.endOffset()])
    tokenizer.end()
    tokenizer.close()
    return out


def write_goldens(jl) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    whitespace = jl.autoclass("org.apache.lucene.analysis.core.WhitespaceTokenizer")
    for lang in LANGS:
        rows = []
        for line in (SHARED / f"{lang}.tsv").read_text("utf-8").splitlines():
            doc_id, text = line.split("\t", 1)
            if lang == "sw":
                toks = tokenizer_tokens(jl, whitespace(), text)
            else:
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


def _snowball_stemmer(jl, lang: str):
    """Lucene's bundled Snowball stemmer (what SnowballFilter calls) as a function."""
    stemmer = jl.autoclass(f"org.tartarus.snowball.ext.{SNOWBALL[lang]}")()

    def run(word: str) -> str:
        stemmer.setCurrent(word)
        stemmer.stem()
        return stemmer.getCurrent()

    return run


def _one(jl, an, w: str) -> str:
    out = jl.analyze_with(an, w)
    assert len(out) == 1, (w, out)
    return out[0]


def _pairs(mapping: dict[str, str]) -> str:
    lines, line = [], ""
    for w, out in mapping.items():
        item = f"{w}={out}"
        if line and len(line) + len(item) > 100:
            lines.append(line)
            line = ""
        line = f"{line} {item}" if line else item
    lines.append(line)
    return "\n".join(f"        {json.dumps(x + ' ', ensure_ascii=False)}" for x in lines)


def _dump(x) -> str:
    """JSON (also a Python literal) with invisible characters (spaces other than " ", controls, format
    characters) escaped."""
    out = []
    for c in json.dumps(x, ensure_ascii=False):
        if c == " " or (c.isprintable() and not c.isspace()):
            out.append(c)
        else:
            out.append(f"\\u{ord(c):04x}" if c <= "\uffff" else f"\\U{ord(c):08x}")
    return "".join(out)


def print_words(jl) -> None:
    """Print the ``ORACLE_*`` blocks of ``tests/test_lang_snowball_cjk.py``."""
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    import test_lang_snowball_cjk as t  # noqa: PLC0415

    indonesian, width = _chain(jl, "indonesianStem"), _chain(jl, "cjkWidth")
    print("ORACLE_WORDS: dict[str, str] = {")
    for key, words in t.WORDS.items():
        if key in SNOWBALL:
            run = _snowball_stemmer(jl, key)
        else:
            an = indonesian if key == "id" else width
            run = lambda w, an=an: _one(jl, an, w)  # noqa: E731
        print(f'    "{key}": (\n{_pairs({w: run(w) for w in words.split()})}\n    ),')
    print("}")
    print("# fmt: off")
    print("ORACLE_EDGE: dict[str, list[tuple[str, list[list], list[str]]]] = {")
    whitespace = jl.autoclass("org.apache.lucene.analysis.core.WhitespaceTokenizer")
    for lang, texts in t.EDGE_TEXTS.items():
        an = jl.language_analyzer(lang)
        print(f'    "{lang}": [')
        for text in texts:
            toks = (
                tokenizer_tokens(jl, whitespace(), text)
                if lang == "sw"
                else [list(x) for x in jl.standard_tokens(text)]
            )
            out = list(jl.analyze_with(an, text))
            print(f"        ({_dump(text)}, {_dump(toks)}, {_dump(out)}),")
        print("    ],")
    print("}")
    print("# fmt: on")


def _words(lang: str) -> list[str]:
    """Snowball's vocabulary for the language (if SNOWBALL_DATA is set), the lowercase tokens of all shared texts
    and random words."""
    sys.path.insert(0, str(REPO))
    from pyterrier_sparse_eval.analysis._base import lower_java  # noqa: PLC0415

    words: set[str] = set()
    data = os.environ.get("SNOWBALL_DATA")
    name = {"fi": "finnish", "ru": "russian", "nl": "dutch_porter", "id": "indonesian"}[lang]
    if data:
        voc = subprocess.run(
            ["git", "-C", data, "show", f"HEAD:{name}/voc.txt"], capture_output=True, text=True
        )
        words.update(voc.stdout.split())
    for f in SHARED.glob("*.tsv"):
        if not f.name.endswith(".lucene.tsv"):
            for line in f.read_text("utf-8").splitlines():
                words.update(lower_java(line.partition("\t")[2].split()))
    alphabet = {
        "fi": "aeiouyäöbcdfghjklmnpqrstvwxzø'h\U0001d400é1",
        "ru": "аеиоуыэюяёбвгджзйклмнпрстфхцчшщъь\U0001d400é1-",
        "nl": "aeiouyèäëïöüáéíóúbcdfghjklmnpqrstvwxzij\U0001d400\U0001f600ç1'",
        "id": "aeioumngkypstrbdlhj\U0001d400",
    }[lang]
    affixes = {
        "fi": "han hen hin hon hän hön hun siin seen den tten n a ä tta ttä kin kaan ko pa sti nsa ni si kseni an "
        "än en mpi mma imma t j i jo oj aa",
        "id": "meng meny men mem me peng peny pen pem di ter ke ber be per pe belajar pelajar kan an i si kah lah "
        "pun ku mu nya",
    }.get(lang, "").split()
    rnd = random.Random(0)
    for _ in range(40000):
        w = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 10)))
        words.add(w)
        if affixes:
            words.add(rnd.choice(affixes) + w + rnd.choice(affixes))
            words.add(w + rnd.choice(affixes) + rnd.choice(affixes))
    words.discard("")
    return sorted(words)


def fuzz(jl) -> None:
    sys.path.insert(0, str(REPO))
    import Stemmer  # noqa: PLC0415

    from pyterrier_sparse_eval.analysis import _cjk, _indonesian, _snowball  # noqa: PLC0415
    from pyterrier_sparse_eval.analysis._base import Token  # noqa: PLC0415

    ports = {
        "fi": _snowball._finnish_stems,
        "ru": _snowball._as_java(Stemmer.Stemmer("russian").stemWords),
        "nl": _snowball._as_java(Stemmer.Stemmer(_snowball._dutch_algorithm()).stemWords),
    }
    for lang, port in ports.items():
        words = _words(lang)
        lucene = list(map(_snowball_stemmer(jl, lang), words))
        diffs = [(w, a, b) for w, a, b in zip(words, lucene, port(words)) if a != b]
        print(lang, len(words), "words, differences:", len(diffs), diffs[:10])
        if lang == "fi":
            diffs = [(w, a, b) for w, a in zip(words, lucene) if a != (b := _snowball.finnish_stem(w))]
            print("fi port alone, differences:", len(diffs), diffs[:10])
    words = _words("id")
    an = _chain(jl, "indonesianStem")
    diffs = [(w, a, b) for w in words if (a := _one(jl, an, w)) != (b := _indonesian.indonesian_stem(w))]
    print("id", len(words), "words, differences:", len(diffs), diffs[:10])
    # CJK: width filter on random strings, the whole analyzer on random texts (Lucene's own tokens into the port)
    rnd = random.Random(1)
    pieces = list("ｱｶﾞｳﾞﾊﾟﾜﾞｦﾞﾞﾟｰ･Ａｚ０！～中文字漢かなカナ한국어abc 。、,.") + [
        "\U00020000",
        "\ufe00",
        "The",
        " www ",
    ]
    an, width = jl.language_analyzer("zh"), _chain(jl, "cjkWidth")
    bad_w = bad_a = 0
    for _ in range(5000):
        text = "".join(rnd.choice(pieces) for _i in range(rnd.choice((1, 3, 8, 40, 120))))
        if text.strip() and _one(jl, width, text) != _cjk.cjk_width(text):
            bad_w += 1
        toks = [Token(*x) for x in jl.standard_tokens(text)]
        mine = [t for t in _cjk.cjk_terms([x.text for x in _cjk.cjk_bigrams(toks)]) if t]
        if mine != list(jl.analyze_with(an, text)):
            bad_a += 1
            if bad_a < 5:
                print("cjk difference:", repr(text), mine, list(jl.analyze_with(an, text)))
    print("cjk width differences:", bad_w, "analyzer differences:", bad_a, "of 5000 texts")


if __name__ == "__main__":
    oracle = _oracle()
    if "--words" in sys.argv:
        print_words(oracle)
    elif "--fuzz" in sys.argv:
        fuzz(oracle)
    else:
        write_goldens(oracle)
