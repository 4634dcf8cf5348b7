import pytest
import Stemmer

import pyterrier_sparse_eval as pse


def test_default_chain_matches_lucene_english_analyzer_steps():
    a = pse.Analyzer()
    # possessive removed, lowercased, 'the'/'of' are Lucene stopwords, original Porter stemming
    assert a("The Runner's SHOES of running") == ["runner", "shoe", "run"]


def test_stemming_is_pystemmer_porter():
    words = ["generalizations", "oscillators", "relational", "hopefully", "sensibilities"]
    expected = Stemmer.Stemmer("porter").stemWords(words)
    assert pse.Analyzer(stopwords=None)(" ".join(words)) == expected


def test_unicode_tokens_and_inner_punctuation():
    a = pse.Analyzer(stemmer=None, stopwords=None)
    assert a("Zürich café — naïve 3.14 U.S. don't x_y") == [
        "zürich",
        "café",
        "naïve",
        "3.14",
        "u.s",
        "don't",
        "x_y",
    ]
    assert a("") == []
    assert a("...!!") == []


def test_options():
    assert pse.Analyzer(lowercase=False, stemmer=None, stopwords=None)("The Cat") == ["The", "Cat"]
    assert pse.Analyzer(stemmer=None, stopwords=["cat"])("the cat sat") == ["the", "sat"]
    assert pse.Analyzer(stemmer="english", stopwords="terrier")("the generously running") == [
        "generous",
        "run",
    ]
    assert "about" in pse._tokenize.terrier_stopwords() and len(pse._tokenize.terrier_stopwords()) == 733


def test_batch_equals_single_and_cache_is_consistent():
    a = pse.Analyzer()
    texts = ["Running dogs", "", "dogs running fast", "the"]
    assert a.analyze_batch(texts) == [a(t) for t in texts]


def test_config_round_trip():
    a = pse.Analyzer(stemmer="english", stopwords=["x", "y"])
    b = pse.Analyzer.from_config(a.config())
    assert b("x y walking") == a("x y walking") == ["walk"]


def test_bad_options_name_the_fix():
    with pytest.raises(ValueError, match="Unknown stemmer"):
        pse.Analyzer(stemmer="klingon")
    with pytest.raises(ValueError, match="'lucene', 'terrier', None"):
        pse.Analyzer(stopwords="klingon")


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("limit", [3, 1000])
def test_token_ids_equal_the_analysed_terms_ids_through_a_full_memo(monkeypatch, limit, compiled):
    # the retriever's token -> term id memo (numba's token table, or a dict): each raw token's id is that of its
    # analysed term (-1 when the analyzer drops it or the vocabulary lacks the term), also when the memo outgrows
    # its bound (limit 3) and starts afresh
    from pyterrier_sparse_eval import _tokenize
    from pyterrier_sparse_eval._textscan import HAVE_NUMBA, TokenIds

    monkeypatch.setattr(_tokenize, "MAX_CACHE", limit)
    analyzer = pse.Analyzer()
    vocabulary = {"cell": 0, "run": 1, "quick": 2}
    token_ids = TokenIds.of_vocabulary(analyzer, vocabulary, compiled)
    assert (token_ids.table is not None) == (compiled and HAVE_NUMBA)
    seen: list[int] = []
    for texts in (
        ["Cells running", "the quick cells"],
        ["RUNS", "unknown cells of the runner"],
        ["cell cell", "Café cells"],
    ):
        raw = analyzer.tokenize_batch(texts)
        terms = [(analyzer(t) or [""])[0] for toks in raw for t in toks]  # a raw token makes at most one term
        want = [vocabulary.get(term, -1) if term else -1 for term in terms]
        owner, ids = token_ids(texts)
        assert ids.tolist() == want
        assert owner.tolist() == [i for i, toks in enumerate(raw) for _ in toks]
        size = len(token_ids.memo if token_ids.table is None else token_ids.table)
        assert size <= limit + len({t for toks in raw for t in toks})
        seen += want
    assert {-1, 0, 1, 2} <= set(seen)
