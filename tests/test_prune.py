"""The running-threshold kernel returns exactly the exhaustive kernel's top k: documents, order and float32 scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import needs_data
from helpers import random_toks_corpus

from pyterrier_sparse_eval._prune import SCAN_BOUNDED
from pyterrier_sparse_eval._topk import HAVE_NUMBA

pytestmark = pytest.mark.skipif(not HAVE_NUMBA, reason="the threshold kernel is a numba kernel")


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


def _both(q, m, k, tie_rank, lucene=False, threads=1, block=1024, **kw):
    from pyterrier_sparse_eval._prune import top_k_pruned
    from pyterrier_sparse_eval._topk import top_k_numba

    n = m.shape[1]
    ref = top_k_numba(q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie_rank, k, n, lucene=lucene)
    got = top_k_pruned(
        q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie_rank, k, n,
        threads=threads, lucene=lucene, block=block, **kw,
    )  # fmt: skip
    return ref, got


def _impacts(q, m):
    """Precomputed Lucene contributions for weights that some query rows use and others do not: each term's
    weight is its first occurrence's, so later rows using it with another weight take the formula."""
    from pyterrier_sparse_eval._prune import lucene_impacts

    weights = np.ones(m.shape[0], dtype=np.float32)
    first = {}
    for t, w in zip(q.indices.tolist(), q.data.tolist()):
        first.setdefault(t, w)
    weights[list(first)] = list(first.values())
    used = weights[q.indices] == q.data
    assert used.any() and (~used).any() or np.unique(q.data).size == 1, (
        "one path of the impacts is not exercised"
    )
    return lucene_impacts(m, weights), weights


def _bounds(m):
    from pyterrier_sparse_eval._prune import term_bounds

    return term_bounds(m)


def _differs(ref, got):
    return any(
        ref[2][i] != got[2][i] or not np.array_equal(ref[0][i, : ref[2][i]], got[0][i, : got[2][i]])
        for i in range(len(ref[2]))
    )


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
def test_threshold_kernel_equals_exhaustive(k, ties, lucene, threads):
    rng = np.random.default_rng(k + 2 * ties + 4 * lucene + 8 * threads)
    m = _index(rng, 30_000, 3_000, 0.2, ties)
    tie_rank = rng.permutation(m.shape[1]).astype(np.int32)
    q = _queries(rng, 3_000, 40, 1, 30, ties)
    # small scored blocks (1,024 documents): the threshold is set early and re-set as candidates accumulate
    ref, got = _both(q, m, k, tie_rank, lucene=lucene, threads=threads)
    _assert_same(ref, got)
    # the default block (16,384 documents: two blocks here)
    _assert_same(ref, _both(q, m, k, tie_rank, lucene=lucene, threads=threads, block=None)[1])
    # short queries to the exhaustive kernel, long ones to the threshold kernel, in one call: rows stay in place
    postings = np.add.reduceat(np.diff(m.indptr)[q.indices], q.indptr[:-1])
    light = float(np.median(postings)) / k
    assert 0 < (postings < light * k).sum() < q.shape[0], "the split is not exercised"
    _assert_same(ref, _both(q, m, k, tie_rank, lucene=lucene, threads=threads, light=light)[1])
    # every query scanned (whole blocks read back), then the heavy half only
    for scan in (0.0, float(np.median(postings)) / m.shape[1]):
        _assert_same(ref, _both(q, m, k, tie_rank, lucene=lucene, threads=threads, scan=scan)[1])
        if lucene:  # with precomputed contributions for the query terms whose weight they were computed with
            got = _both(q, m, k, tie_rank, lucene=True, threads=threads, scan=scan, impacts=_impacts(q, m))[1]
            _assert_same(ref, got)
    # scanned in sub-blocks narrower than the block: one that cuts a 64-document chunk short, and whole chunks
    for scan_block in (100, 64):
        impacts = _impacts(q, m) if lucene else None
        got = _both(
            q,
            m,
            k,
            tie_rank,
            lucene=lucene,
            threads=threads,
            scan=0.0,
            impacts=impacts,
            scan_block=scan_block,
        )
        _assert_same(ref, got[1])
    # every query cut with the wide span's small slack (the collection spans fewer ids than WIDE_SPAN): touched-list,
    # scanned and (Lucene) bounded blocks
    paths = [{}, {"scan": 0.0}] + ([{"scan": np.inf, "bounds": _bounds(m), "budget": 0.0}] if lucene else [])
    for kw in paths:
        _assert_same(ref, _both(q, m, k, tie_rank, lucene=lucene, threads=threads, wide_span=0, **kw)[1])
    if lucene:  # per-term bounds (MaxScore's non-essential terms) in the touched-list blocks, with and without impacts
        for impacts in (None, _impacts(q, m)):
            for budget in (0.0, 0.3):
                got = _both(
                    q, m, k, tie_rank, lucene=True, threads=threads, scan=np.inf, impacts=impacts,
                    bounds=_bounds(m), budget=budget,
                )[1]  # fmt: skip
                _assert_same(ref, got)
            # scanned queries that switch to bounded blocks once the threshold allows (every step, or by the
            # default density), in sub-blocks that divide the step (1,024) and one that does not (100)
            for scan_block, scan_bounded in ((1024, np.inf), (100, np.inf), (1024, 0.05)):
                got = _both(
                    q, m, k, tie_rank, lucene=True, threads=threads, scan=0.0, impacts=impacts, bounds=_bounds(m),
                    scan_block=scan_block, scan_bounded=scan_bounded,
                )[1]  # fmt: skip
                _assert_same(ref, got)


