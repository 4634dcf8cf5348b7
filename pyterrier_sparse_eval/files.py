"""Files and folders written whole or not at all, and names that are safe as file names.

Everything this package writes (indexes, result files, pools, figures) goes through here: the content is
written under a hidden temporary name next to the target and renamed into place as the last step, so an
interrupted write never leaves a half-written file where a reader would take it for a finished one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from ._open_files import allow_open_files
from ._streams import append_to_stream, is_stream, written_path

__all__ = [
    "check_destination",
    "atomic_write",
    "atomic_write_text",
    "atomic_write_json",
    "new_temp_dir",
    "remove_temp_dir",
    "remove_unfinished",
    "clean_leftovers",
    "replace_dir",
    "is_empty_dir",
    "allow_open_files",
    "slug",
]


_UMASK = os.umask(0)  # the only way to read it; done once, at import, before any thread of ours runs
os.umask(_UMASK)


def check_destination(path: str | os.PathLike[str] | None, *, option: str, folder: bool = False) -> None:
    """Refuse, before any work, a destination file (``folder``: a folder, created if needed, files written into
    it) that could not be written: a ValueError naming ``option`` (the argument that gave it) and the fix. None:
    nothing to check."""
    if not path:
        return
    target = written_path(path)
    if not folder and is_stream(target):
        if not os.access(target, os.W_OK):
            raise ValueError(f"{option} {path} is not writable; choose another path.")
        return
    if not folder and target.is_dir():
        raise ValueError(f"{option} {path} is a folder; give a file in it, e.g. {target / 'results.json'}.")
    if folder and target.exists() and not target.is_dir():
        raise ValueError(f"{option} {path} is a file; give a folder (it is created if needed).")
    # an existing folder is written into (its files made there), a new path in its nearest existing parent
    nearest = next((a for a in target.parents if a.exists()), Path("."))
    written = target if folder and target.is_dir() else nearest
    if not written.is_dir():
        raise ValueError(f"{option} {path}: {written} is a file, not a folder; choose another path.")
    if not os.access(written, os.W_OK):
        raise ValueError(f"{option} {path}: {written} is not writable; choose another path.")
    # a file made and removed there: os.access says yes to root on a read-only or virtual file system
    try:
        fd, probe = tempfile.mkstemp(prefix=".pse-probe-", dir=written)
    except OSError as e:
        raise ValueError(
            f"{option} {path}: no file can be written in {written} ({e.strerror}); choose another path."
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def save_array(path: str | os.PathLike[str], array: Any) -> None:
    """``np.save(path, array)``, a full disk said as :func:`write_array` says it."""
    import numpy as np

    try:
        with open(path, "wb") as f:
            np.save(f, array)
    except OSError as e:
        no_space(e, str(path))


def write_array(array: Any, f: Any) -> None:
    """``array.tofile(f)``; a short write (a full disk or a quota: numpy's error names neither, "228176 requested
    and 55296 written") said as such, with the file and the space left where it is."""
    try:
        array.tofile(f)
    except OSError as e:
        no_space(e, str(getattr(f, "name", "the index file")))


def no_space(e: OSError, name: str, fix: str = "build the index elsewhere") -> NoReturn:
    """Raise ``e``; for a full disk (ENOSPC, or numpy's short write, which has no errno) or a file size limit
    (EFBIG, ``ulimit -f``) one that names the file, the space left where it is and ``fix`` (unless it is one)."""
    if e.errno not in (None, errno.ENOSPC, errno.EDQUOT, errno.EFBIG) or any(m in str(e) for m in _SAID):
        raise e
    try:
        free = f"{shutil.disk_usage(os.path.dirname(os.path.abspath(name))).free:,} bytes free there"
    except OSError:
        free = "its file system"
    limit = resource_limit()
    if e.errno == errno.EFBIG:
        what = f"{_SAID[1]} (`ulimit -f` {limit}{': the file system' * (limit == 'unlimited')})"
        fix = f"raise it, or {fix}"
    else:  # numpy's short write has no errno: a full disk, a quota, or a file size limit
        limit = "" if e.errno or limit == "unlimited" else f"; or the file size limit, `ulimit -f` {limit}"
        what, free, fix = _SAID[0], free + limit, f"free some, or {fix}"
    raise OSError(e.errno or errno.ENOSPC, f"{what} writing {name} ({e}; {free}): {fix}") from e


_SAID = ("No space left (or a quota reached)", "A file size limit stopped the write")


def resource_limit() -> str:
    """This process's file size limit (``ulimit -f``), as the shell says it: in KiB, or 'unlimited'."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // 1024} KiB"


@contextlib.contextmanager
def full_disk_named(name: str, fix: str = "build the index elsewhere") -> Iterator[None]:
    """The block's errors as they are; a full disk said with ``name`` and the space left (:func:`no_space`): a
    file's last buffer is written as it closes, where numpy's short writes are not there to say it."""
    try:
        yield
    except OSError as e:
        no_space(e, name, fix)


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], Any]) -> Path:
    """Create ``path`` by calling ``write(tmp)`` on a temporary sibling, then renaming it into place.

    The temporary file keeps the target's suffix (writers such as matplotlib choose the format by it) and
    is removed if ``write`` fails; one left by a killed process is removed by the next write of ``path`` on
    this host (:func:`clean_leftovers`). The finished file gets the usual permissions (0666 minus the umask).
    A symbolic link is written through (its target replaced, the link kept); a pipe, a device or an open
    descriptor (``/dev/stdout``) is appended to, once the whole has been written, never replaced by a file.
    """
    path = written_path(path)
    if is_stream(path):  # written whole into a file first, then appended (opened "w", it cuts what precedes)
        with tempfile.TemporaryDirectory() as folder:
            whole = Path(folder) / f"whole{path.suffix}"
            write(whole)
            with open(whole, "rb") as f:
                append_to_stream(path, f)
        return path
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise NotADirectoryError(f"Cannot write {path}: {parent} is a file, not a folder.")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(path)  # the temporary files of writers killed mid-write
    fd, tmp = -1, None
    try:
        # mkstemp's loop, inside the try: an interrupt right after the file's creation finds its name
        while tmp is None:
            tmp = _temp_name(path, f".tmp{path.suffix}")
            try:
                fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
            except FileExistsError:
                tmp = None
        _lock(fd)  # held while this process writes it: clean_leftovers leaves it alone
        with full_disk_named(str(path), "write it elsewhere"):
            write(tmp)
            os.chmod(tmp, 0o666 & ~_UMASK)
            _fsync(tmp)  # its data on disk before its name: whole or absent after a power loss too
        # and its lock (Windows renames no open file); forgotten first: never closed twice
        closing, fd = fd, -1
        os.close(closing)
        os.replace(tmp, path)
        _fsync(path.parent)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False))


# Linux's renameat2(2): RENAME_NOREPLACE refuses to clobber, RENAME_EXCHANGE swaps two paths atomically
_AT_FDCWD = -100
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP}


@functools.cache
def _renameat2_call() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """renameat2(src, dst, flags); False when this system or file system does not support it."""
    call = _renameat2_call()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


#: who writes: temporary folders are named ``.NAME.HOST.PID.TOKEN.RANDOM.(tmp|old)`` (files: ``.tmp.SUFFIX``), so that leftovers can be
#: told apart from the folders of writers still at work (on this host: the process is alive and, for our own
#: PID, the token is ours; writers on other hosts sharing the folder are never touched)
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"
_TOKEN = os.urandom(4).hex()
_LEFTOVER = re.compile(
    r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.(?P<token>[0-9a-f]{8})\.[^.]+\.(?P<kind>tmp|old)"
    r"(?:\.[^.]*)?$"  # a file's temporary copy keeps its suffix
)


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.{_HOST}.{os.getpid()}.{_TOKEN}."


def _temp_name(target: Path, suffix: str) -> Path:
    """A new name for a temporary sibling of ``target``, as mkdtemp and mkstemp make them (this process's prefix:
    a name taken is one of ours)."""
    return Path(os.path.abspath(target.parent)) / f"{_temp_prefix(target)}{os.urandom(4).hex()}{suffix}"


def _abandoned(m: re.Match[str], entry: Path) -> bool:
    if m["host"] != _HOST:
        return False
    pid = int(m["pid"])
    if pid == os.getpid():
        gone = m["token"] != _TOKEN  # an earlier process that had our PID (e.g. PID 1 in a container)
    else:
        gone = not _pid_alive(pid)
    # a writer in another PID namespace (a container sharing the volume, with our host name) holds its lock
    return gone and not _locked(entry)


#: the temporary folders and files this process writes, each held open with an exclusive lock (flock) until
#: it is moved into place or removed: the kernel drops a dead writer's lock, whatever its PID namespace; by
#: absolute path: the descriptor and the thread that made it
_HELD: dict[str, tuple[int, int]] = {}


def _lock(fd: int) -> None:
    """An exclusive lock on the open file ``fd``; none where there is no flock (Windows, some network file
    systems): there the PID rule alone tells leftovers from live writers."""
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):
        pass


def _fsync(path: str | os.PathLike[str]) -> None:
    """Flush a file's or a folder's data to the disk (where the system allows it: not folders on Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _release_gone() -> None:
    """Unlock the held folders since moved into place or removed (with the folder they were written in)."""
    for held in list(_HELD):
        # popped first: of two threads releasing at once, one closes it
        if not os.path.lexists(held) and (entry := _HELD.pop(held, None)) is not None:
            os.close(entry[0])


def _hold(folder: Path) -> None:
    """Lock ``folder`` until it is moved into place or removed (released at the next hold or swap)."""
    _release_gone()
    fd = os.open(folder, os.O_RDONLY)
    _HELD[str(folder)] = fd, threading.get_ident()
    _lock(fd)


def _locked(entry: Path) -> bool:
    """Whether a live writer holds ``entry``'s lock (this process's included: a lock conflicts across opens)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # a link, or gone
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # a file system without flock: the PID rule alone
        return False
    finally:
        os.close(fd)  # and with it the lock just taken
    return False


def new_temp_dir(target: str | os.PathLike[str]) -> Path:
    """A new hidden folder next to ``target``, to be filled and then moved into place by :func:`replace_dir`,
    locked while this process lives (:func:`clean_leftovers` leaves it alone). Leftovers of writers that died
    are cleaned up first."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(target)
    # mkdtemp's loop, made here so that an interrupt right after the mkdir finds the name
    while True:
        folder = _temp_name(target, ".tmp")
        try:
            os.mkdir(folder, 0o700)
            _hold(folder)
            return folder
        except FileExistsError:
            continue
        except BaseException:
            remove_temp_dir(folder)
            raise


def remove_temp_dir(folder: Path) -> None:
    """Remove a folder of :func:`new_temp_dir` (a write that failed) and release its lock."""
    shutil.rmtree(folder, ignore_errors=True)
    _release_gone()


def remove_unfinished() -> list[Path]:
    """Remove (and return) the folders of :func:`new_temp_dir` the calling thread holds (none in place): the last
    act of a command stopped by Ctrl-C or SIGTERM, as a signal between a folder's creation and the ``try`` that
    removes it on failure leaves it behind, locked while the process lives."""
    removed = []
    for held, (fd, thread) in list(_HELD.items()):
        # another thread's build, still running
        if thread != threading.get_ident():
            continue
        shutil.rmtree(held, ignore_errors=True)
        if _HELD.pop(held, None) is not None:
            os.close(fd)
        if not os.path.lexists(held):
            removed.append(Path(held))
    return removed


def clean_leftovers(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary folders (and files) next to ``target`` left by writers on this host whose process has
    ended.

    A writer killed mid-build leaves a ``.tmp`` folder; one killed between the two renames of a swap on a
    system without an atomic exchange leaves the previous folder in a ``.old`` one and nothing at ``target``:
    that folder is moved back first, so the path holds the old version again. Returns the entries removed.
    """
    target = Path(target)
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    for entry in sorted(target.parent.iterdir()):
        m = _LEFTOVER.match(entry.name)
        if not m or m["name"] != target.name or not _abandoned(m, entry):
            continue
        previous = entry / "previous"
        if m["kind"] == "old" and previous.is_dir() and not os.path.lexists(target):
            os.replace(previous, target)
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        else:
            shutil.rmtree(entry, ignore_errors=True)
        if not os.path.lexists(entry):
            removed.append(entry)
    return removed


def replace_dir(
    tmp: Path, target: Path, *, overwrite: bool, replaceable: Callable[[Path], bool] | None = None
) -> None:
    """Move the finished folder ``tmp`` to ``target`` (made readable by all, 0o755).

    An empty folder at ``target`` is taken in either mode. Anything else there is replaced only with
    ``overwrite=True``, and only if ``replaceable(target)`` (when given) holds for what is there at the very
    moment of the swap: by an atomic exchange of the two folders where the system has one (Linux
    ``renameat2``), so that the path holds the old or the new folder at every instant; elsewhere by two
    renames, whose gap is closed again if the second fails, and otherwise by :func:`clean_leftovers` on the
    next write. Without ``overwrite``, an existing target means another writer finished first, and the call
    fails without touching it. ``tmp``'s lock (:func:`new_temp_dir`) is released.
    """
    os.chmod(tmp, 0o755)  # mkdtemp made it private (0o700); an index is read by others like any folder
    # on disk before it is in place: whole or absent after a power loss too
    for folder, _, names in os.walk(tmp):
        for name in names:
            _fsync(os.path.join(folder, name))
        _fsync(folder)
    try:
        _swap_in(tmp, target, overwrite, replaceable)
        _fsync(target.parent)  # the rename itself
    finally:
        # its lock: the folder is in place (or the swap failed, and the caller removes it)
        if (held := _HELD.pop(str(tmp), None)) is not None:
            os.close(held[0])
        _release_gone()  # a sharded build's shard folders, moved in with it


def _swap_in(tmp: Path, target: Path, overwrite: bool, replaceable: Callable[[Path], bool] | None) -> None:
    if is_empty_dir(target):  # taken in either mode; rmdir refuses a folder that has filled since
        with contextlib.suppress(OSError):
            os.rmdir(target)
    taken = FileExistsError(f'{target} appeared while it was being written; pass mode="overwrite".')
    changed = FileExistsError(f"{target} became something that may not be replaced; nothing was changed.")
    if not os.path.lexists(target):
        try:
            if _renameat2(tmp, target, _RENAME_NOREPLACE):
                return
        except FileExistsError:  # it appeared just now
            if not overwrite:
                raise taken from None
        if not os.path.lexists(target):
            os.rename(tmp, target)  # the check-then-rename gap is the best a system without renameat2 offers
            return
    if not overwrite:
        raise taken
    if _renameat2(tmp, target, _RENAME_EXCHANGE):
        if replaceable is not None and not replaceable(tmp):  # what was swapped out may not be replaced
            _renameat2(tmp, target, _RENAME_EXCHANGE)
            raise changed
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the previous folder
        return
    if replaceable is not None and not replaceable(target):
        raise changed
    old = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), suffix=".old", dir=target.parent))
    os.replace(target, old / "previous")
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old / "previous", target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def is_empty_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder (not a link to one) holding nothing."""
    try:
        return not os.path.islink(path) and os.path.isdir(path) and not os.listdir(path)
    except OSError:  # unreadable: not known to be empty
        return False


def slug(text: str, *, bound: bool = True) -> str:
    """``text`` reduced to characters safe in a file name (``irds:`` prefixes dropped), at most 150 of them: a
    longer one (a ``files:`` spec of three long paths) keeps its first 130 and a hash of the whole (room is left
    for the temporary names made from it, within the 255 bytes of a file name).

    >>> slug("irds:beir/scifact/test")
    'beir_scifact_test'
    """
    safe = re.sub(r"[^A-Za-z0-9._=-]+", "_", text.replace("irds:", "")).strip("_")
    if len(safe) <= 150 or not bound:  # bound=False: the name before 2026-11-29, whatever its length
        return safe
    return f"{safe[:130]}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
