import json
import math
import os
import re

import numpy as np
import pyterrier as pt
import pytest

import pyterrier_sparse_eval as pse

DOCS = [
    {"docno": "a", "toks": {"x": 1.0, "y": 2.0}},
    {"docno": "b", "toks": {"y": 0.5}},
    {"docno": "c", "toks": {"z": 3.0, "x": 0.25}},
]


def test_round_trip_term_major(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(DOCS)
    loaded = pse.SparseIndex(tmp_path / "idx")
    assert loaded.num_docs == 3 and loaded.num_terms == 3 and loaded.num_postings == 5
    dense = loaded.postings.toarray()
    for j, d in enumerate(DOCS):
        for t, w in d["toks"].items():
            assert dense[loaded.term_ids[t], j] == w
    assert (dense != 0).sum() == 5
    # term-major: each term's postings are a contiguous, doc-ascending slice
    p = loaded.postings
    for t in range(loaded.num_terms):
        ids = p.indices[p.indptr[t] : p.indptr[t + 1]]
        assert list(ids) == sorted(ids)
    assert list(loaded.docnos) == ["a", "b", "c"]


def test_memory_mapped_and_no_pickle(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(DOCS)
    loaded = pse.SparseIndex(tmp_path / "idx", mmap=True)
    assert isinstance(loaded._load("postings.data.npy"), np.memmap)
    for name in (
        "postings.indptr.npy",
        "postings.indices.npy",
        "postings.data.npy",
        "doclen.npy",
        "docno_rank.npy",
    ):
        np.load(tmp_path / "idx" / name, allow_pickle=False)  # raises if a pickle were needed
    meta = json.loads((tmp_path / "idx" / "pt_meta.json").read_text())
    assert meta["type"] == "sparse_index" and meta["format"] == "csr" and meta["num_docs"] == 3
    assert json.loads((tmp_path / "idx" / "vocab.json").read_text()) == loaded.vocab


def test_pt_artifact_load_returns_sparse_index(tmp_path):
    pse.SparseIndex(tmp_path / "idx").indexer(verbose=False).index(DOCS)
    loaded = pt.Artifact.load(str(tmp_path / "idx"))
    assert isinstance(loaded, pse.SparseIndex)
    assert loaded.num_docs == 3


def test_idf_from_stored_matrix(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(DOCS)
    # x in 2 docs, y in 2, z in 1; N = 3: ln(1 + (N - df + 0.5) / (df + 0.5)), computed by hand
    expected = {"x": math.log(1 + 1.5 / 2.5), "y": math.log(1 + 1.5 / 2.5), "z": math.log(1 + 2.5 / 1.5)}
    for t, v in expected.items():
        assert index.idf[index.term_ids[t]] == pytest.approx(v, abs=1e-12)


def test_existing_index_needs_overwrite(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(DOCS)
    with pytest.raises(FileExistsError, match='mode="overwrite"'):
        index.indexer(verbose=False).index(DOCS)
    index.indexer(mode="overwrite", verbose=False).index(DOCS[:2])
    assert pse.SparseIndex(tmp_path / "idx").num_docs == 2
    assert index.num_docs == 2  # the held object sees the rebuilt index
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_interrupted_build_leaves_nothing_loadable(tmp_path):
    def docs():
        yield from DOCS
        raise KeyboardInterrupt  # the user pressed Ctrl-C half way

    index = pse.SparseIndex(tmp_path / "idx")
    with pytest.raises(KeyboardInterrupt):
        index.indexer(batch_size=1, verbose=False).index(docs())
    assert not index.built()
    assert list(tmp_path.iterdir()) == []  # no half-written directory, no temporary left behind
    with pytest.raises(FileNotFoundError, match="Build one first"):
        _ = index.num_docs
    with pytest.raises(FileNotFoundError):
        pt.Artifact.load(str(tmp_path / "idx"))


def test_failed_overwrite_keeps_the_old_index(tmp_path):
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False).index(DOCS)
    with pytest.raises(TypeError):
        index.indexer(mode="overwrite", verbose=False).index([{"docno": "q", "toks": [1, 2]}])
    assert pse.SparseIndex(tmp_path / "idx").num_docs == 3


@pytest.mark.parametrize(
    "docs, error, match",
    [
        ([], ValueError, "iterator was empty"),
        (
            [{"docno": "a", "toks": {"x": 1}}, {"docno": "a", "toks": {"y": 1}}],
            ValueError,
            "Duplicate docnos",
        ),
        ([{"docno": "a", "toks": {1: 1.0}}], TypeError, "convert_ids_to_tokens"),
        ([{"docno": "a", "text": "hello"}], KeyError, "BM25"),
        ([{"docno": "a", "toks": {"x": float("nan")}}], ValueError, "Document 'a': term 'x' has weight nan"),
        # each weight a float32, their sum not: the length had been stored as inf, the index then called damaged
        (
            [{"docno": "a", "toks": {"x": 3e38, "y": 3e38}}],
            ValueError,
            r"sum beyond float32's range \(3.4e38\)",
        ),
        ([{"docno": "a\0", "toks": {"x": 1}}], ValueError, "NUL"),
        (
            [{"docno": "b", "toks": {"x": 1}}, {"docno": "é\u4e2d", "toks": {"x": 1}}] * 2,
            ValueError,
            "Duplicate",
        ),
    ],
)
def test_bad_documents_are_reported(tmp_path, docs, error, match):
    with pytest.raises(error, match=match):
        pse.SparseIndex(tmp_path / "idx").indexer(verbose=False).index(docs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("long", [False, True], ids=["short docnos", "one long docno"])
def test_docno_ranks_follow_code_point_order(tmp_path, long):
    # trec_eval breaks ties by strcmp over UTF-8 bytes, which is Python's code point order; non-ASCII,
    # astral-plane and prefix docnos included (the index sorts their UTF-8 bytes). One docno far longer than the
    # others is sorted without numpy's fixed width, which would pad every docno to it (memory), in the same order
    docnos = ["b", "a", "ab", "Z", "é", "e\u0301", "\U0001f600", "中文", "a b", "10", "9", "ä"] + [
        f"d{i}" for i in range(200)
    ]
    docnos += ["d1" + "x" * 20_000, "d1" + "x" * 19_999] if long else []
    index = pse.SparseIndex(tmp_path / "idx")
    index.indexer(verbose=False, batch_size=7).index([{"docno": d, "toks": {"x": 1.0}} for d in docnos])
    assert list(index.docnos) == docnos
    ranks = np.asarray(index.docno_rank)
    assert [docnos[i] for i in np.argsort(ranks)] == sorted(docnos)
    assert [docnos[i] for i in np.argsort(ranks)] == sorted(docnos, key=lambda d: d.encode("utf-8"))


@pytest.mark.parametrize("long", [False, True], ids=["short docnos", "one long docno"])
def test_a_bm25_corpus_with_a_docno_twice_is_refused(tmp_path, long):
    docs = [{"docno": f"d{i % 150}", "text": f"alpha w{i}"} for i in range(160)]  # d0 to d9 twice
    docs += [{"docno": "y" * 20_000, "text": "beta"}] if long else []
    with pytest.raises(
        ValueError, match=r"Duplicate docnos in the corpus, e.g. \['d0', 'd1', 'd2', 'd3', 'd4'\]"
    ):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "idx"), verbose=False).index(docs)
    assert list(tmp_path.iterdir()) == []


def test_a_batch_size_that_is_no_positive_integer_is_refused_naming_it(tmp_path):
    """batch_size=0 had said "No documents were indexed: the document iterator was empty", "5" islice's error."""
    for bad in (0, "5", 2.5, None):
        with pytest.raises(
            ValueError, match=rf"batch_size must be an integer >= 1, got {re.escape(repr(bad))}"
        ):
            pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), batch_size=bad)
        with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
            pse.SparseIndex(tmp_path / "j").indexer(batch_size=bad)
    assert not (tmp_path / "i").exists() and not (tmp_path / "j").exists()


