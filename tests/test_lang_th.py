"""Thai (the JDK's dictionary-based word breaks, with a permissively licensed word list) against Lucene 9.5.

The reference tokens are Lucene's own: the shared texts' ``th.lucene.tsv`` (Anserini 0.22.1's ``-language th``)
and the edge-case goldens ``tests/goldens/lucene/th.edge.tsv`` made by ``tests/goldens/make_lang_ja_th.py``.
Lucene's word list (the JDK's, GPL) cannot ship here, so agreement is measured, not exact: the thresholds below
sit just under the measured values (see ``_thai.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter
from pathlib import Path

import pytest

from pyterrier_sparse_eval.analysis import _thai

REPO = Path(__file__).resolve().parents[1]
TOKENS = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "lucene" / "tokens"
GOLDENS = REPO / "tests" / "goldens" / "lucene"

needs_shared = pytest.mark.skipif(
    not (TOKENS / "th.tsv").exists(),
    reason=f"shared Lucene tokens not found at {TOKENS} (../shared beside the repo)",
)


def thai(text: str) -> list[str]:
    return [t for t in _thai._terms(_thai.thai_words(text)) if t]


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


def edge(lang: str) -> list[tuple[str, list[str]]]:
    with open(GOLDENS / f"{lang}.edge.tsv", encoding="utf-8") as f:
        return [(json.loads(t), json.loads(g)) for _, t, g in (line.rstrip("\n").split("\t") for line in f)]


def agreement(fn, cases: list[tuple[str, list[str]]]) -> tuple[float, float, list]:
    """(share of identical token lists, mean per-text token F1, the differing cases)."""
    out = [(text, fn(text), gold) for text, gold in cases]
    bad = [c for c in out if c[1] != c[2]]
    return 1 - len(bad) / len(out), sum(f1(m, g) for _, m, g in out) / len(out), bad[:3]


# --- Thai -------------------------------------------------------------------------------------------------------


@needs_shared
def test_thai_shared_texts():
    same, score, bad = agreement(thai, shared("th"))
    assert same >= 0.58 and score >= 0.87, bad  # measured: 233/400 identical, F1 0.872


def test_thai_edge_cases():
    same, score, bad = agreement(thai, edge("th"))
    assert same >= 0.77 and score >= 0.92, bad  # measured: 378/485 identical, F1 0.929


def test_thai_word_breaks():
    # the JDK's breaks (java.text.BreakIterator.getWordInstance(th)) of these strings, letters and digits only
    assert thai("กรุณาใส่ชื่อสำหรับแผ่นดิสก์") == ["กรุณา", "ใส่", "ชื่อ", "สำหรับ", "แผ่น", "ดิสก์"]
    # (where the word lists differ the words differ: Lucene glues the unknown "ไบต์" to "ไม่" in
    # "มีลำดับไบต์ไม่เต็มอักขระ"; ICU's list knows "ไบต์")
    assert _thai.thai_words("ไทย\u200bไทย ไท\u00adย") == ["ไทย\u200bไทย", "ไท", "ย"]
    assert thai("Hello World-X 3.14 abc123 ๑๒๓ e-mail foo.bar: Ⅻ ½") == [
        "hello", "world-x", "3.14", "abc123", "123", "e-mail", "foo.bar",
    ]  # fmt: skip


def test_thai_buffers():
    # SegmentingTokenizerBase: 1024-character buffers cut after the last line break
    text = "ก" * 1500 + "\n" + "ข" * 10
    assert [len(c) for c in _thai._chunks(text)] == [1024, 487]
    text = "ก" * 1000 + "\n" + "ข" * 100
    assert [len(c) for c in _thai._chunks(text)] == [1001, 100]
    assert _thai._chunks("") == []


# --- through the package ----------------------------------------------------------------------------------------


@needs_shared
@pytest.mark.parametrize("lang", ["th"])
def test_analyze(lang):
    analysis = pytest.importorskip("pyterrier_sparse_eval.analysis")
    if not hasattr(analysis, "analyze"):
        pytest.skip("analysis.analyze not there yet")
    if lang == "ja" and importlib.util.find_spec("janome") is None:
        pytest.skip("needs the ja extra (janome)")
    same, score, bad = agreement(lambda t: analysis.analyze(t, lang), shared(lang))
    assert score >= 0.87 and same >= 0.58, bad  # as test_thai_shared_texts
