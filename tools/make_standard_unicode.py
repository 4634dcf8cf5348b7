"""Make pyterrier_sparse_eval/data/lucene/standard_other.txt and standard_emoji.txt: where the Unicode tables of the
``regex`` module (which ``analysis._standard`` writes Lucene's grammar with) differ from those Lucene 9.5's
StandardTokenizer was generated with (Unicode 12.1, and its emoji data), read off Lucene itself.

Every assigned code point (``regex``'s tables; no controls, surrogates, private use or spaces) is analysed by
Anserini 0.22.1's DumpAnalyzedQueries (the default English analyzer) as ``q{c}z`` and by this project. Where the two
differ:

* ``standard_other.txt``: Lucene puts the character in no token, here it is part of one (letters, marks and
  ideographs assigned after Unicode 12.1; a few whose word-break class changed since). Each is also checked in six
  more contexts (after digits, alone, after and before a letter, between Hebrew letters, after an emoji): Lucene
  puts it in no token in any of them, so the tokenizer treats it as a character of no token;
* ``standard_emoji.txt``: Lucene makes the character a token of its own (an emoji of its emoji data) and this
  project drops it (symbols such as U+2605 BLACK STAR left the emoji data's Extended_Pictographic since).

Then every code point these tables leave unassigned (``Cn``, the planes beyond the third included) is analysed the
same way: a later release of ``regex``, with a later Unicode, may assign it, and would make letters of characters
Lucene's grammar puts in no token (``regex`` 2026.11.19 assigns 578 that 2026.5.9 does not). Those Lucene puts in no
token (in all seven contexts) go into ``standard_other.txt`` too, and the reserved code points Lucene's emoji data
counts as pictographs (U+1FB93, U+1F7DA ..., which ``regex`` 2026.11.19 assigns as other symbols) into
``standard_emoji.txt``: code points a later Unicode assigns are then tokenised as Lucene tokenises them. (A character
whose class a later Unicode changes, as U+0600 from Format to Numeric, is not found here: ``analysis._standard``
keeps Lucene's class for those by hand.) ``tests/goldens/make_lucene_codepoints.py`` records Lucene's tokens of
``q{c}z``, ``{c}`` and ``1{c}2`` for every code point, which the tests compare with.

Needs Java 17 and the Anserini fat jar (``pip download --no-deps pyserini==0.22.1``); CI never runs this::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tools/make_standard_unicode.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import regex

DATA = Path(__file__).resolve().parents[1] / "pyterrier_sparse_eval" / "data" / "lucene"
CONTEXTS = ("1{c}2", "{c}", "q{c}", "{c}z", "\u05d0{c}\u05d1", "\U0001f600{c}")
EXPECTED = (["1", "2"], [], ["q"], ["z"], ["\u05d0", "\u05d1"], ["\U0001f600"])


def lucene_terms(jar: str, texts: dict[str, str], language: str | None = None) -> dict[str, list[str]]:
    """Lucene's tokens of each text: Anserini's DumpAnalyzedQueries, its default analyzer or ``-language``'s."""
    with tempfile.TemporaryDirectory() as tmp:
        topics, out = Path(tmp) / "t.tsv", Path(tmp) / "out.tsv"
        topics.write_text("".join(f"{k}\t{t}\n" for k, t in texts.items()), encoding="utf-8")
        subprocess.run(
            ["java", "-cp", jar, "io.anserini.util.DumpAnalyzedQueries", "-topics", str(topics),
             "-topicreader", "TsvString", "-output", str(out), *(["-language", language] if language else [])],
            check=True, capture_output=True,
        )  # fmt: skip
        terms = {}
        for line in out.read_text(encoding="utf-8").splitlines():
            key, _, toks = line.partition("\t")
            terms[key] = toks.split(" ") if toks else []
        return terms


def ranges(code_points: list[int]) -> list[str]:
    out: list[list[int]] = []
    for cp in sorted(code_points):
        if out and cp == out[-1][1] + 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return [f"{a:04X}" if a == b else f"{a:04X}-{b:04X}" for a, b in out]


def main() -> None:
    for name in ("standard_other.txt", "standard_emoji.txt"):  # the tables as they are, without these files
        (DATA / name).write_text("")
    from pyterrier_sparse_eval import analysis

    jar = os.environ["ANSERINI_JAR"]
    assigned = regex.compile(r"[\P{Cn}--[\p{Co}\p{Cs}\p{Cc}]]", regex.V1)
    chars = [
        chr(cp)
        for cp in range(0x80, 0x110000)
        if not 0xD800 <= cp <= 0xDFFF and assigned.match(chr(cp)) and not chr(cp).isspace()
    ]
    texts = {f"{ord(c):x}": f"q{c}z" for c in chars}
    lucene = lucene_terms(jar, texts)
    other, emoji = [], []
    for key, text in texts.items():
        c, ours = chr(int(key, 16)), analysis.analyze(text, "en")
        if ours == lucene[key]:
            continue
        if lucene[key] == ["q", "z"]:
            other.append(ord(c))
        elif lucene[key] == ["q", c, "z"] and ours == ["q", "z"]:
            emoji.append(ord(c))
    # code points unassigned in these tables (a later release of ``regex`` may assign them, and would make letters
    # of those Lucene's grammar, of Unicode 12.1, puts in no token) that Lucene puts in no token: the same
    unassigned = [
        cp
        for cp in range(0x80, 0x110000)
        if not 0xD800 <= cp <= 0xDFFF and regex.match(r"\p{Cn}", chr(cp))  # (none is in other: all assigned)
    ]
    lucene = lucene_terms(jar, {f"{cp:x}": f"q{chr(cp)}z" for cp in unassigned})
    other += [cp for cp in unassigned if lucene[f"{cp:x}"] == ["q", "z"]]
    # and those Lucene's emoji data has (reserved code points it counts as pictographs, such as U+1FB93): whether or
    # not the tables here count them (a later Unicode may assign them as other symbols, as U+1F7DA)
    emoji += [cp for cp in unassigned if lucene[f"{cp:x}"] == ["q", chr(cp), "z"]]
    more = {f"{cp:x}-{i}": ctx.format(c=chr(cp)) for cp in other for i, ctx in enumerate(CONTEXTS)}
    seen = lucene_terms(jar, more)
    kept = [cp for cp in other if all(seen[f"{cp:x}-{i}"] == EXPECTED[i] for i in range(len(CONTEXTS)))]
    if len(kept) != len(other):
        print(
            f"{len(other) - len(kept)} characters are in a Lucene token in some context; left out",
            file=sys.stderr,
        )
    header = "# made by tools/make_standard_unicode.py (Anserini 0.22.1, Lucene 9.5; regex {})\n"
    for name, cps in (("standard_other.txt", kept), ("standard_emoji.txt", sorted(emoji))):
        (DATA / name).write_text(header.format(regex.__version__) + "\n".join(ranges(cps)) + "\n")
        print(f"{name}: {len(cps)} characters")


if __name__ == "__main__":
    main()
