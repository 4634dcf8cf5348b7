import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from helpers import brute_force_run, random_toks_corpus

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import _tokenize
from pyterrier_sparse_eval._numba import available_backends
from pyterrier_sparse_eval._topk import HAVE_NUMBA


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(42)
    docs = random_toks_corpus(rng, 300, vocab=40, dups=40)
    index = pse.SparseIndex(tmp_path_factory.mktemp("r") / "idx")
    index.indexer(batch_size=64, verbose=False).index(docs)
    queries = {}
    for i in range(25):
        terms = rng.choice(45, size=int(rng.integers(1, 5)), replace=False)  # t40..t44 are unknown terms
        queries[f"q{i}"] = {f"t{t}": float(rng.integers(1, 3)) for t in terms}
    return docs, index, queries


def _frame(queries):
    return pd.DataFrame({"qid": list(queries), "query_toks": list(queries.values())})


@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("k", [1, 10, 1000])
@pytest.mark.parametrize("budget", [1, 512 * 2**20])
@pytest.mark.parametrize(
    "backend,threads,prune",
    [("scipy", 1, False), ("numba", 1, False), ("numba", 1, True), ("numba", 2, True), ("numba", 3, False)],
)
def test_equals_brute_force_including_tie_order(corpus, idf, k, budget, backend, threads, prune):
    docs, index, queries = corpus
    retriever = index.retriever(
        num_results=k, idf=idf, memory_budget=budget, backend=backend, threads=threads, prune=prune
    )
    res = retriever.transform(_frame(queries))
    ref = brute_force_run(docs, queries, idf=idf, k=k)
    ties = 0
    for qid, expected in ref.items():
        got = res[res.qid == qid].sort_values("rank")
        assert list(got["docno"]) == [d for _, d in expected], qid
        np.testing.assert_allclose(got["score"].to_numpy(), [s for s, _ in expected], rtol=1e-5, atol=1e-6)
        assert list(got["rank"]) == list(range(len(expected)))
        ties += sum(a[0] == b[0] for a, b in zip(expected, expected[1:]))
    assert ties > 10 or k == 1  # the corpus really exercises tie-breaking


def test_query_columns_kept_and_types(corpus):
    _, index, queries = corpus
    inp = _frame(queries).assign(extra=range(len(queries)))
    res = index.retriever(num_results=5).transform(inp)
    assert {"qid", "query_toks", "extra", "docno", "score", "rank"} <= set(res.columns)
    assert res["score"].dtype == np.float64 and res["rank"].dtype == np.int64
    first = res[res.qid == "q0"]
    assert (first["extra"] == 0).all()


def test_empty_input_gives_typed_empty_output(corpus):
    _, index, _ = corpus
    res = index.retriever().transform(pd.DataFrame({"qid": [], "query_toks": []}))
    assert len(res) == 0
    assert {"qid", "docno", "score", "rank"} <= set(res.columns)
    assert res["score"].dtype == np.float64 and res["rank"].dtype == np.int64


def test_unknown_terms_give_no_rows_and_a_warning(corpus):
    _, index, _ = corpus
    inp = pd.DataFrame({"qid": ["a", "b"], "query_toks": [{"nope": 1.0}, {"t1": 1.0}]})
    with pytest.warns(UserWarning, match="1 of 2 queries share no term"):
        res = index.retriever().transform(inp)
    assert set(res.qid) == {"b"}
    # the last queries without a known term: every backend (the scipy one once failed on a trailing empty row)
    inp = pd.DataFrame({"qid": ["b", "a", "c"], "query_toks": [{"t1": 1.0}, {"nope": 1.0}, {}]})
    for backend in ("numba", "scipy") if HAVE_NUMBA else ("scipy",):
        with pytest.warns(UserWarning, match="2 of 3 queries share no term"):
            res = index.retriever(backend=backend).transform(inp)
        assert set(res.qid) == {"b"}


