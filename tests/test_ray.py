"""Indexes built and shards searched on a real multi-node Ray cluster (a head and a second node on this machine):
the index equals a local build's file for file, the merged run equals the single index's run exactly, both
survive killed workers, a removed node and a killed shard actor, and bad input and addresses fail clearly."""

from __future__ import annotations

import filecmp
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pyterrier as pt
import pytest
from conftest import needs_data
from helpers import random_queries, random_toks_corpus, search_while, slow_sharded_search
from ir_measures import AP, R, nDCG

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.console import INPUT_ERRORS, ClusterSetupError
from pyterrier_sparse_eval.datasets import FieldError

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


def _same_index(a: Path, b: Path) -> None:
    """Two builds wrote the same index: every file byte for byte, but the metadata (build ids and times)."""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    differ = [f for f in files if not filecmp.cmp(a / f, b / f, shallow=False)]
    assert differ and all(f.name == "pt_meta.json" for f in differ), differ  # build ids always differ


@needs_data
def test_bm25_built_and_searched_on_ray_equals_single_index(cluster, tmp_path, scifact, scifact_bm25_index):
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    pse.BM25().indexer(sharded, verbose=False, engine="ray", batch_size=1000).index(
        pse.datasets.corpus_iter(scifact)
    )
    assert sharded.meta["built"]["engine"] == "ray"
    local = pse.ShardedIndex(tmp_path / "local", num_shards=3)
    pse.BM25().indexer(local, verbose=False, batch_size=1000).index(pse.datasets.corpus_iter(scifact))
    _same_index(local.path, sharded.path)
    topics = scifact.get_topics()
    single = pse.BM25().retriever(scifact_bm25_index, num_results=1000)
    on_ray = pse.BM25().retriever(sharded, num_results=1000, engine="ray")
    # shard i lives on alive node i mod 2 (pinned: a soft affinity, a hint, had put every shard on one node)
    alive = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
    assert [ray.get(a.node.remote()) for a in on_ray._searchers.actors] == [alive[0], alive[1], alive[0]]
    expected = single.transform(topics)
    _same_run(expected, on_ray.transform(topics))
    qrels = scifact.get_qrels()
    measures = [nDCG @ 10, R @ 100, AP]
    table = pt.Experiment([single, on_ray], topics, qrels, measures, names=["single", "ray"])
    assert table.iloc[0, 1:].tolist() == table.iloc[1, 1:].tolist()
    # a shard actor killed between batches is restarted by Ray, and the run is the same
    victim = on_ray._searchers.actors[1]
    before = ray.get(victim.pid.remote())
    ray.kill(victim, no_restart=False)
    _same_run(expected, on_ray.transform(topics))
    assert ray.get(victim.pid.remote()) != before
    # it pickles, as a local one does (a pipeline copied, cached): it had held the ray module ("cannot pickle
    # 'module' object"); the copy searches through the same actors
    import pickle

    _same_run(expected, pickle.loads(pickle.dumps(on_ray)).transform(topics))
    on_ray._searchers.close()


@pytest.mark.parametrize("idf", [True, False])
def test_learned_weights_built_and_searched_on_ray_equal_single_index(cluster, tmp_path, idf):
    rng = np.random.default_rng(5)
    docs = random_toks_corpus(rng, 500, 50, dups=40, integer=True)
    single = pse.SparseIndex(tmp_path / "single")
    single.indexer(verbose=False, batch_size=100).index(docs)
    single_on_ray = pse.SparseIndex(tmp_path / "single-ray")  # encoded on Ray, one index
    single_on_ray.indexer(verbose=False, batch_size=100, engine="ray").index(docs)
    _same_index(single.path, single_on_ray.path)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)
    sharded.indexer(verbose=False, batch_size=100, engine="ray", num_workers=2).index(docs)
    queries = random_queries(rng, 30, 50)
    retriever = sharded.retriever(num_results=50, idf=idf, engine="ray")
    _same_run(single.retriever(num_results=50, idf=idf).transform(queries), retriever.transform(queries))
    retriever._searchers.close()


