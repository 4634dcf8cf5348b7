"""Languages through the product: BM25(language=...), the index's record of it, and the command line."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import needs_data

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.systems import parse_system, specs_with_language

FRENCH = [
    {"docno": "d1", "text": "Les enfants de l'école jouent dans la cour."},
    {"docno": "d2", "text": "L'avion décolle de l'aéroport à midi."},
    {"docno": "d3", "text": "Une école pour les enfants et les parents."},
]


def test_french_bm25_end_to_end(tmp_path):
    bm25 = pse.BM25(language="fr")
    index = pse.SparseIndex(tmp_path / "fr")
    bm25.indexer(index, verbose=False).index(FRENCH)
    assert index.encoder["analyzer"] == {"language": "fr", "version": pse._tokenize.ANALYZER_VERSION}
    # elision, lowercasing, stopwords and the light stemmer (Lucene's FrenchAnalyzer: "écoles" -> "ecol")
    assert pse.Analyzer(language="fr")("Les écoles de l'enfant") == ["ecol", "enfant"]
    run = bm25.retriever(index)(pd.DataFrame({"qid": ["q"], "query": ["L'école des enfants"]}))
    assert list(run.docno) == ["d3", "d1"]
    # the retriever analyses queries as the index was built; an English BM25 refuses the French index
    assert list(index.retriever()(pd.DataFrame({"qid": ["q"], "query": ["aéroport"]})).docno) == ["d2"]
    with pytest.raises(ValueError, match="'language': 'fr'"):
        pse.BM25().retriever(index)


def test_system_specs_take_a_language():
    assert parse_system("bm25:language=de").encoder.analyzer.language == "de"
    assert parse_system("bm25:language=de").name == "BM25(k1=0.9,b=0.4,language=de)"
    assert specs_with_language(["bm25", "bm25:k1=1.2", "bm25:language=fr"], "irds:vaswani", "de", quiet=True) == [
        "bm25:language=de", "bm25:k1=1.2,language=de", "bm25:language=fr",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="supported: "):
        parse_system("bm25:language=xx")


@needs_data
def test_cli_language_option(tmp_path, capsys):
    args = ["experiment", "--dataset", "irds:vaswani", "--metric", "AP", "--index-dir", str(tmp_path)]
    assert main([*args, "--language", "xx"]) == 2
    assert "Unknown --language 'xx'; supported: " in capsys.readouterr().err
    assert main([*args, "--language", "en", "--output", str(tmp_path / "r.json")]) == 0
    assert "BM25 analyzer: language en (from --language)" in capsys.readouterr().out
    # sparse-eval sdm says it once for its systems and pooling runs together (it had said it twice)
    sdm_args = [
        "sdm",
        "--dataset",
        "irds:vaswani",
        "--index-dir",
        str(tmp_path),
        "--k",
        "10",
        "--sample",
        "500",
    ]
    assert main([*sdm_args, "--system", "bm25:k1=1.2", "--pool-run", "bm25", "--pool-depth", "5"]) == 0
    assert capsys.readouterr().out.count("BM25 analyzer: language en (from the dataset)") == 1


@needs_data
@pytest.mark.parametrize(
    "bad",
    [
        ["experiment", "--metric", "FOO@3"],
        ["experiment", "--system", "bm25:k9=1"],
        ["sdm", "--system", "bm25:k9=1"],
    ],
)
def test_a_usage_error_comes_alone(tmp_path, capsys, bad):
    """The analyzer's language is said once the input is known good: it had been printed above a usage error."""
    assert main([bad[0], "--dataset", "irds:vaswani", "--index-dir", str(tmp_path), *bad[1:]]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and ("Unknown measure" in err or "Bad system parameter" in err)


@needs_data
def test_the_dataset_declares_the_language(vaswani, capsys):
    assert pse.datasets.dataset_language(vaswani) == "en"  # ir_datasets' docs_lang() of Vaswani
    assert specs_with_language(["bm25", "splade:model"], vaswani) == ["bm25:language=en", "splade:model"]
    assert "BM25 analyzer: language en (from the dataset)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "kwargs",
    [{"language": code} for code in sorted(pse.analysis.LANGUAGES)]
    + [{"stemmer": "snowball:english"}, {"stopwords": None, "stemmer": None}],
    ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()),
)
def test_every_analyzer_is_sent_to_another_process_and_analyses_the_same(kwargs):
    """Ray workers get the BM25 by pickle (standard pickle, stricter than Ray's): same terms there, memo left."""
    import pickle

    text = "Running runners ran quickly: 東京 données, l'école, Straßen 2024 qu'il ما هو"
    bm25 = pse.BM25(**kwargs)
    expected = bm25.analyzer(text)
    copy = pickle.loads(pickle.dumps(bm25))
    assert copy.analyzer._cache == {} and copy.analyzer(text) == expected


def test_yoruba_indexes_of_the_english_chain_are_told_apart(tmp_path, monkeypatch):
    """yo is Lucene's WhitespaceAnalyzer, as Anserini indexes and searches it (runs: test_lucene_parity.py); an index
    built when it was the English analyzer (its config without the chain's mark) is refused where it is opened and
    not served by the CLI's cache (its configuration differs), rather than searched with the other analysis."""
    from pyterrier_sparse_eval import _tokenize

    docs = [
        {"docno": "d1", "text": "The cats"},
        {"docno": "d2", "text": "cats"},
        {"docno": "d3", "text": "Cats"},
    ]
    topics = pd.DataFrame({"qid": ["q1"], "query": ["cats"]})
    new = pse.SparseIndex(tmp_path / "new")
    pse.BM25(language="yo").indexer(new, verbose=False).index(docs)
    assert list(pse.BM25(language="yo").retriever(new)(topics).docno) == [
        "d2",
        "d1",
    ]  # case kept, "The" counted
    with monkeypatch.context() as m:
        m.setattr(_tokenize, "_CHAIN_MARKS", {})  # what releases before 2026-11-29 recorded
        old = pse.SparseIndex(tmp_path / "old")
        pse.BM25(language="yo").indexer(old, verbose=False).index(docs)
    with pytest.raises(ValueError, match="built with the English analyzer for language='yo'.*build it again"):
        pse.SparseIndex(tmp_path / "old").retriever()(topics)
    assert "where this run asks for analyzer=" in parse_system("bm25:language=yo").stale_reason(old)


def test_arabic_indexes_made_before_the_empty_term_are_searched_not_served_by_the_cache(
    tmp_path, monkeypatch
):
    """ar/fa indexes recorded without the empty term's mark (lone tatweels dropped) are still searched (queries
    are analysed as before), while the CLI's cache does not serve them (their configuration differs)."""
    from pyterrier_sparse_eval import _tokenize

    docs = [
        {"docno": "d1", "text": "كتاب"},
        {"docno": "d2", "text": "كتاب \u0640"},
        {"docno": "d3", "text": "\u0640"},
    ]
    with monkeypatch.context() as m:
        m.setattr(_tokenize, "_CHAIN_MARKS", {})
        old = pse.SparseIndex(tmp_path / "old")
        pse.BM25(language="ar").indexer(old, verbose=False).index(docs)
    run = pse.SparseIndex(tmp_path / "old").retriever()(
        pd.DataFrame({"qid": ["q1"], "query": ["كتاب \u0640"]})
    )
    assert list(run.docno) == ["d1", "d2"]  # searched (the old statistics: d1 and d2 tie, docno order)
    assert "where this run asks for analyzer=" in parse_system("bm25:language=ar").stale_reason(old)
