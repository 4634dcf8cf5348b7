"""A sharded index scores with the whole corpus's statistics: its merged run equals a single index's run exactly
(documents, order and float32 scores), on real SciFact BM25 and on learned weights with ties; damage is refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from conftest import needs_data
from helpers import random_queries, random_toks_corpus

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import IndexCorruptError


def _same_run(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert len(a) == len(b) > 0
    for col in ("qid", "docno", "rank"):
        assert a[col].tolist() == b[col].tolist(), col
    # bit-identical scores (float32 values, nudged identically for Lucene's tie order)
    np.testing.assert_array_equal(a["score"].to_numpy().view(np.int64), b["score"].to_numpy().view(np.int64))


@needs_data
@pytest.mark.parametrize("num_shards", [1, 2, 5])
def test_bm25_shards_equal_single_index_on_scifact(tmp_path, scifact, scifact_bm25_index, num_shards):
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=num_shards)
    pse.BM25().indexer(sharded, verbose=False).index(pse.datasets.corpus_iter(scifact))
    assert sharded.num_docs == scifact_bm25_index.num_docs
    assert [s.num_docs for s in sharded.shards] == [
        len(range(i, scifact_bm25_index.num_docs, num_shards)) for i in range(num_shards)
    ]
    topics = scifact.get_topics()
    single_run = pse.BM25().retriever(scifact_bm25_index, num_results=1000).transform(topics)
    sharded_run = pse.BM25().retriever(sharded, num_results=1000).transform(topics)
    _same_run(single_run, sharded_run)
    if num_shards == 2:  # the same table through a real pt.Experiment
        from ir_measures import AP, R, nDCG

        table = pt.Experiment(
            [pse.BM25().retriever(scifact_bm25_index), pse.BM25().retriever(sharded)],
            topics,
            scifact.get_qrels(),
            [nDCG @ 10, R @ 100, AP],
            names=["single", "sharded"],
        )
        assert table.iloc[0, 1:].tolist() == table.iloc[1, 1:].tolist()
        assert table.iloc[0]["nDCG@10"] > 0.6  # a real BM25 run, not an empty one


@pytest.mark.parametrize("idf", [True, False])
@pytest.mark.parametrize("integer", [True, False])
def test_learned_weights_shards_equal_single_index(tmp_path, idf, integer):
    rng = np.random.default_rng(7 + idf + 2 * integer)
    # duplicates and integer weights: many exact ties across shards, decided by docno
    docs = random_toks_corpus(rng, 700, 60, dups=60, integer=integer)
    single = pse.SparseIndex(tmp_path / "single")
    single.indexer(verbose=False, batch_size=128).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    sharded.indexer(verbose=False, batch_size=128).index(docs)
    queries = random_queries(rng, 40, 60, terms=4)
    for k in (1, 10, 1000):
        a = single.retriever(num_results=k, idf=idf).transform(queries)
        b = sharded.retriever(num_results=k, idf=idf).transform(queries)
        _same_run(a, b)
    assert (
        sharded.retriever(idf=idf, backend="scipy")
        .transform(queries)
        .equals(single.retriever(idf=idf, backend="scipy").transform(queries))
    )


@pytest.fixture
def built(tmp_path) -> pse.ShardedIndex:
    docs = random_toks_corpus(np.random.default_rng(3), 200, 30)
    index = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    index.indexer(verbose=False).index(docs)
    return index


def _leftovers(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


def test_artifact_load_and_wrong_class(built):
    loaded = pt.Artifact.load(str(built.path))
    assert isinstance(loaded, pse.ShardedIndex) and loaded.num_shards == 3
    with pytest.raises(ValueError, match=r"sharded index: open it with pse.ShardedIndex"):
        _ = pse.SparseIndex(built.path).meta
    with pytest.raises(ValueError, match="holds 3 shards, not num_shards=2"):
        _ = pse.ShardedIndex(built.path, num_shards=2).meta
    with pytest.raises(FileExistsError, match="already exists"):
        pse.ShardedIndex(built.path, num_shards=3).indexer(verbose=False).index(
            [{"docno": "a", "toks": {"x": 1.0}}]
        )


def test_missing_shard_is_named(built):
    shutil.rmtree(built.directory / "shard-001")
    with pytest.raises(IndexCorruptError, match=r"shard 1 of 3 .* is missing"):
        built.retriever()


def test_truncated_shard_is_named(built):
    data = built.directory / "shard-002" / "postings.data.npy"
    with open(data, "r+b") as f:
        f.truncate(data.stat().st_size - 4)
    with pytest.raises(IndexCorruptError, match=r"shard 2 of 3 .* is damaged: .*postings.data.npy"):
        built.retriever()


def test_shard_of_another_build_is_refused(built, tmp_path):
    other = pse.ShardedIndex(tmp_path / "other", num_shards=3)
    other.indexer(verbose=False).index(random_toks_corpus(np.random.default_rng(3), 200, 30))
    shutil.rmtree(built.directory / "shard-000")
    shutil.copytree(other.directory / "shard-000", built.directory / "shard-000")
    with pytest.raises(
        IndexCorruptError, match=r"shard 0 of 3 .* is not the shard this manifest was built with"
    ):
        built.retriever()


def test_edited_manifest_is_refused(built):
    path = built.directory / "pt_meta.json"
    manifest = json.loads(path.read_text())
    manifest["num_docs"] += 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(IndexCorruptError, match="does not match its checksum"):
        _ = pse.ShardedIndex(built.path).meta


def test_failed_builds_leave_nothing(tmp_path):
    def docs():
        yield from random_toks_corpus(np.random.default_rng(1), 50, 10)
        raise RuntimeError("the corpus reader failed")

    index = pse.ShardedIndex(tmp_path / "x", num_shards=2)
    with pytest.raises(RuntimeError, match="corpus reader failed"):
        index.indexer(verbose=False, batch_size=16).index(docs())
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="3 documents cannot fill 4 shards"):
        pse.ShardedIndex(tmp_path / "x", num_shards=4).indexer(verbose=False).index(
            random_toks_corpus(np.random.default_rng(1), 3, 10)
        )
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="how many shards"):
        pse.ShardedIndex(tmp_path / "x").indexer(verbose=False).index(
            random_toks_corpus(np.random.default_rng(1), 3, 5)
        )
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="num_shards must be a positive integer"):
        pse.ShardedIndex(tmp_path / "x", num_shards=0)


def test_overwrite_replaces_and_unknown_engine(built):
    docs = random_toks_corpus(np.random.default_rng(9), 90, 20)
    pse.ShardedIndex(built.path, num_shards=2).indexer(mode="overwrite", verbose=False).index(docs)
    reopened = pse.ShardedIndex(built.path)
    assert reopened.num_shards == 2 and reopened.num_docs == 90
    assert _leftovers(built.directory.parent) == []
    with pytest.raises(ValueError, match="engine must be one of"):
        reopened.retriever(engine="spark")


@needs_data
def test_sdm_pool_cut_from_shards_equals_pool_cut_from_single_index(tmp_path, scifact, scifact_bm25_index):
    from pyterrier_sparse_eval import sdm

    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    pse.BM25().indexer(sharded, verbose=False).index(pse.datasets.corpus_iter(scifact))
    assert sharded.docnos.tolist() == scifact_bm25_index.docnos.tolist()  # corpus order, across the shards
    topics, qrels = scifact.get_topics(), scifact.get_qrels()
    run = pse.BM25().retriever(sharded, num_results=20).transform(topics)
    pool = sdm.build_pool(qrels, [run], all_docnos=sharded.docnos, depth=20, sample=500, seed=0)
    from_shards = pool.index(sharded, tmp_path / "pool-shards")
    from_single = pool.index(scifact_bm25_index, tmp_path / "pool-single")
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(
            getattr(from_shards.postings, name), getattr(from_single.postings, name)
        )
    np.testing.assert_array_equal(from_shards.doclen, from_single.doclen)
    assert from_shards.docnos.tolist() == from_single.docnos.tolist()
    assert from_shards.collection_num_docs == scifact_bm25_index.num_docs
    a = pse.BM25().retriever(from_single, num_results=100).transform(topics)
    _same_run(a, pse.BM25().retriever(from_shards, num_results=100).transform(topics))


def test_ray_engine_without_ray_names_the_extra(built):
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ray'] = None\n"
        "import pyterrier_sparse_eval as pse\n"
        f"pse.ShardedIndex({str(built.path)!r}).retriever(engine='ray')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert 'ImportError: engine="ray" needs Ray: pip install "pyterrier-sparse-eval[ray]"' in done.stderr


def test_last_batch_brings_terms_to_one_shard_only(tmp_path):
    # batches of one document: the last one brings 3,000 new terms to shard 1 only; shard 0 must still know them
    docs = [{"docno": f"d{i:02d}", "toks": {f"a{i % 5}": 1.0, f"b{i}": 2.0}} for i in range(11)]
    docs.append({"docno": "d11", "toks": {f"new{j}": 1.0 + j % 3 for j in range(3000)} | {"a1": 1.0}})
    single = pse.SparseIndex(tmp_path / "single")
    single.indexer(verbose=False, batch_size=1).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)
    sharded.indexer(verbose=False, batch_size=1).index(docs)
    assert [s.num_terms for s in sharded.shards] == [single.num_terms] * 2
    queries = pd.DataFrame(
        {"qid": ["q1", "q2"], "query_toks": [{"a1": 1.0, "new7": 2.0}, {"b3": 1.0, "a3": 0.5}]}
    )
    for idf in (True, False):
        _same_run(single.retriever(idf=idf).transform(queries), sharded.retriever(idf=idf).transform(queries))


def test_docno_in_two_shards_is_refused(tmp_path):
    docs = random_toks_corpus(np.random.default_rng(4), 10, 8)
    docs[5]["docno"] = docs[4]["docno"]  # shards 0 and 1
    with pytest.raises(ValueError, match=r"Duplicate docnos in the corpus, e.g. \['d0004'\]"):
        pse.ShardedIndex(tmp_path / "x", num_shards=2).indexer(verbose=False).index(docs)
    assert os.listdir(tmp_path) == []


def test_retriever_of_a_rebuilt_index_says_so(built):
    retriever = built.retriever(num_results=5)
    queries = pd.DataFrame({"qid": ["q"], "query_toks": [{"t1": 1.0}]})
    assert len(retriever.transform(queries))
    pse.ShardedIndex(built.path, num_shards=3).indexer(mode="overwrite", verbose=False).index(
        random_toks_corpus(np.random.default_rng(8), 50, 30)
    )
    built.reload()
    with pytest.raises(
        pse.StaleIndexError, match="rebuilt after this retriever was created; create a new retriever"
    ):
        retriever.transform(queries)


def test_a_touched_or_copied_back_manifest_is_the_same_build(built):
    """As a single index's: a touch (or a copy of the same build without its times) had made every retriever of a
    sharded index stale, "rebuilt (or moved or removed)"."""
    import shutil

    retriever = built.retriever(num_results=5)
    queries = pd.DataFrame({"qid": ["q"], "query_toks": [{"t1": 1.0}]})
    before = retriever.transform(queries)
    meta = built.path / "pt_meta.json"
    os.utime(meta, ns=(meta.stat().st_atime_ns, meta.stat().st_mtime_ns + 10**9))
    pd.testing.assert_frame_equal(retriever.transform(queries), before)
    shutil.copyfile(meta, built.path / "copy.json")
    os.replace(built.path / "copy.json", meta)  # another file, the same build
    pd.testing.assert_frame_equal(retriever.transform(queries), before)
    meta.write_text(meta.read_text().replace(built.build_id, "0" * len(built.build_id)))
    with pytest.raises(pse.StaleIndexError, match="was rebuilt"):
        retriever.transform(queries)


@pytest.mark.parametrize("arrow", [False, True], ids=["object", "arrow"])
@pytest.mark.parametrize("ties", ["lucene", "trec_eval"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_merge_orders_as_a_plain_sort(ties, arrow, dtype):
    """The merge (docnos compared only among equal scores) against Python's sort of every row by query, score
    descending, then docno (code point order; ascending for Lucene, descending for trec_eval); the shards' float32
    scores and wider ones."""
    from pyterrier_sparse_eval._docnos import merge_top_k as _merge

    rng = np.random.default_rng(11)
    n = 3000
    row = rng.integers(0, 20, n)
    # many ties, within and across queries; negative scores, and -0.0 tied with 0.0
    score = (rng.integers(-15, 40, n) / 3).astype(dtype)
    score[rng.random(n) < 0.05] = -0.0
    # a docno in several rows (of other queries, and of one query: equal rows keep their order, as sorted() does)
    docno = np.array([f"d{x}" + "é" * int(x % 3) for x in rng.integers(0, n // 4, n)], dtype=object)
    if arrow:  # the kind concat_docnos gives where pandas' strings are Arrow's
        import pyarrow as pa

        docnos = pa.array(docno.tolist(), type=pa.large_string())
    for k in (1, 7, 150, 1000):
        got = _merge(row, docnos if arrow else docno, score, k, ties)
        sign = 1 if ties == "lucene" else -1
        keyed = sorted(
            range(n),
            key=lambda i: (row[i], -float(score[i]), [sign * ord(c) for c in docno[i]] + [sign * -1]),
        )
        taken: dict[int, int] = {}
        expected = []
        for i in keyed:  # each query's first k
            if taken.get(row[i], 0) < k:
                expected.append(i)
                taken[row[i]] = taken.get(row[i], 0) + 1
        assert got.tolist() == expected


def test_a_local_sharded_index_is_readable_by_others_as_a_single_index_is(tmp_path):
    """Each shard's folder was a private temporary folder (0o700), renamed into place: other users (a Ray worker
    running as another user) could not read the shards of a local build, where a Ray build's were 0o755."""
    docs = [{"docno": f"d{i}", "text": f"alpha w{i}"} for i in range(20)]
    index = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    pse.BM25().indexer(index, verbose=False).index(docs)
    single = pse.SparseIndex(tmp_path / "single")
    pse.BM25().indexer(single, verbose=False).index(docs)
    folders = [index.path, *(p for p in index.path.rglob("*") if p.is_dir())]
    assert len(folders) == 4
    assert (
        {oct(p.stat().st_mode & 0o777) for p in folders}
        == {oct(single.path.stat().st_mode & 0o777)}
        == {"0o755"}
    )