def test_workers_running_other_code_than_the_driver_are_refused(cluster, tmp_path, monkeypatch):
    """A node with another install of the package (an older version, another checkout) had built a different
    index without a word; each worker now compares its package with the driver's before any work."""
    from pyterrier_sparse_eval import _ray

    docs = random_toks_corpus(np.random.default_rng(3), 50, 10, integer=True)
    local = pse.ShardedIndex(tmp_path / "local", num_shards=2)
    local.indexer(verbose=False, batch_size=25).index(docs)
    monkeypatch.setattr(_ray, "package_code", lambda: ("0.0.1", "0123456789abcdef"))  # the driver's, as sent
    # an environment problem (the command line's exit 2), not a bug (it had said "internal error ... report it")
    with pytest.raises(
        ClusterSetupError, match=r"runs pyterrier-sparse-eval .* not the driver's 0.0.1 .*same version"
    ):
        pse.ShardedIndex(tmp_path / "x2", num_shards=2).indexer(
            verbose=False, batch_size=25, engine="ray"
        ).index(docs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local"]
    with pytest.raises(ClusterSetupError, match="not the driver's 0.0.1"):
        local.retriever(engine="ray")
    with pytest.raises(ValueError, match="num_workers must be a whole number >= 1, got 1.5"):
        pse.ShardedIndex(tmp_path / "w", num_shards=2).indexer(
            verbose=False, engine="ray", num_workers=1.5
        ).index(docs)
    port = cluster.address.rpartition(":")[2]
    assert _ray.connect(f"127.0.0.1:{port}") is ray  # the cluster this process is connected to, by loopback
    # another cluster's address while connected: said so, and not as a connection error (it may be reachable)
    with pytest.raises(
        RuntimeError, match="already connected to the Ray cluster at .*ray.shutdown"
    ) as caught:
        _ray.connect("127.0.0.1:1")
    assert not isinstance(caught.value, ConnectionError)


def test_a_cluster_set_up_wrong_is_an_environment_error_on_any_worker():
    """A worker of an older version says "not the driver's" with a plain RuntimeError: the driver names it a
    ClusterSetupError too, which the command line reports as bad input (exit 2), not as a bug (exit 3)."""
    from pyterrier_sparse_eval import _ray

    class Failed(Exception):  # Ray's RayTaskError carries the task's own exception as .cause
        cause = RuntimeError(
            "Ray node n runs pyterrier-sparse-eval 0.1 (...), not the driver's 0.2 (...): install"
        )

    error = _ray.task_error(Failed(), "A batch could not be encoded")
    assert isinstance(error, ClusterSetupError) and "not the driver's 0.2" in str(error)
    assert isinstance(error, INPUT_ERRORS)
    Failed.cause = RuntimeError("a bug in the encoder")  # any other error stays itself
    assert type(_ray.task_error(Failed(), "x")) is RuntimeError


def test_a_retriever_used_after_ray_shutdown_says_to_make_it_again(cluster, tmp_path, monkeypatch):
    """After ray.shutdown(), ray.put had started or joined whichever Ray instance was newest on the machine (not the
    retriever's), then failed with Ray's bare "Can't find actor"."""
    docs = random_toks_corpus(np.random.default_rng(5), 40, 30, integer=True)
    index = pse.ShardedIndex(tmp_path / "x2", num_shards=2)
    index.indexer(verbose=False).index(docs)
    retriever = index.retriever(num_results=3, engine="ray")
    queries = random_queries(np.random.default_rng(6), 2, 30, 8)
    assert len(retriever.transform(queries))
    # as after ray.shutdown(), without disconnecting the other tests' cluster
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    with pytest.raises(ClusterSetupError, match=r"ray.shutdown\(\)\).*make the retriever again"):
        retriever.transform(queries)
    monkeypatch.undo()
    retriever._searchers.close()


def test_the_shard_actors_open_their_shards_as_the_index_was_opened(cluster, tmp_path):
    """The actors had opened each shard with the default checks: a sharded index opened with checks="structure"
    (which skips the CRC-32s) searched locally and failed on Ray, its damage blamed on a shared filesystem."""
    docs = random_toks_corpus(np.random.default_rng(9), 60, 20, integer=True)
    pse.ShardedIndex(tmp_path / "x", num_shards=2).indexer(verbose=False).index(docs)
    data = next((tmp_path / "x").glob("*1/postings.data.npy"))
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 0x01  # the last stored weight's low bit: the same size, another CRC-32
    data.write_bytes(bytes(raw))
    index = pse.ShardedIndex(tmp_path / "x", checks="structure")
    queries = random_queries(np.random.default_rng(10), 5, 20, 4)
    retriever = index.retriever(num_results=10, engine="ray")
    try:
        _same_run(index.retriever(num_results=10).transform(queries), retriever.transform(queries))
    finally:
        retriever._searchers.close()
    with pytest.raises(pse.IndexCorruptError, match="CRC-32"):
        pse.ShardedIndex(tmp_path / "x").retriever(num_results=10, engine="ray")


def test_a_relative_index_path_is_built_and_searched_on_ray(cluster, tmp_path, monkeypatch):
    """The README's paths are relative ("indexes/scifact-x3", the command line's --index-dir indexes): Ray's
    workers run in another directory, and both the build and the search had failed, blaming the filesystem."""
    rng = np.random.default_rng(7)
    docs = random_toks_corpus(rng, 200, 30, integer=True)
    monkeypatch.chdir(tmp_path)
    on_ray = pse.ShardedIndex("indexes/x2", num_shards=2)
    on_ray.indexer(verbose=False, batch_size=50, engine="ray").index(docs)
    local = pse.ShardedIndex("indexes/local", num_shards=2)
    local.indexer(verbose=False, batch_size=50).index(docs)
    _same_index(tmp_path / "indexes" / "local", tmp_path / "indexes" / "x2")
    queries = random_queries(rng, 20, 30)
    retriever = pse.ShardedIndex("indexes/local").retriever(num_results=20, engine="ray")
    _same_run(local.retriever(num_results=20).transform(queries), retriever.transform(queries))
    retriever._searchers.close()


@pytest.mark.parametrize("idf", [False, True])
def test_splade_built_and_searched_on_ray_equals_single_index(cluster, model_dir, tmp_path, idf):
    splade = pse.Splade(model_dir, batch_size=8, query_max_length=12, doc_max_length=32, verbose=False)
    docs = [
        {"docno": f"d{i}", "text": f"text {i} about {i % 7} and {i % 13} things " * (1 + i % 3)}
        for i in range(90)
    ]
    single = pse.SparseIndex(tmp_path / "single")
    splade.indexer(single, batch_size=16).index(docs)
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=3)
    splade.indexer(sharded, batch_size=16, engine="ray").index(docs)
    local = pse.ShardedIndex(tmp_path / "local", num_shards=3)
    splade.indexer(local, batch_size=16).index(docs)
    _same_index(local.path, sharded.path)  # the workers' vectors are the driver's
    topics = pd.DataFrame({"qid": ["a", "b", "c"], "query": ["text seven", "about 3 things", "and 12"]})
    retriever = splade.retriever(sharded, num_results=50, idf=idf, engine="ray")
    _same_run(
        splade.retriever(single, num_results=50, idf=idf).transform(topics), retriever.transform(topics)
    )


