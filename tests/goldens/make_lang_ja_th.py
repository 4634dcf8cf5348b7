"""Makes the Japanese and Thai goldens with Lucene 9.5 (Anserini 0.22.1's fat jar). A developer tool: it runs only
where the oracle is (pyjnius, the jar, Java 17); CI never runs it.

    python tests/goldens/make_lang_ja_th.py --oracle /tmp/work/oracle

Writes:

- ``tests/goldens/lucene/ja.edge.tsv`` and ``th.edge.tsv``: ``id<TAB>JSON text<TAB>JSON list of Lucene's tokens``
  for edge-case texts made from the shared texts (see :func:`ja_texts`, :func:`th_texts`), analysed by Anserini
  0.22.1's ``-language ja`` / ``-language th`` analyzers.
Lucene's own stop lists (``ja_stoptags.txt``, ``ja_stopwords.txt``, ``th_stopwords.txt``) are copied from the jar
as they are (``unzip -p JAR org/apache/lucene/analysis/ja/stoptags.txt`` etc.).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene"
JAVA_HOME = Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"))


def shared_texts(lang: str) -> list[str]:
    with open(SHARED / f"{lang}.tsv", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 1)[1] for line in f]


def ja_texts() -> list[str]:
    """Spaceless concatenations (long paths, few frontiers), shuffled characters, kanji runs (compound splitting),
    halfwidth/fullwidth variants with voicing marks, astral characters, texts longer than 1024 characters."""
    rng = random.Random(1)
    texts = shared_texts("ja")
    out = ["".join(rng.sample(texts, rng.randint(2, 8))).replace(" ", "") for _ in range(60)]
    chars = "".join(texts)
    for _ in range(60):
        n = rng.randint(5, 60)
        s = rng.randint(0, len(chars) - n)
        seg = list(chars[s : s + n])
        rng.shuffle(seg)
        out.append("".join(seg))
    kanji = sorted({c for c in chars if "\u4e00" <= c <= "\u9fff"})
    out += ["".join(rng.choice(kanji) for _ in range(rng.randint(3, 20))) for _ in range(40)]
    half: dict[str, str] = {}
    for c in range(0xFF61, 0xFFA0):
        half.setdefault(unicodedata.normalize("NFKC", chr(c)), chr(c))

    def narrow(s: str) -> str:
        r = []
        for c in s:
            d = unicodedata.normalize("NFD", c)
            if 0x21 <= ord(c) <= 0x7E and rng.random() < 0.5:
                r.append(chr(ord(c) + 0xFEE0))
            elif c in half and rng.random() < 0.7:
                r.append(half[c])
            elif len(d) == 2 and d[0] in half and d[1] in "\u3099\u309a" and rng.random() < 0.7:
                r.append(half[d[0]] + ("\uff9e" if d[1] == "\u3099" else "\uff9f"))
            else:
                r.append(c)
        return "".join(r)

    out += [narrow(rng.choice(texts)) for _ in range(60)]
    for _ in range(20):
        base = rng.choice(texts)
        cut = rng.randint(0, len(base))
        out.append(base[:cut] + rng.choice(["😀", "𠮷", "𝐀𝐁", "😀😀"]) + base[cut:])
    out += ["".join(rng.sample(texts, 60)).replace(" ", "").replace("。", "") for _ in range(3)]
    out += ["ア" * 1500, "一" * 1100, "東京" * 700, "ー" * 1100 + "テスト"]
    out.append(
        "ｶﾞｷﾞｸﾞ ﾊﾟﾋﾟ ｳﾞ ﾞｱ ｱﾞ ｰｰ コンピューター サーバー ユーザー ＡＢＣ１２３ 関西国際空港 令和 東京都庁舎 "
        "シニアソフトウェアエンジニア 「括弧」・中黒 ｢半角｣"
    )
    return out


def th_texts() -> list[str]:
    """Thai mixed with Latin words, numbers, punctuation, other scripts and format characters; long texts (the
    1024-character buffers); runs ending the text (the iterator's last-character quirk)."""
    rng = random.Random(3)
    texts = shared_texts("th")
    others = []
    for lang in ("en", "fr", "de", "ru", "ja", "zh", "ar", "hi", "ko"):
        others += rng.sample(shared_texts(lang), 20)
    pieces = (
        "e-mail|foo.bar|3.14|1,000|$100|#5|50%|U.S.A.|don't|x--y|a..b|C++|node.js|v2.0-beta|10:30|ฯลฯ|ฯ|ๆ|ปีๆ|"
        "๑๒๓|๓.๑๔|กรุงเทพฯ|\u200b|\u00ad|‘quoted’|“ไทย”|(ไทย)|ไทย123|abc๑๒|ไทยabc|😀|ไทย😀ไทย|日本語|カタカナ|"
        "ひらがな|\t|\n|\r\n|...|!?|ก|ๆๆ|ไทย.ไทย|ไทย-ไทย|A.B|a'b|1'000|1.2.3|-5|x_y|a/b|5&|€5|¢5|Ⅻ|½|x²|"
        "ไทย\u200bไทย|กข\u0e4eค|\u0e3f100|๏ไทย|ไทย๚ไทย|Hello. World|ok.ไทย|Mr. Smith|ไทย\u00adไทย|\u0301ไทย|"
        "ไทยฯลฯไทย|ไทยฯไทย|ไทยฯๆ|ไทย\u2029ไทย|ไทย\u00a0ไทย|foo.Ölfeld"
    ).split("|")
    out = []
    for _ in range(250):
        parts = []
        for _ in range(rng.randint(1, 6)):
            r = rng.random()
            src = texts if r < 0.4 else others
            if r < 0.4 or r >= 0.7:
                s = rng.choice(src)
                a = rng.randint(0, len(s))
                parts.append(s[a : a + rng.randint(1, 40)])
            else:
                parts.append(rng.choice(pieces))
        out.append(rng.choice(["", " "]).join(parts))
    runs = [r for t in texts for r in t.split() if len(r) >= 4]
    out += [rng.choice(runs)[: rng.randint(2, 30)] for _ in range(150)]
    out += [rng.choice(["", " ", "\n"]).join(rng.sample(texts, rng.randint(10, 40))) for _ in range(12)]
    out += pieces
    return out


def write_goldens(jl, lang: str, texts: list[str]) -> None:
    analyzer = jl.language_analyzer(lang)
    path = OUT / f"{lang}.edge.tsv"
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            tokens = jl.analyze_with(analyzer, text)
            f.write(
                f"{lang}-e{i}\t{json.dumps(text, ensure_ascii=False)}\t{json.dumps(tokens, ensure_ascii=False)}\n"
            )
    print(f"wrote {path} ({len(texts)} texts)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--oracle", default="/tmp/work/oracle", help="folder of jl.py (pyjnius + Anserini's fat jar)"
    )
    args = ap.parse_args()
    sys.path.insert(0, args.oracle)
    os.chdir(args.oracle)
    import jl

    OUT.mkdir(parents=True, exist_ok=True)
    write_goldens(jl, "ja", ja_texts())
    write_goldens(jl, "th", th_texts())


if __name__ == "__main__":
    main()
