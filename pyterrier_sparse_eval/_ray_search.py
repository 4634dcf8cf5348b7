"""Searching the shards of a :class:`~pyterrier_sparse_eval.ShardedIndex` on a Ray cluster.

One actor per shard holds the shard memory-mapped (opened and checked once, on the worker that hosts it) and
answers batches of query weights with that shard's exact top k; the driver merges them (``_sharded._merge``).
Actors are restarted by Ray when their process or node dies (``max_restarts``) and a search in flight is retried
(``max_task_retries``): searching is a pure function of the shard, so a retried batch returns the same rows.
Shard folders must be readable at the same path by every worker (a shared filesystem); a worker that cannot open
its shard fails with an error naming the shard and the node.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import _ray
from ._docnos import take_docnos
from ._ray import RESTARTS, check_code, connect, task_error

__all__ = ["ShardSearchers"]


class _Searcher:
    """A shard, opened on a Ray worker, answering batches of query weights."""

    def __init__(self, path: str, build_id: str, label: str, kwargs: dict[str, Any], driver: tuple[str, str]):
        import socket

        check_code(driver)
        from ._format import IndexCorruptError
        from ._index import SparseIndex
        from ._retriever import SparseRetriever

        try:
            index = SparseIndex(path)
            found = index.build_id
        except (OSError, ValueError) as e:
            raise IndexCorruptError(
                f"{label} cannot be opened on Ray node {socket.gethostname()}: {str(e).rstrip('.')}. Shard folders must be readable "
                "at the same path by every worker (a shared filesystem)."
            ) from None
        if found != build_id:
            raise IndexCorruptError(
                f"{label} on node {socket.gethostname()} is build {found}, not {build_id}."
            )
        self.index = index
        self.retriever = SparseRetriever(index, **kwargs)

    def search(self, weights: list[dict[str, float]]) -> tuple[np.ndarray, Any, np.ndarray]:
        r = self.retriever
        rows, docs, scores, _ = r.search_matrix(r.query_matrix(weights))
        return rows, take_docnos(self.index, docs), scores.astype(np.float32)

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


class ShardSearchers:
    """One restartable Ray actor per shard; :meth:`search` sends a batch to all and returns their answers."""

    def __init__(
        self, shards: list[tuple[str, str, str]], kwargs: dict[str, Any], address: str | None = None
    ):
        ray = connect(address)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # no CPU reserved per actor (more shards than cores must not wait forever); shard i on alive node i mod n
        # (soft: a restarted actor whose node is gone goes elsewhere)
        remote = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=RESTARTS)(_Searcher)
        nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        self.labels = [label for _, _, label in shards]
        self.actors = [
            remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(nodes[i % len(nodes)], soft=True)
            ).remote(path, build, label, kwargs, _ray.package_code())
            for i, (path, build, label) in enumerate(shards)
        ]
        ready, pending = ray.wait(
            [a.pid.remote() for a in self.actors], num_returns=len(self.actors), timeout=300
        )
        if pending:
            self.close()
            raise TimeoutError(
                f"{len(pending)} of {len(shards)} shard searchers could not start on the Ray cluster within 300 s "
                "(`ray status` shows its nodes and resources)."
            )
        try:
            ray.get(ready)
        except ray.exceptions.RayActorError as e:
            self.close()
            error = task_error(e, "A shard searcher could not start")  # the package missing or not the same
            if not isinstance(error, RuntimeError) or error is e:
                error = RuntimeError(f"A shard searcher could not start: {error}")
            raise error from None

    @property
    def ray(
        self,
    ) -> Any:  # the module, not held: a retriever pickles (its actors' handles do, in Ray's driver)
        import ray

        return ray

    def search(self, weights: list[dict[str, float]]) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        ray = self.ray
        ref = ray.put(weights)
        try:
            return list(ray.get([a.search.remote(ref) for a in self.actors]))
        except ray.exceptions.RayActorError as e:
            cause = getattr(e, "cause", None) or e
            raise RuntimeError(f"A shard searcher failed on the Ray cluster: {cause}") from None

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