@pytest.mark.parametrize("shards", [None, 2])
def test_query_weights_an_index_cannot_score_are_refused(tmp_path, shards, corpus):
    """Token ids as terms (an empty run before, said only as 'share no term'), weights beyond float32 (inf and
    NaN scores before, ranked by docno); a query whose known terms all weigh 0 is said by both retrievers."""
    docs = corpus[0]
    index = pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", shards)
    index.indexer(verbose=False).index(docs)
    retriever = index.retriever()
    for toks in ({0: 1.0, 1: 2.0}, {b"t1": 1.0}, {"t1": 1.0, 7: 1.0}):
        with pytest.raises(TypeError, match=r"terms must be strings.*convert_ids_to_tokens"):
            retriever.transform(pd.DataFrame({"qid": ["1"], "query_toks": [toks]}))
    for toks, idf in (({"t1": 1e39}, False), ({"t1": 3e38}, True)):  # idf > 1 takes 3e38 beyond
        with pytest.raises(ValueError, match="beyond float32's range"):
            index.retriever(idf=idf).transform(pd.DataFrame({"qid": ["1"], "query_toks": [toks]}))
    # a weight that is no finite number is named with its term (a list had failed in scipy: "data arrays must be
    # 1-D"); a numeric string is read as its number, as a document's weight is
    for weight in ([1.0], None, "many", float("nan"), float("inf"), 10**400):
        with pytest.raises(ValueError, match=r"Query term 't1' has weight .*must be finite real numbers"):
            retriever.transform(pd.DataFrame({"qid": ["1"], "query_toks": [{"t2": 1.0, "t1": weight}]}))
    as_text = retriever.transform(pd.DataFrame({"qid": ["1"], "query_toks": [{"t1": "2.5"}]}))
    as_number = retriever.transform(pd.DataFrame({"qid": ["1"], "query_toks": [{"t1": 2.5}]}))
    pd.testing.assert_frame_equal(as_text.drop(columns="query_toks"), as_number.drop(columns="query_toks"))
    # each weight within range, their products or sums not (inf scores had tied by docno)
    with pytest.raises(ValueError, match="Scores beyond float32's range"):
        index.retriever(idf=False).transform(
            pd.DataFrame({"qid": ["1"], "query_toks": [{"t1": 3e38, "t2": 3e38}]})
        )
    inp = pd.DataFrame({"qid": ["1", "2"], "query_toks": [{"t1": 0.0}, {"t1": 1.0}]})
    with pytest.warns(UserWarning, match="1 of 2 queries share no term"):
        assert set(retriever.transform(inp).qid) == {"2"}
    # a weight 0 as float32 (below its range) is said as 0 is: it had returned nothing without a word
    inp = pd.DataFrame({"qid": ["1", "2"], "query_toks": [{"t1": 1e-50}, {"t1": 1.0}]})
    with pytest.warns(
        UserWarning, match=r"1 of 2 queries share no term \(of non-zero weight\) with the index"
    ):
        assert set(retriever.transform(inp).qid) == {"2"}


@pytest.mark.parametrize("shards", [None, 2])
def test_a_result_frame_is_refused_naming_what_to_give(tmp_path, shards, corpus):
    """first % 5 >> retriever: the retriever does not re-rank, and says so and what to give (PyTerrier's
    InputValidationError had named no fix); a pipeline from topics works."""
    docs, _, queries = corpus
    index = pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", shards)
    index.indexer(verbose=False).index(docs)
    retriever = index.retriever()
    with pytest.raises(
        ValueError, match=r"does not re-rank a result frame .*'docno'.* topics >> retriever"
    ) as e:
        (retriever % 5 >> retriever).transform(_frame(queries))
    # PyTerrier's own error class too: pt.Experiment's check of a pipeline before it runs still refuses it
    assert isinstance(e.value, pt.validate.InputValidationError)
    assert len((retriever % 5).transform(_frame(queries))) > 0


@pytest.mark.parametrize("missing", [None, float("nan"), np.float32("nan"), pd.NA])
def test_a_missing_text_query_retrieves_nothing(tmp_path, missing):
    """A query of None, NaN or NA (an empty field read with pandas, a merge) retrieves nothing, single or
    sharded, as the README says and as SPLADE's does; it had been searched as the word "none" or "nan"."""
    from conftest import bm25_single_and_sharded

    texts = {"d1": "none of the above", "d2": "nan bread is tasty", "d3": "optical fibre"}
    bm25, single, sharded = bm25_single_and_sharded(tmp_path, texts)
    topics = pd.DataFrame({"qid": ["1", "2"], "query": pd.Series([missing, "optical"], dtype=object)})
    for index in (single, sharded):
        with pytest.warns(UserWarning, match="1 of 2 queries share no term"):
            run = bm25.retriever(index).transform(topics)
        assert run["qid"].tolist() == ["2"]
    toks = pse.TextEncoder(bm25.analyzer, "query", "query_toks").transform(topics)
    assert toks["query_toks"].iloc[0] == {}


