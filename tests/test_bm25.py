import math

import numpy as np
import pandas as pd
import pytest
from conftest import needs_data

import pyterrier_sparse_eval as pse

HAND_DOCS = [
    {"docno": "d1", "text": "apple apple banana"},
    {"docno": "d2", "text": "banana cherry"},
    {"docno": "d3", "text": "apple"},
]


def test_hand_worked_lucene_bm25(tmp_path):
    # dl = 3, 2, 1 tokens (stored exactly by Lucene's norm byte below 24); avgdl = 6 / 3; k1 = 1.2, b = 0.75
    bm25 = pse.BM25(1.2, 0.75, stemmer=None, stopwords=None)
    index = pse.SparseIndex(tmp_path / "idx")
    bm25.indexer(index, verbose=False).index(HAND_DOCS)
    x = index.postings.toarray()[index.term_ids["apple"]]
    # stored: tf / (k1 * (1 - b + b * dl / avgdl)), worked by hand
    np.testing.assert_allclose(
        x, [2 / (1.2 * (0.25 + 0.75 * 3 / 2)), 0, 1 / (1.2 * (0.25 + 0.75 / 2))], rtol=1e-6
    )
    res = bm25.retriever(index).transform(pd.DataFrame({"qid": ["q"], "query": ["apple"]}))
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    assert list(res.docno) == ["d3", "d1"]
    # Lucene's score idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)), no (k1 + 1)
    expected = [idf * 1 / (1 + 1.2 * (0.25 + 0.75 / 2)), idf * 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2))]
    np.testing.assert_allclose(res.score, expected, rtol=1e-6)
    res2 = bm25.retriever(index).transform(pd.DataFrame({"qid": ["q"], "query": ["apple apple"]}))
    np.testing.assert_allclose(res2.score, 2 * res.score, rtol=1e-6)  # a repeated term is a boost of 2


def test_hand_worked_classic_bm25(tmp_path):
    # dl = 3, 2, 1 tokens; avgdl = 2; k1 = 1.2, b = 0.75: the formula before Lucene parity
    docs = HAND_DOCS
    bm25 = pse.BM25(1.2, 0.75, stemmer=None, stopwords=None, lucene_scores=False, exact_lengths=True)
    index = pse.SparseIndex(tmp_path / "idx")
    bm25.indexer(index, verbose=False).index(docs)
    w = index.postings.toarray()
    apple = index.term_ids["apple"]
    # tf*(k1+1) / (tf + k1*(1-b+b*dl/avgdl)), worked by hand:
    assert w[apple, 0] == pytest.approx(2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2)), abs=1e-6)  # 1.205479
    assert w[apple, 2] == pytest.approx(2.2 / (1 + 1.2 * (0.25 + 0.75 * 1 / 2)), abs=1e-6)  # 1.257143
    assert w[apple, 1] == 0
    res = bm25.retriever(index).transform(pd.DataFrame({"qid": ["q"], "query": ["apple"]}))
    idf_apple = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # ln(1.6)
    assert list(res.docno) == ["d3", "d1"]  # the shorter document wins
    np.testing.assert_allclose(res.score, [1.2571429 * idf_apple, 1.2054795 * idf_apple], rtol=1e-6)
    # a repeated query term counts twice
    res2 = bm25.retriever(index).transform(pd.DataFrame({"qid": ["q"], "query": ["apple apple"]}))
    np.testing.assert_allclose(res2.score, 2 * res.score, rtol=1e-6)


def test_title_and_text_are_joined_and_fields_configurable(tmp_path):
    docs = [{"docno": "a", "title": "zebra", "text": "lion"}, {"docno": "b", "title": "", "text": "zebra"}]
    index = pse.SparseIndex(tmp_path / "one")
    pse.BM25().indexer(index, verbose=False).index(docs)
    assert index.encoder["fields"] == ["title", "text"] and index.num_terms == 2
    index2 = pse.SparseIndex(tmp_path / "two")
    pse.BM25(fields=["text"]).indexer(index2, verbose=False).index(docs)
    assert index2.postings.toarray()[index2.term_ids["zebra"]].tolist()[0] == 0
    with pytest.raises(KeyError, match="fields="):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "x"), verbose=False).index(
            [{"docno": "a", "body": "x"}]
        )