def test_documents_that_are_no_dicts_are_refused_naming_what_they_are(tmp_path):
    """Strings as documents had been read as dicts of their letters: "Documents need a 'docno' field (got ['a',
    'a', 'h', 'l', 'p'])"."""
    for indexer in (
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), verbose=False),
        pse.SparseIndex(tmp_path / "j").indexer(verbose=False),
    ):
        with pytest.raises(TypeError, match=r"Documents must be dicts such as .*got a str: 'alpha'"):
            indexer.index(["alpha", "beta"])
        with pytest.raises(TypeError, match="an iterable of dicts or a DataFrame, not one str"):
            indexer.index("alpha")
    assert not (tmp_path / "i").exists() and not (tmp_path / "j").exists()


def test_batches_and_dataframe_input_give_the_same_index(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(0)
    docs = [
        {"docno": f"d{i}", "toks": {f"t{j}": float(rng.random()) for j in rng.choice(50, 5)}}
        for i in range(200)
    ]
    a = pse.SparseIndex(tmp_path / "a")
    a.indexer(batch_size=7, verbose=False).index(docs)
    b = pse.SparseIndex(tmp_path / "b")
    b.indexer(batch_size=1000, verbose=False).index(pd.DataFrame(docs))
    pa, pb = a.postings, b.postings
    # vocabularies are assigned per batch, so compare through the term strings
    for t in a.vocab:
        ra, rb = a.term_ids[t], b.term_ids[t]
        assert list(pa.indices[pa.indptr[ra] : pa.indptr[ra + 1]]) == list(
            pb.indices[pb.indptr[rb] : pb.indptr[rb + 1]]
        )
        np.testing.assert_array_equal(
            pa.data[pa.indptr[ra] : pa.indptr[ra + 1]], pb.data[pb.indptr[rb] : pb.indptr[rb + 1]]
        )


def test_doc_ids_out_of_order_are_found_in_their_term(monkeypatch):
    """The check run on every open: the first term whose doc ids repeat or descend, wherever it lies (first or
    last term, beside empty terms, across the check's blocks), and never a term start, where any doc id may
    follow. Each case's answer is a plain loop's over the same arrays."""
    from pyterrier_sparse_eval import _format

    # a block of 5 postings: a descent may straddle two blocks
    monkeypatch.setattr(_format, "_BLOCK", 5)
    rng = np.random.default_rng(0)

    def plain(indptr, indices):
        for t in range(len(indptr) - 1):
            if any(indices[p] <= indices[p - 1] for p in range(indptr[t] + 1, indptr[t + 1])):
                return t
        return -1

    for case in range(300):
        lengths = rng.integers(0, 6, size=rng.integers(1, 12))
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        indices = np.concatenate([np.sort(rng.choice(50, size=n, replace=False)) for n in lengths])
        indices = indices.astype(np.int32)
        if case % 3 and len(indices) > 1:
            # a doc id repeated or swapped with its neighbour (at a term start: allowed)
            p = int(rng.integers(1, len(indices)))
            if case % 3 == 1:
                indices[p] = indices[p - 1]
            else:
                indices[[p - 1, p]] = indices[[p, p - 1]]
        assert _format.first_unsorted_term(indptr, indices) == plain(indptr, indices), (indptr, indices)
    assert plain(np.array([0, 2, 2, 4]), np.array([3, 5, 1, 1])) == 2
    assert _format.first_unsorted_term(np.array([0, 2, 2, 4]), np.array([3, 5, 1, 1], dtype=np.int32)) == 2


def test_flattened_toks_name_each_batch_term_once_in_first_seen_order():
    """A batch of {term: weight} dicts becomes its distinct terms (first seen first) and each posting's place among
    them, with weights and lengths as given: checked against a plain loop, on terms repeated within and across
    documents, an empty document and non-ASCII terms."""
    from pyterrier_sparse_eval._toks import flatten_toks

    rng = np.random.default_rng(0)
    words = ["a", "b", "é", "日本", "a#", "##s", "x" * 40]
    toks = [{w: float(rng.random()) for w in rng.choice(words, size=n)} for n in (3, 0, 7, 1, 5)]
    _, names, idx, values, offsets, doclen, _ = flatten_toks(["d"] * len(toks), toks)
    flat = [t for doc in toks for t in doc]
    assert names == [t for i, t in enumerate(flat) if t not in flat[:i]]
    assert [names[i] for i in idx] == flat
    assert values.tolist() == [w for doc in toks for w in doc.values()]
    assert offsets.tolist() == np.cumsum([0, *map(len, toks)]).tolist()
    assert doclen.tolist() == pytest.approx([sum(doc.values()) for doc in toks])
    _, names, idx, *_ = flatten_toks(["d", "e"], [{}, {}])
    assert names == [] and idx.tolist() == []


@pytest.mark.parametrize("term", [None, float("nan"), 7, b"t1"])
def test_a_document_term_that_is_no_string_is_refused(tmp_path, term):
    """None and NaN too (a hash table's 'missing' values, which must not vanish from a document unsaid)."""
    docs = [{"docno": "d1", "toks": {"t1": 1.0}}, {"docno": "d2", "toks": {"t2": 1.0, term: 2.0}}]
    with pytest.raises(TypeError, match=r"Terms must be strings.*convert_ids_to_tokens"):
        pse.SparseIndex(tmp_path / "i").indexer(verbose=False).index(docs)
    assert list(tmp_path.iterdir()) == []


def test_a_term_utf8_cannot_store_is_refused_with_its_batch(tmp_path):
    """A lone surrogate (text decoded with errors='surrogateescape') in a term is refused as its batch arrives,
    naming it (the index's vocabulary failed to be written at the end of the build, after every batch: a
    UnicodeEncodeError naming nothing)."""
    read = []

    def docs():
        for i in range(6):
            read.append(i)
            yield {"docno": f"d{i}", "toks": {"ok": 1.0, "bad\udce9" if i == 2 else "fine": 1.0}}

    with pytest.raises(
        ValueError, match=r"Invalid term 'bad\\udce9': it holds a lone surrogate.*decode the text"
    ):
        pse.SparseIndex(tmp_path / "i").indexer(verbose=False, batch_size=2).index(docs())
    assert read == [0, 1, 2, 3]  # the second batch of two
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "weight",
    [None, float("nan"), float("inf"), 1 + 0j, [1.0], 10**400, object()],
    ids=lambda w: type(w).__name__,
)
def test_a_weight_that_is_no_finite_number_is_refused_naming_its_document_and_term(tmp_path, weight):
    docs = [{"docno": "d1", "toks": {"t1": 1.0}}, {"docno": "d2", "toks": {"t2": 1.0, "t3": weight}}]
    with pytest.raises(
        ValueError, match=r"^Document 'd2': term 't3' has weight .*must be finite real numbers"
    ):
        pse.SparseIndex(tmp_path / "i").indexer(verbose=False).index(docs)
    assert list(tmp_path.iterdir()) == []


