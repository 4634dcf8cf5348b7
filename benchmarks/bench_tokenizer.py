"""The StandardTokenizer's regex path: one token expression for every text against the two it chooses between.

Lucene's emoji data counts as emoji 2,388 code points (110 ranges, ``data/lucene/standard_emoji.txt``) that the
``regex`` module's tables may not: symbols they no longer count as emoji (U+2605 BLACK STAR ...) and reserved code
points a later Unicode may assign as other symbols. Put in the token expression, their ranges are tested at every
position of every text; the tokenizer therefore uses the expression holding them only for a text that holds one of them (found in the
pass that looks for the characters Lucene puts in no token), and the plain one otherwise. This benchmark times both,
side by side in one process, interleaved round by round, on three workloads of real text, and checks that they give
the same tokens:

* ``queries``: the shared texts of 22 languages (../shared/data/lucene/tokens/*.tsv, short query-like texts);
* ``documents``: the same texts joined into documents of about 150 words (mixed scripts, as multilingual corpora);
* ``with symbols``: those documents with a symbol of Lucene's emoji data (U+2605 BLACK STAR) in each, where the
  choice costs its search and then takes the slower expression anyway (the worst case for the two expressions).

Only the regex path is timed (non-ASCII text: ``standard_words`` takes stdlib expressions for ASCII text, and
index builds take compiled scanners that hand the regex path only some documents).

    python benchmarks/bench_tokenizer.py [--tokens ../shared/data/lucene/tokens] [--rounds 40]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from _report import positive_int  # the scripts' folder is on sys.path when run

from pyterrier_sparse_eval.analysis import _standard


def workloads(folder: Path) -> dict[str, list[str]]:
    texts = []
    for path in sorted(folder.glob("*.tsv")):
        if not path.name.endswith(".lucene.tsv"):
            texts += [
                line.rstrip("\n").split("\t", 1)[1] for line in open(path, encoding="utf-8") if "\t" in line
            ]
    if not texts:
        raise SystemExit(f"no texts under {folder}: give --tokens the folder of the shared Lucene tokens")
    queries = [t for t in texts if not t.isascii()]
    words = " ".join(queries).split()
    docs = [" ".join(words[i : i + 150]) for i in range(0, len(words) - 150, 150)]
    starred = [d[: len(d) // 2] + " \u2605 " + d[len(d) // 2 :] for d in docs]
    return {"queries": queries, "documents": docs, "with symbols": starred}


def one_expression(text: str) -> list[str]:
    """standard_words' regex path before the choice: the expression holding Lucene's emoji symbols, for every text
    (the characters Lucene puts in no token made spaces as now)."""
    lucene, _ = _standard._as_lucene(text)
    return ["".join(g) for g in _standard._TOKEN_LUCENE_EMOJI.findall(lucene)]


def chosen(text: str) -> list[str]:
    """standard_words' regex path as it is: both kinds of character looked for in one pass, the expression chosen."""
    lucene, token_re = _standard._as_lucene(text)
    return ["".join(g) for g in token_re.findall(lucene)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="../shared/data/lucene/tokens")
    ap.add_argument("--rounds", type=positive_int, default=40)
    args = ap.parse_args()
    peers: dict[str, Callable[[str], list[str]]] = {"one expression": one_expression, "two, chosen": chosen}
    print(
        f"{'workload':14} {'texts':>6} {'chars':>9} {'one expression':>15} {'two, chosen':>12} {'ratio':>7}"
    )
    for name, texts in workloads(Path(args.tokens)).items():
        if [one_expression(t) for t in texts] != [chosen(t) for t in texts]:
            raise SystemExit(f"{name}: the two expressions tokenise differently")
        times: dict[str, list[float]] = {p: [] for p in peers}
        for r in range(args.rounds):
            for p in sorted(peers, reverse=r % 2 == 1):  # alternate which peer goes first
                t0 = time.perf_counter()
                for t in texts:
                    peers[p](t)
                times[p].append(time.perf_counter() - t0)
        one, two = (statistics.median(times[p]) for p in peers)
        chars = sum(map(len, texts))
        print(f"{name:14} {len(texts):6} {chars:9} {one:14.3f}s {two:11.3f}s {one / two:6.2f}x")
    print("ratio: one expression's median time over the two expressions' (above 1: the choice is faster)")


if __name__ == "__main__":
    main()
