"""The command line's index cache on disk: the folder of a dataset's entries, entries named as before, and an
entry a crash left unreadable."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import warnings
from pathlib import Path
from typing import Any

from .files import slug

__all__ = [
    "DAMAGED",
    "clear_unreadable_entry",
    "identity_before",
    "index_folder",
    "outdated_entries",
    "record_identity",
    "say_outdated",
]


#: what a cache entry that cannot be read is called when it is rebuilt (a warning, however quiet the build)
DAMAGED = "it is damaged"


def index_folder(index_dir: str | os.PathLike[str], dataset_id: str | Any, *, by_corpus: bool = True) -> Path:
    """Where the cached indexes of a dataset (its id, or a loaded one) live: ``index_dir/<the spec of its documents
    as a file name>`` (:func:`.datasets.corpus_spec`: the datasets of one corpus share it). ``by_corpus=False``:
    the dataset's own spec, which named it before 2026-11-30 (a folder made under the whole name before names were
    bounded, 2026-11-29, is still used)."""
    from .datasets import corpus_spec, dataset_spec

    dataset_id = corpus_spec(dataset_id) if by_corpus else dataset_spec(dataset_id)
    earlier = Path(index_dir) / slug(dataset_id, bound=False)
    return (
        earlier if 150 < len(earlier.name) <= 255 and earlier.is_dir() else Path(index_dir) / slug(dataset_id)
    )


def identity_before(dataset_id: str | Any, identity: str) -> str:
    """:func:`.datasets.dataset_identity` as it was before 2026-11-30: the dataset's own spec in place of that of
    its documents."""
    from .datasets import corpus_spec, dataset_spec

    spec, corpus = dataset_spec(dataset_id), corpus_spec(dataset_id)
    return spec + identity[len(corpus) :] if identity.startswith(corpus) else identity


#: the files an index of this package holds (single, or shards in their folders)
_INDEX_FILES = ("pt_meta.json", "docnos.json", "vocab.json")  # and .npy arrays; shards in shard-NNN folders


def _index_file(p: Path, root: Path) -> bool:
    if p.is_dir():
        return p.parent == root and p.name.startswith("shard-")
    return p.name in _INDEX_FILES or p.suffix == ".npy"


def _meta_unreadable(path: Path) -> bool:
    """Whether ``path/pt_meta.json`` is missing, empty or not JSON (what a crash leaves); False when it reads as
    JSON, or cannot be read now (an I/O error may pass: the index is kept)."""
    meta = path / "pt_meta.json"
    if not meta.exists():
        return True
    try:
        json.loads(meta.read_bytes())
    except OSError:
        return False
    except ValueError:  # empty, cut short, not UTF-8
        return True
    return False


def clear_unreadable_entry(path: Path) -> None:
    """A cache entry at ``path`` whose ``pt_meta.json`` is missing, empty or cut short (a crash of the machine
    during a build) is removed, so that it is rebuilt like any damaged entry, when it holds only an index's files
    (``pt_meta.json``, ``docnos.json``, ``vocab.json``, ``.npy`` arrays, ``shard-NNN`` folders of them); anything
    else there (a file of the user's, metadata that reads but is not an index's) is left, and the build refuses it
    naming it."""
    if not path.is_dir() or path.is_symlink() or not _meta_unreadable(path):
        return
    if all(_index_file(p, path) for p in path.rglob("*")):
        # a warning, shown however quiet the build: damage is news, a rebuild of an outdated entry is not
        warnings.warn(f"Rebuilding {path}: {DAMAGED} (its metadata cannot be read)", stacklevel=2)
        shutil.rmtree(path)


def outdated_entries(folder: Path) -> list[tuple[Path, str]]:
    """The entries in ``folder`` (and in its ``pool-*`` folders, the pooled indexes of ``sparse-eval sdm``) that no
    system of this version reads again, and why: an index of an earlier analyzer version (its terms are not this
    version's), or of this version without its language's chain mark (:func:`missing_mark`), or index format. Nothing removes them."""
    from ._format import FORMAT_VERSION
    from ._tokenize import ANALYZER_VERSION, missing_mark

    out = []
    entries = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    entries += [
        p for pool in entries if pool.name.startswith("pool-") for p in sorted(pool.iterdir()) if p.is_dir()
    ]
    for path in entries:
        try:
            meta = json.loads((path / "pt_meta.json").read_bytes())
            encoder = meta.get("encoder") or {}
            version = encoder.get("analyzer_version") if encoder.get("type") == "bm25" else None
            written = meta.get("format_version")
            if isinstance(written, int) and written < FORMAT_VERSION:  # (a newer package's index is not said)
                out.append((path, f"index format {written}"))
            elif isinstance(version, int) and version < ANALYZER_VERSION:
                out.append((path, f"analyzer version {version}"))
            elif version == ANALYZER_VERSION and (lacking := missing_mark(encoder["analyzer"])):
                out.append((path, lacking))
        except (OSError, ValueError, AttributeError):  # not an index's, or unreadable: not said
            continue
    return out


_EDITED = "the corpus file edited since"
_REREAD = "its documents read as an earlier version read them"


def _no_reader(identity: str) -> str:
    return re.sub(r"\|reader=\d+", "", identity)


def record_identity(entry: Path, identity: str) -> None:
    """Beside a cache entry just built, the identity of the documents it holds (``.ENTRY.identity``, as taken
    before the build): an entry of a local corpus file edited since is then told apart (:func:`_earlier_corpus`).
    Not written (a record for later reports, not worth failing a build) where it cannot be."""
    from .files import atomic_write_text

    try:
        atomic_write_text(entry.parent / f".{entry.name}.identity", identity)
    except OSError:
        pass


def _earlier_corpus(folder: Path, identity: str) -> list[tuple[Path, str]]:
    """The entries of ``folder`` built from the same local corpus file (``...|corpus=PATH:size:mtime:ctime``)
    before it was edited, or read by an earlier version of the reader: never read again (the cache key holds the
    file's size and times and the reader's version)."""
    if "|corpus=" not in identity:
        return []
    out = []
    for record in sorted(folder.glob(".*.identity")):
        entry = folder / record.name[1 : -len(".identity")]
        try:
            recorded = record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        # the same file (its path): edited since (its size or times), or read by an earlier reader (reader=)
        old, new = _no_reader(recorded), _no_reader(identity)
        if entry.is_dir() and recorded != identity and old.rsplit(":", 3)[0] == new.rsplit(":", 3)[0]:
            out.append((entry, _EDITED if old != new else _REREAD))
    return out


def say_outdated(folders: list[Path], identity: str = "") -> None:
    """Print the outdated entries of ``folders`` (:func:`outdated_entries`, and those of an earlier version of the
    local corpus file whose documents have ``identity``) with the space they take, once a build added an entry
    beside them."""
    found = [entry for folder in dict.fromkeys(folders) for entry in outdated_entries(folder)]
    found += [e for e in _earlier_corpus(folders[0], identity) if e[0] not in {p for p, _ in found}]
    if not found:
        return
    size = sum(f.stat().st_size for path, _ in found for f in path.rglob("*") if f.is_file())
    reasons = ", ".join(sorted({why for _, why in found}))
    edited = {why == _EDITED for _, why in found}
    by = "by an earlier version of the package or of the corpus file"
    if len(edited) == 1:
        by = "from an earlier version" if True in edited else "by an earlier version of the package"
    print(
        f"{len(found)} cached index{'es' * (len(found) > 1)} of this corpus {'were' if len(found) > 1 else 'was'} "
        f"built {by} "
        f"({reasons}) and will not be read again ({size / 2**20:,.1f} "
        "MiB): remove them to free the space: rm -r " + " ".join(shlex.quote(str(p)) for p, _ in found)
    )