def test_docnos_sort_by_code_point_whatever_their_lengths():
    """code_point_order, numpy's fixed-width sort or (one docno far longer than the others) Python's: both give
    Python's stable sort of the docnos (code point order: an astral character after U+FFFF, unlike UTF-16), as str
    and as UTF-8 bytes."""
    from pyterrier_sparse_eval._docnos import code_point_order

    rng = np.random.default_rng(5)
    alphabet = ["a", "b", "é", "\uffff", "\U0001f600", "\U00010000", "z"]
    short = ["".join(rng.choice(alphabet, size=int(rng.integers(1, 6)))) for _ in range(3000)]
    for docnos in (short, [*short[:1500], "a" * 5000, *short[1500:]]):  # the second takes Python's sort
        expected = sorted(range(len(docnos)), key=docnos.__getitem__)
        assert code_point_order(docnos).tolist() == expected
        assert code_point_order(np.array(docnos, dtype=object)).tolist() == expected
        assert code_point_order([d.encode() for d in docnos]).tolist() == expected
    assert code_point_order([]).tolist() == []


def test_one_long_docno_does_not_multiply_the_merges_memory():
    """50,000 tied rows with short docnos and one of 2,000 characters: numpy's fixed-width strings would pad each
    to 8 kB (about 400 MB at the merge's peak, 6 MB with short docnos alone); measured by tracemalloc, which
    counts numpy's buffers."""
    import tracemalloc

    from pyterrier_sparse_eval._docnos import merge_top_k as _merge

    n = 50_000
    docno = np.array([f"d{i}" for i in range(n - 1)] + ["u" * 2000], dtype=object)
    row, score = np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.float32)
    tracemalloc.start()
    try:
        got = _merge(row, docno, score, n, "lucene")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(docno[got].tolist()) == docno[got].tolist() and len(got) == n
    assert peak < 50e6, peak


