"""A pool's files: cutting a pooled index never writes over the index it is cut from, a pool comes back from the
pooled index that keeps it, mistaken arguments get errors naming the fix, and a damaged pooled index in
``sparse-eval sdm``'s cache is rebuilt. Found by a review acting as a new user."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from conftest import bm25_single_and_sharded, needs_data

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import files, sdm

TEXTS = {
    f"d{i}": " ".join(["cat", "mat", "dog", "bird", "fish"][: 1 + i % 5] * (1 + i % 3)) for i in range(40)
}


@pytest.fixture()
def setup(tmp_path):
    bm25, single, sharded = bm25_single_and_sharded(tmp_path, TEXTS)
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["cat mat", "dog fish"]})
    run = bm25.retriever(single, num_results=40, verbose=False).transform(topics)
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["d3", "d7"], "label": [1, 1]})
    pool = sdm.build_pool(qrels, [run], all_docnos=single.docnos, depth=3, sample=10, seed=0)
    return tmp_path, single, sharded, pool


@pytest.mark.parametrize("where", ["itself", "inside", "its parent"])
@pytest.mark.parametrize("kind", ["single", "sharded"])
def test_a_pooled_index_is_never_written_over_the_index_it_is_cut_from(setup, where, kind):
    """mode="overwrite" onto the full index's own folder (or one holding it, or inside it) had replaced the
    full index by its pool: refused, and the full index is left whole."""
    tmp_path, single, sharded, pool = setup
    full = single if kind == "single" else sharded
    path = {"itself": full.path, "inside": os.path.join(full.path, "pooled"), "its parent": tmp_path}[where]
    with pytest.raises(ValueError, match="is, holds or lies in the index .* it is cut from.*another folder"):
        pool.index(full, path, mode="overwrite")
    reopened = pse.SparseIndex(single.path) if kind == "single" else pse.ShardedIndex(sharded.path)
    assert reopened.num_docs == len(TEXTS) and reopened.docnos.tolist() == full.docnos.tolist()
    assert pool.index(full, tmp_path / "pooled").num_docs == pool.size  # elsewhere: as before


def test_a_pool_comes_back_from_the_pooled_index_that_keeps_it(setup):
    tmp_path, single, _, pool = setup
    pooled = pool.index(single, tmp_path / "pooled")
    again = sdm.Pool.load(pooled.path)
    assert again == pool and repr(again) == repr(pool)
    with pytest.raises(ValueError, match="was not cut for a pool"):
        sdm.Pool.load(single.path)  # an index, but no pool in it
    os.makedirs(tmp_path / "notes")
    with pytest.raises(ValueError, match="is a folder but not a pooled index"):
        sdm.Pool.load(tmp_path / "notes")


def test_mistaken_arguments_name_their_fix(setup):
    tmp_path, single, _, pool = setup
    with pytest.raises(ValueError, match=r"is a folder: give the pool's JSON file, e.g. .*pool\.json"):
        pool.save(tmp_path)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    with pytest.raises(TypeError, match="takes the full-corpus index .*not str"):
        pool.index(str(single.path), tmp_path / "pooled")
    with pytest.raises(TypeError, match="dataset= is the collection's id as a str"):
        sdm.build_pool(
            pd.DataFrame({"qid": ["1"], "docno": ["d3"], "label": [1]}),
            [],
            all_docnos=single.docnos,
            depth=0,
            sample=5,
            dataset=object(),
        )
    spec = pool.spec()
    spec["sample"] = list(range(len(spec["sample"])))  # numbers, not docnos
    (tmp_path / "pool.json").write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=r"wrongly typed \['sample'\]"):
        sdm.Pool.load(tmp_path / "pool.json")


def test_a_pool_is_cut_only_from_an_index_of_its_corpus(setup):
    """An index of another version of the corpus that holds every pooled document (here: 5 more documents) is
    refused: SDM would take the pool's N for the index's (it had been accepted)."""
    tmp_path, single, _, pool = setup
    bigger = pse.BM25().indexer(pse.SparseIndex(tmp_path / "bigger"), verbose=False)
    bigger = bigger.index(
        [{"docno": d, "text": t} for d, t in {**TEXTS, **{f"x{i}": "cat" for i in range(5)}}.items()]
    )
    with pytest.raises(ValueError, match=r"cut from a corpus of 40 documents; this index holds 45"):
        pool.index(bigger, tmp_path / "pooled")
    assert not (tmp_path / "pooled").exists()


def test_an_existing_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch):
    """--plots DIR (or --index-dir DIR) on an existing folder: its own write permission is what counts (only its
    parents had been checked, and the whole evaluation ran before a raw errno). Root writes anywhere, so the
    permission is simulated."""
    folder = tmp_path / "readonly"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(files.os, "access", lambda p, mode: False if str(p) == str(folder) else real(p, mode))
    with pytest.raises(ValueError, match=f"--plots {folder}: {folder} is not writable"):
        files.check_destination(folder, option="--plots", folder=True)
    files.check_destination(tmp_path / "other", option="--plots", folder=True)  # a writable parent: fine


@needs_data
def test_a_damaged_pooled_index_in_the_cache_is_rebuilt(tmp_path):
    """As a damaged full index is: sparse-eval sdm had failed on every later run, naming an API argument."""
    options = dict(depth=10, sample=1000, k_values=[10, 100], index_dir=tmp_path, verbose=False)
    first = sdm.three_way("irds:vaswani", ["bm25"], **options)
    (damaged,) = [p for p in tmp_path.glob("vaswani/pool-*/bm25*/postings.data.npy")]
    damaged.unlink()
    with pytest.warns(UserWarning, match=r"Rebuilding .*: it is damaged"):
        again = sdm.three_way("irds:vaswani", ["bm25"], **options)
    assert again.results == first.results
    assert damaged.exists()


@needs_data
def test_a_pooled_index_of_another_pool_in_the_cache_is_rebuilt(tmp_path):
    """An entry holding another pool's documents (copied or restored from elsewhere; here part of the pool) had
    been reused without a word: SDM R@100 0.7199 against 0.6212 (full corpus 0.6186), found by a user's test."""
    options = dict(depth=10, sample=500, k_values=[10, 100], index_dir=tmp_path, verbose=False)
    first = sdm.three_way("irds:vaswani", ["bm25"], **options)
    (entry,) = tmp_path.glob("vaswani/pool-*/bm25*")
    pool = sdm.Pool.load(entry)
    full = pse.open_index(next(p for p in tmp_path.glob("vaswani/bm25*") if p.is_dir()))
    part = sdm.Pool(
        num_docs=pool.num_docs,
        relevant=pool.relevant,
        distractors=pool.distractors,
        sample=pool.sample[:100],
        depth=pool.depth,
        seed=99,
    )
    part.index(full, entry, mode="overwrite")
    with pytest.warns(
        UserWarning, match=rf"Rebuilding .*: it holds the documents of another pool \(#{part.fingerprint}\)"
    ):
        again = sdm.three_way("irds:vaswani", ["bm25"], **options)
    assert again.results == first.results
    assert sdm.Pool.load(entry) == pool


