"""The limit on a process's open files, raised as far as a build or an index of many shards needs."""

from __future__ import annotations

import errno
import os
import weakref
from typing import Any

__all__ = ["allow_open_files"]

#: open files promised to the memory-mapped indexes alive (by ``id``; they open them at their first search)
_PROMISED: dict[int, int] = {}


def allow_open_files(needed: int, what: str, fix: str, *, holder: Any = None) -> None:
    """Make room for ``needed`` more open files (``what`` holds them, e.g. "a build of 300 shards"; ``holder``:
    an object that keeps them open as long as it lives, as a memory-mapped index): the soft limit (1024 on many
    systems) is raised toward the hard one, as far as needed; a hard limit too low is an OSError naming ``fix``
    and the limit, before any work, where the files would otherwise fail to open midway."""
    try:
        import resource
    except ImportError:  # no such limit to raise (Windows)
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # the files open now (the caller's, other indexes'), or promised to indexes not searched yet
    promised = sum(n for key, n in _PROMISED.items() if key != id(holder)) + (
        needed if holder is not None else 0
    )
    try:
        want = max(needed + len(os.listdir("/proc/self/fd")), promised) + 64
    except OSError:  # no /proc (macOS)
        want = max(needed, promised) + 256
    room = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        if room > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (room, hard))
        if room < want:
            raise OSError(
                errno.EMFILE,
                f"{what} holds {needed} files open at once, and this process may open at most {hard} (`ulimit "
                f"-Hn`): {fix}, or raise the limit to {want} or more (ulimit -n {want}, as root or in "
                "/etc/security/limits.conf)",
            )
    if holder is not None:
        if id(holder) not in _PROMISED:
            weakref.finalize(holder, _PROMISED.pop, id(holder), None)  # given back when the index is dropped
        _PROMISED[id(holder)] = needed
