"""The package's use of Ray: connecting to a cluster, encoding document batches and finishing shards on it.

``engine="ray"`` on an indexer: the driver reads the documents and cuts them into batches, as a local build
does. Each batch is encoded by a Ray task (one CPU, or a GPU share for SPLADE); the batch encoder (analyzer
caches, the masked LM) is sent once and loaded once per worker process, which Ray reuses from batch to batch.
A task returns its batch *encoded* (:data:`Encoded`): docnos, the batch's terms as strings, the postings as
indices into them, weights and document lengths. The driver takes the results in batch order, gives new terms
their corpus-wide ids (a batch's new terms in sorted order, as a local build does) and spills them to the
writer. So the spilled chunks, and the finished index, are those of a local build, bit for bit, whichever worker
encoded which batch and however often a batch was encoded again: a task whose worker process or node dies is
run again by Ray (``max_retries``) wherever resources free up. Tasks rather than a pool of actors for that
reason (a restarted actor waits for CPUs the surviving actors hold) and rather than Ray Data because the order
of the batches decides the term ids: a single ordered stream with at most two batches per worker in flight is
all the writer needs, and keeps memory bounded whatever the corpus size.

Then a sharded index's shards are finished on the cluster, one task per shard: each reads its shard's spilled
chunks and writes the shard's files into a fresh folder, which the driver renames into place as the task
returns, removing that shard's spill (the whole index is moved into place, as a local build's is, once every
shard is done). A task never changes its input, so a task whose worker dies half-way is run again from the same
spill and writes the same files; a task that has returned is not run again.

The index folder (and so the spill files) must be on a filesystem every worker reads and writes at the same
path.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import os
import re
import shutil
import signal
import threading
import uuid
import warnings
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ._spill import Spill, write_from_spill
from .console import ClusterSetupError, ClusterUnreachable, stopping

__all__ = ["check_gpus", "connect", "Encoded", "EncoderPool", "finish_shards", "RESTARTS"]

#: a batch encoded where it ran: docnos, the batch's terms (as strings), each posting's index into them, weights,
#: per-document offsets into the postings, document lengths, and the number of documents without text
Encoded = tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]
RESTARTS = 4


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, connected: to ``address`` (or ``RAY_ADDRESS``) when given, else to a Ray instance
    started on this machine. An explicit address that cannot be reached is an error, never a silent local start."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            'engine="ray" needs Ray: pip install "pyterrier-sparse-eval[ray]" (or use engine="local").'
        ) from None
    address = _checked_address(address)
    if ray.is_initialized():
        if address and address not in ("auto", "local"):
            current = str(ray.get_runtime_context().gcs_address)
            if not _names(address, current, ray.util.get_node_ip_address()):
                # not a connection error: the cluster asked for may well be reachable
                raise ClusterSetupError(
                    f"This process is already connected to the Ray cluster at {current}, not {address!r}; call "
                    "ray.shutdown() first to join another."
                )
        return ray
    if address in (None, "auto"):
        # RAY_ADDRESS stands in for an address not given (or "auto"): checked as one given, and passed on as checked
        address = _checked_address(os.environ.get("RAY_ADDRESS") or None, "RAY_ADDRESS") or address
    # "auto" without RAY_ADDRESS is the cluster last started on this machine: checked as an address given is
    target = _last_cluster() if address == "auto" else address
    if target and target not in ("auto", "local") and not target.startswith("ray://"):
        _reachable(target)  # Ray itself retries an unreachable address for minutes
    # ray.init puts its own SIGTERM handler in place (an exit without the command line's clean-up and line): the
    # handler before it is put back, so that SIGTERM stops a Ray build as it stops a local one
    keep = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGTERM) if keep else None
    try:
        ray.init(address=address, log_to_driver=False, include_dashboard=False)
        if keep and callable(before):
            signal.signal(signal.SIGTERM, before)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise ClusterUnreachable(
            f"Cannot connect to the Ray cluster at {address!r}: {str(e).rstrip('.')}. Check the address (`ray status` on the head "
            "node prints it) or leave ray_address and RAY_ADDRESS unset to start Ray on this machine."
        ) from None
    return ray


def _names(address: str, current: str, node_ip: str) -> bool:
    """Whether ``address`` names the cluster at ``current`` (``ip:port``): by its IP, or by a host name (this
    machine's own, ``localhost``) that resolves to it; a loopback address names this machine, which may be the head."""
    import socket

    host, _, port = address.split("://", 1)[-1].rpartition(":")
    name = host.strip("[]")
    try:
        ip = socket.gethostbyname(name)
    except (OSError, UnicodeError):
        ip = name
    if ip.startswith("127.") or name == "::1":
        ip = node_ip
    return current in (f"{host}:{port}", f"{ip}:{port}")


def _checked_address(address: str | None, name: str = "ray_address") -> str | None:
    """``address`` without surrounding spaces or a trailing slash; an empty one, or one of another scheme than
    ray://, is refused."""
    if address is None:
        return None
    cleaned = address.strip().rstrip("/").rstrip()
    if not cleaned:
        unset = (
            "start Ray on this machine"
            if name == "RAY_ADDRESS"
            else "use RAY_ADDRESS or start Ray on this machine"
        )
        raise ClusterUnreachable(
            f"{name} is empty ({address!r}): give the head node's address (host:port, `ray status` on the head node "
            f"prints it), or leave it unset to {unset}."
        )
    scheme = cleaned.split("://", 1)[0] if "://" in cleaned else None
    if scheme is not None and scheme != "ray":
        web = scheme in ("http", "https")
        raise ClusterUnreachable(
            f"{address!r} is not a Ray cluster address ({name}): give the head node's address as host:port (port "
            "6379 by default) or a Ray Client address ray://host:10001"
            + (
                f"; a {scheme}:// address (the dashboard's, port 8265) is for `ray job submit`."
                if web
                else "."
            )
        )
    return cleaned


def _last_cluster() -> str | None:
    """The address of the cluster last started on this machine, which Ray's "auto" joins (None if none)."""
    try:
        from ray._private.services import find_bootstrap_address

        return find_bootstrap_address(None)
    except Exception:  # a private helper of Ray's: if it moved, Ray resolves "auto" itself
        return None


def _reachable(address: str, timeout: float = 10.0) -> None:
    """Raise ClusterUnreachable (a ConnectionError) unless a TCP connection to the ``host:port`` of a Ray address opens in time."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterUnreachable(f"{address!r} is not a Ray address (host:port, or ray://host:port).")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            reply = _first_reply(sock)
    except OSError as e:
        raise ClusterUnreachable(
            f"Cannot connect to the Ray cluster at {address!r}: {str(e).rstrip('.')}. Check the address (`ray status` on the head "
            "node prints it) or leave ray_address and RAY_ADDRESS unset to start Ray on this machine."
        ) from None
    # Ray's GCS speaks gRPC: its first bytes are a binary HTTP/2 frame (a TLS one, a TLS record); a service that
    # answers in text (a web server's 'HTTP/1.0 400', an SSH banner, a Redis server's '-ERR') is another one, which
    # Ray retries for minutes
    if reply and 0x20 <= reply[0] < 0x7F:
        first = reply.decode("ascii", "replace").splitlines()[0][:60] if reply.strip() else ""
        raise ClusterUnreachable(
            f"{address!r} answers, but not as a Ray cluster (it replied {first!r}): give the head node's GCS address "
            "(`ray status` on the head node prints it; port 6379 by default), not another service's."
        )


def _first_reply(sock: Any, wait: float = 2.0) -> bytes:
    """The first bytes a server sends back to an HTTP/2 client's preface (b"" when it sends none in time)."""
    sock.settimeout(wait)
    try:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        return bytes(sock.recv(64))
    except (TimeoutError, ConnectionError):
        return b""


@functools.cache
def package_code() -> tuple[str, str]:
    """(version, a hash of every file of the package as installed here): what a Ray worker must run to write and
    search the driver's index (an older install on one node would encode, weight or score otherwise)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    version = re.search(r'^__version__ = "([^"]+)"', (root / "__init__.py").read_text(), flags=re.M)
    return version.group(1) if version else "?", digest.hexdigest()[:16]


def check_code(driver: tuple[str, str]) -> None:
    """Refuse to work for a driver whose package differs from this worker's (:func:`package_code`)."""
    import socket

    if (here := package_code()) != driver:
        raise ClusterSetupError(
            f"Ray node {socket.gethostname()} runs pyterrier-sparse-eval {here[0]} (code {here[1]}, from "
            f"{Path(__file__).parent}), not the driver's {driver[0]} (code {driver[1]}): install the same version "
            "on every node (or start Ray with a runtime_env that ships it)."
        )


#: the batch encoder of the current build in this worker process, by build token: loaded (model, analyzer
#: caches) once per process and reused by every batch the process encodes
_ENCODERS: dict[str, Callable[[list[dict[str, Any]]], Encoded]] = {}


def _encode(
    token: str,
    encode: Callable[[list[dict[str, Any]]], Encoded],
    batch: list[dict[str, Any]],
    driver: tuple[str, str],
) -> Encoded:
    """Encode one batch on a Ray worker, with the process's copy of the build's encoder."""
    if token not in _ENCODERS:
        check_code(driver)
        _ENCODERS.clear()  # a finished build's encoder (and its model) is dropped
        _ENCODERS[token] = encode
    return _ENCODERS[token](batch)


def task_error(e: Any, what: str) -> BaseException:
    """What a failed Ray task raises: the error it raised, as itself (bad input); the package missing on the
    worker (the task could not even be loaded) said with its fix."""
    cause = e.cause if isinstance(getattr(e, "cause", None), BaseException) else e
    if re.search(r"No module named '?pyterrier_sparse_eval", str(cause)):
        return ClusterSetupError(
            f"{what} on the Ray cluster: pyterrier_sparse_eval cannot be imported on a worker node. Install it, the "
            "driver's version, on every node (or start Ray with a runtime_env that ships it)."
        )
    # said by a worker of an older version, which raises a plain RuntimeError
    if type(cause) is RuntimeError and "not the driver's" in str(cause):
        return ClusterSetupError(str(cause))
    return cause


class EncoderPool:
    """Encodes batches as Ray tasks (one CPU each, or ``num_gpus`` GPU), keeping ``num_workers`` of them busy
    (default: the cluster's CPUs, or GPUs / ``num_gpus``); :meth:`map` gives the results in the order of the
    batches. Tasks, not actors: a task lost with its worker or node is run again wherever resources free up
    (``max_retries``), where a restarted actor would wait for resources the surviving actors hold."""

    def __init__(self, ray: Any, encode: Callable[..., Encoded], num_workers: int | None, num_gpus: float):
        self.ray = ray
        resources = ray.cluster_resources()
        if num_gpus and resources.get("GPU", 0) < num_gpus:
            raise ValueError(
                f"num_gpus={num_gpus} per worker, but the Ray cluster has {resources.get('GPU', 0):g} GPUs; give "
                "num_gpus=0 to encode on CPUs."
            )
        if num_workers is None:
            num_workers = (
                int(resources.get("GPU", 0) / num_gpus) if num_gpus else int(resources.get("CPU", 1))
            )
            num_workers = max(1, num_workers)
        if not isinstance(num_workers, (int, np.integer)) or isinstance(num_workers, bool) or num_workers < 1:
            raise ValueError(f"num_workers must be a whole number >= 1, got {num_workers!r}.")
        self.num_workers = num_workers
        # GPU tasks would otherwise get a fresh worker process (and load the model again) for every batch
        self.task = ray.remote(
            num_cpus=0 if num_gpus else 1, num_gpus=num_gpus, max_retries=RESTARTS, max_calls=0
        )(_encode)
        self.token = uuid.uuid4().hex
        self.encode_ref = ray.put(encode)
        self.pending: collections.deque[tuple[int, Any]] = collections.deque()  # (documents, task) in flight

    def _get(self, ref: Any) -> Any:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:  # the encoder's own error (bad input): raised as itself
            raise task_error(e, "A batch could not be encoded") from None
        except ray.exceptions.RayError as e:  # workers or nodes lost more often than Ray retries
            raise ClusterSetupError(
                f"A batch of documents could not be encoded on the Ray cluster ({RESTARTS} retries): {e}"
            ) from None

    def map(self, batches: Iterable[list[dict[str, Any]]]) -> Generator[tuple[int, Encoded], None, None]:
        """(number of documents, encoded batch) for each batch, in order; at most ``2 * num_workers`` batches
        are in flight, so memory stays bounded whatever the number of documents (and the work left running when
        a build fails)."""
        window = 2 * self.num_workers
        pending = self.pending = collections.deque()
        for batch in batches:
            pending.append((len(batch), self.task.remote(self.token, self.encode_ref, batch, package_code())))
            if len(pending) >= window:
                yield self._next()
        while pending:
            yield self._next()

    def _next(self) -> tuple[int, Encoded]:
        """The oldest batch's result, its task left among those in flight until it has returned."""
        n, ref = self.pending[0]
        result = self._get(ref)
        self.pending.popleft()
        return n, result

    def abandon(self) -> None:
        """Drop the batches in flight (on any error, Ctrl-C and SIGTERM included), never cancelling them: each runs
        to its end (a pure function, its result never read), or ends with this process, whose exit ends its tasks.
        Ray aborts this process when a task is cancelled as its result arrives (its "Tried to complete task that
        was not pending" check), which a stop of ``sparse-eval`` mid-build hit in 2 of 6 CI runs."""
        self.pending.clear()


def _finish_shard(
    spill: Spill,
    vocab: list[str],
    parent: str,
    name: str,
    weight: Callable[..., Any] | None,
    extra_meta: dict[str, Any],
    collection: tuple[dict[str, Any], Any],
    driver: tuple[str, str],
) -> tuple[str, dict[str, Any]]:
    """Write shard ``name`` from its spill into a fresh folder under ``parent`` (on a Ray worker)."""
    import socket

    check_code(driver)
    if not (Path(spill.folder) / "docnos.txt").is_file():
        raise FileNotFoundError(
            f"{name}: its spilled documents {spill.folder} cannot be read on Ray node {socket.gethostname()}. The "
            "index folder must be on a filesystem every worker reads and writes at the same path."
        )
    out = Path(parent) / f".{name}.part-{uuid.uuid4().hex[:12]}"
    try:
        out.mkdir()
    except OSError as e:  # a node that sees the folder read-only (or not as this user)
        raise OSError(
            f"{name}: its folder cannot be made in {parent} on Ray node {socket.gethostname()} ({e.strerror}). "
            "The index folder must be on a filesystem every worker reads and writes at the same path."
        ) from e
    try:
        meta = write_from_spill(spill, vocab, out, weight, extra_meta, collection)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return str(out), meta


def finish_shards(
    ray: Any,
    spills: list[Spill],
    vocab: list[str],
    parent: Path,
    names: list[str],
    weight: Callable[..., Any] | None,
    metas: list[dict[str, Any]],
    collection: tuple[dict[str, Any], Any],
) -> None:
    """Finish every shard on the cluster (one retried task each, at most as many at once as the cluster has CPUs)
    and rename each result to ``parent / name`` as its task returns, removing that shard's spill at once (a task
    that has returned is not run again), so that a finished shard's spill is not kept while the others are
    written; then any folder a failed attempt left."""
    task = ray.remote(num_cpus=1, max_retries=RESTARTS)(_finish_shard)
    vocab_ref, collection_ref = ray.put(vocab), ray.put(collection)
    todo = list(zip(spills, names, metas))[::-1]
    # none waits in Ray's queue: after a failure the tasks running are waited for, none is cancelled (cancelling a
    # task as its state changes, handed to a worker or its result arriving, can abort this process inside Ray)
    limit = max(1, int(ray.cluster_resources().get("CPU", 1)))
    pending: dict[Any, tuple[Spill, str]] = {}
    try:
        while todo or pending:
            while todo and len(pending) < limit:
                spill, name, meta = todo.pop()
                ref = task.remote(
                    spill, vocab_ref, str(parent), name, weight, meta, collection_ref, package_code()
                )
                pending[ref] = (spill, name)
            ready, _ = ray.wait(list(pending), num_returns=1)
            spill, name = pending.pop(ready[0])
            folder, _ = ray.get(ready[0])
            os.replace(folder, parent / name)
            shutil.rmtree(spill.folder, ignore_errors=True)
    except BaseException as e:
        # the others would go on writing into the spills the caller removes: waited for, or on Ctrl-C or SIGTERM
        # (given, or during that wait) stopped first, as the user asked to stop now
        try:
            if pending and not stopping(e):
                running = len(pending)
                warnings.warn(
                    f"A shard could not be finished; waiting for the {running} shard "
                    f"finisher{'s' if running > 1 else ''} still running to end before stopping (Ctrl-C stops "
                    "them at once).",
                    stacklevel=2,
                )
                ray.wait(list(pending), num_returns=len(pending))
                pending = {}
        finally:
            # only those still running: Ray aborts the driver when a cancel meets a task's end, so the ended are
            # left alone (that race stays for a finisher ending as it is cancelled)
            if pending:
                _, running = ray.wait(list(pending), num_returns=len(pending), timeout=0)
                for ref in running:
                    ray.cancel(ref, force=True)
                ray.wait(list(pending), num_returns=len(pending), timeout=30)
        if not isinstance(e, ray.exceptions.RayError):
            raise
        if isinstance(e, ray.exceptions.RayTaskError):
            raise task_error(e, "A shard could not be finished") from None
        raise ClusterSetupError(
            f"A shard could not be finished on the Ray cluster ({RESTARTS} retries): {e}"
        ) from None
    for stale in parent.glob(".*.part-*"):  # written by an attempt whose worker died
        shutil.rmtree(stale, ignore_errors=True)


def check_gpus(gpus: Any) -> None:
    """``num_gpus`` is a number >= 0 (GPUs per worker, fractions shared), else a ValueError naming it."""
    number = isinstance(gpus, (int, float, np.number)) and not isinstance(gpus, bool)
    if not (number and 0 <= gpus < np.inf):
        raise ValueError(f"num_gpus must be a number >= 0 (GPUs per worker, e.g. 1 or 0.5), got {gpus!r}.")
