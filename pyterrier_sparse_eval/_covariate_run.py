"""The covariate itself: a full-corpus pooling run's view of a pool, per query (see :mod:`._covariate` for how
SDM uses it)."""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._features import feature_matrix
from ._pool import Pool
from ._sample import in_set, run_frame

__all__ = ["Covariate"]


def check_pool(pool: Any, made: str = "sdm.build_pool(...) or sdm.Pool.load(path)") -> None:
    """A TypeError unless ``pool`` is a :class:`Pool`, naming the fix: ``Pool.load`` for a path, else ``made``."""
    if not isinstance(pool, Pool):
        fix = "sdm.Pool.load(path)" if isinstance(pool, (str, os.PathLike)) else made
        raise TypeError(f"pool must be an sdm.Pool, not {type(pool).__name__}: pass {fix}.")


@dataclass(frozen=True, eq=False, repr=False)
class Covariate:
    """A full-corpus run's view of a pool, per query: the scores of the unseen documents in its top D, and of the
    pool's sampled documents there. Build it with :meth:`from_run` from the pooling run (the deeper the better:
    1000 holds nearly every unseen document that matters at k <= 100)."""

    pool: str  #: the pool's fingerprint
    depth: int  #: the run's deepest query
    unseen: dict[str, np.ndarray]
    sampled: dict[str, dict[str, float]]
    #: the run's ``features`` columns (0: none), per query of the unseen top documents (rows as ``unseen``) and of
    #: the sampled ones
    n_features: int = 0
    unseen_features: dict[str, np.ndarray] = field(default_factory=dict)
    sampled_features: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def from_run(cls, run: Any, pool: Pool) -> Covariate:
        """The covariate of ``pool`` read off its full-corpus pooling ``run``; a ``features`` column (PyTerrier's:
        an array per row, e.g. from :class:`MatchedTerms`) is used beside the score (module docstring, step 1)."""
        check_pool(pool, "the sdm.Pool built from run")
        frame = run_frame(run, "covariate run")
        if frame.duplicated(["qid", "docno"]).any():
            raise ValueError(
                "The covariate run lists a document twice for a query; pass one ranking per query."
            )
        if frame.empty:
            raise ValueError(
                "The covariate run is empty: pass the full-corpus pooling run the pool was built from."
            )
        infinite = ~np.isfinite(frame["score"].to_numpy(dtype=np.float64))
        if infinite.any():
            raise ValueError(
                f"The covariate run has {int(infinite.sum())} scores that are not finite: its scores model the "
                "system's, so they must be finite. Drop those rows (a document it does not rank is modelled with "
                "the rest of the corpus) or replace them by finite scores."
            )
        feats = feature_matrix(run)
        in_pool = in_set(frame["docno"], pool.docno_set)
        if not in_pool.any():
            raise ValueError(
                f"The covariate run ranks no document of {pool!r} (e.g. {frame['docno'].head(3).tolist()}): pass the "
                "full-corpus run the pool was built from, with the corpus's docnos."
            )
        is_sampled = in_set(frame["docno"], pool.sample_set)
        x = frame["score"].to_numpy(dtype=np.float64)
        docnos = frame["docno"].to_numpy(dtype=object)
        unseen: dict[str, np.ndarray] = {}
        sampled: dict[str, dict[str, float]] = {}
        unseen_f: dict[str, np.ndarray] = {}
        sampled_f: dict[str, dict[str, np.ndarray]] = {}
        depth = 0
        for qid, rows in frame.groupby("qid", sort=False).indices.items():
            depth = max(depth, len(rows))
            outside = rows[~in_pool[rows]]
            if len(outside) > pool.n_unseen:
                raise ValueError(
                    f"The covariate run ranks {len(outside)} documents outside the pool for query {qid}, but the "
                    f"corpus has only {pool.n_unseen} unseen ones: pass the full-corpus run the pool was built from."
                )
            unseen[str(qid)] = x[outside]
            mine = rows[is_sampled[rows]]
            sampled[str(qid)] = dict(zip(docnos[mine].tolist(), x[mine].tolist()))
            if feats is not None:
                unseen_f[str(qid)] = feats[outside]
                sampled_f[str(qid)] = dict(zip(docnos[mine].tolist(), feats[mine]))
        if pool.n_unseen and len(frame) and not any(len(x) for x in unseen.values()):
            raise ValueError(
                f"The covariate run ranks no document outside the pool ({depth} per query at most): it looks like a "
                "run over the pooled corpus, or one cut at the pool's depth; pass the full-corpus run the pool was "
                "built from, 1000 deep."
            )
        n_features = 0 if feats is None else feats.shape[1]
        return cls(pool.fingerprint, depth, unseen, sampled, n_features, unseen_f, sampled_f)

    def check(self, pool: Pool) -> Covariate:
        if pool.fingerprint != self.pool:
            raise ValueError(
                f"This covariate was built for pool #{self.pool}, not {pool!r}: build it with "
                "Covariate.from_run(pooling_run, pool) for the pool the run was retrieved from."
            )
        return self

    def design(self, qid: str, names: list[str], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Query ``qid``'s covariates (one row per document, the score first) of its sampled top documents
        ``names`` (pooling scores ``x``) and of its unseen top documents."""
        x_unseen = self.unseen.get(qid, np.zeros(0))
        if not self.n_features:
            return x[:, None], x_unseen[:, None]
        mine = self.sampled_features.get(qid, {})
        f = np.array([mine[d] for d in names], dtype=np.float64).reshape(len(names), self.n_features)
        f_unseen = self.unseen_features.get(qid, np.zeros((0, self.n_features)))
        return np.column_stack([x, f]), np.column_stack([x_unseen, f_unseen])

    @functools.cached_property
    def fingerprint(self) -> str:
        """A hash of what the covariate holds: two covariates of one pool (two pooling runs) differ in it, and so
        do the names of SDM measures given them (``pt.Experiment`` keeps one column per name)."""
        h = hashlib.sha1(self.pool.encode())
        for q in sorted(self.unseen):
            mine, features = self.sampled.get(q, {}), self.sampled_features.get(q, {})
            h.update(f"\0{q}\0".encode() + np.asarray(self.unseen[q], dtype=np.float64).tobytes())
            h.update(np.asarray(self.unseen_features.get(q, ()), dtype=np.float64).tobytes())
            for d in sorted(mine):  # each sampled document: its docno, score and features, as bytes
                h.update(d.encode() + b"\0" + np.float64(mine[d]).tobytes())
                h.update(np.asarray(features.get(d, ()), dtype=np.float64).tobytes())
        return h.hexdigest()[:8]

    def __repr__(self) -> str:
        also = f", {self.n_features} feature(s)" if self.n_features else ""
        return f"Covariate(pool #{self.pool}, {len(self.unseen)} queries, depth {self.depth}{also}, #{self.fingerprint})"
