"""Searching the shards of a :class:`~pyterrier_sparse_eval.ShardedIndex` on a Ray cluster.

One actor per shard holds the shard memory-mapped (opened and checked once, on the worker that hosts it) and
answers batches of query weights with that shard's exact top k; the driver merges them (``_docnos.merge_top_k``).
Shard i is pinned to alive node i mod n; an actor is restarted there by Ray when its process dies (``max_restarts``),
started afresh on an alive node when its node is gone (as it starts or as it searches), and a search in flight is
retried (``max_task_retries``), only the shards that failed: searching is a pure function of the shard, so a
retried batch returns the same rows. Ray lists a node that died as alive for up to ~30 s, its actors meanwhile
merely "unavailable": a searcher that fails with no node seen lost is waited for (:data:`NODE_LOSS_WAIT`) until
its node is reported dead or it answers again.
Shard folders must be readable at the same path by every worker (a shared filesystem); a worker that cannot open
its shard fails with an error naming the shard and the node.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from . import _ray
from ._docnos import take_docnos
from ._ray import RESTARTS, check_code, connect, task_error
from .console import ClusterSetupError

__all__ = ["ShardSearchers"]

#: seconds a searcher that failed, with no node seen lost, is waited for: until Ray reports its node dead (a node
#: that died is listed as alive for up to ~30 s) or it answers again; the cluster is looked at every POLL seconds
NODE_LOSS_WAIT = 60.0
POLL = 0.5
#: seconds the searchers may take to start (each opens and checks its shard)
START_TIMEOUT = 300.0
#: the fix said with every failure of the cluster's nodes
STATUS = (
    "check the cluster's nodes with `ray status`, and try again once a lost node is listed as dead or is back"
)


class _Searcher:
    """A shard, opened on a Ray worker, answering batches of query weights."""

    def __init__(self, path: str, build_id: str, label: str, kwargs: dict[str, Any], driver: tuple[str, str]):
        import socket

        check_code(driver)
        from ._format import IndexCorruptError
        from ._index import SparseIndex
        from ._retriever import SparseRetriever

        kwargs = dict(kwargs)
        # the sharded index's own mmap= and checks= (checks="structure" skips the CRC-32s)
        opening = kwargs.pop("index_options", {})
        try:
            index = SparseIndex(path, **opening)
            found = index.build_id
        except OSError as e:
            raise IndexCorruptError(
                f"{label} cannot be opened on Ray node {socket.gethostname()}: {str(e).rstrip('.')}. Shard folders must be readable "
                "at the same path by every worker (a shared filesystem)."
            ) from None
        # damage, named as the driver names it
        except ValueError as e:
            raise IndexCorruptError(f"{label} on Ray node {socket.gethostname()}: {e}") from None
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
        connect(address)
        self.shards, self.kwargs, self.labels = shards, kwargs, [label for _, _, label in shards]
        self.actors: list[Any] = []
        self.nodes: list[str] = []
        try:
            self._start(range(len(shards)))
            todo = list(range(len(shards)))
            for attempt in range(RESTARTS + 1):
                _, failed = self._call(todo, "pid", timeout=START_TIMEOUT)
                if not failed:
                    return
                # a node lost as they start: its searchers started again on the alive nodes
                todo = self._recover(failed, attempt, "could not start")
        except BaseException:
            self.close()
            raise

    def _start(self, which: Any) -> None:
        """Start the actors of shards ``which`` on alive node i mod n: pinned there (a soft affinity is a hint Ray
        often ignores, which put every shard on one node), restarted there when their process dies; one whose node
        is gone is started afresh by :meth:`_recover`. No CPU reserved (more shards than cores must not wait)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self.ray
        remote = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=RESTARTS)(_Searcher)
        alive = self._alive()
        if not alive:
            raise ClusterSetupError(
                f"The Ray cluster has no alive node to start the shard searchers on; {STATUS}."
            )
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
        # the module, not held: a retriever pickles (its actors' handles do, in Ray's driver)
        import ray

        return ray

    def _alive(self) -> list[str]:
        return sorted(n["NodeID"] for n in self.ray.nodes() if n.get("Alive"))

    def _call(
        self, which: list[int], method: str, *args: Any, timeout: float | None = None
    ) -> tuple[dict[int, Any], dict[int, BaseException]]:
        """Call ``method`` on the actors of shards ``which`` and wait for all: their answers, and the actor errors
        (lost or unschedulable actors), by shard. Any other error (the method's own) is raised."""
        ray = self.ray
        refs = {i: getattr(self.actors[i], method).remote(*args) for i in which}
        _, pending = ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
        if pending:
            # only starting is timed
            raise TimeoutError(
                f"{len(pending)} of {len(self.shards)} shard searchers could not start on the Ray cluster within "
                f"{timeout:g} s (`ray status` shows its nodes and resources)."
            )
        answers: dict[int, Any] = {}
        failed: dict[int, BaseException] = {}
        for i, ref in refs.items():
            try:
                answers[i] = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnschedulableError) as e:
                failed[i] = e
        return answers, failed

    def _recover(self, failed: dict[int, BaseException], attempt: int, doing: str) -> list[int]:
        """After the actor errors ``failed`` (by shard) of attempt ``attempt`` (of ``RESTARTS + 1``): the shards to
        call again, those whose node is gone started afresh on the alive nodes; else a ClusterSetupError naming the
        cause and the fix."""
        first, error = min(failed.items())
        for e in failed.values():
            if getattr(e, "actor_init_failed", False):
                # the searcher's own error (its shard cannot be opened, another package on its node): not retried
                what = f"A shard searcher {doing}"
                own = task_error(e, what)
                if not isinstance(own, RuntimeError) or own is e:
                    own = ClusterSetupError(f"{what} on the Ray cluster: {own}")
                raise own from None
        lost = self._await_loss(failed)
        cause = getattr(error, "cause", None) or error
        which = self.labels[first] + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
        if lost is None:
            raise ClusterSetupError(
                f"The searcher of {which} {doing} on the Ray cluster: {cause}. Its node was not reported lost, nor "
                f"did it answer again, within {NODE_LOSS_WAIT:g} s; {STATUS}."
            )
        if attempt >= RESTARTS:
            raise ClusterSetupError(
                f"The searcher of {which} {doing} on the Ray cluster, {attempt + 1} times, as nodes were lost: "
                f"{cause}; {STATUS}."
            )
        if lost:
            self._start(lost)
        return sorted(set(failed) | set(lost))

    def _await_loss(self, failed: dict[int, BaseException]) -> list[int] | None:
        """The shards whose node is gone, once Ray reports one lost; [] once the searchers of ``failed`` all answer
        again (restarted where they were); None when neither comes within NODE_LOSS_WAIT seconds."""
        ray = self.ray
        deadline = time.monotonic() + NODE_LOSS_WAIT
        pings: list[Any] = []
        while True:
            alive = set(self._alive())
            lost = [i for i, node in enumerate(self.nodes) if node not in alive]
            if lost:
                return lost
            pings = pings or [self.actors[i].pid.remote() for i in failed]
            ready, _ = ray.wait(pings, num_returns=len(pings), timeout=POLL)
            if len(ready) == len(pings):
                try:
                    ray.get(pings)
                    return []
                except ray.exceptions.RayError:
                    # still unavailable, or unschedulable on a node not yet reported dead: asked again
                    pings = []
                    time.sleep(POLL)
            if time.monotonic() >= deadline:
                return None

    def search(self, weights: list[dict[str, float]]) -> list[tuple[np.ndarray, Any, np.ndarray]]:
        ray = self.ray
        # ray.put would start or join another Ray instance, where no searcher is
        if not ray.is_initialized():
            raise ClusterSetupError(
                "This process's Ray connection was shut down (ray.shutdown()) since the retriever's shard searchers "
                "started: make the retriever again (index.retriever(..., engine='ray'))."
            )
        ref = ray.put(weights)
        answers: dict[int, Any] = {}
        todo = list(range(len(self.actors)))
        for attempt in range(RESTARTS + 1):
            done, failed = self._call(todo, "search", ref)
            answers.update(done)
            if not failed:
                return [answers[i] for i in range(len(self.actors))]
            # a node lost: its shards started afresh on the alive ones, and the failed shards' batch sent again
            todo = self._recover(failed, attempt, "failed")
        raise AssertionError("unreachable")

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
