"""Docno columns gathered as bytes (pyterrier_sparse_eval._docnos) against the plain object take."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import _docnos
from pyterrier_sparse_eval._docnos import DocnoTable, concat_docnos, docnos_to_column, pick_docnos

pa = pytest.importorskip("pyarrow")  # a test dependency (pyproject's `test` extra): never skipped in CI

CASES = {
    # lengths 2-5: the padded matrix, trimmed again
    "varied": [f"d{i}" for i in range(1200)],
    # two lengths, one byte apart (not uniform: every docno is cut at its own length)
    "two lengths": [f"d{i}" for i in range(100, 1100)],
    # one length: offsets without trimming
    "uniform": [f"doc{i:05d}" for i in range(1200)],
    # multi-byte UTF-8 (lengths in bytes differ from lengths in characters), an empty docno, inner NUL and spaces
    "unicode": ["é", "日本語", "🙂x", "", "a\x00b", " pad ", "ascii"] * 50 + [f"ü{i}" for i in range(300)],
    # docnos ending in NUL: the padding is cut by length, not by value
    "trailing NUL": ["a\x00", "b", "cc\x00\x00"] * 100,
    # one very long docno would make the matrix mostly padding: Arrow's own take
    "one long": ["x" * 5000] + [f"d{i}" for i in range(2000)],
}


@pytest.mark.parametrize("name", list(CASES))
def test_table_take_equals_object_take(name):
    docnos = np.array(CASES[name], dtype=object)
    table = DocnoTable(docnos)
    assert (table._fixed is None and table._uniform is None) == (name == "one long")
    assert (table._uniform is not None) == (name == "uniform")
    assert (table._strings is not None) == (name == "one long")  # one representation kept, not two
    rng = np.random.default_rng(3)
    for docs in (
        rng.integers(0, len(docnos), 5000),
        np.arange(len(docnos))[::-1],
        np.array([], dtype=np.int64),
    ):
        got = table.take(docs)
        assert isinstance(got, pa.LargeStringArray) and len(got) == len(docs)
        assert got.to_pylist() == docnos[docs].tolist()


def test_column_dtype_follows_pandas_default(monkeypatch):
    docnos = np.array(CASES["unicode"], dtype=object)

    class Index:
        pass

    index = Index()
    index.docnos = docnos
    index.docno_table = DocnoTable(docnos)
    docs = np.array([4, 0, 1, 2, 3, 2])
    col = _docnos.docno_column(index, docs)
    assert col.dtype == pd.Series(["x"]).dtype  # pandas >= 3 with pyarrow: Arrow-backed str
    assert col.tolist() == docnos[docs].tolist()
    assert _docnos.empty_docno_column().dtype == col.dtype
    monkeypatch.setattr(_docnos, "arrow_strings", lambda: False)
    col = _docnos.docno_column(index, docs)
    assert col.dtype == object and col.tolist() == docnos[docs].tolist()
    assert _docnos.empty_docno_column().dtype == object


def test_string_dtype_follows_pandas_setting_after_it_is_memoised():
    """string_dtype() is memoised per setting of pandas' string inference and storage: changing either and back
    gives the dtype a probe Series has each time."""
    import warnings

    first = _docnos.string_dtype()
    assert first == pd.Series(["x"]).dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas >= 3 deprecates the option
        with pd.option_context("future.infer_string", not _docnos._infers_strings()):
            other = _docnos.string_dtype()
            assert other == pd.Series(["x"]).dtype and other != first
    # and per string storage: with Python storage the default str is not Arrow-backed, so no Arrow columns
    with pd.option_context("mode.string_storage", "python"):
        assert _docnos.string_dtype() == pd.Series(["x"]).dtype
        assert not _docnos.arrow_strings()
    assert _docnos.string_dtype() == first


def test_shard_parts_of_either_kind_merge_into_one_column(monkeypatch):
    """A Ray worker returns the docnos of its own process's kind; the driver's kind makes the column."""
    table = DocnoTable(np.array(["a", "bb", "ccc"], dtype=object))
    parts = [table.take(np.array([2, 0])), np.array(["zz", "é"], dtype=object)]
    for arrow in (True, False):
        monkeypatch.setattr(_docnos, "arrow_strings", lambda arrow=arrow: arrow)
        merged = concat_docnos(parts)
        picked = pick_docnos(merged, np.array([3, 0, 1]))
        col = docnos_to_column(picked)
        assert col.tolist() == ["é", "ccc", "a"]
        assert (col.dtype == object) == (not arrow)


def test_retriever_and_sharded_frames_carry_the_default_string_dtype(tmp_path):
    docs = [{"docno": f"d{i}" + "é" * (i % 3), "text": f"alpha beta w{i % 7} w{i % 11}"} for i in range(300)]
    index = pse.SparseIndex(tmp_path / "single")
    pse.BM25(stemmer=None, stopwords=None).indexer(index, verbose=False).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    pse.BM25(stemmer=None, stopwords=None).indexer(sharded, verbose=False).index(docs)
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["alpha w3", "w5 w10 beta"]})
    single = index.retriever(num_results=50).transform(topics)
    split = sharded.retriever(num_results=50).transform(topics)
    default = pd.Series(["x"]).dtype
    assert single["docno"].dtype == default and split["docno"].dtype == default
    assert single["docno"].tolist() == split["docno"].tolist()
    by_object = index.docnos[[int(d[1:].rstrip("é")) for d in single["docno"]]].tolist()
    assert single["docno"].tolist() == by_object
    empty = index.retriever().transform(pd.DataFrame({"qid": ["1"], "query": ["unknownterm"]}).iloc[:0])
    assert empty["docno"].dtype == default


def _columns_cases(n: int) -> dict[str, dict]:
    """Result-frame columns of every kind a frame can carry from its input (qid, query, a user's extras)."""
    rng = np.random.default_rng(n)
    strings = pd.Series([f"q{i % 7}" for i in range(n)], dtype=_docnos.string_dtype())  # pandas' default
    with_nulls = pd.Series([None if i % 3 == 0 else f"é{i}" for i in range(n)], dtype="string")
    fixed = {"docno": pd.array([f"d{i}" for i in range(n)], dtype=strings.dtype), "score": rng.random(n)}
    fixed["rank"] = np.arange(n, dtype=np.int64)
    return {
        "strings and numbers": {"qid": strings.array, "query": strings.array, **fixed},
        "NA-string dtype": {"qid": with_nulls.array, **fixed},
        "chunked": {
            "qid": pd.concat([strings[: n // 2], strings[n // 2 :]], ignore_index=True).array,
            **fixed,
        },
        "Arrow dtypes": {"x": pd.array(rng.integers(0, 9, n), dtype=pd.ArrowDtype(pa.int64())), **fixed},
        "numpy kinds": {"f32": rng.random(n).astype(np.float32), "b": rng.random(n) > 0.5, **fixed},
        "object column (constructor)": {"o": pd.Series([("t", i) for i in range(n)], dtype=object), **fixed},
        "category (constructor)": {"c": pd.Categorical([f"c{i % 2}" for i in range(n)]), **fixed},
        "datetime (constructor)": {"t": pd.date_range("2026-01-01", periods=n).to_numpy(), **fixed},
    }


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
@pytest.mark.parametrize("case", list(_columns_cases(1)))
def test_result_frame_equals_the_constructor(n, case, monkeypatch):
    columns = _columns_cases(n)[case]
    want = pd.DataFrame(dict(columns), copy=False)
    made = []
    if _docnos._from_blocks is not None:  # pandas >= 3: count the frames made from blocks
        from_blocks = _docnos._from_blocks
        monkeypatch.setattr(_docnos, "_from_blocks", lambda *a: made.append(1) or from_blocks(*a))
    got = _docnos.result_frame(dict(columns))
    assert bool(made) == (_docnos._from_blocks is not None and "(constructor)" not in case)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.columns.dtype == want.columns.dtype and type(got.index) is type(want.index)
    got.columns.name = "renamed"  # the column index is shared between frames: each gets its own view
    assert _docnos.result_frame(dict(columns)).columns.name is None
    got["extra"] = 1  # an ordinary frame: columns can be added and values set
    if n:
        got.loc[0, "score"] = -1.0
        assert got["score"].iloc[0] == -1.0


def test_result_frame_of_unequal_lengths_fails_as_the_constructor():
    columns = {"a": np.arange(3), "b": np.arange(4)}
    with pytest.raises(ValueError, match="same length"):
        _docnos.result_frame(columns)


@pytest.mark.parametrize("case", list(_columns_cases(1)))
def test_take_column_equals_the_array_take(case):
    rows = np.array([0, 5, 5, 2, 9, 0, 1], dtype=np.int64)
    for name, values in _columns_cases(10)[case].items():
        values = values.array if isinstance(values, pd.Series) else pd.array(values)
        got, want = _docnos.take_column(values, rows), values.take(rows)
        assert type(got) is type(want) and got.dtype == want.dtype, name
        pd.testing.assert_extension_array_equal(got, want)