def test_a_pool_built_from_runs_named_by_numbers_loads_again(setup):
    """build_pool({1: run}) keeps the runs' names as str, so its saved pool loads (a pool with non-str names had
    been written but refused when read)."""
    tmp_path, single, _, pool = setup
    run = (
        pse.BM25()
        .retriever(single, num_results=40, verbose=False)
        .transform(pd.DataFrame({"qid": ["1", "2"], "query": ["cat mat", "dog fish"]}))
    )
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["d3", "d7"], "label": [1, 1]})
    named = sdm.build_pool(qrels, {1: run}, all_docnos=single.docnos, depth=3, sample=10, seed=0)
    named.save(tmp_path / "named.json")
    assert sdm.Pool.load(tmp_path / "named.json") == named and named.pool_runs == ("1",)
    assert sdm.Pool.load(pool.index(single, tmp_path / "pooled")) == pool  # the index object itself too


def test_a_pool_saved_with_number_names_loads_as_built_now(setup):
    """A pool file whose run names are numbers (as 7cf39d7 saved {1: run}) loads with them as str, equal to the
    pool built now; a name that is not a scalar is refused."""
    tmp_path, _, _, pool = setup
    loaded = sdm.Pool.from_spec(pool.spec() | {"pool_runs": [0]})
    assert loaded.pool_runs == ("0",) and loaded == sdm.Pool.from_spec(pool.spec() | {"pool_runs": ["0"]})
    with pytest.raises(ValueError, match=r"wrongly typed \['pool_runs'\]"):
        sdm.Pool.from_spec(pool.spec() | {"pool_runs": [[1, 2]]})


def test_the_pool_of_a_pooled_index_is_read_with_the_index_seal(setup):
    """Pool.load(folder) had trusted pt_meta.json's pool without the index's seal (an edited num_docs loaded as
    the pool, while the index itself was refused), and called a cut one "not a pool written by Pool.save"."""
    tmp_path, single, _, pool = setup
    folder = tmp_path / "pooled"
    pool.index(single, folder)
    assert sdm.Pool.load(folder) == pool
    meta = json.loads((folder / "pt_meta.json").read_text())
    meta["pool"]["num_docs"] = 10**6
    (folder / "pt_meta.json").write_text(json.dumps(meta))
    with pytest.raises(pse.IndexCorruptError, match="pt_meta.json"):
        sdm.Pool.load(folder)
    os.truncate(folder / "pt_meta.json", 200)
    with pytest.raises(pse.IndexCorruptError, match=r"pt_meta\.json: not valid JSON .*build it again"):
        sdm.Pool.load(folder)
