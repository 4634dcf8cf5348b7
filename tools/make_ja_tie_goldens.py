"""Make tests/goldens/lucene/ja.ties.tsv: Lucene's Japanese tokens of texts where two paths of the Viterbi search
can cost exactly the same, so that the dictionary's order of one surface's entries decides (Lucene keeps the path
added first). Lucene orders them by the IPADIC CSV file they come from (files sorted by name), then line order.

The texts: five found by comparing with Lucene on a large vocabulary (each a tie, each tokenised otherwise when a
surface's entries were ordered by left id), and, for a seeded sample of the dictionary's surfaces whose entries that
order and Lucene's put differently, the surface after an unknown symbol (U+FE0F: a tie at the end of the text was
how most were found), after an ideographic comma, and before a verb.

Needs Java 17, the Anserini fat jar (``pip download --no-deps pyserini==0.22.1``) and janome; CI never runs this::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tools/make_ja_tie_goldens.py
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_ja_dash_goldens import write_goldens  # noqa: E402

from pyterrier_sparse_eval.analysis import _japanese  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "goldens" / "lucene" / "ja.ties.tsv"
FOUND = ["x\ufe0fおり", "\ufe0fおり", "、追い上げ逃れる", "出過ぎ行き可笑しく", "髪考えほしい噓"]


def reordered_surfaces() -> list[str]:
    """Surfaces with two or more entries whose order by left id differs from their order in Lucene's dictionary."""
    d = _japanese._dictionary()
    total = max(end for _, end in d.dic.bucket_ranges)
    by_surface: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for entry in range(total):
        surface, left, _right, cost = d.dic._find_entry(entry)  # janome's entry: surface, left, right, cost
        by_surface[surface].append((left, cost, entry))
    out = []
    for surface, entries in by_surface.items():
        if len(entries) > 1:
            by_left = [e[2] for e in sorted(entries)]
            if by_left != sorted(by_left, key=lambda e: (d.source(e), e)):
                out.append(surface)
    return sorted(out)


def texts() -> list[str]:
    surfaces = reordered_surfaces()
    print(f"{len(surfaces)} surfaces ordered otherwise by left id")
    out = list(FOUND)
    for s in random.Random(5).sample(surfaces, 300):
        out += [f"x\ufe0f{s}", f"、{s}", f"{s}逃れる"]
    return out


def main() -> None:
    write_goldens(OUT, texts(), "t")


if __name__ == "__main__":
    main()
