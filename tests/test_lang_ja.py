"""Japanese (Kuromoji on janome's IPADIC) against Lucene 9.5.

The reference tokens are Lucene's own: the shared texts' ``LANG.lucene.tsv`` (Anserini 0.22.1's
``-language ja``) and the edge-case goldens ``tests/goldens/lucene/ja.edge.tsv`` made by
``tests/goldens/make_lang_ja_th.py`` with the same analyzers. Japanese needs the ``ja`` extra (janome); those tests
skip without it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from pyterrier_sparse_eval.analysis import _japanese

REPO = Path(__file__).resolve().parents[1]
TOKENS = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
GOLDENS = REPO / "tests" / "goldens" / "lucene"

needs_janome = pytest.mark.skipif(
    importlib.util.find_spec("janome") is None, reason="needs the ja extra (janome)"
)
needs_shared = pytest.mark.skipif(
    not (TOKENS / "ja.tsv").exists(),
    reason=f"shared Lucene tokens not found at {TOKENS} (../shared beside the repo)",
)


def japanese(text: str) -> list[str]:
    return [t for t in _japanese._terms(_japanese.japanese_tokens(_japanese.width_fold(text))) if t]


def f1(mine: list[str], gold: list[str]) -> float:
    if not mine and not gold:
        return 1.0
    overlap = sum((Counter(mine) & Counter(gold)).values())
    return 0.0 if not overlap else 2 * overlap / (len(mine) + len(gold))


def shared(lang: str) -> list[tuple[str, list[str]]]:
    with open(TOKENS / f"{lang}.lucene.tsv", encoding="utf-8") as f:
        gold = {i: t.split() for i, _, t in (line.rstrip("\n").partition("\t") for line in f)}
    with open(TOKENS / f"{lang}.tsv", encoding="utf-8") as f:
        return [(text, gold.get(i, [])) for i, _, text in (line.rstrip("\n").partition("\t") for line in f)]


def edge(lang: str, name: str = "edge") -> list[tuple[str, list[str]]]:
    with open(GOLDENS / f"{lang}.{name}.tsv", encoding="utf-8") as f:
        return [(json.loads(t), json.loads(g)) for _, t, g in (line.rstrip("\n").split("\t") for line in f)]


def agreement(fn, cases: list[tuple[str, list[str]]]) -> tuple[float, float, list]:
    """(share of identical token lists, mean per-text token F1, the differing cases)."""
    out = [(text, fn(text), gold) for text, gold in cases]
    bad = [c for c in out if c[1] != c[2]]
    return 1 - len(bad) / len(out), sum(f1(m, g) for _, m, g in out) / len(out), bad[:3]


# --- Japanese ---------------------------------------------------------------------------------------------------


@needs_janome
@needs_shared
def test_japanese_shared_texts():
    same, score, bad = agreement(japanese, shared("ja"))
    assert same >= 0.99 and score >= 0.95, bad  # measured: 400/400 identical


@needs_janome
def test_japanese_edge_cases():
    # long kanji compounds (search-mode splits), spaceless and >1024-character texts, width variants, astral
    # characters: all identical to Lucene
    same, _, bad = agreement(japanese, edge("ja"))
    assert same == 1.0, bad


@needs_janome
def test_japanese_dashes_find_lucene_s_dictionary_entries():
    # IPADIC's dash is U+2015 in janome's dictionary and U+2014 in Lucene's: next to words and inside the shared
    # texts, each dash gives Lucene's tokens (goldens by tools/make_ja_dash_goldens.py, Lucene's own analyzer),
    # as do the other characters Java and Python decode differently (wave dash, full-width minus, ...)
    same, _, bad = agreement(japanese, edge("ja", "dashes"))
    assert same == 1.0, bad  # 155 of 172 identical before the dashes were swapped for lookup


def test_width_fold():
    # outputs of Lucene's CJKWidthCharFilter on these strings
    assert _japanese.width_fold("ｶﾞｷﾞｸﾞ ﾊﾟﾋﾟ") == "ガギグ パピ"
    assert _japanese.width_fold("ｳﾞ ﾜﾞ ｦﾞ カﾞ") == "ヴ ヷ ヺ ガ"
    assert _japanese.width_fold("ﾞｱ ｱﾞ ｶﾟ ﾞﾞ a\uff9e") == "\u3099ア ア\u3099 カ\u309a \u3099\u3099 a\u3099"
    assert _japanese.width_fold("ＡＢＣ１２３！ ｰｰ") == "ABC123! ーー"
    assert _japanese.width_fold("｡｢｣､･") == "｡｢｣､・"
    assert _japanese.width_fold("東京") == "東京"


def test_japanese_terms():
    # stopword (before lowercasing), katakana stem (a final ー dropped from 4+ katakana), lowercase
    assert _japanese._terms(["コンピューター", "ABC", "の", "ラー", "ローマー字", "サーバー"]) == [
        "コンピュータ", "abc", "", "ラー", "ローマー字", "サーバ",
    ]  # fmt: skip


def test_japanese_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "janome", None)
    monkeypatch.setitem(sys.modules, "janome.fst", None)
    _japanese._dictionary.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pyterrier-sparse-eval\[ja\]"):
            _japanese.japanese_tokens("東京")
    finally:
        _japanese._dictionary.cache_clear()


# --- through the package ----------------------------------------------------------------------------------------


@needs_shared
@pytest.mark.parametrize("lang", ["ja"])
def test_analyze(lang):
    analysis = pytest.importorskip("pyterrier_sparse_eval.analysis")
    if not hasattr(analysis, "analyze"):
        pytest.skip("analysis.analyze not there yet")
    if importlib.util.find_spec("janome") is None:
        pytest.skip("needs the ja extra (janome)")
    same, score, bad = agreement(lambda t: analysis.analyze(t, lang), shared(lang))
    assert score >= 0.95 and same >= 0.99, bad


@needs_janome
def test_japanese_ties_keep_lucene_s_first_path():
    # two paths of equal cost: Lucene keeps the one added first, its dictionary's entries of one surface being in
    # the order of IPADIC's CSV files by name, then line order (goldens by tools/make_ja_tie_goldens.py, Lucene's
    # own analyzer); ordered by left id instead, the first five texts (found against Lucene) came out otherwise
    same, _, bad = agreement(japanese, edge("ja", "ties"))
    assert same == 1.0, bad


@needs_janome
def test_japanese_dictionary_entries_in_lucene_s_order():
    # one surface's entries in Lucene's word-id order (goldens by tools/make_ja_order_goldens.py, read off Lucene's
    # own dictionary: 500 surfaces whose entries come from two or more IPADIC files, 500 from one); ordered by left
    # id, as before, 364 of these 1,000 came out otherwise
    d = _japanese._dictionary()
    with open(GOLDENS / "ja.order.tsv", encoding="utf-8") as f:
        cases = [(s, json.loads(g)) for s, g in (line.rstrip("\n").split("\t") for line in f)]

    def base(surface: str, form: str | None) -> str | None:
        return None if form in (None, surface) else form  # Lucene gives none where it is the surface

    bad = []
    for surface, gold in cases:
        assert all(left == right for left, right, *_ in gold)  # IPADIC's left and right ids are one id
        theirs = [(left, cost, pos, base(surface, form)) for left, _, cost, pos, form in gold]
        ours = [
            (left, cost, tag, base(surface, form))
            for n, left, cost, entry in d.lookup(surface)
            if n == len(surface)
            for tag, form in [d.features(entry)]
        ]
        if ours != theirs:
            bad.append((surface, ours, theirs))
    assert len(cases) == 1000 and not bad, bad[:3]
