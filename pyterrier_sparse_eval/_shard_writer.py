"""Writing a :class:`~pyterrier_sparse_eval.ShardedIndex`: one writer per shard, one vocabulary, the corpus's
statistics merged when the stream ends (layout and guarantees in ``_sharded``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import uuid
from typing import Any

import numpy as np
import pandas as pd

from ._build import IndexWriter, check_mode, corpus_stats
from ._docno_checks import early_check
from ._format import ARTIFACT_TYPE, FORMAT_VERSION, META, PACKAGE_HINT, SHARDED_FORMAT, is_index_dir
from ._index import SparseIndex
from ._spill import write_from_spill
from .files import allow_open_files, new_temp_dir, remove_temp_dir, replace_dir

__all__ = ["ShardedWriter", "manifest_checksum", "shard_dir"]


def shard_dir(i: int) -> str:
    return f"shard-{i:03d}"


def manifest_checksum(manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


class ShardedWriter:
    """Spills each batch's documents to their shards' writers (document i to shard i mod N) and finishes every
    shard with the whole corpus's statistics. Quacks like an :class:`IndexWriter` for the indexers: one
    vocabulary (term ids) is shared by all shards, grown exactly as a single writer's would be."""

    def __init__(self, index: Any, num_shards: int, *, mode: str, encoder: dict[str, Any]):
        check_mode(index.path, mode)
        # each shard's 4 spill files and its temporary folder, locked
        allow_open_files(5 * num_shards, f"A build of {num_shards} shards", "use fewer shards")
        self.index = index
        self.mode = mode
        self.encoder = encoder
        self.num_shards = num_shards
        self.tmp = new_temp_dir(os.path.abspath(index.directory))  # as Ray workers (another cwd) find it
        self.vocab: dict[str, int] = {}
        self.num_docs = 0
        self.doclens: list[np.ndarray] = []
        self._started = time.time()
        self.writers: list[IndexWriter] = []
        try:
            # one at a time: those made before one that fails are aborted, not left to the garbage collector
            for i in range(num_shards):
                self.writers.append(
                    IndexWriter(SparseIndex(self.tmp / shard_dir(i)), mode="create", encoder=encoder)
                )
            # a docno twice across shards too, refused as its batch arrives
            self.seen = early_check(encoder)
        except BaseException:
            self.abort()
            raise
        for w in self.writers:
            w.vocab = self.vocab  # one term id space for the corpus
            w.seen = None

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        try:
            for w in self.writers:
                with contextlib.suppress(OSError):
                    w.abort()
        finally:
            remove_temp_dir(self.tmp)

    def term_ids(self, terms: list[Any]) -> np.ndarray:
        return self.writers[0].term_ids(terms)

    def add(
        self,
        docnos: list[str],
        terms: np.ndarray,
        values: np.ndarray,
        offsets: np.ndarray,
        doclen: np.ndarray,
    ) -> None:
        """Add a batch (as :meth:`IndexWriter.add`): document i of the corpus goes to shard i mod N."""
        n = len(docnos)
        if self.seen is not None:
            self.seen.add(docnos, lambda among: set().union(*(w.written_among(among) for w in self.writers)))
        offsets = np.asarray(offsets, dtype=np.int64)
        terms, values = np.asarray(terms), np.asarray(values)
        doclen = np.asarray(doclen, dtype=np.float32)
        shard_of = (self.num_docs + np.arange(n)) % self.num_shards
        owner = np.repeat(shard_of, np.diff(offsets))
        for s, w in enumerate(self.writers):
            docs = np.flatnonzero(shard_of == s)
            if not len(docs):
                continue
            keep = owner == s
            sub_offsets = np.zeros(len(docs) + 1, dtype=np.int64)
            np.cumsum(offsets[docs + 1] - offsets[docs], out=sub_offsets[1:])
            w.add([docnos[i] for i in docs], terms[keep], values[keep], sub_offsets, doclen[docs])
        self.doclens.append(doclen)
        self.num_docs += n

    def finish(self, weight: Any = None, extra_meta: dict[str, Any] | None = None, ray: Any = None) -> None:
        """Merge the statistics, finish every shard with them (here, or as tasks on the Ray cluster ``ray``),
        write the manifest and move the index into place."""
        if self.num_docs == 0:
            raise ValueError("No documents were indexed: the document iterator was empty.")
        if self.num_docs < self.num_shards:
            raise ValueError(
                f"{self.num_docs} document{'s' * (self.num_docs != 1)} cannot fill {self.num_shards} shards: give at least as many documents "
                "as shards (or fewer shards)."
            )
        stats = corpus_stats(np.concatenate(self.doclens))  # in corpus order, as a single index computes them
        spills = [w.close() for w in self.writers]  # each shard's df spans the corpus's terms
        num_terms = len(self.vocab)
        df = np.zeros(num_terms, dtype=np.int64)
        for spill in spills:
            df += spill.df
        build_id = uuid.uuid4().hex
        metas = [
            {"shard": {"of": build_id, "index": i, "num_shards": self.num_shards}, **(extra_meta or {})}
            for i in range(self.num_shards)
        ]
        names = [shard_dir(i) for i in range(self.num_shards)]
        if ray is None:
            for spill, name, meta in zip(spills, names, metas):
                write_from_spill(spill, self.vocab, spill.folder, weight, meta, (stats, df))
                os.replace(spill.folder, self.tmp / name)
                # the spill's folder was private (0o700), as a temporary one is: readable as the index around it
                os.chmod(self.tmp / name, 0o755)
        else:
            from ._ray import finish_shards

            finish_shards(ray, spills, list(self.vocab), self.tmp, names, weight, metas, (stats, df))
        for w in self.writers:
            w.index.reload()
        records = [
            {"path": name, "build_id": w.index.meta["build_id"], "num_docs": w.index.meta["num_docs"]}  # type: ignore[attr-defined]
            for name, w in zip(names, self.writers)
        ]
        _check_unique([w.index.docnos for w in self.writers])  # type: ignore[attr-defined]
        manifest: dict[str, Any] = {
            "type": ARTIFACT_TYPE,
            "format": SHARDED_FORMAT,
            "package_hint": PACKAGE_HINT,
            "format_version": FORMAT_VERSION,
            "num_shards": self.num_shards,
            "num_docs": self.num_docs,
            "num_terms": num_terms,
            "assignment": "document i in shard i mod num_shards",
            "collection": stats,
            "encoder": self.encoder,
            "shards": records,
            "build_id": build_id,
            "built": {
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "seconds": round(time.time() - self._started, 3),
                "engine": "local" if ray is None else "ray",
                "by": PACKAGE_HINT,
            },
        }
        manifest["checksum"] = manifest_checksum(manifest)
        with open(self.tmp / META, "w", encoding="utf-8") as f:  # last: its presence marks a complete index
            json.dump(manifest, f, indent=2, ensure_ascii=False)
        try:
            check_mode(self.index.path, self.mode)
            replace_dir(
                self.tmp, self.index.directory, overwrite=self.mode == "overwrite", replaceable=is_index_dir
            )
        except BaseException:
            remove_temp_dir(self.tmp)
            raise
        self.index.reload()


def _check_unique(parts: list[np.ndarray]) -> None:
    """Refuse a docno found in two shards (each shard refused its own duplicates), as a single index refuses it."""
    # hashed, not sorted: numpy's fixed-width strings would pad every docno to the longest
    docnos = pd.Series(np.concatenate([np.asarray(part, dtype=object) for part in parts]), dtype=object)
    dup = docnos.duplicated()
    if dup.any():
        examples = sorted(set(docnos[dup].head(5)))
        raise ValueError(f"Duplicate docnos in the corpus, e.g. {examples}; docnos must be unique.")