@pytest.mark.parametrize("block", [1, 7, 4096, None])
def test_block_sizes_and_negative_weights(block):
    # any block size, and negative query weights and postings (the threshold needs no bound on the weights)
    rng = np.random.default_rng(block or 0)
    m = _index(rng, 5_000, 200, 0.9, ties=False)
    m.data[::3] *= -1
    tie_rank = np.arange(m.shape[1], dtype=np.int32)
    q = _queries(rng, 200, 25, 3, 12, ties=False)
    q.data[::4] *= -1
    # queries with fewer postings than documents mark first touches branch-free, the others with a branch: both run
    postings = np.add.reduceat(np.diff(m.indptr)[q.indices], q.indptr[:-1])
    assert 0 < (postings > m.shape[1]).sum() < q.shape[0], "one first-touch variant is not exercised"
    for k in (1, 10, 5_000):
        for lucene in (False, True):
            for scan in (0.0, np.inf):
                ref, got = _both(q, m, k, tie_rank, lucene=lucene, block=block, scan=scan)
                _assert_same(ref, got)
            if lucene:
                _assert_same(
                    ref,
                    _both(q, m, k, tie_rank, lucene=True, block=block, scan=0.0, impacts=_impacts(q, m))[1],
                )


@pytest.mark.parametrize("ties", [False, True])
def test_term_bounds_are_used_and_exact(ties):
    # short Lucene queries (touched-list blocks) where the frequent terms' bounds fall below the threshold
    rng = np.random.default_rng(21 + ties)
    m = _index(rng, 40_000, 2_000, 0.3, ties)
    tie_rank = rng.permutation(m.shape[1]).astype(np.int32)
    q = _queries(rng, 2_000, 60, 2, 8, ties)
    bounds = _bounds(m)
    assert bounds is not None
    for k in (1, 10, 100, 1000):
        ref = _both(q, m, k, tie_rank, lucene=True)[0]
        for impacts in (None, _impacts(q, m)):
            got = _both(q, m, k, tie_rank, lucene=True, scan=np.inf, impacts=impacts, bounds=bounds)[1]
            _assert_same(ref, got)
        # the bounds are used: bounds that do not bound (every term said to add nothing) change the result
        wrong = (np.zeros_like(bounds[0]), bounds[1])
        assert _differs(ref, _both(q, m, k, tie_rank, lucene=True, scan=np.inf, bounds=wrong, budget=0.0)[1])
        # scanned queries too (narrow steps: the span holds many): exact with the true bounds; with bounds that say
        # nothing can be added, the query stops once its threshold is set
        scanned = {"scan": 0.0, "scan_block": 1024}
        for impacts in (None, _impacts(q, m)):
            got = _both(q, m, k, tie_rank, lucene=True, impacts=impacts, bounds=bounds, **scanned)[1]
            _assert_same(ref, got)
        assert _differs(ref, _both(q, m, k, tie_rank, lucene=True, bounds=wrong, **scanned)[1])
        # and their steps become bounded blocks, by the default density and when forced: with the most frequent
        # terms said to add nothing, those blocks lose the documents only those terms score, which steps that
        # are never bounded (scan_bounded < 0) keep (both also stop wherever the wrong bounds sum below the
        # threshold, so they are compared with each other, not with the exact result)
        df = np.diff(m.indptr)
        frequent_wrong = (np.where(df >= np.quantile(df, 0.99), 0, bounds[0]).astype(np.float32), bounds[1])
        never = _both(q, m, k, tie_rank, lucene=True, bounds=frequent_wrong, scan_bounded=-1.0, **scanned)[1]
        for scan_bounded in (SCAN_BOUNDED, np.inf):
            got = _both(
                q, m, k, tie_rank, lucene=True, bounds=frequent_wrong, scan_bounded=scan_bounded, **scanned
            )
            assert _differs(never, got[1])


