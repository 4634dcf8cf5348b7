"""Make pyterrier_sparse_eval/data/lucene/java17_unassigned.txt: the code points Java 17 (Unicode 13.0, the Java
Lucene 9.5 runs on here) leaves unassigned and Unicode 18.0 assigns (``unicodedata2`` 18.0.0), as ranges.

Python's :mod:`unicodedata` and the ``regex`` module follow newer Unicode versions (Python 3.11: 14.0; 3.13: 15.1),
so an analyzer that classifies characters with them would make a letter or a symbol of a character Lucene sees as
unassigned. The Thai and Japanese analyzers read such a character as an unassigned one
(``analysis._base.as_java_17``), except the few the JDK's Thai word breaks (Lucene's ThaiTokenizer) count as letters
all the same, ideographs of blocks Java 17 knows (U+2A6DE, U+2CEA2-U+2CEAD, ...: 32 code points), read off Lucene:
kept out of the table, they are letters here too (for Japanese both are no punctuation). Needs Java 17, Anserini
0.22.1's fat jar (``tests/goldens/make_lang_cases.py`` says where) and ``pip install unicodedata2==18.0.0``; CI never
runs this::

    python tools/make_java_unassigned.py --jar .../anserini-0.22.1-fatjar.jar
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import unicodedata2

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "pyterrier_sparse_eval" / "data" / "lucene" / "java17_unassigned.txt"
JAVA = """
public class Unassigned {
  public static void main(String[] args) {
    StringBuilder sb = new StringBuilder();
    for (int c = 0; c <= 0x10FFFF; c++)
      if (Character.getType(c) == Character.UNASSIGNED) sb.append(Integer.toHexString(c)).append('\\n');
    System.out.print(sb);
  }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", required=True, help="Anserini 0.22.1's fat jar")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "tests" / "goldens"))
    from make_lang_cases import lucene

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "Unassigned.java")
        source.write_text(JAVA)
        version = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True).stderr
        assert 'version "17' in version, version
        java = subprocess.run(["java", str(source)], capture_output=True, text=True, check=True).stdout
    unassigned = {int(h, 16) for h in java.split()}
    assert unicodedata2.unidata_version.startswith("18."), unicodedata2.unidata_version
    newer = sorted(c for c in unassigned if unicodedata2.category(chr(c)) != "Cn")
    thai = lucene(args.jar, "th", [f"ab{chr(c)}cd" for c in newer])
    letters = [c for c, tokens in zip(newer, thai) if tokens == [f"ab{chr(c)}cd"]]
    newer = sorted(set(newer).difference(letters))
    print(f"{len(letters)} of them letters to Lucene's Thai word breaks: left out")
    ranges: list[list[int]] = []
    for c in newer:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    with open(OUT, "w", encoding="ascii") as f:
        f.write(
            "# Code points Java 17 (Unicode 13.0) leaves unassigned and Unicode 18.0 assigns (but those Lucene's Thai "
            "word breaks count as letters); made by tools/make_java_unassigned.py\n"
        )
        for a, b in ranges:
            f.write(f"{a:04X}\n" if a == b else f"{a:04X}-{b:04X}\n")
    print(f"wrote {OUT}: {len(newer)} code points in {len(ranges)} ranges")


if __name__ == "__main__":
    main()
