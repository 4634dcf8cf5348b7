"""Files and folders written whole or not at all, and names that are safe as file names.

Everything this package writes (indexes, result files, pools, figures) goes through here: the content is
written under a hidden temporary name next to the target and renamed into place as the last step, so an
interrupted write never leaves a half-written file where a reader would take it for a finished one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "atomic_write_text", "atomic_write_json", "new_temp_dir", "replace_dir", "slug"]


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before any thread of ours runs
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], Any]) -> Path:
    """Create ``path`` by calling ``write(tmp)`` on a temporary sibling, then renaming it into place.

    The temporary file keeps the target's suffix (writers such as matplotlib choose the format by it) and
    is removed if ``write`` fails. The finished file gets the usual permissions (0666 minus the umask).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False))


def new_temp_dir(target: str | os.PathLike[str]) -> Path:
    """A new hidden folder next to ``target``, to be filled and then moved into place by :func:`replace_dir`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))


def replace_dir(tmp: Path, target: Path, *, overwrite: bool) -> None:
    """Move the finished folder ``tmp`` to ``target`` (made readable by all, 0o755).

    An existing ``target`` is swapped out (renamed aside, then deleted) only with ``overwrite=True``; otherwise
    it means another writer finished first, and the call fails without touching it.
    """
    if target.exists():
        if not overwrite:
            raise FileExistsError(f'{target} appeared while it was being written; pass mode="overwrite".')
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        os.replace(target, old / "previous")
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)
    os.chmod(target, 0o755)  # mkdtemp made it private (0o700); an index is read by others like any folder


def slug(text: str) -> str:
    """``text`` reduced to characters safe in a file name (``irds:`` prefixes dropped).

    >>> slug("irds:beir/scifact/test")
    'beir_scifact_test'
    """
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text.replace("irds:", "")).strip("_")
