"""The compiled indexing path (numba tokenizer, counting sorts, bounded transposition passes) against the
reference path (the analyzer's regex, numpy sorts): the same tokens, and byte-identical index files."""

from __future__ import annotations

import collections
import filecmp
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import _postings, _spill
from pyterrier_sparse_eval._textscan import HAVE_NUMBA, TokenTable
from pyterrier_sparse_eval.analysis._standard import simple_classes

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="the compiled path needs numba")

# word characters of both kinds, the joiners, separators, and characters whose lowercase changes length
ALPHABET = (
    list("aZz09_") + list(".'\u2019 \n\t-,:;\"#") + ["é", "ß", "İ", "Σ", "٣", "\u00a0", "日", "K", "\u0301"]
)
TEXT = st.text(alphabet=st.sampled_from(ALPHABET), max_size=40)


def compiled_tokens(table: TokenTable, texts: list[str], analyzer: pse.Analyzer) -> list[list[str]]:
    doc, tok, _ = table.scan(texts, analyzer.lowercases, analyzer.tokenize_batch, rule=analyzer.compiled_rule)
    out: list[list[str]] = [[] for _ in texts]
    for d, t in zip(doc.tolist(), tok.tolist()):
        out[d].append(table.token(t))
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(st.lists(TEXT, max_size=8), min_size=1, max_size=4),
    lowercase=st.booleans(),
    tokenizer=st.sampled_from(["standard", "word"]),
)
def test_compiled_tokens_equal_the_regex_tokens(batches, lowercase, tokenizer):
    analyzer = pse.Analyzer(lowercase=lowercase, tokenizer=tokenizer)
    table = TokenTable(capacity=4)  # tiny: forces the table and its byte pool to grow mid-batch
    seen: dict[str, int] = {}
    for texts in batches:
        got = compiled_tokens(table, texts, analyzer)
        expected = analyzer.tokenize_batch(texts)
        if tokenizer == "standard" and lowercase:
            # the scanner lowercases ASCII letters in place in the texts it scans itself (ASCII, or no special
            # character); the others' tokens come from the analyzer unchanged
            special = simple_classes()[1]
            expected = [
                [t.translate(ASCII_LOWER) for t in toks] if special.search(text) is None else toks
                for text, toks in zip(texts, expected)
            ]
        assert got == expected
        # and the terms are the analyzer's
        analyzer.learn(got)
        assert [[analyzer.term_of(t) for t in toks] for toks in got] == [
            [analyzer.term_of(t) for t in toks]
            for toks in (analyzer.learn(expected) and expected or expected)
        ]
        for toks in got:  # one id per distinct token, stable across batches
            for t in toks:
                seen.setdefault(t, len(seen))
        assert len(table) == len(seen)
        # the bulk decoding (ASCII or not) gives each token as the one-at-a-time decoding does, and the
        # analyzer's memo-free terms are its memoised ones
        every = [table.token(i) for i in range(len(table))]
        assert table.tokens(0, len(table)) == every == list(seen)
        assert table.tokens(len(table) // 2, len(table)) == every[len(table) // 2 :]
        assert table.tokens(len(table), len(table)) == []
        analyzer.learn([every])
        assert analyzer.terms(every) == [analyzer.term_of(t) for t in every]


def test_tokens_on_hand_picked_text():
    # UAX #29 worked by hand: WB6/7 join letters over : . ', WB11/12 digits over , ; . ', WB13a/b join _, a run of
    # only _ is no token, and a token is cut at 255 characters (Lucene's maxTokenLength)
    analyzer = pse.Analyzer()
    texts = [
        "Don't stop: U.S. 3.14 a..b x' a:b 1,000,000 1;2 a.1 e.g.",
        "naïve Café’s",
        "",
        "___ A_B _9",
        "x" * 300,
    ]
    expected = [
        ["don't", "stop", "u.s", "3.14", "a", "b", "x", "a:b", "1,000,000", "1;2", "a", "1", "e.g"],
        ["naïve", "café’s"],
        [],
        ["a_b", "_9"],
        ["x" * 255, "x" * 45],
    ]
    assert compiled_tokens(TokenTable(), texts, analyzer) == expected
    assert [[t.lower() for t in toks] for toks in analyzer.tokenize_batch(texts)] == [
        [t.lower() for t in toks] for toks in expected
    ]
    legacy = pse.Analyzer(tokenizer="word")
    assert compiled_tokens(TokenTable(), texts[:1], legacy) == [
        ["don't", "stop", "u.s", "3.14", "a", "b", "x", "a", "b", "1", "000", "000", "1", "2", "a.1", "e.g"]
    ]


#: texts with tokens longer than Lucene's maxTokenLength (255 UTF-16 units), and the (start, end) code-point spans
#: of the tokens Lucene 9.5 makes of them (Anserini 0.22.1's DumpAnalyzedQueries, the English analyzer; its terms
#: located in the text): the longest token within the first 255 units, so never ending with a joiner
LONG_TOKENS = {
    "a" * 254 + ".b": [(0, 254), (255, 256)],
    "1" * 254 + ",2": [(0, 254), (255, 256)],
    "1" * 254 + ".5": [(0, 254), (255, 256)],
    "é" * 254 + ".b": [(0, 254), (255, 256)],
    "é" * 253 + "a:b": [(0, 254), (255, 256)],
    "a" * 255 + ".b": [(0, 255), (256, 257)],
    "a" * 254 + "_b": [(0, 255), (255, 256)],
    "x" * 300 + " y": [(0, 255), (255, 300), (301, 302)],
    "é" * 300 + " y": [(0, 255), (255, 300), (301, 302)],
    "\U0001d400" * 128: [(0, 127), (127, 128)],  # 𝐀: two UTF-16 units each
    "a" + "\U0001d400" * 127 + "b": [(0, 128), (128, 129)],
}


@pytest.mark.parametrize("text", list(LONG_TOKENS), ids=range(len(LONG_TOKENS)))
def test_long_tokens_are_cut_as_lucene_cuts_them(text):
    """It had cut after 255 characters whatever they were: "a" * 254 + "." kept the joiner, 128 supplementary
    characters stayed whole (256 units)."""
    lucene = [text[a:b] for a, b in LONG_TOKENS[text]]
    analyzer = pse.Analyzer()
    assert analyzer.tokenize_batch([text]) == [lucene]
    assert pse.analysis.standard_words(text) == lucene
    assert [t.text for t in pse.analysis.standard_tokens(text)] == lucene
    assert compiled_tokens(TokenTable(), [text], analyzer) == [lucene]  # the scanners of the index builds


def build(path, docs, *, compiled: bool, analyzer_kwargs=None, batch_size=10_000):
    indexer = pse.BM25(**(analyzer_kwargs or {})).indexer(
        pse.SparseIndex(path), verbose=False, batch_size=batch_size
    )
    indexer._compiled = compiled
    return indexer.index(docs)


def same_files(a, b) -> None:
    names = sorted(p.name for p in a.iterdir() if p.name != "pt_meta.json")
    assert names == sorted(p.name for p in b.iterdir() if p.name != "pt_meta.json")
    for name in names:
        assert filecmp.cmp(a / name, b / name, shallow=False), name


@needs_data
@pytest.mark.parametrize("analyzer_kwargs", [{}, {"stemmer": None, "stopwords": None, "lowercase": False}])
def test_scifact_index_is_byte_identical_on_both_paths(tmp_path, monkeypatch, scifact, analyzer_kwargs):
    """Real text (about a third of SciFact's documents have non-ASCII characters): the compiled path with
    several transposition passes equals the reference path (regex tokenizer, numpy sorts, one pass)."""
    docs = list(pse.datasets.corpus_iter(scifact))
    assert sum(not (d["title"] + d["text"]).isascii() for d in docs) > 500
    monkeypatch.setattr(_spill, "_PASS_POSTINGS", 50_000)
    fast = build(tmp_path / "fast", docs, compiled=True, analyzer_kwargs=analyzer_kwargs, batch_size=700)
    assert fast.num_postings > 10 * 50_000  # really several passes
    monkeypatch.setattr(_spill, "_PASS_POSTINGS", 1 << 40)
    monkeypatch.setattr(_postings, "HAVE_NUMBA", False)
    ref = build(tmp_path / "ref", docs, compiled=False, analyzer_kwargs=analyzer_kwargs, batch_size=700)
    same_files(tmp_path / "fast", tmp_path / "ref")
    assert fast.num_postings == ref.num_postings and fast.vocab == ref.vocab


@pytest.mark.parametrize("pass_postings", [1, 2, 3, 1000])
def test_transposition_passes_do_not_change_the_index(tmp_path, monkeypatch, pass_postings):
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)] + ["É", "ça", "don't"]
    docs = [{"docno": f"d{i}", "text": " ".join(rng.choice(words, rng.integers(0, 12)))} for i in range(300)]
    build(tmp_path / "one", docs, compiled=True, batch_size=37)
    monkeypatch.setattr(_spill, "_PASS_POSTINGS", pass_postings)
    build(tmp_path / "many", docs, compiled=True, batch_size=37)
    same_files(tmp_path / "one", tmp_path / "many")
    # and against Lucene's BM25 worked from plain term counts: x = tf / (k1 (1 - b + b dl / avgdl)), avgdl over the
    # documents with at least one term (Lucene's docCount); lengths below 24 are exact in Lucene's norm byte
    index = pse.SparseIndex(tmp_path / "many")
    analyzer = pse.BM25().analyzer
    counts = [collections.Counter(analyzer(doc["text"])) for doc in docs]
    avgdl = sum(sum(c.values()) for c in counts) / sum(1 for c in counts if c)
    m = index.postings.tocsc()
    k1, b = 0.9, 0.4
    for d, tf in enumerate(counts):
        col = m[:, d]
        got = {index.vocab[t]: w for t, w in zip(col.indices.tolist(), col.data.tolist())}
        dl = sum(tf.values())
        assert dl < 24
        expected = {t: n / (k1 * (1 - b + b * dl / avgdl)) for t, n in tf.items()}
        assert got.keys() == expected.keys()
        for t in expected:
            assert got[t] == pytest.approx(expected[t], rel=1e-6)


@pytest.mark.parametrize(
    "language", ["en", "fr", "de", "nl", "fi", "ru", "id", "ar", "fa", "hi", "te", "th", "zh", "ko", "sw"]
)
def test_every_language_indexes_the_same_on_both_paths(tmp_path, language):
    """Text in 22 languages and scripts (the StandardTokenizer golden's texts, mixed): the compiled scanner (ASCII
    and simple text scanned, the rest tokenised by the analyzer) gives the same index as the analyzer alone."""
    import json

    golden = Path(__file__).parent / "goldens" / "lucene" / "standard.jsonl"
    texts = [json.loads(line)["text"] for line in golden.open(encoding="utf-8")]
    docs = [{"docno": f"d{i}", "text": t} for i, t in enumerate(texts)]
    kwargs = {"language": language}
    build(tmp_path / "fast", docs, compiled=True, analyzer_kwargs=kwargs, batch_size=300)
    build(tmp_path / "ref", docs, compiled=False, analyzer_kwargs=kwargs, batch_size=300)
    same_files(tmp_path / "fast", tmp_path / "ref")
