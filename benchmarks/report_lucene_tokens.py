"""Token agreement with Lucene's analyzers, per language, on ../shared/data/lucene/tokens.

For each language: the share of texts whose token sequence equals Lucene's, and token-F1 (per text, bag of
tokens, averaged), through ``pse.analysis.analyze(text, language)``. Languages whose analyzer needs an extra
that is not installed are reported as such.

    python benchmarks/report_lucene_tokens.py [--tokens ../shared/data/lucene/tokens]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from pyterrier_sparse_eval import analysis

#: languages whose shared tokens were made by another analyzer than Anserini's indexer uses for them
DUMPED_AS = {"yo": "en"}


def f1(ours: list[str], theirs: list[str]) -> float:
    if not ours and not theirs:
        return 1.0
    common = sum((Counter(ours) & Counter(theirs)).values())
    if not common:
        return 0.0
    p, r = common / len(ours), common / len(theirs)
    return 2 * p * r / (p + r)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="../shared/data/lucene/tokens")
    args = ap.parse_args()
    folder = Path(args.tokens)
    print(f"{'lang':5} {'analyzer':60} {'texts':>6} {'identical':>10} {'token-F1':>9}")
    for path in sorted(folder.glob("*.lucene.tsv")):
        lang = path.name.split(".")[0]
        texts = dict(
            line.rstrip("\n").split("\t", 1) for line in open(folder / f"{lang}.tsv", encoding="utf-8")
        )
        gold = {}
        for line in open(path, encoding="utf-8"):
            i, _, toks = line.rstrip("\n").partition("\t")
            gold[i] = toks.split(" ") if toks else []
        # the shared yo tokens are DumpAnalyzedQueries', which gives yo the English analyzer; Anserini's indexer and
        # searcher (and this project) give it the WhitespaceAnalyzer
        shown, lang = lang if lang not in DUMPED_AS else f"{lang}*", DUMPED_AS.get(lang, lang)
        if lang not in analysis.LANGUAGES:
            print(f"{shown:5} {'(no analyzer)':60} {len(gold):6}")
            continue
        try:
            ours = {i: analysis.analyze(texts[i], lang) for i in gold}
        except ImportError as e:
            print(f"{shown:5} {str(e)[:60]:60} {len(gold):6}")
            continue
        same = sum(ours[i] == [t for t in gold[i] if t] for i in gold)
        mean_f1 = sum(f1(ours[i], [t for t in gold[i] if t]) for i in gold) / len(gold)
        name = analysis.LANGUAGES[lang].lucene.split("(")[0][:60]
        print(f"{shown:5} {name:60} {len(gold):6} {100 * same / len(gold):9.1f}% {mean_f1:9.4f}")
    if DUMPED_AS:
        print(
            "* the shared tokens of",
            ", ".join(f"{k} are {v}'s" for k, v in DUMPED_AS.items()),
            "(DumpAnalyzedQueries)",
        )


if __name__ == "__main__":
    main()