def test_retriever_refuses_an_index_built_with_other_parameters(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    pse.BM25().indexer(index, verbose=False).index([{"docno": "a", "text": "x"}])
    with pytest.raises(ValueError, match='mode="overwrite"'):
        pse.BM25(k1=1.2).retriever(index)
    with pytest.raises(ValueError, match="0 <= b <= 1"):
        pse.BM25(b=2)


def test_numpy_numbers_as_parameters_build_and_search_as_python_numbers(tmp_path):
    """A sweep's np.float32 / np.int64 k1 and b passed the checks, then failed the build at its last step (the
    index's JSON metadata takes no numpy scalar), all the work lost."""
    docs = [{"docno": "a", "text": "cats run"}, {"docno": "b", "text": "dogs run and run"}]
    q = pd.DataFrame({"qid": ["1"], "query": ["cats run"]})
    for k1, b in ((np.float32(1.2), np.float32(0.5)), (np.int64(1), np.int64(1))):
        index = pse.SparseIndex(tmp_path / f"idx-{k1}")
        pse.BM25(k1=k1, b=b).indexer(index, verbose=False).index(docs)
        assert index.encoder["k1"] == float(k1) and type(index.encoder["k1"]) is type(k1.item())
        plain = pse.SparseIndex(tmp_path / f"plain-{k1}")
        pse.BM25(k1=k1.item(), b=b.item()).indexer(plain, verbose=False).index(docs)
        run = pse.BM25(k1=k1, b=b).retriever(index)(q)
        pd.testing.assert_frame_equal(run, pse.BM25(k1=k1.item(), b=b.item()).retriever(plain)(q))


def test_query_encoder_feeds_the_generic_retriever(tmp_path):
    bm25 = pse.BM25()
    index = pse.SparseIndex(tmp_path / "idx")
    bm25.indexer(index, verbose=False).index(
        [{"docno": "a", "text": "cats run"}, {"docno": "b", "text": "dogs"}]
    )
    q = pd.DataFrame({"qid": ["1"], "query": ["running cats"]})
    via_toks = (bm25.query_encoder() >> index.retriever()).transform(q)
    via_text = bm25.retriever(index).transform(q)
    assert via_toks.iloc[0]["query_toks"] == {"run": 1.0, "cat": 1.0}
    pd.testing.assert_frame_equal(via_toks.drop(columns="query_toks"), via_text)


@needs_data
def test_parity_with_bm25s_on_scifact(scifact, tmp_path):
    """Same analysis fed to bm25s (method='lucene', an independent BM25 with exact lengths): scores agree to 1e-5."""
    bm25s = pytest.importorskip("bm25s")
    analyzer = pse.Analyzer()
    docs = list(pse.datasets.corpus_iter(scifact))
    peer = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    peer.index(analyzer.analyze_batch([d["title"] + " " + d["text"] for d in docs]), show_progress=False)
    topics = pse.datasets.get_topics(scifact).head(60)
    exact = pse.BM25(exact_lengths=True)
    index = pse.SparseIndex(tmp_path / "exact")
    exact.indexer(index, verbose=False).index(docs)
    res = exact.retriever(index, num_results=100).transform(topics)
    position = {d["docno"]: i for i, d in enumerate(docs)}
    for qid, query in zip(topics.qid, analyzer.analyze_batch(topics["query"].tolist())):
        theirs = peer.get_scores([t for t in query if t in peer.vocab_dict])
        ours = res[res.qid == qid]
        # both omit BM25's constant (k1 + 1) factor, as Lucene 8+ does
        np.testing.assert_allclose(
            ours.score.to_numpy(), theirs[[position[d] for d in ours.docno]], atol=1e-5, rtol=1e-5
        )
        top = np.sort(theirs)[::-1][: len(ours)]
        np.testing.assert_allclose(np.sort(ours.score.to_numpy())[::-1], top, atol=1e-5, rtol=1e-5)
