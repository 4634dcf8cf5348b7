"""Audit fixes: SPLADE gives documents and queries without text the empty vector (no postings, never retrieved,
no results), and a sharded index verifies (``ShardedIndex.verify()``, ``sparse-eval check-index``), naming the
damaged shard and file.

SPLADE runs a real (small, randomly initialised) BertForMaskedLM from tests/conftest.py's ``model_dir``."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import random_toks_corpus

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import IndexCorruptError
from pyterrier_sparse_eval._splade import SpladeBatches
from pyterrier_sparse_eval.cli import main

WORDS = "retrieval sparse dense vector query document index term weight model learned lexical".split()


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 10)))) for _ in range(n)]


def _splade(model_dir, batch_size: int = 4) -> pse.Splade:
    pytest.importorskip("torch")
    return pse.Splade(model_dir, batch_size=batch_size, query_max_length=12, doc_max_length=32, verbose=False)


# (docno, text) of documents without text: each must be indexed with no postings
NO_TEXT = {"none": None, "nan": float("nan"), "empty": "", "blank": "  \t\n ", "zwsp": "\u200b"}


def _corpus() -> list[dict]:
    docs = [{"docno": f"d{i:02d}", "text": t} for i, t in enumerate(_texts(14))]
    for j, (docno, text) in enumerate(NO_TEXT.items()):
        docs.insert(2 + 3 * j, {"docno": docno, "text": text})  # spread over the batches
    docs.insert(5, {"docno": "missing"})  # no text field at all
    return docs


def _shard_columns(index: pse.SparseIndex) -> dict[str, int]:
    """Each document's number of postings."""
    counts = np.bincount(np.asarray(index.postings.indices), minlength=index.num_docs)
    return dict(zip(index.docnos.tolist(), counts.tolist()))


# ---------------------------------------------------------------------------------------------------------
# A. SPLADE: no text, no vector
# ---------------------------------------------------------------------------------------------------------
def test_texts_without_content_encode_empty_and_the_others_are_unchanged(model_dir):
    splade = _splade(model_dir, batch_size=3)
    texts = _texts(7, seed=1)
    mixed = [texts[0], None, texts[1], float("nan"), "", texts[2], "   ", texts[3], "\u200b", *texts[4:]]
    got = splade.encode(mixed, max_length=32)
    assert [bool(v) for v in got] == [isinstance(t, str) and t in texts for t in mixed]
    # a non-empty text's vector is what it is alone (float32 rounding of other batch shapes aside)
    for text, vec in zip(mixed, got):
        if vec:
            alone = splade.encode([text], max_length=32)[0]
            assert set(vec) == set(alone) and len(vec) > 0
            assert max(abs(vec[k] - alone[k]) for k in vec) <= 1e-5
    # only empty texts in a call (a batch of nothing to encode): empty vectors, in order
    assert splade.encode([None, "", " "], max_length=32) == [{}, {}, {}]


def test_documents_without_text_have_no_postings_and_are_never_retrieved(model_dir, tmp_path):
    splade = _splade(model_dir)
    docs = _corpus()
    index = pse.SparseIndex(tmp_path / "idx")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        splade.indexer(index, batch_size=8).index(docs)
    # counted: missing, None, NaN, "", blank, and the zero-width space, which is not blank yet encodes empty
    assert any("6 of 20 documents have no text" in str(w.message) for w in caught), [
        str(w.message) for w in caught
    ]
    postings = _shard_columns(index)
    empty = set(NO_TEXT) | {"missing"}
    assert {d for d, n in postings.items() if n == 0} == empty
    assert all(index.doclen[i] == 0 for i, d in enumerate(index.docnos) if d in empty)
    # the stored vectors of the other documents are splade.encode's, exactly
    texts = {d["docno"]: d["text"] for d in docs if d["docno"] not in empty}
    encoded = dict(zip(texts, splade.encode(list(texts.values()), max_length=32)))
    for d, vec in encoded.items():
        assert postings[d] == len(vec) > 0
    # every query (its [CLS] and [SEP] included) against every document: the empty ones never come back
    queries = pd.DataFrame({"qid": [str(i) for i in range(6)], "query": ["the", "a", *_texts(4, seed=2)]})
    for idf in (False, True):
        run = splade.retriever(index, num_results=100, idf=idf).transform(queries)
        assert len(run) > 0 and not set(run["docno"]) & empty


def test_ray_batches_encode_documents_without_text_empty(model_dir):
    """The Ray build's worker function (SpladeBatches) gives the local indexer's vectors: none for no text."""
    splade = _splade(model_dir)
    docs = _corpus()
    docnos, _, _, values, offsets, doclen, missing = SpladeBatches(splade, ("text",))(docs)
    sizes = dict(zip(docnos, np.diff(offsets).tolist()))
    assert missing == 6  # none, nan, empty, blank, missing, and a zero-width space (no token to encode)
    assert {d for d, n in sizes.items() if n == 0} == set(NO_TEXT) | {"missing"}
    assert all(doclen[i] == 0 for i, d in enumerate(docnos) if sizes[d] == 0)
    assert len(values) == sum(sizes.values()) > 0


