"""Token agreement with Lucene's analyzers on a large real vocabulary: every language's most frequent words and
texts made of them, each analysed by this project and by Lucene itself (Anserini 0.22.1's DumpAnalyzedQueries).

Per language (wordfreq 3.1.1's lists; it has none for te and th, and sw and yo are left out: Anserini's
DumpAnalyzedQueries gives them another analyzer than its indexer), these items, seeded:

- *words*: the top ``--words`` words (50,000 or all the list has), one item each;
- *texts*: ``--texts`` texts of 5-15 words, some capitalised or upper-cased, elided (fr, it), glued to numbers
  (years, 1,234, 3.14, dates, 12%, 3rd), joined by hyphens, apostrophes, dots or slashes, with punctuation around;
- *hard*: ``--texts`` texts of 3-12 words, 30% from another language's list, decorated twice as often, joined by a
  space, nothing, NBSP, '-', '/', '.', '_', ',' or U+3000, a fifth of the words holding a ZWNJ, ZWJ, soft hyphen,
  word joiner, tatweel, harakat, nukta, virama, combining mark or U+FE0F;
- for zh, ja, ko also *spaceless*: ``--texts`` texts of 2-6 words joined with nothing (one segmentation problem).

An item agrees when the two token lists are equal, order included. Needs Java 17, the Anserini fat jar (``pip
download --no-deps pyserini==0.22.1``, then unzip ``pyserini/resources/jars/anserini-0.22.1-fatjar.jar``), and
``pip install wordfreq==3.1.1``; about 40 minutes for every language on 2 cores (Japanese is most of it)::

    python benchmarks/report_lucene_vocabulary.py --jar anserini-0.22.1-fatjar.jar [--langs ja de] [--out DIR]

Writes ``DIR/LANG.diff.jsonl`` (every differing item: text, ours, Lucene's) and prints one row per language.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

import pyterrier_sparse_eval as pse

LANGS = [
    "ar",
    "bn",
    "de",
    "en",
    "es",
    "fa",
    "fi",
    "fr",
    "hi",
    "id",
    "it",
    "ja",
    "ko",
    "nl",
    "pt",
    "ru",
    "vi",
    "zh",
]
CJK = {"zh", "ja", "ko"}
ELISION = {
    "fr": ["l", "d", "qu", "j", "n", "s", "c", "m", "t", "jusqu", "lorsqu", "puisqu"],
    "it": ["l", "d", "dell", "all", "nell", "un", "sull", "dall", "c", "quest"],
}
PRE = ["(", '"', "«", "¿", "¡", "[", "'", "“", "-", "#", "@"]
POST = [".", ",", ";", ":", "!", "?", "…", ")", '"', "»", "]", "'", "’", "”", "%", "-", "...", "'s", "’s"]
CJK_PUNCT = ["。", "、", "「", "」", "（", "）", "！", "？", "・", "：", "，", "～", "ー", "『", "』"]
JOIN = [" "] * 12 + ["", "\u00a0", "-", "/", ".", "_", ",", "\u3000"]
INSERT = "\u200c\u200d\u00ad\u2060\u0640\u064e\u0651\u0652\u093c\u094d\u0301\u0308\ufe0f\u09bc\u09cd"


def number(rng: random.Random) -> str:
    return rng.choice(
        [
            str(rng.randint(0, 100)),
            str(rng.randint(1900, 2030)),
            f"{rng.randint(1, 999)},{rng.randint(0, 999):03d}",
            f"{rng.randint(0, 99)}.{rng.randint(0, 99)}",
            f"{rng.randint(1, 31)}/{rng.randint(1, 12)}/{rng.randint(1990, 2030)}",
            f"{rng.randint(1, 99)}%",
            f"{rng.randint(1, 9)}{rng.choice(['st', 'nd', 'rd', 'th', 'e', 'º', 'km', 'x', 'h', 'mm'])}",
        ]
    )


def decorate(w: str, lang: str, words: list[str], rng: random.Random) -> str:
    """A word as running text has it: capitalised, elided, glued to another word or a number, punctuated."""
    r = rng.random()
    w = w.capitalize() if r < 0.12 else w.upper() if r < 0.16 else w
    r = rng.random()
    if r < 0.06 and lang in ELISION:
        w = rng.choice(ELISION[lang]) + rng.choice("'’") + w
    elif r < 0.09:
        w += rng.choice("'’") + rng.choice(words[:300] + ["s", "t", "ll", "re"])
    elif r < 0.14:
        w += "-" + rng.choice(words)
    elif r < 0.17:
        w += rng.choice([".", "_", "/", "·", "@", "&", ":"]) + rng.choice(words)
    elif r < 0.22:
        w = rng.choice([number(rng), w + number(rng), number(rng) + w])
    punct = CJK_PUNCT if lang in CJK else []
    if rng.random() < 0.15:
        w += rng.choice(POST + punct)
    if rng.random() < 0.07:
        w = rng.choice(PRE + punct) + w
    return w


def items(lang: str, lists: dict[str, list[str]], n_words: int, n_texts: int) -> dict[str, str]:
    """The language's items by id (``LANG-kN``, k the kind's letter)."""
    rng = random.Random(f"vocabulary-{lang}")
    own = lists[lang]

    def pick(words: list[str]) -> str:
        return rng.choice(words[:500]) if rng.random() < 0.3 else rng.choice(words)

    out = {f"{lang}-w{i}": w for i, w in enumerate(own[:n_words])}
    for i in range(n_texts):
        out[f"{lang}-t{i}"] = " ".join(decorate(pick(own), lang, own, rng) for _ in range(rng.randint(5, 15)))
    others = sorted(lists)
    for i in range(n_texts):
        text = ""
        for j in range(rng.randint(3, 12)):
            w = decorate(pick(own if rng.random() < 0.7 else lists[rng.choice(others)]), lang, own, rng)
            w = decorate(w, lang, own, rng) if rng.random() < 0.5 else w
            if rng.random() < 0.2 and len(w) > 1:
                k = rng.randint(1, len(w) - 1)
                w = w[:k] + rng.choice(INSERT) + w[k:]
            text += (rng.choice(JOIN) if j else "") + w
        out[f"{lang}-h{i}"] = text
    if lang in CJK:
        for i in range(n_texts):
            out[f"{lang}-s{i}"] = "".join(pick(own) for _ in range(rng.randint(2, 6)))
    # DumpAnalyzedQueries reads one text a line, the id before a tab
    return {
        k: t
        for k, t in out.items()
        if t.strip() and not set(t) & set("\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
    }


def lucene(jar: str, lang: str, texts: dict[str, str]) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        topics, out = Path(tmp) / "t.tsv", Path(tmp) / "out.tsv"
        topics.write_text("".join(f"{k}\t{t}\n" for k, t in texts.items()), encoding="utf-8", newline="\n")
        language = [] if lang == "en" else ["-language", lang]
        subprocess.run(
            ["java", "-Xmx2g", "-Dfile.encoding=UTF-8", "-cp", jar, "io.anserini.util.DumpAnalyzedQueries",
             "-topics", str(topics), "-topicreader", "TsvString", "-output", str(out), *language],
            check=True, capture_output=True,
        )  # fmt: skip
        terms = {}
        for line in out.read_text(encoding="utf-8").split("\n"):
            if line:
                key, _, toks = line.partition("\t")
                terms[key] = toks.split(" ") if toks else []
        return terms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jar", required=True, help="Anserini 0.22.1's fat jar")
    ap.add_argument("--langs", nargs="+", default=LANGS)
    ap.add_argument("--words", type=int, default=50_000)
    ap.add_argument("--texts", type=int, default=3_000)
    ap.add_argument("--out", default="lucene-vocabulary", help="folder for the differing items")
    args = ap.parse_args()
    import wordfreq  # noqa: PLC0415  (a benchmark's dependency only)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lists = {
        lang: [w for w in wordfreq.top_n_list(lang, args.words) if w.strip() and not set(w) & set("\t\n\r")]
        for lang in LANGS
    }
    print(
        f"{'lang':5} {'words':>7} {'texts':>6} {'hard':>6} {'spaceless':>9} {'items':>8} {'identical':>10} {'s':>5}"
    )
    totals = [0, 0]
    for lang in args.langs:
        start = time.time()
        texts = items(lang, lists, args.words, args.texts)
        theirs = lucene(args.jar, lang, texts)
        analyze = pse.Analyzer(language=lang)
        diff = []
        for key, text in texts.items():
            ours = analyze(text)
            if ours != theirs.get(key):
                diff.append({"id": key, "text": text, "ours": ours, "lucene": theirs.get(key)})
        with open(out / f"{lang}.diff.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in diff)
        kinds = [sum(k.startswith(f"{lang}-{c}") for k in texts) for c in "wths"]
        same = len(texts) - len(diff)
        totals = [totals[0] + len(texts), totals[1] + same]
        print(
            f"{lang:5} {kinds[0]:>7,} {kinds[1]:>6,} {kinds[2]:>6,} {kinds[3]:>9,} {len(texts):>8,} "
            f"{100 * same / len(texts):>9.4f}% {time.time() - start:>5.0f}",
            flush=True,
        )
    print(
        f"all: {totals[1]:,} of {totals[0]:,} items identical to Lucene's tokens ({args.out}/LANG.diff.jsonl)"
    )


if __name__ == "__main__":
    main()
