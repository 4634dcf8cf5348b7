"""Searching the shards of a :class:`~pyterrier_sparse_eval.ShardedIndex` on a Ray cluster.

One actor per shard holds the shard memory-mapped (opened and checked once, on the worker that hosts it) and
answers batches of query weights with that shard's exact top k; the driver merges them (``_docnos.merge_top_k``).
Shard i is pinned to alive node i mod n; an actor is restarted there by Ray when its process dies (``max_restarts``),
started afresh on an alive node when its node is gone, and a search in flight is retried (``max_task_retries``):
searching is a pure function of the shard, so a retried batch returns the same rows.
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
from .console import ClusterSetupError

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
    """One restartable Ray actor per shard, shard i on alive node i mod n; :meth:`search` sends a batch to all and
    returns their answers."""

    def __init__(
        self, shards: list[tuple[str, str, str]], kwargs: dict[str, Any], address: str | None = None
    ):
        ray = connect(address)
        self.shards, self.kwargs, self.labels = shards, kwargs, [label for _, _, label in shards]
        self.actors: list[Any] = []
        self.nodes: list[str] = []
        self._start(range(len(shards)))
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
                error = ClusterSetupError(f"A shard searcher could not start: {error}")
            raise error from None

    def _start(self, which: Any) -> None:
        """Start the actors of shards ``which`` on alive node i mod n: pinned there (a soft affinity is a hint Ray
        often ignores, which put every shard on one node), restarted there when their process dies; one whose node
        is gone is started afresh by :meth:`search`. No CPU reserved (more shards than cores must not wait)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self.ray
        remote = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=RESTARTS)(_Searcher)
        alive = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        for i in which:
            path, build, label = self.shards[i]
            node = alive[i % len(alive)]
            strategy = NodeAffinitySchedulingStrategy(node, soft=False)
            actor = remote.options(scheduling_strategy=strategy).remote(
                path, build, label, self.kwargs, _ray.package_code()
            )
            if i < len(self.actors):
                self.actors[i], self.nodes[i] = actor, node
            else:
                self.actors.append(actor)
                self.nodes.append(node)

    @property
    def ray(self) -> Any:
        import ray  # the module, not held: a retriever pickles (its actors' handles do, in Ray's driver)

        return ray

    def search(self, weights: list[dict[str, float]]) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        ray = self.ray
        if not ray.is_initialized():  # ray.put would start or join another Ray instance, where no searcher is
            raise ClusterSetupError(
                "This process's Ray connection was shut down (ray.shutdown()) since the retriever's shard searchers "
                "started: make the retriever again (index.retriever(..., engine='ray'))."
            )
        ref = ray.put(weights)
        for attempt in range(RESTARTS + 1):
            try:
                return list(ray.get([a.search.remote(ref) for a in self.actors]))
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnschedulableError) as e:
                alive = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
                lost = [i for i, node in enumerate(self.nodes) if node not in alive]
                if lost and attempt < RESTARTS:  # their node is gone: started on the alive ones, batch again
                    self._start(lost)
                    continue
                cause = getattr(e, "cause", None) or e
                raise ClusterSetupError(f"A shard searcher failed on the Ray cluster: {cause}") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