def test_queries_without_text_get_no_results(model_dir, tmp_path):
    splade = _splade(model_dir)
    index = pse.SparseIndex(tmp_path / "idx")
    splade.indexer(index).index([{"docno": f"d{i}", "text": t} for i, t in enumerate(_texts(30))])
    queries = pd.DataFrame(
        {
            "qid": ["none", "nan", "empty", "blank", "real"],
            "query": [None, float("nan"), "", "  ", "sparse index"],
        }
    )
    encoded = splade.query_encoder().transform(queries)
    assert encoded["query_toks"].tolist()[:4] == [{}, {}, {}, {}]  # not the vectors of "None" or "nan"
    assert encoded["query_toks"].tolist()[4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "4 of 5 queries share no term with the index"
        run = splade.retriever(index, num_results=10).transform(queries)
    assert set(run["qid"]) == {"real"} and len(run) == 10


def test_sharded_splade_index_of_documents_without_text_verifies(model_dir, tmp_path):
    splade = _splade(model_dir)
    index = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        splade.indexer(index, batch_size=8).index(_corpus())
    meta = index.verify()
    counts: dict[str, int] = {}
    for shard in index.shards:
        counts.update(_shard_columns(shard))
    assert {d for d, n in counts.items() if n == 0} == set(NO_TEXT) | {"missing"}
    assert meta["num_postings"] == sum(counts.values())


# ---------------------------------------------------------------------------------------------------------
# B. Verifying a sharded index
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture
def sharded(tmp_path) -> pse.ShardedIndex:
    index = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    index.indexer(verbose=False).index(random_toks_corpus(np.random.default_rng(3), 200, 30))
    return index


def test_intact_sharded_index_verifies_and_check_index_says_so(sharded, capsys):
    meta = sharded.verify()
    assert meta["num_shards"] == 3 and meta["num_docs"] == 200 and meta["build_id"] == sharded.build_id
    assert meta["num_postings"] == sum(s.num_postings for s in sharded.shards) > 0
    capsys.readouterr()
    assert main(["check-index", str(sharded.path)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == (
        f"{sharded.path}: intact: sharded, 3 shards, 200 documents, {meta['num_terms']:,} terms, "
        f"{meta['num_postings']:,} postings, build {sharded.build_id}"
    )
    # a single index still gets its own summary
    single = pse.SparseIndex(sharded.directory / "shard-001")
    assert main(["check-index", str(single.path)]) == 0
    out = capsys.readouterr().out
    assert (
        out
        == f"{single.path}: intact: 67 documents, 30 terms, {single.num_postings:,} postings, build {single.build_id}\n"
    )


def _flip(path):
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # inside the array's values: same size, only the CRC-32 can tell
    path.write_bytes(bytes(data))


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size - 8)


def _other_build(index: pse.ShardedIndex) -> None:
    other = pse.ShardedIndex(index.directory.parent / "other", num_shards=3)
    other.indexer(verbose=False).index(random_toks_corpus(np.random.default_rng(3), 200, 30))
    shutil.rmtree(index.directory / "shard-000")
    shutil.copytree(other.directory / "shard-000", index.directory / "shard-000")


def _edit_manifest(index: pse.ShardedIndex) -> None:
    path = index.directory / "pt_meta.json"
    manifest = json.loads(path.read_text())
    manifest["num_docs"] += 1
    path.write_text(json.dumps(manifest))


# (id, damage, words the error must contain: the shard and the file)
DAMAGES = [
    ("flipped byte", lambda ix: _flip(ix.directory / "shard-001" / "postings.data.npy"),
     ["shard 1 of 3", "shard-001/postings.data.npy", "CRC-32"]),
    ("truncated file", lambda ix: _truncate(ix.directory / "shard-002" / "doclen.npy"),
     ["shard 2 of 3", "shard-002/doclen.npy"]),
    ("stray file in a shard", lambda ix: (ix.directory / "shard-000" / "notes.txt").write_text("x"),
     ["shard 0 of 3", "shard-000/notes.txt"]),
    ("stray file beside the shards", lambda ix: (ix.directory / "notes.txt").write_text("x"),
     ["sharded/notes.txt", "not written by the build"]),
    ("missing shard", lambda ix: shutil.rmtree(ix.directory / "shard-001"), ["shard 1 of 3", "missing"]),
    ("shard of another build", _other_build, ["shard 0 of 3", "not the shard this manifest was built with"]),
    ("edited manifest", _edit_manifest, ["sharded/pt_meta.json", "checksum"]),
]  # fmt: skip


@pytest.mark.parametrize("case", DAMAGES, ids=[c[0] for c in DAMAGES])
def test_damage_to_a_sharded_index_is_reported_naming_the_shard_and_file(case, sharded, capsys):
    _, damage, words = case
    assert sharded.num_docs == 200 and len(sharded.shards) == 3  # opened (and checked) before the damage
    damage(sharded)
    with pytest.raises(IndexCorruptError) as raised:
        sharded.verify()  # reads the disk now, not what the handle opened
    for w in words:
        assert w in str(raised.value), (w, str(raised.value))
    capsys.readouterr()
    assert main(["check-index", str(sharded.path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sparse-eval: check failed: ") and err.count("\n") == 1
    for w in words:
        assert w in err, (w, err)


def test_check_index_on_what_is_not_an_index_or_not_sharded(sharded, tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    assert main(["check-index", str(tmp_path / "notes")]) == 2
    assert "is not a sparse index" in capsys.readouterr().err
    single = sharded.directory / "shard-000"
    with pytest.raises(ValueError, match="is not a sharded index"):
        pse.ShardedIndex(single).verify()
    with pytest.raises(FileNotFoundError, match="No sharded index"):
        pse.ShardedIndex(tmp_path / "nowhere").verify()