_MANY_SHARDS = """
import resource, sys
import pandas as pd
import pyterrier_sparse_eval as pse
path, soft, hard, build = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "build"
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
docs = [{"docno": f"d{i}", "text": f"alpha beta w{i}"} for i in range(600)]
try:
    if build:
        pse.BM25().indexer(pse.ShardedIndex(path, 300), verbose=False).index(docs)
    topics = pd.DataFrame({"qid": ["1"], "query": ["w3"]})
    opened = [pse.BM25().retriever(pse.ShardedIndex(path)) for _ in range(2 if sys.argv[4] == "twice" else 1)]
    print(*[r.transform(topics).docno.tolist() for r in opened])  # each keeps its shards' files open
except OSError as e:
    print(e)
"""


def test_many_shards_raise_the_open_files_limit_or_name_it(tmp_path):
    """300 shards hold 1,500 files open while built and as many memory-mapped: beyond the soft limit of many systems
    (1024), which is raised toward the hard one; a hard limit too low is refused before any work, naming the fix."""
    import resource
    import subprocess
    import sys

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 2000:
        pytest.skip(f"the hard limit on open files here is {hard}")
    script = tmp_path / "many.py"
    script.write_text(_MANY_SHARDS)

    def run(path, soft, hard, action="build"):
        cmd = [sys.executable, str(script), str(path), str(soft), str(hard), action]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout.strip()

    assert run(tmp_path / "index", 1024, 2000) == "['d3']"
    refused = run(tmp_path / "refused", 1024, 1024)
    assert "A build of 300 shards holds 1500 files open at once" in refused and "use fewer shards" in refused
    assert sorted(os.listdir(tmp_path)) == ["index", "many.py"]  # nothing left of the refused build
    opened = run(tmp_path / "index", 1024, 1024, "open")
    assert "memory-mapped, holds 1500 files open at once" in opened and "open it with mmap=False" in opened
    if hard == resource.RLIM_INFINITY or hard >= 4000:  # a second index: the files already open count too
        assert run(tmp_path / "index", 1024, 4000, "twice") == "['d3'] ['d3']"


