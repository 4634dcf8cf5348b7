"""PyTerrier's parameter tools on the package's transformers: ``pt.inspect``'s attributes (and the transformers they
make again), ``set_parameter`` as ``pt.GridScan`` varies a setting, and reprs that tell transformers apart.

Expected values come from the same transformer constructed with the setting (PyTerrier's contract: a parameter
set is as if given to ``__init__``)."""

from __future__ import annotations

import pandas as pd
import pyterrier as pt
import pytest
from conftest import bm25_single_and_sharded

import pyterrier_sparse_eval as pse

TEXTS = {f"d{i}": " ".join(["apple"] * (1 + i % 3) + ["pie"] * (i % 2) + [f"w{i % 5}"]) for i in range(30)}
TOPICS = pd.DataFrame({"qid": ["1", "2"], "query": ["apple pie", "w1 apple"]})


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    return bm25_single_and_sharded(tmp_path_factory.mktemp("params"), TEXTS, shards=3)


def test_apply_attributes_makes_the_same_retriever_again(indexes):
    bm25, single, sharded = indexes
    for retriever in (bm25.retriever(single), single.retriever(), bm25.retriever(sharded)):
        again = pt.inspect.transformer_apply_attributes(retriever, num_results=4)
        expected = pt.inspect.transformer_apply_attributes(retriever)(TOPICS)
        pd.testing.assert_frame_equal(again(TOPICS), expected[expected["rank"] < 4].reset_index(drop=True))
        assert repr(pt.inspect.transformer_apply_attributes(retriever)) == repr(retriever)


def test_apply_attributes_makes_an_indexer_that_indexes(indexes, tmp_path):
    bm25, single, _ = indexes
    indexer = bm25.indexer(pse.SparseIndex(tmp_path / "i"), verbose=False)
    (index,) = [a.value for a in pt.inspect.transformer_attributes(indexer) if a.name == "index"]
    assert index is indexer.index_ref  # not its index() method
    again = pt.inspect.transformer_apply_attributes(indexer, batch_size=7)
    built = again.index([{"docno": d, "text": t} for d, t in TEXTS.items()])
    pd.testing.assert_frame_equal(bm25.retriever(built)(TOPICS), bm25.retriever(single)(TOPICS))


def test_set_parameter_refuses_what_init_refuses(indexes):
    bm25, single, sharded = indexes
    with pytest.raises(ValueError, match="holds Lucene BM25 postings, which are scored with idf"):
        bm25.retriever(single).set_parameter("idf", False)
    with pytest.raises(ValueError, match="ties must be one of"):
        bm25.retriever(sharded).set_parameter("ties", "random")


@pytest.mark.parametrize("name, value", [("num_results", 25), ("num_results", 3), ("ties", "trec_eval")])
def test_a_sharded_retriever_takes_a_setting_as_its_constructor_does(indexes, name, value):
    bm25, single, sharded = indexes
    varied = bm25.retriever(sharded, num_results=10)
    varied.set_parameter(name, value)
    assert varied.get_parameter(name) == value
    made = bm25.retriever(sharded, **{"num_results": 10, name: value})
    pd.testing.assert_frame_equal(varied(TOPICS), made(TOPICS))
    pd.testing.assert_frame_equal(
        varied(TOPICS), bm25.retriever(single, **{"num_results": 10, name: value})(TOPICS)
    )
    assert repr(varied) == repr(made)


def test_grid_scan_over_a_sharded_retrievers_depth(indexes):
    bm25, _, sharded = indexes
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["d1", "d29", "d11"], "label": [1, 1, 1]})
    scanned = pt.GridScan(
        (retriever := bm25.retriever(sharded, num_results=2)),
        {retriever: {"num_results": [2, 30]}},
        TOPICS,
        qrels,
        ["num_rel_ret"],
        verbose=False,
    )
    made = [
        pt.Experiment([bm25.retriever(sharded, num_results=k)], TOPICS, qrels, ["num_rel_ret"])
        for k in (2, 30)
    ]
    assert scanned["num_rel_ret"].tolist() == [m["num_rel_ret"].iloc[0] for m in made]
    assert scanned["num_rel_ret"].tolist()[0] < scanned["num_rel_ret"].tolist()[1]


def test_reprs_tell_retrievers_that_search_otherwise_apart(indexes):
    bm25, single, _ = indexes
    reprs = {
        repr(bm25.retriever(single)),
        repr(single.retriever()),
        repr(single.retriever(analyzer=pse.Analyzer(stemmer=None))),
    }
    assert len(reprs) == 3
    assert repr(single.retriever()) == f"SparseRetriever({single!r})"


def test_a_pickled_retriever_carries_its_index_by_path(indexes):
    import pickle

    bm25, single, sharded = indexes
    for index in (pse.SparseIndex(single.path), pse.ShardedIndex(sharded.path)):
        before = dict(index.__dict__)
        retriever = bm25.retriever(index)
        size = len(pickle.dumps(retriever))
        run = retriever(TOPICS)  # the index's arrays are read (memory-mapped) by now, a build's caches made
        assert len(pickle.dumps(retriever)) == size
        assert index.__dict__ != before
        # the handle pickles as it was before its first use: its path and options, not what it read
        assert pickle.loads(pickle.dumps(index)).__dict__ == before
        pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(retriever))(TOPICS), run)


