"""Make tests/goldens/lucene/ja.dashes.tsv: Lucene's Japanese tokens of texts with the two dashes (U+2014 EM DASH,
U+2015 HORIZONTAL BAR) and the other characters Java and Python decode differently from IPADIC's EUC-JP (wave
dash, double vertical line, minus, cent, pound, not sign: each in its two forms) next to words and inside the
shared texts. IPADIC's dash was decoded to U+2015 in janome's dictionary and to U+2014 in Lucene's.

Needs Java 17 and the Anserini fat jar (``pip download --no-deps pyserini==0.22.1``); CI never runs this::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tools/make_ja_dash_goldens.py
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_standard_unicode import lucene_terms  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
OUT = REPO / "tests" / "goldens" / "lucene" / "ja.dashes.tsv"
PAIRS = "\u2014\u2015\u301c\uff5e\u2016\u2225\u2212\uff0d\u00a2\uffe0\u00a3\uffe1\u00ac\uffe2"


def texts() -> list[str]:
    out = []
    for c in PAIRS:
        out += [
            f"A{c}程",
            f"ああ{c}いい",
            f"{c}程",
            f"「{c}程」",
            f"{c}ナひ",
            f"値は{c}10",
            f"必要がありま{c}す",
            f"{c}{c}テスト",
        ]
    rng = random.Random(3)
    shared = [line.rstrip("\n").split("\t", 1)[1] for line in open(SHARED / "ja.tsv", encoding="utf-8")]
    for text in rng.sample(shared, 60):
        chars = list(text)
        for _ in range(rng.randint(1, 3)):
            chars.insert(rng.randint(0, len(chars)), rng.choice("\u2014\u2015"))
        out.append("".join(chars))
    return out


def write_goldens(out: Path, texts: list[str], prefix: str) -> None:
    """``out``: one line a text, ``id<TAB>JSON text<TAB>JSON list of Lucene's Japanese tokens``."""
    cases = {f"{prefix}{i}": t for i, t in enumerate(texts)}
    terms = lucene_terms(os.environ["ANSERINI_JAR"], cases, "ja")
    with open(out, "w", encoding="utf-8") as f:
        for key, text in cases.items():
            gold = [t for t in terms.get(key, []) if t]
            f.write(
                f"{key}\t{json.dumps(text, ensure_ascii=False)}\t{json.dumps(gold, ensure_ascii=False)}\n"
            )
    print(f"wrote {len(cases)} texts to {out}")


def main() -> None:
    write_goldens(OUT, texts(), "d")


if __name__ == "__main__":
    main()