def test_ray_options_without_the_ray_engine_are_refused(tmp_path):
    """They had been ignored: a build meant for a cluster ran here without a word."""
    docs = [{"docno": f"d{i}", "text": f"alpha w{i}"} for i in range(6)]
    with pytest.raises(ValueError, match="ray_address: Ray's options, for engine='ray' only"):
        pse.BM25().indexer(pse.ShardedIndex(tmp_path / "x", 2), ray_address="10.0.0.1:6379")
    with pytest.raises(ValueError, match="num_workers: Ray's options"):
        pse.ShardedIndex(tmp_path / "y", 2).indexer(num_workers=4)
    index = pse.BM25().indexer(pse.ShardedIndex(tmp_path / "z", 2), verbose=False).index(docs)
    with pytest.raises(ValueError, match="ray_address: Ray's options"):
        pse.BM25().retriever(index, ray_address="10.0.0.1:6379")
    with pytest.raises(ValueError, match="ray_address= is the cluster of engine='ray'"):
        pse.run_experiment("irds:vaswani", [pse.systems.parse_system("bm25")], ["AP"], ray_address="h:1")
    with pytest.raises(ValueError, match="num_gpus: Ray's options.*give the model device='cuda'"):
        pse.Splade("unused").indexer(pse.SparseIndex(tmp_path / "w"), num_gpus=1)  # it had encoded on CPUs
    for bad in (-1, "1", float("nan"), float("inf"), True):  # "1" had been a bare TypeError, NaN a late one
        with pytest.raises(ValueError, match=rf"num_gpus must be a number >= 0 \(GPUs .*\), got {bad!r}\."):
            pse.Splade("unused").indexer(pse.SparseIndex(tmp_path / "w"), engine="ray", num_gpus=bad)
    # a single index on Ray: what to build, through the system and the index alike (the index's had been Python's
    # "unexpected keyword argument 'engine'")
    single = pse.BM25().indexer(pse.SparseIndex(tmp_path / "one"), verbose=False).index(docs)
    for make in (lambda: pse.BM25().retriever(single, engine="ray"), lambda: single.retriever(engine="ray")):
        with pytest.raises(
            ValueError, match=r"single SparseIndex: build a ShardedIndex \(pse.ShardedIndex\(path"
        ):
            make()
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['num_result'\]"):
        single.retriever(num_result=10)
    # the defaults, engine="local" and no ray_address, are the single index's own search
    for local in (
        single.retriever(engine="local"),
        pse.BM25().retriever(single, engine="local", ray_address=None),
    ):
        assert isinstance(local, pse.SparseRetriever)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "z"]


_PROMISES = """
import gc, resource
from pyterrier_sparse_eval import files
class Index:  # stands for a ShardedIndex: what holds its shards' files open while it lives
    pass
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 4096))
for _ in range(8):
    index = Index()
    files.allow_open_files(1500, "an index", "open it with mmap=False", holder=index)
    files.allow_open_files(1500, "an index", "open it with mmap=False", holder=index)  # again: the same index
    del index
    gc.collect()
kept = Index()
files.allow_open_files(1500, "an index", "open it with mmap=False", holder=kept)
try:  # with the one kept: 4,500
    files.allow_open_files(3000, "another", "open it with mmap=False", holder=Index())
except OSError as e:
    print(e)
"""


def test_open_files_promised_to_an_index_are_given_back_when_it_goes(tmp_path):
    """The count had only grown: the sixth 150-shard index opened in turn (each dropped after) was refused."""
    import resource
    import subprocess
    import sys

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 4096:
        pytest.skip(f"the hard limit on open files here is {hard}")
    done = subprocess.run([sys.executable, "-c", _PROMISES], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "another holds 3000 files open at once" in done.stdout
