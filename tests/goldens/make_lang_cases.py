"""Makes ``tests/goldens/lucene/cases.tsv``: Lucene's tokens for texts that once tokenised differently here (each
case group names the defect), from Anserini 0.22.1's analyzers. A developer tool: it runs only where the oracle is
(Java 17 and the fat jar inside the ``pyserini==0.22.1`` wheel); CI never runs it.

    pip download --no-deps pyserini==0.22.1 -d /tmp/oracle
    unzip -o -q /tmp/oracle/pyserini-0.22.1-*.whl 'pyserini/resources/jars/*' -d /tmp/oracle
    python tests/goldens/make_lang_cases.py --jar /tmp/oracle/pyserini/resources/jars/anserini-0.22.1-fatjar.jar

Each line is ``group<TAB>language<TAB>JSON text<TAB>JSON list of Lucene's tokens``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path

from make_lang_ja_th import shared_texts

from pyterrier_sparse_eval.analysis._base import code_point_ranges

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "goldens" / "lucene" / "cases.tsv"
LETTER_EMOJI = "\u2139\u24c2\U0001f170\U0001f171\U0001f17e\U0001f17f"


def cases() -> list[tuple[str, str, str]]:
    """(group, language, text) of every case."""
    rng = random.Random(7)
    out: list[tuple[str, str, str]] = []
    # Kuromoji: a long unknown or punctuation run (search-mode penalty) ending where one path survives, then a
    # compound that search mode splits (the penalty had stayed in the next decision's costs)
    ja = shared_texts("ja")
    for n in range(5, 11):
        for tail in ("ヲノレナルガグゴ", "八十八", "関西国際空港", "シニアソフトウェアエンジニア"):
            out += [("ja-frontier", "ja", p * n + tail) for p in (".", " ", "𠮷", "…", "\u3000")]
    out += [("ja-frontier", "ja", " " * rng.randint(4, 12) + t) for t in rng.sample(ja, 40)]
    out += [("ja-frontier", "ja", "".join(rng.sample(ja, 3)).replace("。", "........")) for _ in range(20)]
    # StandardTokenizer: a character both a letter and an emoji, joined by a ZWJ to an emoji (Lucene takes the
    # longer match, the emoji sequence)
    for lang in ("en", "de", "ru", "zh", "ar", "fa", "bn", "hi", "fr", "ko"):
        for c in LETTER_EMOJI:
            for tail in ("\u200d\U0001f600", "\ufe0f\u200d\U0001f469", "\u200d\u200d\U0001f600", "\u200d\u00a9",
                         "\u200dabc", "\u200d" + c + "abc", "\u200d\U0001f600abc", " x"):  # fmt: skip
                out.append(("standard-letter-emoji", lang, f"a {c}{tail} b"))
    # Porter over UTF-16 units: a character beyond U+FFFF is two consonants
    en = [w for t in shared_texts("en") for w in t.split() if w.isalpha() and len(w) > 4]
    for lang in ("en", "vi"):
        for word in rng.sample(en, 150):
            i = rng.randint(1, len(word) - 1)
            out.append(
                (
                    "porter-utf16",
                    lang,
                    word[:i] + rng.choice(["\U0001d400", "\U00010428", "\U00010400"]) + word[i:],
                )
            )
        out += [
            ("porter-utf16", lang, w)
            for w in ("tru\U0001d400e", "ca\U0001d400ing", "fi\U0001d400ed", "truXe")
        ]
    # Thai: buffers of 1024 UTF-16 units (a cut may fall inside a pair)
    # (texts without Thai letters: Lucene's Thai word list differs from the one here, the buffers do not)
    th = shared_texts("en") + shared_texts("ru") + shared_texts("de")
    b = "\U0001d400"
    out += [("thai-utf16-buffer", "th", t) for t in (b * 513, b * 600, "x" + b * 600, "😀" * 511 + " abc",
                                                     "x😀" * 1023 + " abc def")]  # fmt: skip
    for _ in range(40):
        parts = rng.sample(th, rng.randint(8, 20))
        out.append(
            (
                "thai-utf16-buffer",
                "th",
                "".join(p + rng.choice(["😀", " 😀 ", "𝐀", " ", "👍🏽"]) for p in parts),
            )
        )
    # characters Java 17 leaves unassigned and a later Unicode (Python's, the regex module's) assigns
    # (pyterrier_sparse_eval/data/lucene/java17_unassigned.txt): every 50th and the ones found first
    newer = [c for a, b in code_point_ranges("java17_unassigned.txt") for c in range(a, b + 1)]
    chosen = [chr(c) for c in newer[::50]] + ["\u20c0", "\ua7c0", "\u0870", "\u2c2f", "\U00010570"]
    for c in chosen:
        out += [("java17-unassigned", "ja", t) for t in (c, f"a{c}b", f"日本{c}語")]
        out += [("java17-unassigned", "th", t) for t in (c, f"ab{c}cd", f"ภาษา{c}ไทย", f"1{c}2")]
    return out


def lucene(jar: str, lang: str, texts: list[str]) -> list[list[str]]:
    here = Path(__file__).resolve().parent / "oracle"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-cp", jar, "-d", tmp, str(here / "Tokens.java")], check=True)
        src, dst = Path(tmp, "in.tsv"), Path(tmp, "out.tsv")
        src.write_text("".join(f"{i}\t{t.encode('utf-8').hex()}\n" for i, t in enumerate(texts)), "utf-8")
        subprocess.run(["java", "-cp", f"{jar}:{tmp}", "Tokens", lang, str(src), str(dst)], check=True)
        rows = [line.rstrip("\n").split("\t") for line in dst.read_text("utf-8").splitlines()]
    assert [int(r[0]) for r in rows] == list(range(len(texts)))
    return [[("" if h == "-" else bytes.fromhex(h).decode("utf-8")) for h in r[1].split()] if len(r) > 1 else []
            for r in rows]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", required=True, help="Anserini 0.22.1's fat jar")
    args = ap.parse_args()
    all_cases = cases()
    tokens: dict[int, list[str]] = {}
    for lang in sorted({c[1] for c in all_cases}):
        mine = [i for i, c in enumerate(all_cases) if c[1] == lang]
        tokens.update(zip(mine, lucene(args.jar, lang, [all_cases[i][2] for i in mine])))
    with open(OUT, "w", encoding="utf-8") as f:
        for i, (group, lang, text) in enumerate(all_cases):
            f.write(
                f"{group}\t{lang}\t{json.dumps(text, ensure_ascii=False)}\t{json.dumps(tokens[i], ensure_ascii=False)}\n"
            )
    print(f"wrote {OUT} ({len(all_cases)} texts)")


if __name__ == "__main__":
    main()
