"""Make tests/goldens/lucene/runs/LANG.bm25-k1=1.2-b=0.75.txt: Anserini 0.22.1's BM25 runs on small collections
built from ../shared/data/lucene/tokens/LANG.tsv (needs Java 17 and the Anserini fat jar; CI never runs this).

The collection (:func:`collection`): the language's texts, plus 300 documents that join 2-8 random texts (so that
lengths pass 24 tokens, where Lucene's one-byte norms become lossy); 30 queries of 1-6 words from random texts.
Anserini indexes and searches with ``-language LANG``, k1=1.2, b=0.75, 100 hits:

    ANSERINI_JAR=.../anserini-0.22.1-fatjar.jar python tests/goldens/make_anserini_lang_runs.py fr de ar ja
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOKENS = HERE.parents[1].parent / "shared" / "data" / "lucene" / "tokens"


def collection(lang: str, tokens: Path = TOKENS) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(documents as (docno, text), queries as (qid, text)) for ``lang``, deterministic. ``ar-tatweel`` /
    ``fa-tatweel``: the language's collection plus documents and queries holding lone tatweels (tokens that
    normalisation empties, which Lucene indexes as the empty term), searched with ``-language ar`` / ``fa``."""
    if lang.endswith("-tatweel"):
        return _with_tatweels(*collection(lang.split("-")[0], tokens))
    with open(tokens / f"{lang}.tsv", encoding="utf-8") as f:
        texts = [tuple(line.rstrip("\n").split("\t", 1)) for line in f]
    rng = random.Random(0)
    docs = [(i, t) for i, t in texts]
    docs += [(f"c{j}", " ".join(rng.choice(texts)[1] for _ in range(rng.randint(2, 8)))) for j in range(300)]
    queries = []
    for q in range(30):
        words = rng.choice(texts)[1].split()
        queries.append((f"q{q}", " ".join(words[: rng.randint(1, min(6, len(words)))])))
    return docs, queries


def _with_tatweels(
    docs: list[tuple[str, str]], queries: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    rng = random.Random(1)
    words = [w for _, t in docs for w in t.split()]
    lone = ["\u0640", "\u0640\u0640\u0640", "\u0640\u064e"]  # tatweels, one with a haraka: all emptied
    extra = [
        (f"t{j}", " ".join(rng.choice(words + lone) for _ in range(rng.randint(1, 30)))) for j in range(60)
    ]
    extra += [("t_only", "\u0640"), ("t_two", "\u0640 \u0640\u0640")]  # documents of empty terms only
    more = [(f"t{q}", f"{rng.choice(words)} {rng.choice(lone)} {rng.choice(words)}") for q in range(10)]
    return docs + extra, queries + more + [("t_lone", "\u0640")]


def main(langs: list[str]) -> None:
    jar = os.environ["ANSERINI_JAR"]
    for lang in langs:
        docs, queries = collection(lang)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "docs").mkdir()
            with open(Path(tmp) / "docs" / "docs.jsonl", "w", encoding="utf-8") as f:
                for docno, text in docs:
                    f.write(json.dumps({"id": docno, "contents": text}, ensure_ascii=False) + "\n")
            with open(Path(tmp) / "topics.tsv", "w", encoding="utf-8") as f:
                f.writelines(f"{qid}\t{text}\n" for qid, text in queries)
            language = [] if lang == "en" else ["-language", lang.split("-")[0]]
            java = ["java", "-cp", jar]
            subprocess.run(
                [*java, "io.anserini.index.IndexCollection", "-collection", "JsonCollection", "-input",
                 f"{tmp}/docs", "-index", f"{tmp}/idx", "-generator", "DefaultLuceneDocumentGenerator",
                 "-threads", "1", *language],
                check=True, capture_output=True,
            )  # fmt: skip
            out = HERE / "lucene" / "runs" / f"{lang}.bm25-k1=1.2-b=0.75.txt"
            subprocess.run(
                [*java, "io.anserini.search.SearchCollection", "-index", f"{tmp}/idx", "-topics",
                 f"{tmp}/topics.tsv", "-topicreader", "TsvString", "-output", str(out), "-bm25", "-bm25.k1", "1.2",
                 "-bm25.b", "0.75", "-hits", "100", *language],
                check=True, capture_output=True,
            )  # fmt: skip
        print(lang, len(docs), "documents ->", out)


if __name__ == "__main__":
    main(sys.argv[1:])