def test_a_shard_actor_killed_while_it_searches_a_batch_changes_nothing(cluster, tmp_path):
    """The process of a shard actor is SIGKILLed while it searches (its title is ray::_Searcher.search): Ray
    restarts the actor and sends the batch again, and the run is the single index's."""
    queries, expected, retriever = slow_sharded_search(tmp_path, 20_000, 2, 100, 5000)

    def searching() -> psutil.Process | None:
        for proc in psutil.process_iter(["pid", "cmdline"]):
            if any("ray::_Searcher.search" in part for part in (proc.info["cmdline"] or [])):
                return proc
        return None

    got, killed = search_while(
        retriever, queries, searching, lambda proc: proc.send_signal(signal.SIGKILL), 120
    )
    assert killed, "no shard actor was caught searching"
    _same_run(expected, got)
    retriever._searchers.close()


def test_a_node_removed_between_searches_moves_its_shards_and_changes_nothing(cluster, tmp_path):
    """Shards pinned to their nodes (shard i on alive node i mod n): a node removed between two searches has its
    shards' actors started afresh on the alive nodes, and the run is the same."""
    docs = [{"docno": f"d{i}", "text": f"alpha w{i % 7} w{i % 11} w{i}"} for i in range(300)]
    sharded = pse.BM25().indexer(pse.ShardedIndex(tmp_path / "s", 3), verbose=False).index(docs)
    queries = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["alpha w1", "w3 w5 w2", "w10 w20"]})
    expected = pse.BM25().retriever(sharded, num_results=20).transform(queries)
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        retriever = pse.BM25().retriever(sharded, num_results=20, engine="ray")
        alive = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
        placed = [ray.get(a.node.remote()) for a in retriever._searchers.actors]
        assert placed == alive and extra.node_id in placed
        _same_run(expected, retriever.transform(queries))
        cluster.remove_node(extra)
        _same_run(expected, retriever.transform(queries))
        moved = [ray.get(a.node.remote()) for a in retriever._searchers.actors]
        assert extra.node_id not in moved and moved[placed.index(extra.node_id)] in alive
        retriever._searchers.close()
    finally:
        if any(n["NodeID"] == extra.node_id and n["Alive"] for n in ray.nodes()):
            cluster.remove_node(extra)


def _corpus(n: int) -> list[dict[str, str]]:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(3000)]
    return [{"docno": f"doc-{i}", "text": " ".join(rng.choice(words, 60 + i % 40, p=ZIPF))} for i in range(n)]


ZIPF = 1 / np.arange(1, 3001) / (1 / np.arange(1, 3001)).sum()


def _killing(docs: list[dict[str, str]], at: int, kill: Any) -> Iterator[dict[str, str]]:
    """The documents, calling ``kill()`` once the first ``at`` have been handed out (batches are in flight)."""
    for i, doc in enumerate(docs):
        if i == at:
            kill()
        yield doc


def _kill_an_encoding_worker() -> int:
    """SIGKILL a Ray worker process while it encodes a batch (its title is ray::_encode); its pid."""
    deadline = time.time() + 60
    while time.time() < deadline:
        for p in psutil.process_iter(["pid", "cmdline"]):
            if any("ray::_encode" in part for part in (p.info["cmdline"] or [])):
                p.send_signal(signal.SIGKILL)
                return int(p.info["pid"])
        time.sleep(0.005)
    raise AssertionError("no encoding worker was found busy")