def test_rank_cutoff_is_fused(corpus):
    _, index, queries = corpus
    retr = index.retriever(num_results=1000)
    pipe = (retr % 3).compile()
    assert isinstance(pipe, pse.SparseRetriever) and pipe.num_results == 3
    assert retr.fuse_rank_cutoff(5000) is retr
    full = retr.transform(_frame(queries))
    cut = pipe.transform(_frame(queries))
    assert cut.groupby("qid").size().max() == 3
    pd.testing.assert_frame_equal(
        cut.reset_index(drop=True), full[full["rank"] < 3].reset_index(drop=True), check_dtype=False
    )


def test_repr_and_validation(corpus):
    _, index, _ = corpus
    retr = index.retriever(num_results=7, idf=False)
    # the arguments that differ from the defaults: two retrievers that print alike search alike
    assert repr(retr) == f"SparseRetriever({index!r}, num_results=7, idf=False)"
    assert repr(index.retriever(ties="lucene")) == f"SparseRetriever({index!r}, ties='lucene')"
    # constructor arguments are stored as given (PyTerrier's parameter tools read them back); "auto" is
    # resolved where it is used
    assert retr.backend == "auto" and retr.backend_ == "numba"
    with pytest.raises(ValueError, match="backend"):
        index.retriever(backend="gpu")
    with pytest.raises(ValueError, match="threads"):
        index.retriever(threads=0)
    with pytest.raises(pt.validate.InputValidationError):
        retr.transform(pd.DataFrame({"qid": ["1"]}))
    with pytest.raises(ValueError, match="no text analyzer"):
        retr.transform(pd.DataFrame({"qid": ["1"], "query": ["hello"]}))
    with pytest.raises(ValueError, match="num_results"):
        index.retriever(num_results=0)
    with pytest.raises(ValueError, match="prune"):
        index.retriever(prune="yes")


def test_retriever_contract_with_pt_inspect(corpus):
    # pyterrier.testing's TransformerTestCase also builds a schematic, which downloads PyTerrier's docs
    # inventory; offline, the inspect checks it makes are run here directly.
    _, index, _ = corpus
    retr = index.retriever()
    inputs = pt.inspect.transformer_inputs(retr)
    assert sorted(map(sorted, inputs)) == [["qid", "query"], ["qid", "query_toks"]]
    for cols in inputs:
        assert pt.inspect.transformer_outputs(retr, input_columns=cols) == cols + ["docno", "score", "rank"]


def test_backends_are_bit_identical_on_float_weights(tmp_path):
    rng = np.random.default_rng(7)
    docs = random_toks_corpus(rng, 3000, vocab=300, dups=100, integer=False)
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(docs)
    queries = {
        f"q{i}": {f"t{t}": float(rng.random() + 0.1) for t in rng.choice(300, 6, replace=False)}
        for i in range(200)
    }
    frame = _frame(queries)
    runs = [
        index.retriever(num_results=50, backend=b, threads=t).transform(frame)
        for b, t in (("scipy", 1), ("numba", 1), ("numba", 2))
    ]
    for other in runs[1:]:
        assert other["docno"].tolist() == runs[0]["docno"].tolist()
        assert np.array_equal(
            other["score"].to_numpy(), runs[0]["score"].to_numpy()
        )  # same float32 operations


