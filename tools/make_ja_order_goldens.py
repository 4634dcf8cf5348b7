"""Make tests/goldens/lucene/ja.order.tsv: for a seeded sample of the surfaces with two or more entries in Lucene's
Kuromoji dictionary (IPADIC), the entries in Lucene's word-id order, which decides between two paths of equal cost
(Lucene keeps the one added first). Read off Lucene's own dictionary by ``tools/DumpKuromojiDict.java``.

Checked once against every surface (2026-12-02): ordered by the IPADIC CSV file they come from (files by name), then
janome's entry number, janome's entries are in Lucene's order on all 47,086 surfaces with two or more entries (of
392,127 entries; ordered by left id, as before, on 30,455). The sample: 500 surfaces whose entries come from two or
more files, 500 whose entries come from one (the line order within a file), no surface holding a dash (looked up
with U+2014 and U+2015 swapped).

Needs Java 17 and the Anserini fat jar (``pip download --no-deps pyserini==0.22.1``); CI never runs this::

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tools/make_ja_order_goldens.py
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "goldens" / "lucene" / "ja.order.tsv"


def lucene_dictionary() -> dict[str, list[list]]:
    """Each surface's entries in Lucene's order: [left id, right id, cost, part of speech, base form or None]."""
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "dict.tsv"
        subprocess.run(
            ["java", "-Xmx2g", "-cp", os.environ["ANSERINI_JAR"], str(REPO / "tools" / "DumpKuromojiDict.java"),
             str(dump)],
            check=True, capture_output=True,
        )  # fmt: skip
        entries: dict[str, list[list]] = defaultdict(list)
        for line in dump.read_text(encoding="utf-8").split("\n"):
            if line:
                f = line.split("\t")
                entries[f[0]].append(
                    [int(f[4]), int(f[5]), int(f[6]), f[7], None if f[10] == "\\N" else f[10]]
                )
        return entries


def main() -> None:
    from pyterrier_sparse_eval.analysis import _japanese  # noqa: PLC0415

    d = _japanese._dictionary()
    multi = {s: e for s, e in lucene_dictionary().items() if len(e) > 1 and not set(s) & set("\u2014\u2015")}
    spans: dict[bool, list[str]] = {True: [], False: []}
    for surface in sorted(multi):
        found = [e for e in d.dic.lookup(surface.encode("utf-8"), d.matcher) if e[1] == surface]
        spans[len({d.source(e[0]) for e in found}) > 1].append(surface)
    rng = random.Random(7)
    sample = sorted(rng.sample(spans[True], 500) + rng.sample(spans[False], 500))
    with open(OUT, "w", encoding="utf-8") as f:
        for surface in sample:
            f.write(f"{surface}\t{json.dumps(multi[surface], ensure_ascii=False)}\n")
    print(
        f"wrote {len(sample)} surfaces to {OUT} (of {len(multi)} with 2+ entries: {len(spans[True])} from 2+ files)"
    )


if __name__ == "__main__":
    main()
