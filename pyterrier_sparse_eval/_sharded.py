"""ShardedIndex: a corpus split into ordinary SparseIndex shards that score with the whole corpus's statistics.

A sharded index is a folder holding a manifest (``pt_meta.json``, format ``sharded``) and N shard folders
``shard-000``, ``shard-001``, ... Each shard is a complete :class:`~pyterrier_sparse_eval.SparseIndex` over
every N-th document of the corpus (document i goes to shard i mod N), written with the statistics of the whole
corpus: N, the document lengths' mean (and Lucene's docCount and sumTotalTermFreq) decide its BM25 weights, and
the corpus's document frequencies, stored in each shard as ``collection_df.npy`` (as for a subset), decide the
idf. All shards share the corpus's term ids. So a document's weights, its query's weights and the order in which
its score is summed are those of a single index built from the same documents in the same batches: its float32
score is the same, bit for bit, and a merge of the shards' top k in the retriever's tie order is the single
index's run.

The build is two-phase, in bounded memory: documents are analysed (or encoded) once, in batches, each batch's
documents spilled to their shard's writer; when the stream ends the statistics are merged and every shard is
finalised with them, one after the other. Everything is written inside one hidden temporary folder that is moved
into place last, so a failed build leaves nothing, and an overwrite leaves the old or the new index.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyterrier as pt

from ._build import SparseIndexer, check_mode, index_meta, write_index_dir
from ._docnos import (
    code_point_order,
)
from ._format import (
    ARTIFACT_TYPE,
    FORMAT_VERSION,
    META,
    PACKAGE_HINT,
    SHARDED_FORMAT,
    IndexCorruptError,
    StaleIndexError,
    generation,
    handle_path,
    has_meta,
    index_format,
    require_meta,
    unless_rebuilt,
)
from ._index import SparseIndex, handle_state, read_from_disk
from ._shard_writer import ShardedWriter, manifest_checksum
from ._sharded_search import ShardedRetriever
from .files import allow_open_files

__all__ = ["ShardedIndex", "ShardedRetriever"]  # the retriever: _sharded_search


class ShardedIndex(pt.Artifact):
    """A sparse index split into ``num_shards`` :class:`SparseIndex` shards scored with the whole corpus's
    statistics: every document scores exactly as in a single index over the corpus, and the merged run of
    :meth:`retriever` equals the single index's run (documents, order and float32 scores).

    ::

        index = pse.ShardedIndex("indexes/scifact-bm25-x3", num_shards=3)
        pse.BM25().indexer(index).index(dataset.get_corpus_iter())     # raw text, BM25 weights
        index.indexer().index(docs_with_toks)                           # precomputed {term: weight} dicts
        pse.BM25().retriever(index, num_results=1000)                   # or index.retriever(...) for toks

    Args:
        path: the folder of the sharded index.
        num_shards: how many shards a build writes; an existing index with another number is refused.
        mmap: memory-map each shard's postings.
        checks: what opening each shard checks (see :class:`SparseIndex`).
    """

    ARTIFACT_TYPE = ARTIFACT_TYPE
    ARTIFACT_FORMAT = SHARDED_FORMAT
    ARTIFACT_PACKAGE_HINT = PACKAGE_HINT

    def __init__(
        self,
        path: str | os.PathLike[str],
        num_shards: int | None = None,
        *,
        mmap: bool = True,
        checks: str = "full",
    ):
        if num_shards is not None and (
            not isinstance(num_shards, (int, np.integer)) or isinstance(num_shards, bool) or num_shards < 1
        ):
            raise ValueError(f"num_shards must be a positive integer, got {num_shards!r}.")
        super().__init__(handle_path(path))
        self.num_shards_ = None if num_shards is None else int(num_shards)
        self.mmap = mmap
        self.checks = checks

    def __repr__(self) -> str:
        return f"ShardedIndex({str(self.path)!r})"

    @property
    def directory(self) -> Path:
        return Path(os.fspath(self.path))  # type: ignore[arg-type]

    def built(self) -> bool:
        """True when a complete sharded index exists at ``path``: its manifest is valid JSON and says so (a
        single index, or a damaged manifest, is not one; opening it says what is wrong)."""
        return index_format(self.directory) == SHARDED_FORMAT

    def reload(self) -> None:
        """Forget everything read from disk; the next use reads (and checks) the index now at ``path``."""
        for name in read_from_disk(self):
            self.__dict__.pop(name, None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its path and options (see :meth:`SparseIndex.__getstate__`)."""
        return handle_state(self)

    # --- the manifest and its shards ------------------------------------------------------------------------
    def _read_manifest(self) -> dict[str, Any]:
        """The manifest as on disk now, checked: a sharded index's, of a known version, its checksum right."""
        path = self.directory
        if not has_meta(path):  # else the checks below say what is wrong with it
            raise FileNotFoundError(
                f"No sharded index at {path}. Build one first, e.g. "
                f"pse.BM25().indexer(pse.ShardedIndex({str(path)!r}, num_shards=N)).index(docs)."
            )
        try:
            with open(path / META, encoding="utf-8") as f:
                manifest = json.load(f)
        except (ValueError, RecursionError):
            raise IndexCorruptError(
                f'{path / META}: not valid JSON; rebuild the index (mode="overwrite").'
            ) from None
        if not isinstance(manifest, dict) or manifest.get("format") != SHARDED_FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
            hint = f" open it with pse.SparseIndex({str(path)!r})." if found == "csr" else ""
            raise ValueError(f"{path} is not a sharded index (its pt_meta.json says format {found!r});{hint}")
        if int(manifest.get("format_version", 0)) > FORMAT_VERSION:
            raise ValueError(f"{path} was written by a newer pyterrier-sparse-eval; upgrade it.")
        if manifest.get("checksum") != manifest_checksum(manifest):
            raise IndexCorruptError(
                f"{path / META}: the manifest does not match its checksum (it was edited or is from a partial "
                'write); rebuild the index (mode="overwrite").'
            )
        return manifest

    @cached_property
    def _opened(self) -> tuple[dict[str, Any], tuple[int, int, int]]:
        path = self.directory
        # before reading: a rebuild meanwhile is stale
        seen = generation(path) if has_meta(path) else (0, 0, 0)
        manifest = self._read_manifest()
        if self.num_shards_ is not None and self.num_shards_ != manifest["num_shards"]:
            raise ValueError(
                f"{path} holds {manifest['num_shards']} shards, not num_shards={self.num_shards_}: open it "
                f'without num_shards, or rebuild it with mode="overwrite".'
            )
        return manifest, seen

    @property
    def meta(self) -> dict[str, Any]:
        """The manifest: the shards (folder, build id, documents), the corpus's statistics, the encoder."""
        return self._opened[0]

    @property
    def build_id(self) -> str:
        return str(self.meta["build_id"])

    def check_current(self) -> None:
        """Raise :class:`StaleIndexError` if the index at ``path`` was rebuilt after this handle opened it (a copy of
        the same build, or a ``touch``, is the same build: its manifest's build id says so)."""
        manifest, seen = self._opened
        with contextlib.suppress(OSError, ValueError):
            if (current := generation(self.directory)) == seen:
                return
            # the same build: its new identity remembered
            if self._read_manifest().get("build_id") == manifest.get("build_id"):
                self.__dict__["_opened"] = (manifest, current)
                return
        raise StaleIndexError(
            f"The sharded index at {self.path} was rebuilt (or moved or removed) after it was opened; call "
            ".reload() or open it again."
        )

    def allow_maps(self) -> None:
        """The open-files limit raised for every shard's arrays, which stay open, mapped (``mmap=True``): once a
        handle (and again after a reload, or in the process that unpickles it)."""
        _ = self._maps_allowed

    @cached_property
    def _maps_allowed(self) -> bool:
        if self.mmap:
            allow_open_files(
                5 * len(self.meta["shards"]),
                f"{self!r}, memory-mapped,",
                "open it with mmap=False",
                holder=self,
            )
        return True

    @cached_property
    def shards(self) -> list[SparseIndex]:
        """The shards, each checked against the manifest (present, complete, of this build)."""
        manifest = self.meta
        self.allow_maps()
        out = []
        # a shard of another build, found as another process rebuilds the index, is staleness, not damage
        with unless_rebuilt(self.directory, self._opened[1]):
            for i in range(len(manifest["shards"])):
                shard = SparseIndex(self._shard_dir(manifest, i), mmap=self.mmap, checks=self.checks)
                self._check_shard(manifest, i, lambda s=shard: s.meta)
                out.append(shard)
        return out

    def _shard_dir(self, manifest: dict[str, Any], i: int) -> Path:
        where = self.directory / manifest["shards"][i]["path"]
        if not (where / META).is_file():
            raise IndexCorruptError(
                f"shard {i} of {manifest['num_shards']} ({where}) is missing or incomplete (no {META}); the "
                f'sharded index at {self.path} is damaged: rebuild it (mode="overwrite").'
            )
        return where

    def _check_shard(self, manifest: dict[str, Any], i: int, read: Any) -> dict[str, Any]:
        """``read()`` shard ``i``'s metadata (opening or verifying it) and check that it is the shard this
        manifest was built with; an error names the shard."""
        record = manifest["shards"][i]
        name = f"shard {i} of {manifest['num_shards']} ({self.directory / record['path']})"
        try:
            meta: dict[str, Any] = read()
        except (IndexCorruptError, ValueError, OSError) as e:
            raise IndexCorruptError(f"{name} is damaged: {e}") from None
        info = meta.get("shard") or {}
        if meta.get("build_id") != record["build_id"] or info.get("of") != manifest["build_id"]:
            raise IndexCorruptError(
                f"{name} is not the shard this manifest was built with (build {meta.get('build_id')!r}, "
                f"part of {info.get('of')!r}; the manifest expects build {record['build_id']!r} of "
                f"{manifest['build_id']!r}): shards of different builds are never mixed; rebuild the index "
                '(mode="overwrite").'
            )
        if meta["num_docs"] != record["num_docs"] or meta.get("encoder") != manifest["encoder"]:
            raise IndexCorruptError(f"{name} disagrees with the manifest on its documents or its encoder.")
        return meta

    def verify(self) -> dict[str, Any]:
        """Check everything: the manifest (its checksum, one record per shard, the documents adding up), every
        shard with :meth:`SparseIndex.verify` (every file's size, CRC-32 and invariants), that each shard is the
        one this manifest was built with, and that the folder holds nothing else. Raises
        :class:`IndexCorruptError` naming the shard and the file; returns the verified manifest with
        ``num_postings`` (all shards') added."""
        with unless_rebuilt(
            self.directory, generation(self.directory) if has_meta(self.directory) else None, "verified"
        ):
            return self._verify()

    def _verify(self) -> dict[str, Any]:
        manifest = self._read_manifest()
        records = manifest.get("shards")
        if (
            not isinstance(records, list)
            or len(records) != manifest.get("num_shards")
            or sum(r["num_docs"] for r in records) != manifest.get("num_docs")
        ):
            raise IndexCorruptError(f"{self.directory / META}: its shard records do not add up; rebuild it.")
        wanted = {META} | {r["path"] for r in records}
        foreign = sorted({p.name for p in self.directory.iterdir()} - wanted)
        if foreign:
            raise IndexCorruptError(
                f"{self.directory / foreign[0]}: not written by the build, in the sharded index folder; move it out."
            )
        postings = 0
        for i in range(len(records)):
            where = self._shard_dir(manifest, i)
            meta = self._check_shard(manifest, i, SparseIndex(where).verify)
            if meta["num_terms"] != manifest["num_terms"]:  # the shards share the corpus's term ids
                raise IndexCorruptError(
                    f"{where / META}: {meta['num_terms']} terms, not the corpus's; rebuild it."
                )
            postings += meta["num_postings"]
        return {**manifest, "num_postings": postings}

    @property
    def num_shards(self) -> int:
        return int(self.meta["num_shards"])

    @property
    def num_docs(self) -> int:
        return int(self.meta["num_docs"])

    @property
    def encoder(self) -> dict[str, Any]:
        encoder: dict[str, Any] = self.meta.get("encoder", {"type": "toks"})
        return encoder

    @cached_property
    def docnos(self) -> np.ndarray:
        """Every docno of the corpus, in corpus order (document i is in shard i mod N)."""
        out = np.empty(self.num_docs, dtype=object)
        for i, shard in enumerate(self.shards):
            out[i :: self.num_shards] = shard.docnos
        return out

    def subset(
        self,
        docnos: Iterable[str],
        path: str | os.PathLike[str],
        *,
        mode: str = "create",
        extra_meta: dict[str, Any] | None = None,
    ) -> SparseIndex:
        """A single :class:`SparseIndex` of ``docnos`` keeping the corpus's statistics: the same index (arrays,
        scores) as :meth:`SparseIndex.subset` cuts from a single index of the corpus (a pool for SDM)."""
        import scipy.sparse as sp

        from .datasets import FieldError

        wanted = list(dict.fromkeys(str(d) for d in docnos))
        position = {d: i for i, d in enumerate(self.docnos.tolist())}
        unknown = [d for d in wanted if d not in position]
        if unknown:
            raise FieldError(f"{len(unknown)} docnos are not in {self!r}, e.g. {unknown[:5]}.")
        if not wanted:
            raise ValueError("A subset needs at least one document.")
        cols = np.sort(np.fromiter((position[d] for d in wanted), dtype=np.int64, count=len(wanted)))
        target = SparseIndex(path, mmap=self.mmap)
        check_mode(target.path, mode, sources=(self.path, *(shard.path for shard in self.shards)))
        n = self.num_shards
        parts, lens, order = [], [], []
        for i, shard in enumerate(self.shards):
            mine = cols[cols % n == i]
            parts.append(sp.csr_matrix(shard.postings[:, mine // n]))
            lens.append(np.asarray(shard.doclen)[mine // n])
            order.append(mine)
        perm = np.argsort(np.concatenate(order), kind="stable")  # back to corpus order
        sub = sp.csr_matrix(sp.hstack(parts, format="csr")[:, perm])
        sub.sort_indices()
        doclen = np.concatenate(lens)[perm]
        sub_docnos = self.docnos[cols].tolist()
        rank = code_point_order(sub_docnos)
        docno_rank = np.empty(len(cols), dtype=np.int32)
        docno_rank[rank] = np.arange(len(cols), dtype=np.int32)
        stats = self.meta["collection"]
        collection = {k: stats[k] for k in ("num_docs", "doc_count", "avgdl")} | {"parent": str(self.path)}
        meta = index_meta(
            num_docs=len(cols),
            num_terms=self.shards[0].num_terms,
            num_postings=int(sub.nnz),
            avgdl=float(doclen.mean()),
            encoder=self.encoder,
            built={"subset_of": str(self.path)},
            extra={"collection": collection, **(extra_meta or {})},
        )
        files = {
            "postings.indptr.npy": sub.indptr.astype(np.int64),
            "postings.indices.npy": sub.indices.astype(np.int32),
            "postings.data.npy": sub.data.astype(np.float32),
            "doclen.npy": doclen,
            "docno_rank.npy": docno_rank,
            "collection_df.npy": np.asarray(self.shards[0].collection_df, dtype=np.int64),
        }
        write_index_dir(
            target, mode, files, {"vocab.json": self.shards[0].vocab, "docnos.json": sub_docnos}, meta
        )
        return target

    # --- factories -----------------------------------------------------------------------------------------
    def writer(self, *, mode: str, encoder: dict[str, Any]) -> ShardedWriter:
        """The writer an indexer fills (see :class:`ShardedWriter`)."""
        shards = self.num_shards_
        # a rebuild of an index opened without num_shards (pse.open_index) keeps its number of shards
        if shards is None and mode == "overwrite" and has_meta(self.directory):
            with contextlib.suppress(IndexCorruptError, ValueError, OSError, KeyError):
                shards = int(self._read_manifest()["num_shards"])
        if shards is None:
            raise ValueError(
                f"Say how many shards to build: pse.ShardedIndex({str(self.path)!r}, num_shards=N)."
            )
        return ShardedWriter(self, shards, mode=mode, encoder=encoder)

    def indexer(
        self, *, mode: str = "create", batch_size: int = 10_000, verbose: bool = True, **kwargs: Any
    ) -> SparseIndexer:
        """An indexer for documents that already carry ``toks`` ({term: weight} dicts); ``engine="ray"``,
        ``ray_address`` and ``num_workers`` as for :class:`SparseIndexer`."""
        return SparseIndexer(self, mode=mode, batch_size=batch_size, verbose=verbose, **kwargs)

    def retriever(
        self,
        *,
        num_results: int = 1000,
        engine: str = "local",
        ray_address: str | None = None,
        **kwargs: Any,
    ) -> ShardedRetriever:
        """A retriever over every shard whose merged run equals a single index's (see :class:`ShardedRetriever`);
        the other arguments are :class:`SparseRetriever`'s."""
        return ShardedRetriever(
            self, num_results=num_results, engine=engine, ray_address=ray_address, **kwargs
        )


def open_index(path: str | os.PathLike[str]) -> SparseIndex | ShardedIndex:
    """The index at ``path``: a :class:`ShardedIndex` when its ``pt_meta.json`` says so, else a
    :class:`SparseIndex` (whose checks say what is wrong with its metadata); see :func:`require_meta`."""
    require_meta(path := handle_path(path))
    return ShardedIndex(path) if index_format(path) == SHARDED_FORMAT else SparseIndex(path)