def test_term_bounds_unused_when_float64_sums_could_round():
    # the bounded blocks add the non-essential terms after the others, so they rely on float64 sums being exact in
    # any order; contributions 2^40 apart break that, and the bounds must then be left unused
    from pyterrier_sparse_eval._prune import term_bounds

    rng = np.random.default_rng(5)
    n = 20_000
    rows = np.concatenate([np.zeros(300, int), np.ones(12_000, int)])
    cols = np.concatenate([rng.choice(n, 300, replace=False), rng.choice(n, 12_000, replace=False)])
    vals = np.concatenate([rng.uniform(1, 5, 300), rng.uniform(1e-6, 1e-5, 12_000)]).astype(np.float32)
    m = sp.csr_matrix((vals, (rows, cols)), shape=(2, n), dtype=np.float32)
    m.sort_indices()
    tie_rank = rng.permutation(n).astype(np.int32)
    hi, lo = term_bounds(m)
    # the frequent term said to add nothing: a wrong bound, which loses the documents that only it scores (at
    # k = 1000 the top k needs them) wherever the bounds are used
    wrong = (np.array([hi[0], 0.0], dtype=np.float32), lo)
    for weights, used in (([1.0, 1.0], True), ([1e3, 1e-3], False)):
        q = sp.csr_matrix(np.array([weights], dtype=np.float32))
        for k in (10, 1000):
            ref, got = _both(q, m, k, tie_rank, lucene=True, scan=np.inf, bounds=wrong, budget=0.0)
            if k == 1000:
                assert _differs(ref, got) == used
            if not used:
                _assert_same(ref, got)
            _assert_same(ref, _both(q, m, k, tie_rank, lucene=True, scan=np.inf, bounds=(hi, lo))[1])


