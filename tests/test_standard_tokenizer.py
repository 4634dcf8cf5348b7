"""Lucene's StandardTokenizer (UAX #29) and the analyzer around it, against Lucene's own output.

tests/goldens/lucene/standard.jsonl holds Lucene 9.5's StandardTokenizer tokens (text and type) of 1,236 texts:
50 per language of ../shared/data/lucene/tokens (22 languages and scripts), 100 SciFact documents, the Vaswani
queries and hand-written edge cases (made by tests/goldens/make_standard_tokens.py with the Anserini jar).
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import pandas as pd
import pytest
import Stemmer

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.analysis import standard_tokens, standard_words
from pyterrier_sparse_eval.analysis._english import porter_stem, porter_stems

GOLDEN = Path(__file__).parent / "goldens" / "lucene" / "standard.jsonl"


def golden() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.open(encoding="utf-8")]


def test_tokens_and_types_equal_lucenes():
    rows = golden()
    assert len(rows) > 1200
    wrong = [
        r["text"][:60] for r in rows if [[t.text, t.type] for t in standard_tokens(r["text"])] != r["tokens"]
    ]
    assert not wrong, f"{len(wrong)} texts tokenised differently, e.g. {wrong[:3]}"
    assert all(standard_words(r["text"]) == [t for t, _ in r["tokens"]] for r in rows)


def test_ascii_path_equals_the_full_grammar():
    # ASCII texts take a shorter expression (standard_words' fast path); it must find exactly the full grammar's
    # tokens: random strings over the characters with a word-break class of their own and other punctuation
    import random

    from pyterrier_sparse_eval.analysis._standard import _ASCII_WORD, _TOKEN

    rng = random.Random(0)
    alphabet = "aZ09_:.',;\" -#*!?()/\t\n@&%+=<>|~"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(50_000)]
    full = [["".join(g) for g in _TOKEN.findall(t)] for t in texts]
    assert [_ASCII_WORD.findall(t) for t in texts] == full
    assert sum(map(len, full)) > 50_000  # tokens were found, joiners between letters and digits among them
    assert any(len(w) > 2 and any(c in w for c in ":.',;_") for ws in full for w in ws)
    # standard_words takes the plain letter-and-digit runs when no joiner can apply: both branches, same tokens
    # a joiner: "_", or a MidLetter / MidNum / MidNumLet / Single_Quote between two letters or digits
    joiner = re.compile(r"_|[A-Za-z0-9][:.',;][A-Za-z0-9]")

    sparse = "aZ09 .,'-:;\t"  # joiners, but rarely between two letters or digits
    texts += ["".join(rng.choice(sparse) for _ in range(rng.randint(0, 24))) for _ in range(50_000)]
    full += [["".join(g) for g in _TOKEN.findall(t)] for t in texts[50_000:]]
    assert [standard_words(t) for t in texts] == full
    runs = sum(1 for t in texts if t.strip() and not joiner.search(t))
    assert 10_000 < runs < len(texts) - 10_000
    # the joiner test standard_words uses (candidates first, then their neighbours) answers as the expression does,
    # joiners at either end of a text included
    from pyterrier_sparse_eval.analysis._standard import _ascii_joins

    assert [_ascii_joins(t) for t in texts] == [joiner.search(t) is not None for t in texts]
    assert [_ascii_joins(t) for t in (".a", "a.", "a.b", "_", ",9", "9,", "a;;b", "a b.")] == [
        False, False, True, True, False, False, False, False,
    ]  # fmt: skip
    # the fast path is taken for ASCII text, and the long-token rule still applies to it
    assert standard_words("a" * 300 + " b") == [t.text for t in standard_tokens("a" * 300 + " b")]
    assert standard_words("a" * 300 + " b")[0] == "a" * 255


def test_edge_cases_worked_by_hand():
    # UAX #29 as Lucene applies it (each also in the golden file, checked against Lucene above)
    assert standard_words("1,000,000 3.14 U.S.A. e.g. a:b a::b don't x_y ___") == [
        "1,000,000", "3.14", "U.S.A", "e.g", "a:b", "a", "b", "don't", "x_y",
    ]  # fmt: skip
    assert [(t.text, t.type) for t in standard_tokens("東京タワー ไทยภาษา 한국어")] == [
        ("東", "<IDEOGRAPHIC>"), ("京", "<IDEOGRAPHIC>"), ("タワー", "<KATAKANA>"),
        ("ไทยภาษา", "<SOUTHEAST_ASIAN>"), ("한국어", "<HANGUL>"),
    ]  # fmt: skip
    assert standard_words("a" * 300) == ["a" * 255, "a" * 45]  # Lucene's maxTokenLength


def test_characters_of_newer_unicode_are_tokenised_as_lucene_does():
    """Lucene 9.5's grammar knows Unicode 12.1 and its emoji data; the tables here are newer. Lucene's tokens of
    these texts (Anserini 0.22.1's DumpAnalyzedQueries; its English analyzer lowercases U+A7BA, the rest it leaves):
    a letter of Unicode 12.0 joins, those of 13.0 and 14.0 and CJK Extension G/H ideographs are in no token, and
    U+2605 BLACK STAR and U+2388 HELM SYMBOL are emoji tokens. They had been letters, ideographs and nothing."""
    for text, lucene in [
        ("q\ua7baz", ["q\ua7baz"]),  # U+A7BA, Unicode 12.0
        ("q\ua7c7z", ["q", "z"]),  # U+A7C7, 13.0
        ("q\ua7c0z", ["q", "z"]),  # U+A7C0, 14.0
        ("q\u0870z", ["q", "z"]),  # Arabic Extended-B, 14.0
        ("q\U00030000z", ["q", "z"]),  # CJK Extension G, 13.0
        ("\u4e2d\U00031350\u6587", ["\u4e2d", "\u6587"]),  # CJK Extension H between two ideographs
        ("q\u2605z", ["q", "\u2605", "z"]),
        ("q\u2388z", ["q", "\u2388", "z"]),
        ("1\ua7c72", ["1", "2"]),
    ]:
        assert standard_words(text) == lucene, text
        assert [t.text for t in standard_tokens(text)] == lucene, text


def _shape(words: list[str], a: str, b: str) -> str:
    if words == [a, b]:
        return "D"
    return "J" if len(words) == 1 else "S" if len(words) == 3 and words[::2] == [a, b] else "O"


def test_every_code_point_splits_as_in_lucene():
    """Lucene's tokens of "q{c}z", "{c}" and "1{c}2" for every code point (tests/goldens/make_lucene_codepoints.py,
    Anserini 0.22.1): their shapes here equal them, with the Unicode of each ``regex`` release tried (2023.3.22 to
    2026.11.19). A newer one assigns letters that Lucene's Unicode 12.1 puts in no token (data/lucene/
    standard_other.txt holds every code point that was unassigned when it was made and that Lucene puts in no
    token), and gave number signs (U+0600 ...) and the vertical comma and semicolon other classes (_FORMAT_12,
    _MIDNUM_12, which the second and third contexts tell apart), and made digits of a South-East-Asian letter and
    of reserved pictographs (U+19DA, U+1FBF0-U+1FBF9: _SA_12, _PICTOGRAPH_12). Every code point of planes 0-3 and 14
    (333,611) is checked, every 97th of the others (unassigned, or private use).
    """
    shapes: dict[int, str] = {}
    for line in (GOLDEN.parent / "codepoints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            span, s = line.split()
            a, _, b = span.partition("-")
            shapes.update(dict.fromkeys(range(int(a, 16), int(b or a, 16) + 1), s))
    assert len(shapes) == 0x110000 - 0x80 - 0x800
    differ = []
    for cp, lucene in shapes.items():
        if (0x40000 <= cp < 0xE0000 or cp >= 0xF0000) and cp % 97:
            continue  # planes 4-13 (unassigned) and 15-16 (private use): every 97th code point is enough
        c = chr(cp)
        alone = standard_words(c)
        ours = (
            _shape(standard_words(f"q{c}z"), "q", "z")
            + ("N" if not alone else "T" if len(alone) == 1 else "O")
            + _shape(standard_words(f"1{c}2"), "1", "2")
        )
        if ours != lucene:
            differ.append(cp)
    assert not differ, [hex(cp) for cp in differ][:20]


def test_every_symbol_of_lucenes_emoji_data_is_a_token_in_any_text():
    """data/lucene/standard_emoji.txt was read off Lucene (tools/make_standard_unicode.py: each symbol between two
    letters is an emoji token of its own there). The token expression holding them is taken only for a text that
    holds one, so each range's first and last symbol is checked between letters, beside a character Lucene puts in
    no token (both kinds in one text) and in a text beyond the BMP: Lucene's tokens of all 603 texts (Anserini
    0.22.1's DumpAnalyzedQueries, through tools/make_standard_unicode.py's lucene_terms) are the ones listed here,
    the segmented digits' (U+1FBF0-U+1FBF9, _PICTOGRAPH_12) included. And texts without them tokenise alike with
    either expression."""
    from pyterrier_sparse_eval.analysis._standard import _EMOJI_RANGES, _TOKEN, _TOKEN_LUCENE_EMOJI

    assert len(_EMOJI_RANGES) == 111  # the file's 110 and the segmented digits
    for a, b in _EMOJI_RANGES:
        for c in {chr(a), chr(b)}:
            for text, lucene in [
                (f"q{c}z", ["q", c, "z"]),
                (f"q\ua7c7{c}z", ["q", c, "z"]),  # U+A7C7: in no token (above)
                (f"\U00030000q{c}\U0001f600", ["q", c, "\U0001f600"]),  # CJK Extension G, then an emoji
            ]:
                assert standard_words(text) == lucene, (hex(a), text)
                assert [t.text for t in standard_tokens(text)] == lucene, (hex(a), text)
    rng = random.Random(3)
    alphabet = (
        "ab1 .,'_\u00e9\u0301\u200d\u4e2d\u3042\u30a2\u0e01\U0001f600\U0001f3fb\ufe0f#\u20e3\u05d0\"\u0627"
    )
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        assert _TOKEN.findall(text) == _TOKEN_LUCENE_EMOJI.findall(text), text


def test_keycaps_without_the_presentation_selector():
    """Lucene's tokens of these texts (Anserini 0.22.1's DumpAnalyzedQueries): a keycap base then U+20E3 (itself
    an Extend character) is one emoji token. They had been dropped."""
    kc = "\u20e3"
    for text, lucene in [
        (f"#{kc}", [f"#{kc}"]),
        (f"*{kc}", [f"*{kc}"]),
        (f"#{kc}{kc}", [f"#{kc}{kc}"]),
        (f"x#{kc}y", ["x", f"#{kc}", "y"]),
        (f"#\u0301{kc}", [f"#\u0301{kc}"]),
    ]:
        assert standard_words(text) == lucene, text


def test_porter_is_lucenes_not_snowballs():
    # Lucene's PorterStemmer (Porter's reference code) on the words where Snowball's porter differs; values
    # from Lucene 9.5's PorterStemFilter (the oracle, see tests/goldens/make_standard_tokens.py's jar)
    lucene = {"bs": "bs", "analogies": "analog", "irreversibly": "irrevers", "mislukking": "misluk"}
    assert {w: porter_stem(w) for w in lucene} == lucene
    assert porter_stems(list(lucene)) == list(lucene.values())


def test_porter_equals_lucenes_stems_and_snowball_where_the_reference_code_does_not_depart():
    """porter_stem (the port of Lucene's PorterStemmer) and porter_stems (Snowball's porter for the words no
    departure touches) equal Lucene 9.5's stems of 1,594 words exercising every step (tests/goldens/
    make_lucene_porter.py), and porter_stem equals PyStemmer's Snowball porter, an independent implementation, on
    20,000 random words with stacked suffixes where the reference code does not depart (step 5's -e rule had been
    checked by nothing: without its cvc guard "blame" had become "blam")."""
    from pyterrier_sparse_eval.analysis._english import _DEPARTS

    rows = [line.split("\t") for line in (GOLDEN.parent / "porter.tsv").read_text().splitlines()]
    lucene = dict(rows)
    assert len(lucene) == 1594 and lucene["blame"] == "blame"
    assert {w: porter_stem(w) for w in lucene} == lucene
    assert porter_stems(list(lucene)) == list(lucene.values())
    rng = random.Random(0)
    ends = (
        "ational tional enci anci izer alli entli eli ousli ization ation ator alism iveness fulness ousness aliti "
        "iviti biliti icate ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion sion "
        "tion ou ism ate iti ous ive ize e ed ing s ies sses ss eed eedly y ly l ll at iz ating ated"
    ).split()
    snowball = Stemmer.Stemmer("porter")
    checked = 0
    for _ in range(20_000):
        word = "".join(
            rng.choice("aeiou" if i % 2 else "bcdfghlmnprstvwxyz")
            if rng.random() > 0.4
            else rng.choice(string.ascii_lowercase)
            for i in range(rng.randint(1, 7))
        ) + "".join(rng.choice(ends) for _ in range(rng.randint(0, 2)))
        if len(word) > 2 and not _DEPARTS.search(word):
            assert porter_stem(word) == snowball.stemWord(word), word
            checked += 1
    assert checked > 15_000


def test_analyzer_options_and_languages():
    assert pse.Analyzer()("The runner's shoes 1,000,000") == ["runner", "shoe", "1,000,000"]
    with pytest.raises(ValueError, match="supported: "):
        pse.Analyzer(language="xx")
    with pytest.raises(ValueError, match="English"):
        pse.Analyzer(language="ar", stemmer=None)
    with pytest.raises(ValueError, match="tokenizer"):
        pse.Analyzer(tokenizer="icu")
    # an index config recorded before Lucene parity reads back as that analysis (word tokenizer, Snowball porter)
    legacy = pse.Analyzer.from_config({"lowercase": True, "stopwords": "lucene", "stemmer": "porter"})
    assert legacy("1,000,000 bs") == ["1", "000", "000", "b"]
    assert pse.Analyzer.from_config(pse.Analyzer().config())("1,000,000 bs") == ["1,000,000", "bs"]


def test_bm25_index_records_its_norms_and_refuses_a_mismatch(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    pse.BM25(exact_lengths=True).indexer(index, verbose=False).index([{"docno": "a", "text": "x y"}])
    assert index.encoder["lengths"] == "exact" and index.encoder["scoring"] == "lucene"
    with pytest.raises(ValueError, match="lucene-byte lengths"):
        pse.BM25().retriever(index)
    q = pd.DataFrame({"qid": ["1"], "query": ["x"]})
    assert list(pse.BM25(exact_lengths=True).retriever(index)(q).docno) == ["a"]
    with pytest.raises(ValueError, match="idf=False"):
        index.retriever(idf=False, analyzer=pse.Analyzer())(q)


def test_lucene_scores_agree_between_backends(tmp_path):
    docs = [
        {"docno": f"d{i}", "text": " ".join(["apple"] * (i % 7 + 1) + ["pear"] * (i % 3) + ["fig"] * i)}
        for i in range(60)
    ]
    bm25 = pse.BM25()
    index = pse.SparseIndex(tmp_path / "idx")
    bm25.indexer(index, verbose=False).index(docs)
    q = pd.DataFrame({"qid": ["1", "2"], "query": ["apple pear pear", "fig apple"]})
    runs = [bm25.retriever(index, backend=b)(q) for b in ("numba", "scipy")]
    pd.testing.assert_frame_equal(runs[0], runs[1])