def test_an_unpickled_sharded_retriever_raises_the_open_files_limit(tmp_path):
    import pickle
    import subprocess
    import sys

    # 60 shards hold 300 memory-mapped files; the unpickling process starts with a soft limit of 128
    docs = [{"docno": f"d{i}", "text": f"apple w{i % 7} pie{i % 3}"} for i in range(240)]
    pse.BM25().indexer(pse.ShardedIndex(tmp_path / "x", num_shards=60), verbose=False).index(docs)
    retriever = pse.BM25().retriever(pse.ShardedIndex(tmp_path / "x"))
    expected = retriever(TOPICS)
    (tmp_path / "r.pkl").write_bytes(pickle.dumps(retriever))
    child = (
        "import pickle, resource, sys, pandas as pd\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (128, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        f"r = pickle.loads(open({str(tmp_path / 'r.pkl')!r}, 'rb').read())\n"
        "q = pd.DataFrame({'qid': ['1', '2'], 'query': ['apple pie', 'w1 apple']})\n"
        "r(q).to_pickle(sys.argv[1])\n"
    )
    subprocess.run([sys.executable, "-c", child, str(tmp_path / "run.pkl")], check=True, capture_output=True)
    pd.testing.assert_frame_equal(pd.read_pickle(tmp_path / "run.pkl"), expected)


def test_set_parameter_of_the_index_makes_the_transformer_anew(indexes, tmp_path):
    bm25, single, sharded = indexes
    other = bm25.indexer(pse.SparseIndex(tmp_path / "other"), verbose=False).index(
        [{"docno": "x1", "text": "apple pie"}]
    )
    retriever = bm25.retriever(single)
    retriever.set_parameter("index", other)  # not stale: it serves the new index's build
    assert retriever(TOPICS)["docno"].tolist() == ["x1", "x1"]
    indexer = bm25.indexer(pse.SparseIndex(tmp_path / "a"), verbose=False)
    indexer.set_parameter("index", pse.SparseIndex(tmp_path / "b"))
    indexer.index([{"docno": "d", "text": "apple"}])  # index() is still the method
    assert pse.SparseIndex(tmp_path / "b").built() and not pse.SparseIndex(tmp_path / "a").built()


def test_a_sharded_retrievers_shard_options_are_attributes(indexes):
    """A sharded retriever's repr had named every shard option given (ties='trec_eval', idf=True: the defaults), and
    pt.inspect.transformer_apply_attributes had refused them ("Unknown attributes ['ties']")."""
    bm25, single, sharded = indexes
    assert repr(sharded.retriever(ties="trec_eval", idf=True, prune=True)) == f"ShardedRetriever({sharded!r})"
    assert repr(sharded.retriever(ties="lucene")) == f"ShardedRetriever({sharded!r}, ties='lucene')"
    made = pt.inspect.transformer_apply_attributes(bm25.retriever(sharded, num_results=5), ties="trec_eval")
    assert made.get_parameter("ties") == "trec_eval" and made.get_parameter("num_results") == 5
    pd.testing.assert_frame_equal(
        made(TOPICS), bm25.retriever(single, num_results=5, ties="trec_eval")(TOPICS)
    )


def test_an_unpickled_sharded_retriever_checks_each_shard_once(indexes, monkeypatch):
    """Its first search had opened (and checksummed) every shard twice: its shard retrievers' handles, and the
    index's own shards, touched to raise the open-files limit."""
    import pickle

    from pyterrier_sparse_eval import _index

    bm25, _, sharded = indexes
    retriever = pickle.loads(pickle.dumps(bm25.retriever(pse.ShardedIndex(sharded.path))))
    checked: list[str] = []
    real = _index.check_checksums
    monkeypatch.setattr(
        _index, "check_checksums", lambda path, meta: (checked.append(str(path)), real(path, meta))
    )
    retriever(TOPICS)
    assert sorted(checked) == sorted(str(s.path) for s in pse.ShardedIndex(sharded.path).shards)


def test_a_sharded_retrievers_rank_cutoff_is_fused(indexes):
    """`% k` had searched every shard for num_results documents and cut afterwards: now each shard's top k, the
    same run (compiled or not) as the single index's top k."""
    bm25, single, sharded = indexes
    retriever = bm25.retriever(sharded, num_results=20, ties="trec_eval")
    fused = (retriever % 3).compile()
    assert isinstance(fused, type(retriever)) and fused.get_parameter("num_results") == 3
    assert fused.get_parameter("ties") == "trec_eval"
    expected = bm25.retriever(single, num_results=3, ties="trec_eval")(TOPICS)
    pd.testing.assert_frame_equal(fused(TOPICS), expected)
    pd.testing.assert_frame_equal((retriever % 3)(TOPICS), expected)
    assert (retriever % 50).compile() is retriever
