"""Block-max pruning returns exactly the exhaustive kernel's top k: documents, order and float32 scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import needs_data
from helpers import random_toks_corpus

from pyterrier_sparse_eval._topk import HAVE_NUMBA

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="pruning is a numba kernel")


def _index(rng, num_docs, num_terms, density, ties):
    """Term-major postings with Zipf-like document frequencies; ``ties`` draws weights from a handful of values
    so that many documents tie exactly (the adversarial case for the threshold and tie order)."""
    df = np.minimum(num_docs, (num_docs * density / (1 + np.arange(num_terms)) ** 0.8).astype(int) + 1)
    rows, cols = [], []
    for t, n in enumerate(df):
        rows.append(np.full(n, t))
        cols.append(rng.choice(num_docs, size=n, replace=False))
    r, c = np.concatenate(rows), np.concatenate(cols)
    if ties:
        vals = rng.choice(np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32), size=len(r))
    else:
        vals = rng.gamma(1.5, 1.0, size=len(r)).astype(np.float32)
    m = sp.csr_matrix((vals, (r, c)), shape=(num_terms, num_docs), dtype=np.float32)
    m.sort_indices()
    return m


def _queries(rng, num_terms, nq, lo, hi, ties):
    rows, cols, vals = [], [], []
    for q in range(nq):
        n = rng.integers(lo, hi + 1)
        # frequent terms included: draw by a head-heavy distribution over term ids
        terms = np.unique(np.minimum(num_terms - 1, rng.zipf(1.3, size=n) - 1))
        rows += [q] * len(terms)
        cols += terms.tolist()
        w = np.ones(len(terms)) if ties else rng.uniform(0.1, 3.0, size=len(terms))
        vals += w.tolist()
    return sp.csr_matrix(
        (np.asarray(vals, np.float32), (rows, cols)), shape=(nq, num_terms), dtype=np.float32
    )


def _both(q, m, k, tie_rank, lucene=False, threads=1, shift=8):
    from pyterrier_sparse_eval._prune import block_max, top_k_pruned
    from pyterrier_sparse_eval._topk import top_k_numba

    n = m.shape[1]

    ref = top_k_numba(q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie_rank, k, n, lucene=lucene)
    bm = block_max(m.indptr, m.indices, m.data, n, shift=shift)
    stats = np.zeros((q.shape[0], 3), dtype=np.int64)
    got = top_k_pruned(
        q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie_rank, k, n, bm,
        threads=threads, lucene=lucene, stats=stats,
    )  # fmt: skip
    return ref, got, stats


def _assert_same(ref, got):
    docs_r, scores_r, n_r = ref
    docs_g, scores_g, n_g = got
    np.testing.assert_array_equal(n_g, n_r)
    for i, c in enumerate(n_r):
        np.testing.assert_array_equal(docs_g[i, :c], docs_r[i, :c])
        # bit-identical float32 scores
        np.testing.assert_array_equal(scores_g[i, :c].view(np.uint32), scores_r[i, :c].view(np.uint32))


@pytest.mark.parametrize("k", [1, 10, 100, 1000])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("lucene", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_pruned_equals_exhaustive(k, ties, lucene, threads):
    rng = np.random.default_rng(k + 2 * ties + 4 * lucene + 8 * threads)
    m = _index(rng, 30_000, 3_000, 0.2, ties)
    tie_rank = rng.permutation(m.shape[1]).astype(np.int32)
    q = _queries(rng, 3_000, 40, 1, 30, ties)
    ref, got, stats = _both(q, m, k, tie_rank, lucene=lucene, threads=threads)
    _assert_same(ref, got)
    if k <= 10 and not ties:
        assert stats[:, 1].sum() > 0, "no block was skipped: the test does not exercise pruning"


@pytest.mark.parametrize("shift", [0, 3, 8, 12, 14])
@pytest.mark.parametrize("lucene", [False, True])
def test_block_sizes_and_dense_blocks(shift, lucene):
    # a few very long lists (dense mode: the query's postings cover most documents) and block size 1
    rng = np.random.default_rng(shift)
    m = _index(rng, 5_000, 200, 0.9, ties=False)
    tie_rank = np.arange(m.shape[1], dtype=np.int32)
    q = _queries(rng, 200, 25, 3, 12, ties=False)
    for k in (1, 10, 5_000):
        ref, got, _ = _both(q, m, k, tie_rank, shift=shift, lucene=lucene)
        _assert_same(ref, got)


def test_all_documents_tie():
    # every document has the same score: the top k is decided by the tie order alone
    n = 20_000
    m = sp.csr_matrix(np.ones((1, n), dtype=np.float32))
    tie_rank = np.random.default_rng(0).permutation(n).astype(np.int32)
    q = sp.csr_matrix(np.ones((1, 1), dtype=np.float32))
    for k in (1, 10, 1000):
        ref, got, _ = _both(q, m, k, tie_rank, shift=6)
        _assert_same(ref, got)
        np.testing.assert_array_equal(got[0][0, :k], np.argsort(-tie_rank)[:k])


def test_near_ties_across_blocks_survive_rounding():
    # scores that differ in the last float32 bit, spread over blocks, with many terms: the widened bound must
    # never skip a block holding a document of the top k
    rng = np.random.default_rng(7)
    n, terms = 8_192, 40
    base = np.float32(0.1)
    vals = np.nextafter(base, np.float32(1), dtype=np.float32) * np.ones((terms, n), dtype=np.float32)
    vals[:, rng.choice(n, 50, replace=False)] = base  # a few documents one ulp lower per term
    vals[:, rng.choice(n, 50, replace=False)] = np.nextafter(vals[0, 0], np.float32(1), dtype=np.float32)
    m = sp.csr_matrix(vals)
    tie_rank = rng.permutation(n).astype(np.int32)
    q = sp.csr_matrix(rng.uniform(0.3, 3.0, size=(5, terms)).astype(np.float32))
    for k in (1, 10, 100):
        for lucene in (False, True):
            ref, got, _ = _both(q, m, k, tie_rank, lucene=lucene, shift=4)
            _assert_same(ref, got)


def test_negative_postings_have_no_bound_and_negative_queries_are_refused():
    from pyterrier_sparse_eval._prune import block_max, top_k_pruned

    m = sp.csr_matrix(np.array([[1.0, -0.5, 2.0]], dtype=np.float32))
    assert block_max(m.indptr, m.indices, m.data, 3) is None
    good = sp.csr_matrix(np.array([[1.0, 0.5, 2.0]], dtype=np.float32))
    bm = block_max(good.indptr, good.indices, good.data, 3)
    assert bm is not None and bm.term_max[0] == np.float32(2.0)
    q = sp.csr_matrix(np.array([[-1.0]], dtype=np.float32))
    with pytest.raises(ValueError, match="non-negative"):
        top_k_pruned(q.indptr, q.indices, q.data, good.indptr, good.indices, good.data,
                     np.arange(3, dtype=np.int32), 2, 3, bm)  # fmt: skip


def test_block_maxima_bound_every_posting():
    from pyterrier_sparse_eval._prune import block_max

    rng = np.random.default_rng(3)
    m = _index(rng, 10_000, 500, 0.5, ties=False)
    bm = block_max(m.indptr, m.indices, m.data, m.shape[1], shift=6)
    assert bm.blocks.size <= m.nnz, "block maxima exceed the one-byte-per-posting budget"
    assert (bm.dense_id >= 0).sum() > 0
    for t in range(m.shape[0]):
        a, b = m.indptr[t], m.indptr[t + 1]
        d, x = m.indices[a:b], m.data[a:b]
        assert bm.term_max[t] == (x.max() if len(x) else 0)
        r = bm.dense_id[t]
        if r >= 0:
            bound = bm.blocks[r, d >> 6].astype(np.float64) * np.float64(bm.term_max[t]) / 255.0
            assert (bound >= x * (1 - 1e-12)).all()
            # tight: at most one quantisation step above the block's true maximum
            true = np.zeros(bm.blocks.shape[1])
            np.maximum.at(true, d >> 6, x)
            assert (bm.blocks[r] <= np.ceil(true * 255.0 / bm.term_max[t]) + 1e-9).all()


@needs_data
@pytest.mark.parametrize("k", [10, 1000])
def test_retriever_pruned_equals_exhaustive_on_scifact(scifact_bm25_index, scifact, k):
    # real queries (frequent terms included) on a real Lucene-BM25 index, through the PyTerrier transformer
    topics = scifact.get_topics()
    pruned = scifact_bm25_index.retriever(num_results=k).transform(topics)
    exhaustive = scifact_bm25_index.retriever(num_results=k, prune=False).transform(topics)
    pd.testing.assert_frame_equal(pruned, exhaustive)
    assert scifact_bm25_index._pse_block_max[1] is not None  # the pruned path really ran


def test_retriever_prunes_learned_weights_and_follows_rebuilds(tmp_path):
    import pyterrier_sparse_eval as pse

    rng = np.random.default_rng(11)
    docs = random_toks_corpus(rng, 3_000, vocab=300, dups=0)
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(docs)
    topics = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(30)],
            "query_toks": [
                {f"t{t}": float(rng.uniform(0.1, 2)) for t in rng.choice(300, size=25, replace=False)}
                for _ in range(30)
            ],
        }
    )
    for idf in (False, True):
        a = index.retriever(num_results=10, idf=idf).transform(topics)
        b = index.retriever(num_results=10, idf=idf, prune=False).transform(topics)
        pd.testing.assert_frame_equal(a, b)
    # a rebuild of the same index object: the cached block maxima of the old build must not be used
    first = index._pse_block_max
    index.indexer(mode="overwrite", verbose=False).index(docs[:100])
    a = index.retriever(num_results=10).transform(topics)
    b = index.retriever(num_results=10, prune=False).transform(topics)
    pd.testing.assert_frame_equal(a, b)
    assert index._pse_block_max[0] == index.build_id != first[0]
