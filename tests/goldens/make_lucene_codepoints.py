"""Make tests/goldens/lucene/codepoints.txt: how Lucene 9.5's StandardTokenizer splits "q{c}z", "{c}" and "1{c}2" for
every code point c from U+0080 to U+10FFFF but the surrogates (needs the oracle: Java 17 and the Anserini 0.22.1 fat
jar, see ../shared/data/lucene/README.md; a few minutes)::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tests/goldens/make_lucene_codepoints.py

Each text goes through Anserini's DumpAnalyzedQueries (the default English analyzer: StandardTokenizer, then
lowercasing, stopwords and Porter, which leave "q", "z", "1", "2" and the count of tokens as they are). Each line is a
range of code points and three letters, the shapes of Lucene's tokens for all of them: of "q{c}z", D (``q``, ``z``:
c is in no token), J (one token: c joins the letters), S (``q``, a token of c, ``z``) or O (anything else); of
"{c}", N (no token), T (one token) or O; of "1{c}2", D, J, S or O as for "q{c}z". The three tell the word-break
classes apart that the tokenizer treats differently (a Format character joins letters as a digit does, but alone it
is no token; a MidNum character joins digits only). The tokenizer's Unicode tables come from the installed ``regex``
module, so tests/test_standard_tokenizer.py checks the code points against this file: a ``regex`` release whose
Unicode changes one of these shapes fails it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from make_standard_unicode import lucene_terms  # noqa: E402

OUT = Path(__file__).resolve().parent / "lucene" / "codepoints.txt"


def shape(tokens: list[str], a: str = "q", b: str = "z") -> str:
    if tokens == [a, b]:
        return "D"
    if len(tokens) == 1:
        return "J"
    if len(tokens) == 3 and tokens[0] == a and tokens[2] == b:
        return "S"
    return "O"


def alone(tokens: list[str]) -> str:
    return "N" if not tokens else "T" if len(tokens) == 1 else "O"


def main() -> None:
    cps = [cp for cp in range(0x80, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
    jar = os.environ["ANSERINI_JAR"]
    texts = {}
    for cp in cps:
        c = chr(cp)
        texts.update({f"{cp:x}-q": f"q{c}z", f"{cp:x}-a": c, f"{cp:x}-1": f"1{c}2"})
    lucene = lucene_terms(jar, texts)
    lines: list[list] = []
    for cp in cps:
        k = f"{cp:x}"
        s = shape(lucene[k + "-q"]) + alone(lucene[k + "-a"]) + shape(lucene[k + "-1"], "1", "2")
        if lines and lines[-1][2] == s and lines[-1][1] == cp - 1:
            lines[-1][1] = cp
        else:
            lines.append([cp, cp, s])
    header = (
        "# Lucene 9.5's tokens of q{c}z / {c} / 1{c}2 (Anserini 0.22.1, DumpAnalyzedQueries): D in no token, J joined,\n"
        "# S a token of its own, N no token, T one token, O other. Made by tests/goldens/make_lucene_codepoints.py\n"
    )
    body = "".join(f"{a:04X}{'' if a == b else f'-{b:04X}'} {s}\n" for a, b, s in lines)
    OUT.write_text(header + body)
    print(f"{OUT}: {len(lines)} ranges, {len(cps)} code points")


if __name__ == "__main__":
    main()
