"""Texts that once tokenised differently from Lucene, each group against Lucene's own tokens
(``tests/goldens/lucene/cases.tsv``, made by ``tests/goldens/make_lang_cases.py`` with Anserini 0.22.1's analyzers):

- ``ja-frontier``: Kuromoji after a long unknown or punctuation run (eight spaces before 八十八) had kept a compound
  whole that search mode splits (34 of the 180 texts differed);
- ``standard-letter-emoji``: the StandardTokenizer on a character both a letter and an emoji (Ⓜ, 🅰, ...) joined by
  a ZWJ to an emoji, where Lucene takes the longer match (300 of 480);
- ``porter-utf16``: Porter counting a character beyond U+FFFF as two consonants, as Lucene's UTF-16 stemmer (6 of
  308);
- ``thai-utf16-buffer``: the Thai tokenizer's buffers of 1024 UTF-16 units, not characters (10 of 45);
- ``java17-unassigned``: characters of a Unicode later than Java 17's in the Japanese and Thai analyzers, which
  classify characters with Python's Unicode (with Python 3.11, 632 of 4,088 differed).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from pyterrier_sparse_eval.analysis import analyze

CASES = Path(__file__).resolve().parent / "goldens" / "lucene" / "cases.tsv"


def _groups() -> dict[str, list[tuple[str, str, list[str]]]]:
    groups: dict[str, list[tuple[str, str, list[str]]]] = defaultdict(list)
    with open(CASES, encoding="utf-8") as f:
        for line in f:
            group, lang, text, tokens = line.rstrip("\n").split("\t")
            groups[group].append((lang, json.loads(text), json.loads(tokens)))
    return groups


GROUPS = _groups()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_lucene_s_tokens(group):
    cases = GROUPS[group]
    bad = [
        (lang, text[:60], analyze(text, lang), tokens)
        for lang, text, tokens in cases
        if analyze(text, lang) != tokens
    ]
    assert len(cases) >= 45 and not bad, bad[:3]


def test_the_index_holds_the_query_s_terms(tmp_path):
    """The indexer (its compiled scanner where a text allows) and the query side give the same terms."""
    import pyterrier_sparse_eval as pse

    texts = [text for lang, text, _ in GROUPS["standard-letter-emoji"] if lang == "en"]
    index = pse.SparseIndex(tmp_path / "index")
    bm25 = pse.BM25()
    bm25.indexer(index, verbose=False).index([{"docno": f"d{i}", "text": t} for i, t in enumerate(texts)])
    assert set(index.vocab) == {t for text in texts for t in analyze(text, "en")}
    assert "ⓜ\u200d😀" in index.vocab


def test_the_letter_emojis_are_those_both_aletter_and_emoji():
    """The StandardTokenizer's longer-match check starts only from these; a regex release that makes another
    character both fails here (then compare that character with Lucene)."""
    import regex

    from pyterrier_sparse_eval.analysis._standard import _LETTER_EMOJI

    both = regex.compile(r"[\p{WB=ALetter}&&\p{Emoji}]", regex.V1)
    found = {chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and both.match(chr(c))}
    assert found == _LETTER_EMOJI


SURROGATES = Path(__file__).resolve().parent / "goldens" / "lucene" / "surrogates.jsonl"


def test_lone_surrogates_as_lucene_analyses_them():
    """Lone surrogates (valid JSON: a truncated emoji in a web dump), against Lucene's terms of the same texts
    (``goldens/lucene/surrogates.jsonl``, made by ``tests/goldens/make_lucene_surrogates.py`` with Anserini 0.22.1):
    Japanese had raised UnicodeEncodeError (67 of 67 texts), Swahili and Yoruba kept the surrogate in a term that
    the index then refused (67 each), Thai lost or kept words beside it (18); Lucene drops it, or keeps it in a
    whitespace token as U+FFFD."""
    rows = [json.loads(line) for line in SURROGATES.read_text(encoding="utf-8").splitlines()]
    bad = [
        (r["language"], r["text"], r["terms"])
        for r in rows
        if analyze(r["text"], r["language"]) != r["terms"]
    ]
    assert len(rows) >= 600 and {"ja", "th", "sw", "yo", "en"} <= {r["language"] for r in rows}
    assert not bad, bad[:3]
    assert any("\ufffd" in t for r in rows if r["language"] == "sw" for t in r["terms"])


@pytest.mark.parametrize("language", ["ja", "sw", "th"])
def test_a_document_with_a_lone_surrogate_is_indexed_and_found(tmp_path, language):
    """The index takes such a document and its query finds it (the build had stopped on it)."""
    import pandas as pd

    import pyterrier_sparse_eval as pse

    docs = [{"docno": "d1", "text": "東京 broken \ud83d emoji"}, {"docno": "d2", "text": "plain text"}]
    bm25 = pse.BM25(language=language)
    index = pse.SparseIndex(tmp_path / "index")
    bm25.indexer(index, verbose=False).index(docs)
    # (pandas's arrow strings hold no lone surrogate: the query cannot)
    run = bm25.retriever(index).transform(pd.DataFrame({"qid": ["1"], "query": ["broken emoji"]}))
    assert run["docno"].tolist() == ["d1"]
    assert ("\ufffd" in index.vocab) == (language == "sw")
