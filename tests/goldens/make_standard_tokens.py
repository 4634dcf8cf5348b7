"""Make tests/goldens/lucene/standard.jsonl: Lucene 9.5's StandardTokenizer on real text (needs the oracle).

Texts: the first 50 of each language in ../shared/data/lucene/tokens, 100 SciFact documents, the Vaswani
queries and hand-written edge cases. Each line: {"text", "tokens": [[text, type], ...]}. Run where the Anserini
0.22.1 fat jar and Java 17 are (see ../shared/data/lucene/README.md), with pyjnius:

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar IR_DATASETS_HOME=<copy of the irds cache> \\
        python tests/goldens/make_standard_tokens.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

EDGE = [
    "1,000,000 3.14 U.S.A. e.g. a:b a::b 1;2 a.1 1.a don't ’tis o’neil x_y ___ _9 ab_",
    "© 2020 ® ™ 1⃣2 #️⃣ 😀‍😀 👍🏽 🇫🇷 x\u200dy",
    "東京タワー とうきょう ｶﾀｶﾅ ＡＢＣ１２３ 한국어 ไทยภาษา ພາສາລາວ",
    "naïve café e\u0301 שלום ג'ירפה צה\"ל",
    "a" * 300 + " b",
]


def tokens(text: str) -> list[list[str]]:
    from jnius import autoclass, cast  # the JVM starts on first use (main() sets the class path)

    tok = autoclass("org.apache.lucene.analysis.standard.StandardTokenizer")()
    tok.setReader(autoclass("java.io.StringReader")(text))
    pkg = "org.apache.lucene.analysis.tokenattributes."
    term = cast(pkg + "CharTermAttribute", tok.addAttribute(autoclass(pkg + "CharTermAttribute")))
    typ = cast(pkg + "TypeAttribute", tok.addAttribute(autoclass(pkg + "TypeAttribute")))
    tok.reset()
    out = []
    while tok.incrementToken():
        out.append([term.toString(), typ.type()])
    tok.end()
    tok.close()
    return out


def main() -> None:
    import ir_datasets
    import jnius_config

    jnius_config.add_classpath(os.environ["ANSERINI_JAR"])

    shared = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "lucene" / "tokens"
    texts = list(EDGE)
    for path in sorted(shared.glob("*.tsv")):
        if not path.name.endswith(".lucene.tsv"):
            texts += [line.rstrip("\n").split("\t", 1)[1] for line in open(path, encoding="utf-8")][:50]
    for i, doc in enumerate(ir_datasets.load("beir/scifact/test").docs_iter()):
        if i >= 100:
            break
        texts.append((doc.title + " " + doc.text).strip())
    texts += [q.text for q in ir_datasets.load("vaswani").queries_iter()]
    out = Path(__file__).parent / "lucene" / "standard.jsonl"
    with open(out, "w", encoding="utf-8") as f:
        for text in texts:
            f.write(json.dumps({"text": text, "tokens": tokens(text)}, ensure_ascii=False) + "\n")
    print(f"{len(texts)} texts -> {out}")


if __name__ == "__main__":
    main()
