"""Make tests/goldens/lucene/porter.tsv: Lucene 9.5's Porter stems (PorterStemFilter, Porter's reference code) of
words that exercise every step of the stemmer, the reference code's departures from Snowball's porter included
(-bli, -logi, double consonants undoubled after -ed/-ing, words of one or two letters). Needs the oracle: Java 17
and the Anserini 0.22.1 fat jar (see ../shared/data/lucene/README.md); a few seconds::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tests/goldens/make_lucene_porter.py

Each word goes through Anserini's DumpAnalyzedQueries (the default English analyzer: one lowercase token of letters,
not a stopword, so only Porter changes it). Each line: word TAB stem.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from make_standard_unicode import lucene_terms  # noqa: E402

OUT = Path(__file__).resolve().parent / "lucene" / "porter.tsv"
STEMS = (
    "blame blade blaze hope rate cease file size fail probate agree trouble tan hop fizz hiss roll control analog "
    "theolog biolog sensibl abl possibl humbl doubt terribl mock crack buzz vex jazz bow awe sky snow tax box fix mix"
).split()
ENDS = (
    "", "s", "ed", "ing", "ly", "ness", "ation", "ations", "ically", "er", "ers", "able", "ably", "ity", "ities",
    "ization", "izing", "ous", "ously", "iveness", "e", "es", "i", "ies", "y", "li", "logi", "bli", "ement", "ements",
)  # fmt: skip
STOPWORDS = set(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
    "this to was will with".split()
)


def words() -> list[str]:
    rng = random.Random(1)
    doubles = ["bl", "log", "cc", "kk", "ww", "xx", "yy", "vv", "jj", "hh", "qq"]
    made = {s + e for s in STEMS for e in ENDS}
    for _ in range(400):
        head = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 3)))
        made.add(head + rng.choice(doubles) + rng.choice(ENDS))
    return sorted(w for w in made if w not in STOPWORDS)


def main() -> None:
    given = words()
    stems = lucene_terms(os.environ["ANSERINI_JAR"], {f"k{i}": w for i, w in enumerate(given)})
    lines = []
    for i, word in enumerate(given):
        (stem,) = stems[f"k{i}"]
        lines.append(f"{word}\t{stem}\n")
    OUT.write_text("".join(lines))
    print(f"{len(lines)} words -> {OUT}")


if __name__ == "__main__":
    main()
