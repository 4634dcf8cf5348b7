"""Streams a result is written to: a pipe, a device, or an open descriptor named by path (``/dev/stdout``).

Such a target is appended to once the whole has been written, never replaced by a file (:func:`files.atomic_write`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import BinaryIO

#: a process's open descriptors by name (``/dev/stdout`` is a link to descriptor 1, which the kernel resolves: its
#: text target, "pipe:[123]" or the file the shell opened, is no path to write to by name)
_DESCRIPTOR = re.compile(r"/dev/(stdout|stderr|fd/\d+)$|/proc/(self|thread-self|\d+)/fd/")
_OWN_DESCRIPTOR = r"/dev/(stdout|stderr|fd/\d+)|/proc/(self|thread-self|{pid})/fd/\d+"  # of this process


def _special(path: str | os.PathLike[str]) -> bool:
    """``/dev/stdout``, ``/dev/fd/N`` or ``/proc/<pid>/fd/...``: an open descriptor (``/dev/shm`` is a file system)."""
    return bool(_DESCRIPTOR.match(os.path.abspath(path)))


def written_path(path: str | os.PathLike[str]) -> Path:
    """The path a write of ``path`` goes to: a symbolic link's target (the link is kept), else ``path``; a link
    to an open descriptor (``/dev/stdout``) as given, for the kernel to resolve."""
    if not Path(path).is_symlink() or _special(path) or _special(os.path.realpath(path)):
        return Path(path)
    return Path(os.path.realpath(path))


def is_stream(path: Path) -> bool:
    """Whether ``path`` is a pipe or a device, or an open descriptor (``/dev/stdout`` redirected to a file too):
    appended to (a shell's ``>>`` keeps what it holds), never replaced by a file."""
    return _special(path) or (path.exists() and not path.is_file() and not path.is_dir())


def append_to_stream(path: Path, data: BinaryIO) -> None:
    """Append ``data`` to the stream ``path``; a descriptor of this process (``/dev/stdout``, ``/dev/fd/N``) through
    itself, so that its offset moves on (a file reopened, the next writer to a shell's ``>`` overwrote the JSON)."""
    own = re.fullmatch(_OWN_DESCRIPTOR.format(pid=os.getpid()), os.path.abspath(path))
    fd = ({"stdout": 1, "stderr": 2}.get(own[1] or "") or int(own[0].rsplit("/", 1)[1])) if own else -1
    # a regular file only: a pipe has no offset, and the parent may have left its own non-blocking
    with contextlib.suppress(OSError):
        fd = fd if fd >= 0 and stat.S_ISREG(os.fstat(fd).st_mode) else -1
    if fd in (1, 2):  # what print() holds for it goes first
        with contextlib.suppress(AttributeError, ValueError):
            (sys.__stdout__ if fd == 1 else sys.__stderr__).flush()  # type: ignore[union-attr]
    with open(path, "ab") if fd < 0 else open(fd, "wb", closefd=False) as out:
        shutil.copyfileobj(data, out)
