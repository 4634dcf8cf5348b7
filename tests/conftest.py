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


@pytest.fixture(scope="session")
def scifact_bm25_index(tmp_path_factory, scifact):
    import pyterrier_sparse_eval as pse

    index = pse.SparseIndex(tmp_path_factory.mktemp("scifact") / "bm25")
    pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(scifact))
    return index