def test_numpy_fallback_without_numba(tmp_path, corpus):
    """With numba unavailable, 'auto' is the scipy path and asking for numba says how to get it."""
    import subprocess
    import sys

    _, index, _ = corpus
    code = (
        "import pyterrier_sparse_eval as pse, pytest\n"
        f"r = pse.SparseIndex({str(index.path)!r}).retriever()\n"
        "assert r.backend == 'auto' and r.backend_ == 'scipy', r.backend_\n"
        "try:\n"
        f"    pse.SparseIndex({str(index.path)!r}).retriever(backend='numba')\n"
        "except ImportError as e:\n"
        "    assert 'pip install numba' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    env = {**__import__("os").environ, "PSE_DISABLE_NUMBA": "1"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("block", [1, 7, 64, 1000, None])
def test_blocked_kernel_equals_the_scipy_path(tmp_path, block):
    """The numba kernel scores documents in blocks of doc ids; every block size gives the same ranking."""
    from pyterrier_sparse_eval._topk import HAVE_NUMBA, top_k_numba

    if not HAVE_NUMBA:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(11)
    docs = random_toks_corpus(rng, 700, vocab=60, dups=60, integer=False)
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(docs)
    queries = {
        f"q{i}": {f"t{t}": float(rng.random() + 0.1) for t in rng.choice(60, 4, replace=False)}
        for i in range(40)
    }
    scipy_retr = index.retriever(num_results=25, backend="scipy")
    q = scipy_retr.query_matrix(scipy_retr._query_weights(_frame(queries)))
    rows, ref_docs, ref_scores, _ = scipy_retr.search_matrix(q)
    p = index.postings
    docs_k, scores_k, counts = top_k_numba(
        q.indptr,
        q.indices,
        q.data,
        p.indptr,
        p.indices,
        p.data,
        np.asarray(index.docno_rank),
        25,
        index.num_docs,
        block=block,
    )
    got_docs = np.concatenate([docs_k[i, :c] for i, c in enumerate(counts)])
    got_scores = np.concatenate([scores_k[i, :c] for i, c in enumerate(counts)])
    assert np.array_equal(got_docs, ref_docs) and np.array_equal(got_scores, ref_scores.astype(np.float32))
    assert np.array_equal(np.repeat(np.arange(len(counts)), counts), rows)


@pytest.mark.parametrize("k", [5, 200])
def test_exhaustive_kernel_equals_the_scipy_path_on_lucene_bm25(tmp_path, k):
    """The exhaustive numba kernel marks first touches with a branch on queries with more postings than documents
    and without one on the others: both, on a Lucene BM25 index, against the scipy path (Lucene's sum through a
    sparse product), every block size."""
    if not HAVE_NUMBA:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    docs = [
        {"docno": f"d{i}", "text": " ".join(rng.choice(words, int(rng.integers(3, 40)), p=p))}
        for i in range(600)
    ]
    index = pse.SparseIndex(tmp_path / "idx")
    pse.BM25(stemmer=None, stopwords=None).indexer(index, verbose=False).index(docs)
    topics = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(60)],
            "query": [" ".join(rng.choice(words, int(rng.integers(1, 30)), p=p)) for _ in range(60)],
        }
    )
    ref = pse.BM25(stemmer=None, stopwords=None).retriever(index, num_results=k, backend="scipy")
    q = ref.text_query_matrix(topics["query"].tolist())
    postings = np.add.reduceat(index.df[q.indices], q.indptr[:-1])[np.diff(q.indptr) > 0]
    assert (postings > index.num_docs).any() and (postings < index.num_docs).any()  # both kinds of query
    rows, docs_ref, scores_ref, _ = ref.search_matrix(q)
    from pyterrier_sparse_eval._topk import top_k_numba

    tie_rank, rank_to_doc = ref._tie_order()
    m = index.postings
    for block in (64, 256, None):
        got = top_k_numba(
            q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie_rank, k, index.num_docs,
            rank_to_doc=rank_to_doc, block=block, lucene=True,
        )  # fmt: skip
        got_docs = np.concatenate([got[0][i, :c] for i, c in enumerate(got[2])])
        got_scores = np.concatenate([got[1][i, :c] for i, c in enumerate(got[2])])
        assert np.array_equal(np.repeat(np.arange(len(got[2])), got[2]), rows)
        assert np.array_equal(got_docs, docs_ref) and np.array_equal(
            got_scores, scores_ref.astype(np.float32)
        )