@pytest.mark.parametrize("n", [1, 7, 256, 257, 3_000])
def test_kth_score_equals_a_sort(n):
    # the cut-off of every threshold cut and of the final selection: the k-th largest score bits (high 32 bits),
    # by radix select above 256 keys; compared with numpy's sort, on spread, clustered and tied score bits
    from pyterrier_sparse_eval._topk import _kth_score

    rng = np.random.default_rng(n)
    low = rng.integers(0, 1 << 32, n, dtype=np.uint64)  # doc ids / tie ranks: never part of the answer
    highs = {
        "spread": rng.integers(0, 1 << 32, n, dtype=np.uint64),
        "one 11-bit bucket": np.uint64(0xBF800000) + rng.integers(0, 1 << 21, n, dtype=np.uint64),
        "last 10 bits only": np.uint64(0xBF800000) + rng.integers(0, 1 << 10, n, dtype=np.uint64),
        "few values": rng.choice(np.array([0, 1, 1 << 31, (1 << 32) - 1], dtype=np.uint64), n),
        "all equal": np.full(n, 0xC0490FDB, dtype=np.uint64),
    }
    for name, high in highs.items():
        keys = (high << np.uint64(32)) | low
        for k in sorted({1, min(2, n), n // 2 or 1, n - 1 or 1, n}):
            want = np.sort(high)[::-1][k - 1]
            assert _kth_score(keys.copy(), n, k) == want, (name, k)
            padded = np.concatenate(
                [keys, rng.integers(0, 1 << 63, 5, dtype=np.uint64)]
            )  # only the first n count
            assert _kth_score(padded, n, k) == want, (name, k)


def test_all_documents_tie():
    # every document has the same score: the top k is decided by the tie order alone, across blocks
    n = 20_000
    m = sp.csr_matrix(np.ones((1, n), dtype=np.float32))
    tie_rank = np.random.default_rng(0).permutation(n).astype(np.int32)
    q = sp.csr_matrix(np.ones((1, 1), dtype=np.float32))
    for k in (1, 10, 1000, 6000):
        for scan in (0.0, np.inf):
            ref, got = _both(q, m, k, tie_rank, block=64, scan=scan)
            _assert_same(ref, got)
        np.testing.assert_array_equal(got[0][0, :k], np.argsort(-tie_rank)[:k])


def test_scores_one_ulp_apart_across_blocks():
    # scores that differ in the last float32 bit, spread over blocks, with many terms
    rng = np.random.default_rng(7)
    n, terms = 8_192, 40
    base = np.float32(0.1)
    vals = np.nextafter(base, np.float32(1), dtype=np.float32) * np.ones((terms, n), dtype=np.float32)
    vals[:, rng.choice(n, 50, replace=False)] = base
    vals[:, rng.choice(n, 50, replace=False)] = np.nextafter(vals[0, 0], np.float32(1), dtype=np.float32)
    m = sp.csr_matrix(vals)
    tie_rank = rng.permutation(n).astype(np.int32)
    q = sp.csr_matrix(rng.uniform(0.3, 3.0, size=(5, terms)).astype(np.float32))
    for k in (1, 10, 100, 5000):
        for lucene in (False, True):
            for scan in (0.0, np.inf):
                ref, got = _both(q, m, k, tie_rank, lucene=lucene, block=16, scan=scan)
                _assert_same(ref, got)
                if lucene:
                    got = _both(
                        q, m, k, tie_rank, lucene=True, block=16, scan=scan, bounds=_bounds(m), budget=0.0
                    )
                    _assert_same(ref, got[1])


def test_scan_keeps_float64_sums_that_round_up_to_the_threshold():
    # Lucene sums contributions in float64 and rounds the sum to float32: a document whose float64 sum is just
    # below the threshold's float32 value can round up to it and tie. The scanned blocks' first pass compares the
    # float64 sums, so it must not drop such a document (it compares with the float32 just below the threshold).
    from pyterrier_sparse_eval._prune import lucene_impacts

    one = np.float32(1.0)
    w = np.float32(2.0)
    x = np.random.default_rng(0).uniform(0.05, 5.0, 400_000).astype(np.float32)
    c = (w - w / (one + x)).astype(np.float64)  # the contributions Lucene adds (float32 values)
    sums = c[:200_000] + c[200_000:]  # two terms' contributions, summed in float64
    rounded = sums.astype(np.float32)
    # two documents whose float64 sums round to the same float32, one of them below that value
    order = np.argsort(rounded, kind="stable")
    same = np.flatnonzero(rounded[order][1:] == rounded[order][:-1])
    lo_hi = [(order[i], order[i + 1]) for i in same]
    i, j = next((a, b) for a, b in lo_hi if min(sums[a], sums[b]) < float(rounded[a]) and sums[a] != sums[b])
    top, low = (i, j) if sums[i] > sums[j] else (j, i)
    assert sums[low] < float(rounded[low]) == float(rounded[top])
    xa, xa2 = x[top], x[200_000 + top]
    x2, x3 = x[low], x[200_000 + low]
    # doc 0 (block 0) scores the threshold value; doc 1 (block 0) less, so the threshold is set after block 0;
    # doc 9 (block 2): a float64 sum below the threshold that rounds up to it; it wins the tie (tie rank)
    n = 12
    dense = np.zeros((2, n), dtype=np.float32)
    dense[0, 0], dense[1, 0], dense[0, 1], dense[0, 9], dense[1, 9] = xa, xa2, np.float32(0.01), x2, x3
    m = sp.csr_matrix(dense)
    tie_rank = np.arange(n, dtype=np.int32)  # a larger id wins a tie
    q = sp.csr_matrix(np.array([[w, w]], dtype=np.float32))
    for impacts in (None, (lucene_impacts(m, np.array([w, w])), np.array([w, w], dtype=np.float32))):
        ref, got = _both(q, m, 1, tie_rank, lucene=True, block=4, scan=0.0, impacts=impacts)
        assert ref[0][0, 0] == 9  # the tie exists and doc 9 wins it
        _assert_same(ref, got)
        # the bounded blocks' candidates: a partial sum plus bounds below the float32 threshold may still tie
        got = _both(
            q, m, 1, tie_rank, lucene=True, block=4, scan=np.inf, impacts=impacts, bounds=_bounds(m), budget=0
        )
        _assert_same(ref, got[1])


@needs_data
@pytest.mark.parametrize("k", [10, 1000])
def test_retriever_pruned_equals_exhaustive_on_scifact(scifact_bm25_index, scifact, k):
    # real queries (frequent terms included) on a real Lucene-BM25 index, through the PyTerrier transformer
    topics = scifact.get_topics()
    # terms repeated in a query: their weight is not the one the precomputed contributions hold (the formula runs)
    head = topics.head(20)
    twice = head.assign(qid=head["qid"] + "-twice", query=head["query"] + " " + head["query"])
    topics = pd.concat([topics, twice], ignore_index=True)
    pruned = scifact_bm25_index.retriever(num_results=k).transform(topics)
    exhaustive = scifact_bm25_index.retriever(num_results=k, prune=False).transform(topics)
    pd.testing.assert_frame_equal(pruned, exhaustive)
    if k == 10:  # the real queries are heavy (more postings than 12% of the documents): scanned, with impacts
        assert "lucene_impacts" in vars(scifact_bm25_index)
        # impacts=False: the formula everywhere, nothing precomputed, the same run
        import pyterrier_sparse_eval as pse

        fresh = pse.SparseIndex(scifact_bm25_index.path)
        formula = fresh.retriever(num_results=k, impacts=False).transform(topics)
        assert "lucene_impacts" not in vars(fresh)
        pd.testing.assert_frame_equal(formula, pruned)
        with pytest.raises(ValueError, match="impacts must be True or False"):
            fresh.retriever(impacts="yes")


def test_retriever_threshold_on_learned_weights(tmp_path):
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
    # through the retriever's own blocks of queries (a small memory budget: several kernel calls) and 2 threads
    a = index.retriever(num_results=10, memory_budget=2_000, threads=2).transform(topics)
    pd.testing.assert_frame_equal(a, index.retriever(num_results=10, prune=False).transform(topics))


def test_no_write_out_of_bounds_when_a_block_is_fully_touched(tmp_path):
    # every document of a block touched, then touched again: the branch-free first-touch marking must stay inside
    # its buffer. Numba checks bounds only when asked: a fresh process with NUMBA_BOUNDSCHECK=1 and its own cache.
    import os
    import subprocess
    import sys

    code = """
import numpy as np, scipy.sparse as sp
from pyterrier_sparse_eval._prune import top_k_pruned
from pyterrier_sparse_eval._topk import top_k_numba
# the first block (4 documents) touched by all three terms; fewer postings than documents: branch-free marking
dense = np.zeros((3, 64), dtype=np.float32)
dense[:, :4] = 1.0
dense[0, 40] = 1.0
m = sp.csr_matrix(dense)
q = sp.csr_matrix(np.array([[1.0, 2.0, 0.5]], dtype=np.float32))
tie = np.arange(64, dtype=np.int32)
for lucene in (False, True):
    for block in (4, 5):
        args = (q.indptr, q.indices, q.data, m.indptr, m.indices, m.data, tie, 10, 64)
        ref = top_k_numba(*args, lucene=lucene)
        for scan in (0.0, np.inf):
            got = top_k_pruned(*args, lucene=lucene, block=block, scan=scan)
            assert all((a == b).all() for a, b in zip(got, ref))
        got = top_k_numba(*args, lucene=lucene, block=block)  # the exhaustive kernel's blocks too
        assert all((a == b).all() for a, b in zip(got, ref))
print("ok")
"""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