def test_a_worker_killed_or_a_node_removed_during_the_build_changes_nothing(cluster, tmp_path):
    docs = _corpus(6000)
    reference = pse.ShardedIndex(tmp_path / "reference", num_shards=2)
    pse.BM25().indexer(reference, verbose=False, batch_size=500).index(docs)
    # a worker process killed while it encodes a batch: Ray runs the task again
    killed: list[int] = []
    after_kill = pse.ShardedIndex(tmp_path / "killed", num_shards=2)
    pse.BM25().indexer(after_kill, verbose=False, batch_size=500, engine="ray").index(
        _killing(docs, 2000, lambda: killed.append(_kill_an_encoding_worker()))
    )
    assert killed and not psutil.pid_exists(killed[0])
    _same_index(reference.path, after_kill.path)
    # a node removed from the cluster while batches are in flight: its tasks run again on the other nodes
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    nodes_before = len([n for n in ray.nodes() if n["Alive"]])
    after_removal = pse.ShardedIndex(tmp_path / "removed", num_shards=2)
    pse.BM25().indexer(after_removal, verbose=False, batch_size=500, engine="ray").index(
        _killing(docs, 2000, lambda: cluster.remove_node(extra))
    )
    assert len([n for n in ray.nodes() if n["Alive"]]) == nodes_before - 1
    _same_index(reference.path, after_removal.path)


def test_a_shard_finisher_that_dies_is_run_again_and_leaves_nothing_behind(cluster, tmp_path):
    marker = tmp_path / "died-once"

    class DiesOnce(pse.BM25):  # a local class: sent to the workers by value
        def weights(self, tf, dl, stats):
            # the first shard finisher to weigh postings dies, as a killed process does
            if not marker.exists():
                marker.touch()
                os._exit(1)
            return super().weights(tf, dl, stats)

    _three_shards_on_ray_equal_local(DiesOnce(), tmp_path)  # no folder of the dead attempt either
    assert marker.exists()
    assert sorted(os.listdir(tmp_path)) == ["died-once", "index", "reference"]


def _three_shards_on_ray_equal_local(bm25: pse.BM25, tmp_path: Path) -> None:
    """``bm25`` builds 3 shards of 1,500 documents on Ray in ``tmp_path / "index"``: the files of a local build."""
    docs = _corpus(1500)
    reference = pse.ShardedIndex(tmp_path / "reference", num_shards=3)
    pse.BM25().indexer(reference, verbose=False, batch_size=500).index(docs)
    index = pse.ShardedIndex(tmp_path / "index", num_shards=3)
    bm25.indexer(index, verbose=False, batch_size=500, engine="ray").index(docs)
    _same_index(reference.path, index.path)