def test_nudged_ties_compiled_equal_numpy_twin(monkeypatch):
    """nudge_ties (Lucene's tie order made visible to evaluators): the compiled pass against the numpy twin, on
    runs full of ties (-0.0 among them), and the properties both must have."""
    from pyterrier_sparse_eval import _lucene

    if not HAVE_NUMBA:
        pytest.skip("numba not installed: only the numpy twin exists")
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(2, 400))
        rows = np.sort(rng.integers(0, 6, n))
        # few distinct values: long ties; descending within each query as the retriever returns them
        values = rng.choice(np.array([3.5, 2.0, 2.0 + 2.0**-22, 0.0, -0.0, -1.25], dtype=np.float32), n)
        order = np.lexsort((-values.astype(np.float64), rows))
        rows, values = rows[order], values[order]
        compiled = _lucene.nudge_ties(rows, values)
        monkeypatch.setattr(_lucene, "HAVE_NUMBA", False)
        twin = _lucene.nudge_ties(rows, values)
        monkeypatch.setattr(_lucene, "HAVE_NUMBA", True)
        np.testing.assert_array_equal(compiled.view(np.int64), twin.view(np.int64))
        assert compiled.dtype == np.float64 and (compiled == compiled.astype(np.float32)).all()
        same = rows[1:] == rows[:-1]
        assert (np.diff(compiled)[same] < 0).all()  # strictly decreasing within a query: no ties left
        assert (compiled <= values).all()
        untied = np.concatenate([[True], ~same | (values[1:] < values[:-1])])
        assert (
            compiled[untied & np.concatenate([[True], ~same])]
            == values[untied & np.concatenate([[True], ~same])]
        ).all()


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("lucene_scores", [True, False])
def test_text_query_matrix_equals_the_dict_path(
    scifact, scifact_bm25_index, tmp_path, lucene_scores, backend, monkeypatch
):
    # the transformer builds text queries' matrix with array operations (with backend="numba", from numba's token
    # table); bit for bit the matrix of the documented path (one dict of term counts per query), on the real
    # SciFact topics plus repeated, unknown, non-ASCII and no terms
    if lucene_scores:
        index, bm25 = scifact_bm25_index, pse.BM25()
    else:
        bm25 = pse.BM25(lucene_scores=False)
        index = pse.SparseIndex(tmp_path / "plain")
        docs = list(pse.datasets.corpus_iter(scifact))[:500]
        bm25.indexer(index, verbose=False).index(docs)
    texts = scifact.get_topics()["query"].tolist() + [
        "Café’s naïve CELLS 日本 cells…",
        "cells cells the CELLS zzzunknownzzz",
        "",
        "zzz qqq",
        "cell",
    ]
    r = bm25.retriever(index, num_results=10, backend=backend)
    frame = pd.DataFrame({"qid": [str(i) for i in range(len(texts))], "query": texts})
    want = r.query_matrix(r._query_weights(frame))
    got = r.text_query_matrix(texts)
    assert got.shape == want.shape and want.nnz > len(texts)
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data.view(np.uint32), want.data.view(np.uint32))
    # the count matters: "cells" three times weighs more than once (the analyzer stems both to the same term)
    assert want[len(texts) - 4].max() > want[len(texts) - 1].max() > 0
    # the token-to-id memo: a second call (every token memoised) gives the same bits, and so does a retriever whose
    # analyzer is swapped for one that does not stem (its own matrix, not the memo of the first analyzer)
    again = r.text_query_matrix(texts[::-1])
    np.testing.assert_array_equal(again[::-1].toarray().view(np.uint32), want.toarray().view(np.uint32))
    r.analyzer = pse.Analyzer(stemmer=None)
    plain = r.query_matrix(r._query_weights(frame))
    assert (plain != want).nnz > 0
    got = r.text_query_matrix(texts)
    np.testing.assert_array_equal(got.toarray().view(np.uint32), plain.toarray().view(np.uint32))
    # a memo that outgrows its bound starts afresh, with the same matrix
    memo = r._token_cache[2]
    assert (memo.table is not None) == (backend == "numba")  # numba's token table, else a dict
    table = memo.table
    monkeypatch.setattr(_tokenize, "MAX_CACHE", 5)
    got = r.text_query_matrix(texts)
    np.testing.assert_array_equal(got.toarray().view(np.uint32), plain.toarray().view(np.uint32))
    if table is not None:
        assert memo.table is not table


def test_the_no_term_warning_points_at_the_users_line(tmp_path):
    """Through a PyTerrier pipeline, "share no term" points at the caller's line, not inside PyTerrier (it had
    named pyterrier/transformer.py), single and sharded."""
    from conftest import bm25_single_and_sharded

    bm25, single, sharded = bm25_single_and_sharded(tmp_path, {"d1": "alpha", "d2": "beta"})
    for index in (single, sharded):
        pipeline = bm25.retriever(index) >> pt.apply.generic(lambda f: f)
        with pytest.warns(UserWarning, match="share no term") as seen:
            pipeline.transform(pd.DataFrame({"qid": ["1"], "query": ["zzz"]}))
        assert {w.filename for w in seen if "share no term" in str(w.message)} == {__file__}


