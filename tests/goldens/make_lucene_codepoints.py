"""Make tests/goldens/lucene/codepoints.txt: how Lucene 9.5's StandardTokenizer splits "q{c}z" for every code point c
from U+0080 to U+10FFFF but the surrogates (needs the oracle: Java 17 and the Anserini 0.22.1 fat jar, see
../shared/data/lucene/README.md; about a minute and a half)::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tests/goldens/make_lucene_codepoints.py

Each text goes through Anserini's DumpAnalyzedQueries (the default English analyzer: StandardTokenizer, then
lowercasing, stopwords and Porter, which leave "q" and "z" and the count of tokens as they are). Each line is a range
of code points and the shape of Lucene's tokens for all of them: D (``q``, ``z``: c is in no token), J (one token:
c joins the letters), S (``q``, a token of c, ``z``), or O (anything else, none so far). The tokenizer's Unicode
tables come from the installed ``regex`` module, so tests/test_standard_tokenizer.py checks every code point against
this file: a release of ``regex`` with another Unicode cannot change a token unseen.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from make_standard_unicode import lucene_terms  # noqa: E402

OUT = Path(__file__).resolve().parent / "lucene" / "codepoints.txt"


def shape(tokens: list[str]) -> str:
    if tokens == ["q", "z"]:
        return "D"
    if len(tokens) == 1:
        return "J"
    if len(tokens) == 3 and tokens[0] == "q" and tokens[2] == "z":
        return "S"
    return "O"


def main() -> None:
    cps = [cp for cp in range(0x80, 0x110000) if not 0xD800 <= cp <= 0xDFFF]
    lucene = lucene_terms(os.environ["ANSERINI_JAR"], {f"{cp:x}": f"q{chr(cp)}z" for cp in cps})
    lines: list[list] = []
    for cp in cps:
        s = shape(lucene[f"{cp:x}"])
        if lines and lines[-1][2] == s and lines[-1][1] == cp - 1:
            lines[-1][1] = cp
        else:
            lines.append([cp, cp, s])
    header = (
        "# Lucene 9.5's tokens of q{c}z (Anserini 0.22.1, DumpAnalyzedQueries): D in no token, J joined, S a token of\n"
        "# its own, O other. Made by tests/goldens/make_lucene_codepoints.py\n"
    )
    body = "".join(f"{a:04X}{'' if a == b else f'-{b:04X}'} {s}\n" for a, b, s in lines)
    OUT.write_text(header + body)
    print(f"{OUT}: {len(lines)} ranges, {len(cps)} code points")


if __name__ == "__main__":
    main()