def test_each_shards_spill_is_removed_as_its_finisher_returns(cluster, tmp_path):
    # One shard finisher waits until the other shards' spills are gone from disk, and notes whether they went:
    # a build that removed every spill only after the last shard had kept all of them (and the whole index)
    # on disk at once.
    waiter, saw = tmp_path / "waiter", tmp_path / "saw"

    def spills() -> int:
        return len(list(tmp_path.rglob("spill.terms")))

    class WaitsForTheOthers(pse.BM25):  # a local class: sent to the workers by value
        def weights(self, tf, dl, stats):
            try:
                os.close(os.open(waiter, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return super().weights(tf, dl, stats)
            deadline = time.time() + 60
            while spills() > 1 and time.time() < deadline:
                time.sleep(0.05)
            saw.write_text(str(spills()))  # 1: only its own spill was left
            return super().weights(tf, dl, stats)

    _three_shards_on_ray_equal_local(WaitsForTheOthers(), tmp_path)
    assert saw.read_text() == "1"
    assert spills() == 0


def _one_finisher_fails(marks: Path, running: int, others_take: float) -> pse.BM25:
    """A BM25 whose first shard finisher to weigh postings fails once ``running`` finishers have started (each
    notes ``marks / "started-PID"``); the others take ``others_take`` seconds more, then note that they ended
    (``finished-PID``)."""

    class OneFails(pse.BM25):  # a local class: sent to the workers by value
        def weights(self, tf, dl, stats):
            me = os.getpid()
            if not (marks / f"started-{me}").exists():
                (marks / f"started-{me}").touch()
                deadline = time.time() + 60
                while len(list(marks.glob("started-*"))) < running and time.time() < deadline:
                    time.sleep(0.02)
                try:
                    os.close(os.open(marks / "failer", os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    time.sleep(others_take)  # still running when the failure reaches the driver
                    (marks / f"finished-{me}").touch()
                else:
                    raise RuntimeError("this shard's weights failed")
            return super().weights(tf, dl, stats)

    return OneFails()


def test_a_failing_finisher_lets_the_others_running_end_and_leaves_nothing(cluster, tmp_path):
    # Three finishers run at once on the cluster's three CPUs; the first to weigh postings fails once the other
    # two are running. They are let end (a cancel as Ray hands a task to a worker can abort the driver inside
    # Ray), so each notes that it finished, the driver saying that it waits for them; the build's error is the
    # failing finisher's, and nothing is left.
    marks = tmp_path / "marks"
    marks.mkdir()

    def count(prefix: str) -> int:
        return len(list(marks.glob(prefix + "-*")))

    index = pse.ShardedIndex(tmp_path / "index", num_shards=3)
    waiting = pytest.warns(UserWarning, match="waiting for the 2 shard finishers still running")
    with pytest.raises(RuntimeError, match="this shard's weights failed"), waiting:
        _one_finisher_fails(marks, 3, 1.0).indexer(index, verbose=False, batch_size=500, engine="ray").index(
            _corpus(1500)
        )
    assert count("started") == 3
    assert count("finished") == 2
    assert sorted(os.listdir(tmp_path)) == ["marks"]


def test_a_failing_batch_lets_the_batches_running_end(cluster, tmp_path):
    # The encoding tasks in flight when a batch fails are left to end (cancelling a task as its state changes can
    # abort the driver inside Ray): the first batch fails once two others run, and those two note that they
    # ended; the build's error is the batch's, and nothing is left.
    marks, driver = tmp_path / "marks", os.getpid()
    marks.mkdir()

    def count(prefix: str) -> int:
        return len(list(marks.glob(prefix + "-*")))

    class Toks(dict):  # a local class: sent to the workers by value; flatten_toks iterates it once, there
        def __iter__(self):
            if os.getpid() != driver:
                me = uuid.uuid4().hex
                (marks / f"started-{me}").touch()
                deadline = time.time() + 60
                while count("started") < 3 and time.time() < deadline:
                    time.sleep(0.02)
                if self.first:
                    raise ValueError("this batch failed")
                time.sleep(2.0)  # still running when the failure reaches the driver
                (marks / f"finished-{me}").touch()
            return super().__iter__()

    docs = [{"docno": f"d{i}", "toks": Toks(a=1.0)} for i in range(6)]
    for i, doc in enumerate(docs):
        doc["toks"].first = i == 0
    index = pse.ShardedIndex(tmp_path / "index", num_shards=2)
    with pytest.raises(ValueError, match="this batch failed"):
        index.indexer(verbose=False, batch_size=1, engine="ray").index(docs)
    deadline = time.time() + 60
    while count("finished") < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert count("finished") >= 2
    assert sorted(os.listdir(tmp_path)) == ["marks"]


def _sigterm_in_a_c_call() -> SystemError:
    """SIGTERM's Terminated as it reaches Python when its handler raised inside a C call that returned a result."""
    from pyterrier_sparse_eval.console import Terminated

    error = SystemError("<built-in method wait> returned a result with an exception set")
    error.__cause__ = Terminated()
    return error


@pytest.mark.parametrize("stop", [KeyboardInterrupt, _sigterm_in_a_c_call], ids=["ctrl-c", "sigterm-in-c"])
def test_ctrl_c_while_the_driver_spills_stops_at_once_leaving_the_batches_to_end(
    cluster, tmp_path, monkeypatch, stop
):
    # Ctrl-C (or SIGTERM, here as it comes out of a C call) lands while the driver adds the first batch (not inside
    # Ray's get): the build stops at once, without waiting for the batches in flight, and nothing is left. Those
    # batches are not cancelled (Ray can abort this process when a task is cancelled as its result arrives): each
    # ends on its own, 3 s on, noting that it ended.
    from pyterrier_sparse_eval._shard_writer import ShardedWriter

    marks, driver = tmp_path / "marks", os.getpid()
    marks.mkdir()

    class Toks(dict):  # a local class: sent to the workers by value; flatten_toks iterates it once, there
        def __iter__(self):
            if os.getpid() != driver and not self.first:
                (marks / f"started-{uuid.uuid4().hex}").touch()
                time.sleep(3.0)
                (marks / f"finished-{uuid.uuid4().hex}").touch()
            return super().__iter__()

    docs = [{"docno": f"d{i}", "toks": Toks(a=1.0)} for i in range(6)]
    for i, doc in enumerate(docs):
        doc["toks"].first = i == 0

    def interrupted(self, *args, **kwargs):
        deadline = time.time() + 60
        while not list(marks.glob("started-*")) and time.time() < deadline:
            time.sleep(0.02)
        raise stop()

    monkeypatch.setattr(ShardedWriter, "add", interrupted)
    index = pse.ShardedIndex(tmp_path / "index", num_shards=2)
    with pytest.raises((KeyboardInterrupt, SystemError)):
        index.indexer(verbose=False, batch_size=1, engine="ray").index(docs)
    stopped = time.time()
    # not waited for
    assert not list(marks.glob("finished-*"))
    assert sorted(os.listdir(tmp_path)) == ["marks"]

    def count(prefix: str) -> int:
        return len(list(marks.glob(prefix + "-*")))

    # each batch started ends, not cancelled (and the cluster's CPUs are free again for the next test)
    total = ray.cluster_resources()["CPU"]
    while time.time() < stopped + 60 and (
        not count("finished")
        or count("finished") < count("started")
        or ray.available_resources().get("CPU") != total
    ):
        time.sleep(0.1)
    assert count("finished") == count("started") >= 1
    assert sorted(os.listdir(tmp_path)) == ["marks"]


def test_ctrl_c_while_a_failed_build_waits_for_its_finishers_cancels_them(cluster, tmp_path):
    # After a finisher's failure the driver waits for those running; Ctrl-C during that wait cancels them (the
    # long one would note, 20 s on, that it ended) and stops the build at once.
    marks = tmp_path / "marks"
    marks.mkdir()

    def interrupt_once_failed():
        deadline = time.time() + 60
        while not (marks / "failer").exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(2)  # the driver has the failure and waits
        signal.pthread_kill(main, signal.SIGINT)

    import threading

    main = threading.main_thread().ident
    threading.Thread(target=interrupt_once_failed, daemon=True).start()
    index = pse.ShardedIndex(tmp_path / "index", num_shards=2)
    started = time.time()
    with pytest.raises(KeyboardInterrupt):
        _one_finisher_fails(marks, 2, 20.0).indexer(index, verbose=False, batch_size=500, engine="ray").index(
            _corpus(1000)
        )
    assert time.time() - started < 18
    time.sleep(20)
    assert not list(marks.glob("finished-*"))
    assert sorted(os.listdir(tmp_path)) == ["marks"]


def test_sigterm_out_of_a_c_call_while_shards_finish_cancels_the_finishers(cluster, tmp_path, monkeypatch):
    # SIGTERM reaches the driver as a SystemError caused by Terminated while it hands out the fourth shard (the
    # cluster's three CPUs busy): the two finishers still running are cancelled at once, as on Ctrl-C (each would
    # note, 20 s on, that it ended), not waited for as after a finisher's failure; nothing is left.
    from pyterrier_sparse_eval import _ray

    marks = tmp_path / "marks"
    marks.mkdir()
    quick = marks / "quick"

    class FirstIsQuick(pse.BM25):  # a local class: sent to the workers by value
        def weights(self, tf, dl, stats):
            me = str(os.getpid())
            try:
                fd = os.open(quick, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, me.encode())
                os.close(fd)
            if quick.read_text() != me:
                time.sleep(20)
                (marks / f"finished-{me}").touch()
            return super().weights(tf, dl, stats)

    code, raised = _ray.package_code, []

    def terminated_once_a_shard_is_done():
        # the encoding tasks come first, before any finisher has weighed postings
        if quick.exists():
            raised.append(time.time())
            raise _sigterm_in_a_c_call()
        return code()

    monkeypatch.setattr(_ray, "package_code", terminated_once_a_shard_is_done)
    index = pse.ShardedIndex(tmp_path / "index", num_shards=4)
    with pytest.raises(SystemError):
        FirstIsQuick().indexer(index, verbose=False, batch_size=500, engine="ray").index(_corpus(1000))
    # stopped at once: waiting for the two running finishers would take 20 s
    assert time.time() - raised[0] < 12
    time.sleep(22)
    assert not list(marks.glob("finished-*"))
    assert sorted(os.listdir(tmp_path)) == ["marks"]


def test_a_finisher_that_cannot_make_its_folder_names_the_node_and_the_fix(tmp_path):
    # a node that sees the index folder read-only: run here with a folder whose parent is a file
    from pyterrier_sparse_eval._ray import _finish_shard, package_code
    from pyterrier_sparse_eval._spill import Spill

    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "docnos.txt").touch()
    (tmp_path / "file").touch()
    given = Spill(spill, np.zeros(0, np.int64), [0], 0, np.zeros(0), {}, 0.0)
    with pytest.raises(
        OSError, match=r"shard-000: its folder cannot be made in .* on Ray node .*reads and writes"
    ):
        _finish_shard(given, [], str(tmp_path / "file"), "shard-000", None, {}, ({}, None), package_code())
    assert sorted(os.listdir(tmp_path)) == ["file", "spill"]


def test_bad_documents_on_ray_are_the_local_error_and_leave_nothing(cluster, tmp_path):
    docs = [{"docno": f"d{i}", "toks": {"a": 1.0}} for i in range(250)] + [
        {"docno": "bad", "text": "no toks"}
    ]
    index = pse.ShardedIndex(tmp_path / "index", num_shards=2)
    with pytest.raises(FieldError, match=r"Document 'bad' is missing \['toks'\]"):
        index.indexer(verbose=False, batch_size=100, engine="ray").index(docs)
    assert os.listdir(tmp_path) == []
    # a bad docno deep in the corpus is named by its place in it (its batch, encoded on a worker, knows only
    # its place in the batch)
    docs = [dict(d, text="alpha") for d in docs[:-1]] + [{"docno": None, "text": "alpha", "toks": {"a": 1.0}}]
    for bm25 in (False, True):
        options = dict(verbose=False, batch_size=100, engine="ray")
        indexer = pse.BM25().indexer(index, **options) if bm25 else index.indexer(**options)
        with pytest.raises(ValueError, match=r"^Document 251 of the corpus has docno None"):
            indexer.index(docs)
        assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="num_gpus=1 per worker, but the Ray cluster has 0 GPUs"):
        pse.Splade("unused").indexer(index, engine="ray", num_gpus=1).index(docs)
    with pytest.raises(ValueError, match="engine must be one of"):
        pse.BM25().indexer(index, engine="spark")
    assert os.listdir(tmp_path) == []


def test_unreachable_address_is_a_clear_error():
    # in a fresh process: this one is connected to the test cluster
    code = "import pyterrier_sparse_eval._ray as r; r.connect('127.0.0.1:1')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "ClusterUnreachable: Cannot connect to the Ray cluster at '127.0.0.1:1'" in done.stderr


@pytest.mark.parametrize(
    "given, ray_address, words",
    [
        ("'auto'", "127.0.0.1:1", "ClusterUnreachable: Cannot connect to the Ray cluster at '127.0.0.1:1'"),
        # RAY_ADDRESS standing in for an address is checked as one given: its trailing slash dropped
        ("'auto'", "127.0.0.1:1/", "ClusterUnreachable: Cannot connect to the Ray cluster at '127.0.0.1:1'"),
        ("None", "127.0.0.1:1/", "ClusterUnreachable: Cannot connect to the Ray cluster at '127.0.0.1:1'"),
        ("'auto'", "http://127.0.0.1:8265", "is not a Ray cluster address (RAY_ADDRESS)"),
        ("None", " / ", "RAY_ADDRESS is empty (' / ')"),
    ],
)
def test_an_unusable_ray_address_is_refused_at_once(given, ray_address, words):
    """RAY_ADDRESS standing in for an address not given (or "auto") is checked as one given: refused at once when it
    cannot be reached or is not a cluster's (an unreachable one had been left to ray.init, which retried it for
    minutes)."""
    code = f"import pyterrier_sparse_eval._ray as r; r.connect({given})"
    env = {**os.environ, "RAY_ADDRESS": ray_address}
    started = time.time()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0
    assert words in done.stderr
    assert time.time() - started < 60


@pytest.mark.parametrize(
    "address, words",
    [
        ("", "ray_address is empty"),
        ("  ", "ray_address is empty"),
        ("http://127.0.0.1:8265", "a http:// address (the dashboard's, port 8265) is for `ray job submit`"),
        ("grpc://10.0.0.1:6379", "'grpc://10.0.0.1:6379' is not a Ray cluster address (ray_address)"),
    ],
)
def test_addresses_that_are_not_a_clusters_are_refused_before_ray_is_asked(address, words):
    from pyterrier_sparse_eval._ray import connect
    from pyterrier_sparse_eval.console import ClusterUnreachable

    with pytest.raises(ClusterUnreachable, match=re.escape(words)):
        connect(address)


@pytest.mark.parametrize("given", [None, "auto"])
def test_ray_address_reaches_ray_init_as_checked(given, monkeypatch):
    """What stands for an address not given (or "auto") is what ray.init is asked to join: RAY_ADDRESS as checked,
    else (for "auto") the cluster last started on this machine, whose reachability is checked first."""
    from pyterrier_sparse_eval import _ray
    from pyterrier_sparse_eval.console import ClusterUnreachable

    joined, checked, reachable = [], [], _ray._reachable
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda address=None, **kw: joined.append(address))
    monkeypatch.setattr(_ray, "_reachable", checked.append)
    monkeypatch.setenv("RAY_ADDRESS", " 10.0.0.1:6379/ ")
    assert _ray.connect(given) is ray
    assert joined == ["10.0.0.1:6379"] and checked == ["10.0.0.1:6379"]
    monkeypatch.delenv("RAY_ADDRESS")
    monkeypatch.setattr(_ray, "_last_cluster", lambda: "10.0.0.2:6379")
    joined.clear()
    checked.clear()
    _ray.connect(given)
    # None without RAY_ADDRESS starts Ray on this machine; "auto" is left to Ray to resolve, once checked
    assert (joined, checked) == (([None], []) if given is None else (["auto"], ["10.0.0.2:6379"]))
    if given == "auto":
        monkeypatch.setattr(_ray, "_reachable", reachable)
        monkeypatch.setattr(_ray, "_last_cluster", lambda: "127.0.0.1:1")
        with pytest.raises(ClusterUnreachable, match="Cannot connect to the Ray cluster at '127.0.0.1:1'"):
            _ray.connect(given)


def test_an_address_with_a_trailing_slash_is_the_cluster_connected_to(cluster):
    from pyterrier_sparse_eval._ray import connect

    # the address as a browser or a copied URL gives it: before, taken for another cluster's
    assert connect(cluster.address + "/") is ray


def test_this_machines_host_name_names_the_cluster_connected_to(cluster):
    import socket

    from pyterrier_sparse_eval._ray import connect

    port = cluster.address.rpartition(":")[2]
    # `ray status` prints the head's IP; a user may give the head's host name instead: before, taken for another
    assert connect(f"{socket.gethostname()}:{port}") is ray
    assert connect(f"localhost:{port}") is ray
    with pytest.raises(ClusterSetupError, match="already connected to the Ray cluster at"):
        connect(f"localhost:{int(port) + 1}")


@pytest.mark.parametrize(
    "reply",
    [b"HTTP/1.0 400 Bad request\r\n\r\n", b"SSH-2.0-OpenSSH_9.2\r\n", b"-ERR unknown command 'PRI'\r\n"],
)
def test_an_address_of_another_service_is_refused_at_once(reply):
    """A web server's, an SSH server's or a Redis server's port given as the cluster's: ray.init had retried for
    minutes."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        with server:
            conn, _ = server.accept()
            with conn:
                conn.sendall(reply)

    threading.Thread(target=answer, daemon=True).start()
    address = f"127.0.0.1:{server.getsockname()[1]}"
    code = f"import pyterrier_sparse_eval._ray as r; r.connect({address!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    first = reply.decode().splitlines()[0]
    assert f"{address!r} answers, but not as a Ray cluster (it replied {first!r})" in done.stderr


@needs_data
def test_an_unreachable_address_on_the_command_line_is_not_called_a_download(tmp_path):
    """The command line had said "a download was attempted and failed": the error is a ConnectionError, which its
    check for failed downloads took for one."""
    args = ["experiment", "--dataset", "irds:vaswani", "--shards", "2", "--engine", "ray"]
    args += ["--ray-address", "127.0.0.1:1", "--index-dir", str(tmp_path / "idx"), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "pyterrier_sparse_eval", *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 2, done.stderr
    assert (
        "error: Cannot connect to the Ray cluster at '127.0.0.1:1'" in done.stderr
        and "download" not in done.stderr
    )


def test_worker_that_cannot_open_its_shard_names_it(cluster, tmp_path):
    from pyterrier_sparse_eval._ray_search import ShardSearchers

    # a shard path the workers cannot read (on a real cluster: a folder outside the shared filesystem)
    label = f"shard 1 of 2 ({tmp_path / 'missing'})"
    with pytest.raises(
        RuntimeError, match=r"shard 1 of 2 .* cannot be opened on Ray node .* shared filesystem"
    ):
        ShardSearchers([(str(tmp_path / "missing"), "0" * 32, label)], {"num_results": 10})


def test_sigterm_stops_a_ray_build_as_a_local_one(tmp_path):
    """SIGTERM to `sparse-eval experiment --engine ray` mid-build: exit 143 with one line and nothing left, as on
    the local engine (ray.init had put its own handler in place, and the command ended without its clean-up)."""
    from helpers import sigterm_mid_build

    code, err, left = sigterm_mid_build(tmp_path, "--shards", "2", "--engine", "ray", settle=1.0)
    assert code == 143, err
    # Ray's own shutdown may log after the command's line
    assert "sparse-eval: terminated" in err and not [x for x in err if "internal error" in x], err
    assert left == []


def test_a_field_first_seen_after_the_first_batch_is_named_on_ray(cluster, tmp_path):
    """The driver watches the batches it sends (_fields.watch_fields) as the local build does: a title only later
    documents have is named, and the fields= it names indexes it on Ray too."""
    docs = [{"docno": f"d{i}", "text": f"word{i} common"} for i in range(30)]
    docs += [{"docno": f"e{i}", "title": "zebra", "text": "common"} for i in range(7)]
    options = dict(batch_size=10, verbose=False, engine="ray")
    with pytest.warns(UserWarning, match=r"7 of 37 documents have text in 'title', which is not indexed"):
        pse.BM25().indexer(pse.ShardedIndex(tmp_path / "auto", num_shards=2), **options).index(docs)
    bm25 = pse.BM25(fields=["title", "text"])
    index = bm25.indexer(pse.ShardedIndex(tmp_path / "given", num_shards=2), **options).index(docs)
    assert sorted(bm25.retriever(index).search("zebra")["docno"]) == [f"e{i}" for i in range(7)]