@pytest.mark.parametrize("per_term,rows", [(4_000, 300), (20_000, 60)], ids=["sorted", "corpus-wide"])
def test_the_lucene_product_holds_16_bytes_per_score_as_memory_budget_charges(per_term, rows):
    """The scipy backend's product on Lucene postings had kept each score with an int64 row id and converted COO
    to CSR: 40 bytes per score at the peak against the 16 ``memory_budget`` charges (about 3x the budget). Traced
    (numpy's arrays included): the peak is the scores held (16 bytes each) plus one row's temporaries."""
    import tracemalloc

    import scipy.sparse as sp

    from pyterrier_sparse_eval._lucene import lucene_product

    rng = np.random.default_rng(0)
    n_terms, n_docs = 40, 60_000
    postings = sp.csr_matrix(
        (
            rng.random(n_terms * per_term, dtype=np.float32) + 0.1,
            np.concatenate([np.sort(rng.choice(n_docs, per_term, replace=False)) for _ in range(n_terms)]),
            np.arange(0, n_terms * per_term + 1, per_term),
        ),
        shape=(n_terms, n_docs),
    )
    postings.indices = postings.indices.astype(np.int32)
    q = sp.csr_matrix(
        (
            np.ones(3 * rows, dtype=np.float32),
            np.concatenate([rng.choice(n_terms, 3, replace=False) for _ in range(rows)]),
            np.arange(0, 3 * rows + 1, 3),
        ),
        shape=(rows, n_terms),
    )
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    scores = lucene_product(q, postings)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    # against the formula, row by row (float32 contributions summed in float64, as the kernels)
    for r in (0, rows - 1):
        dense = np.zeros(n_docs)
        for t in q.indices[q.indptr[r] : q.indptr[r + 1]]:
            x = postings.data[postings.indptr[t] : postings.indptr[t + 1]]
            d = postings.indices[postings.indptr[t] : postings.indptr[t + 1]]
            dense[d] += (np.float32(1) - np.float32(1) / (np.float32(1) + x)).astype(np.float64)
        row = scores.getrow(r)
        np.testing.assert_array_equal(row.indices, np.flatnonzero(dense))
        np.testing.assert_array_equal(row.data, dense[dense != 0].astype(np.float32))
    # a row's temporaries: its postings gathered, sorted, summed (~45 bytes each), or summed into a corpus-wide
    # accumulator (8 bytes a document) when they are a quarter of the corpus or more
    assert (3 * per_term * 4 >= n_docs) == (per_term == 20_000)
    one_row = 3 * per_term * 64
    assert scores.nnz > 2_000_000 and peak <= 17 * scores.nnz + one_row + 2**20, (peak, scores.nnz)


@pytest.mark.skipif(not HAVE_NUMBA, reason="compares the scipy path with the numba kernel")
def test_the_scipy_lucene_product_equals_the_kernel_on_rare_and_frequent_terms(tmp_path):
    """Lucene BM25 postings: a query touching a quarter of the corpus or more is summed over a corpus-wide
    accumulator, one touching less over the documents it touches; either way the run is the numba kernel's, to the
    bit (the same float64 sums in the same order)."""
    rng = np.random.default_rng(11)
    words = np.array([f"w{i}" for i in range(400)])
    p = 1.0 / np.arange(1, 401)
    docs = [
        {"docno": f"d{i}", "text": " ".join(rng.choice(words, rng.integers(3, 40), p=p / p.sum()))}
        for i in range(4000)
    ]
    index = pse.SparseIndex(tmp_path / "idx")
    bm25 = pse.BM25(stemmer=None, stopwords=None)
    bm25.indexer(index, verbose=False).index(docs)
    assert index.encoder.get("scoring") == "lucene"
    rare, frequent = [f"w{i}" for i in range(300, 400)], [f"w{i}" for i in range(5)]
    queries = [" ".join(rng.choice(rare, 2)) for _ in range(40)] + [
        " ".join([*rng.choice(frequent, 2), *rng.choice(rare, 2)]) for _ in range(40)
    ]
    frame = pd.DataFrame({"qid": [f"q{i}" for i in range(len(queries))], "query": queries})
    df = index.df
    touched = [sum(df[index.term_ids[t]] for t in set(q.split()) if t in index.term_ids) for q in queries]
    assert min(touched[40:]) * 4 >= index.num_docs > max(touched[:40]) * 4  # both paths taken
    scipy_run, numba_run = (
        bm25.retriever(index, num_results=100, backend=b).transform(frame) for b in ("scipy", "numba")
    )
    assert scipy_run["docno"].tolist() == numba_run["docno"].tolist()
    np.testing.assert_array_equal(scipy_run["score"].to_numpy(), numba_run["score"].to_numpy())
