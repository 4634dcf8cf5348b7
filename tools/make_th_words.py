"""Builds th_words.txt, a Thai word list for pyterrier_sparse_eval.analysis._thai (the port of the JDK's
dictionary-based Thai word breaking that Lucene's ThaiTokenizer uses), from permissively licensed sources only.

Sources (all shipped in the PyPI package ``pythainlp``; ``pip install pythainlp==5.4.0``):

- ``pythainlp/corpus/icubrk_th.txt``: ICU's Thai break-iterator dictionary
  (``icu4c/source/data/brkitr/dictionaries/thaidict.txt``; the same 26,383 Thai-letter words as the
  ``brkitr/thaidict.dict`` of ICU 57 to 78). Copyright Unicode, Inc. and others; IBM, Apple and others
  2006-2015. Unicode License (Unicode-DFS-2016; the older part under the ICU License), see LICENSE.
- ``pythainlp/corpus/words_th.txt`` and ``words_th_thai2fit_201810.txt``: PyThaiNLP's word lists, CC0-1.0.

The list is: the ICU words that are also in both PyThaiNLP lists, plus the 44 Thai consonant letters
(U+0E01-U+0E2E without the vowels U+0E24 and U+0E26), the repetition mark U+0E46 (ๆ) on its own, and the
doubled forms "Xๆ" that PyThaiNLP's words_th.txt lists for a word X of the list. Only entries made of the
characters the JDK's Thai dictionary can hold are kept (ICU entries with spaces or full stops are dropped).

Nothing here comes from the JDK or from Lucene: the sources were chosen, and the rule fixed, by measuring the
result against Lucene's tokens (see REPORT.md).

    python build_th_words.py [OUT]        (default: th_words.txt beside this script)
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

# the characters the JDK dictionary's trie has columns for (_thai._COLUMNS)
COLUMNS = frozenset("กขคฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรฤลฦวศษสหฬอฮฯะัาำิีึืฺุูเแโใไๅๆ็่้๊๋์๑")
CONSONANTS = frozenset(chr(c) for c in range(0x0E01, 0x0E2F)) - {"\u0e24", "\u0e26"}
MAI_YAMOK = "\u0e46"


def corpus(name: str) -> set[str]:
    text = resources.files("pythainlp").joinpath("corpus", name).read_text("utf-8")
    words = set()
    for line in text.splitlines():
        line = line.lstrip("\ufeff").strip()
        if line and not line.startswith("#"):
            words.add(line)
    return words


def thai(words: set[str]) -> set[str]:
    return {w for w in words if all(c in COLUMNS for c in w)}


def build() -> tuple[list[str], dict[str, int]]:
    icu = thai(corpus("icubrk_th.txt"))
    words_th = thai(corpus("words_th.txt"))
    thai2fit = thai(corpus("words_th_thai2fit_201810.txt"))
    base = icu & words_th & thai2fit
    doubled = {w for w in words_th if w.endswith(MAI_YAMOK) and w[:-1] in base}
    out = sorted(base | CONSONANTS | {MAI_YAMOK} | doubled)
    stats = {
        "icu": len(icu),
        "words_th": len(words_th),
        "thai2fit": len(thai2fit),
        "base": len(base),
        "doubled": len(doubled),
        "total": len(out),
    }
    return out, stats


def main() -> None:
    import pythainlp

    default = (
        Path(__file__).resolve().parents[1] / "pyterrier_sparse_eval" / "data" / "lucene" / "th_words.txt"
    )
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    words, s = build()
    header = (
        "# Thai words for pyterrier_sparse_eval.analysis._thai. Made by tools/make_th_words.py from pythainlp "
        f"{pythainlp.__version__}:\n"
        f"# the {s['base']} words of ICU's Thai dictionary (icubrk_th.txt, {s['icu']} words; Unicode License,\n"
        "# Copyright (C) 2016 and later Unicode, Inc. and others; (c) 2006-2015 IBM, Apple Inc., and others)\n"
        "# that are also in PyThaiNLP's words_th.txt and words_th_thai2fit_201810.txt (CC0-1.0), plus the 44\n"
        f"# consonant letters, U+0E46 and {s['doubled']} doubled forms (Xๆ) from words_th.txt. See th_words.LICENSE.txt.\n"
    )
    path.write_text(header + "\n".join(words) + "\n", "utf-8")
    print(f"wrote {path}: {s}")


if __name__ == "__main__":
    main()