def test_the_working_folder_as_the_index_path_is_refused_before_the_build(tmp_path, monkeypatch):
    """SparseIndex(".") in an empty working folder had been built whole, then refused naming the build's own
    temporary folder as the user's content (made inside '.', its "parent"); as the new index is swapped in for the
    folder, the working folder would have been removed."""
    (tmp_path / "here" / "deeper").mkdir(parents=True)
    ended = []

    def docs():  # a build that ran whole had read them all
        yield {"docno": "a", "text": "x"}
        ended.append(True)

    refusal = r"is the working folder \(or holds it\).*SparseIndex\('index'\)"
    monkeypatch.chdir(tmp_path / "here" / "deeper")  # empty
    for index in (pse.SparseIndex("."), pse.SparseIndex(""), pse.ShardedIndex(".", num_shards=2)):
        for mode in ("create", "overwrite"):
            with pytest.raises(ValueError, match=refusal):
                pse.BM25().indexer(index, verbose=False, mode=mode).index(docs())
    with pytest.raises(ValueError, match=f"{re.escape(repr(str(tmp_path / 'here')))} is the working folder"):
        pse.BM25().indexer(pse.SparseIndex(".."), verbose=False, mode="overwrite").index(docs())
    assert ended == [] and os.listdir(".") == [] and os.listdir("..") == ["deeper"]
    pse.BM25().indexer(pse.SparseIndex("index"), verbose=False).index(docs())
    assert pse.SparseIndex("index").num_docs == 1


def test_a_build_whose_working_folder_was_removed_is_not_refused(tmp_path, monkeypatch):
    """The working-folder check had called os.getcwd() bare: with the working folder removed (a notebook started
    in a temporary folder), every build failed, at its last step too."""
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    index = (
        pse.BM25()
        .indexer(pse.SparseIndex(tmp_path / "index"), verbose=False)
        .index([{"docno": "a", "text": "x"}])
    )
    assert index.num_docs == 1
    # a relative path there names nothing: said when the handle is made
    with pytest.raises(FileNotFoundError, match="'index' is relative to the current folder, which no longer"):
        pse.SparseIndex("index")
