"""Shards searched on a real multi-node Ray cluster (a head and a second node on this machine): the merged run
equals the single index's run exactly, survives a killed shard actor, and bad addresses fail clearly."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import needs_data
from helpers import random_toks_corpus

import pyterrier_sparse_eval as pse

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=2)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, include_dashboard=False)
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    yield c
    ray.shutdown()
    c.shutdown()


def _same_run(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert len(a) == len(b) > 0
    for col in ("qid", "docno", "rank"):
        assert a[col].tolist() == b[col].tolist(), col
    np.testing.assert_array_equal(a["score"].to_numpy().view(np.int64), b["score"].to_numpy().view(np.int64))


@needs_data
def test_bm25_on_ray_equals_single_index(cluster, tmp_path, scifact, scifact_bm25_index):
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    pse.BM25().indexer(sharded, verbose=False).index(pse.datasets.corpus_iter(scifact))
    topics = scifact.get_topics()
    single = pse.BM25().retriever(scifact_bm25_index, num_results=1000).transform(topics)
    on_ray = pse.BM25().retriever(sharded, num_results=1000, engine="ray")
    # the actors live on both nodes of the cluster
    # shard i is asked for on alive node i mod 2 (soft affinity: Ray may still place it elsewhere, as it did under
    # load in CI), so the actors live on the cluster's nodes
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert {ray.get(a.node.remote()) for a in on_ray._searchers.actors} <= alive
    _same_run(single, on_ray.transform(topics))
    # a shard actor killed between batches is restarted by Ray, and the run is the same
    victim = on_ray._searchers.actors[1]
    before = ray.get(victim.pid.remote())
    ray.kill(victim, no_restart=False)
    _same_run(single, on_ray.transform(topics))
    assert ray.get(victim.pid.remote()) != before
    on_ray._searchers.close()


@pytest.mark.parametrize("idf", [True, False])
def test_learned_weights_on_ray_equal_single_index(cluster, tmp_path, idf):
    rng = np.random.default_rng(5)
    docs = random_toks_corpus(rng, 500, 50, dups=40, integer=True)
    single = pse.SparseIndex(tmp_path / "single")
    single.indexer(verbose=False, batch_size=100).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)
    sharded.indexer(verbose=False, batch_size=100).index(docs)
    queries = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(30)],
            "query_toks": [
                {f"t{t}": float(w) for t, w in zip(rng.choice(50, 3, replace=False), rng.random(3) + 0.1)}
                for _ in range(30)
            ],
        }
    )
    retriever = sharded.retriever(num_results=50, idf=idf, engine="ray")
    _same_run(single.retriever(num_results=50, idf=idf).transform(queries), retriever.transform(queries))
    retriever._searchers.close()


def test_unreachable_address_is_a_clear_error():
    # in a fresh process: this one is connected to the test cluster
    code = "import pyterrier_sparse_eval._ray as r; r.connect('127.0.0.1:1')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "ConnectionError: Cannot connect to the Ray cluster at '127.0.0.1:1'" in done.stderr


def test_worker_that_cannot_open_its_shard_names_it(cluster, tmp_path):
    from pyterrier_sparse_eval._ray import ShardSearchers

    # a shard path the workers cannot read (on a real cluster: a folder outside the shared filesystem)
    label = f"shard 1 of 2 ({tmp_path / 'missing'})"
    with pytest.raises(
        RuntimeError, match=r"shard 1 of 2 .* cannot be opened on Ray node .* shared filesystem"
    ):
        ShardSearchers([(str(tmp_path / "missing"), "0" * 32, label)], {"num_results": 10})
