"""The IDF-weighted exact top-k retriever over a sparse index."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyterrier as pt
import scipy.sparse as sp

from ._attributes import InitAttributes
from ._docnos import DocnoTable, docno_values, empty_docno_column, result_frame, take_column, take_docnos
from ._format import StaleIndexError, has_meta, refuse_path
from ._lucene import lucene_product, nudge_ties
from ._numba import available_backends
from ._records import _as_text, column_texts, validate_queries
from ._tokenize import Analyzer
from ._toks import query_weights
from ._topk import finite_scores, postings_per_row
from ._weights import lucene_idf
from .measures._prepare import user_stacklevel

__all__ = ["SparseRetriever"]

_BACKENDS = ("auto", "numba", "scipy")
_TIES = ("trec_eval", "lucene")
_OPTIONS = "num_results idf analyzer memory_budget backend threads verbose ties prune impacts bounds".split()
_Run = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # (query row, doc id, score, rank)


class SearchableIndex(Protocol):
    """What the retriever reads of an index (:class:`~pyterrier_sparse_eval.SparseIndex` provides it)."""

    path: Any

    @property
    def postings(self) -> sp.csr_matrix: ...
    @property
    def docnos(self) -> np.ndarray: ...
    @property
    def docno_table(self) -> DocnoTable: ...
    @property
    def docno_rank(self) -> np.ndarray: ...
    @property
    def rank_to_doc(self) -> np.ndarray: ...
    @property
    def df(self) -> np.ndarray: ...
    @property
    def collection_df(self) -> np.ndarray: ...
    @property
    def collection_doc_count(self) -> int: ...
    @property
    def idf(self) -> np.ndarray: ...
    @property
    def lucene_impacts(self) -> tuple[np.ndarray, np.ndarray]: ...
    @property
    def term_bounds(self) -> tuple[np.ndarray, np.ndarray] | None: ...
    @property
    def term_ids(self) -> dict[str, int]: ...
    @property
    def num_docs(self) -> int: ...
    @property
    def num_terms(self) -> int: ...
    @property
    def encoder(self) -> dict[str, Any]: ...
    @property
    def build_id(self) -> str: ...
    def built(self) -> bool: ...
    def check_current(self) -> None: ...


class SparseRetriever(InitAttributes, pt.Transformer):
    """Exact top-k retrieval by the score sum_t q_t * d_t * idf_t (or sum_t q_t * d_t with ``idf=False``).

    On an index of Lucene BM25 postings (``pse.BM25()``'s default; ``index.encoder["scoring"] == "lucene"``) the score
    is Lucene's instead: each query term adds w - w / (1 + x) with w = float32(q_t * idf_t) and x the stored
    posting, in float32, summed in float64 and rounded to float32, with idf from Lucene's docCount (documents that
    have a term); ``idf=False`` is refused there.

    Input: a query frame with ``qid`` and either ``query_toks`` ({term: weight}; when present it is searched and
    ``query`` is not read, whichever model made it) or ``query`` text (analysed with ``analyzer``, or with the
    analyzer recorded in the index). Output: the query columns plus ``docno``,
    ``score`` and ``rank`` (0-based), ranked by score descending and then docno descending, the order
    trec_eval uses to break ties, so a run evaluates identically everywhere; only documents sharing a term
    with the query are returned, and with signed weights only those scoring other than 0 (as scipy's product).
    Learned weights' scores are float32 sums in term-id order, ids in the order terms first appear in the build:
    builds with other batch sizes can differ in a score's last bit (BM25's Lucene scores, summed in float64, not).

    Backends (identical rankings and bit-identical float32 scores; tests check it):

    - ``numba`` (default when numba is installed): term-at-a-time scatter-add into a reused, cache-sized
      accumulator block, then a linear-time selection of the best ``num_results`` by unique 64-bit
      (score, docno) keys and a radix sort of the winners, compiled; ``threads`` > 1 scores chunks of
      queries in parallel; with ``prune=True`` (the default) a running threshold (the k-th best score so far)
      drops every document below it before its selection key is built, and queries with many postings score
      whole blocks without per-document bookkeeping, adding each posting's precomputed Lucene contribution
      (``index.lucene_impacts``: computed on the first such query, 4 bytes per posting kept in memory); on Lucene
      indexes the terms whose largest contributions together cannot reach the threshold only add to documents
      the other terms made candidates (MaxScore's bound); exact: the same result as ``prune=False`` (see
      ``_prune``);
    - ``scipy``: queries scored in batches with a sparse-times-sparse product; a batch holds as many queries
      as fit in ``memory_budget`` bytes of score accumulators (bounded by the postings the batch touches).

    No dense queries x documents matrix is ever built. A query that shares no term with the index gets no rows.

    Args:
        index: the SparseIndex to search.
        num_results: how many documents to return per query.
        idf: multiply query weights by idf_t = ln(1 + (N - df_t + 0.5) / (df_t + 0.5)).
        analyzer: turns ``query`` text into terms; defaults to the index's own (BM25 indexes record it).
        memory_budget: bytes of score accumulators per batch of queries (``scipy`` backend, 16 bytes a score);
            the results (~48 bytes a row) and one query's temporaries come on top (BENCHMARKS.md, "memory budget").
        backend: ``"auto"`` (numba if installed, else scipy), ``"numba"`` or ``"scipy"``.
        threads: threads for the numba backend (default 1).
        prune: drop documents below the running k-th best score as they are scored (numba backend; exact).
        impacts: on an index of Lucene BM25 postings, precompute each posting's contribution on the first heavy
            query (``index.lucene_impacts``: 4 bytes per posting, kept in memory with the index handle) and add
            it instead of evaluating the formula (numba backend, ``prune=True``; the same scores either way).
        bounds: on an index of Lucene BM25 postings, bound each query term's contribution by its largest posting
            (``index.term_bounds``: 8 bytes per term, computed on first use) and, once the threshold exceeds the
            bounds of a query's lowest-bound terms, add those terms' postings only to documents that can still reach
            it (numba backend, ``prune=True``, queries scored with a touched list; the same scores either way).
        verbose: show a progress bar over query batches.
        ties: the order of documents with equal scores: ``"trec_eval"`` (larger docno first, the order every
            evaluator applies to a run) or ``"lucene"`` (smaller docno first, as Lucene's and Anserini's runs; tied
            scores are then nudged down by whole float32 steps so that evaluators keep that order).
    """

    def __init__(
        self,
        index: SearchableIndex,
        *,
        num_results: int = 1000,
        idf: bool = True,
        analyzer: Analyzer | None = None,
        memory_budget: int = 512 * 2**20,
        backend: str = "auto",
        threads: int = 1,
        verbose: bool = False,
        ties: str = "trec_eval",
        prune: bool = True,
        impacts: bool = True,
        bounds: bool = True,
    ):
        refuse_path(index)
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be 'auto', 'numba' or 'scipy', got {backend!r}.")
        if backend == "numba" and "numba" not in available_backends():
            raise ImportError("backend='numba' needs numba: pip install numba (or use backend='scipy').")
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}.")
        if not isinstance(num_results, (int, np.integer)) or isinstance(num_results, bool) or num_results < 1:
            raise ValueError(f"num_results must be a positive integer, got {num_results!r}.")
        if memory_budget < 1:
            raise ValueError("memory_budget must be a positive number of bytes.")
        for name, flag in (("prune", prune), ("impacts", impacts), ("bounds", bounds)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {flag!r}.")
        if ties not in _TIES:
            raise ValueError(f"ties must be one of {_TIES}, got {ties!r}.")
        # stored verbatim (PyTerrier's parameter tools read them back); resolved where used
        self.index = index
        self.num_results = num_results
        self.idf = idf
        self.analyzer = analyzer
        self.memory_budget = memory_budget
        self.backend = backend
        self.threads = threads
        self.verbose = verbose
        self.ties = ties
        self.prune = prune
        self.impacts = impacts
        self.bounds = bounds
        # the build this retriever serves: pinned (and checked) now if there is an index, else at first use
        self._build_id: str | None = index.build_id if has_meta(index.path) else None
        if self._build_id is not None:  # else at first use (_check_build)
            self._check_idf()

    @property
    def backend_(self) -> str:
        """The backend in use: ``backend``, with ``"auto"`` resolved."""
        return available_backends()[0] if self.backend == "auto" else self.backend

    def fuse_rank_cutoff(self, k: int) -> SparseRetriever | None:
        """``retriever % k``: the same retriever returning ``min(k, num_results)`` documents."""
        if k >= self.num_results:
            return self
        cut = SparseRetriever(self.index, **{**{n: getattr(self, n) for n in _OPTIONS}, "num_results": k})
        cut._build_id = self._build_id
        return cut

    def _check_build(self) -> None:
        """Serve only the build this retriever was made for (and never a mix of two)."""
        self.index.check_current()
        if self._build_id is None:
            self._build_id = self.index.build_id
            self._check_idf()
        elif self.index.build_id != self._build_id:
            raise StaleIndexError(
                f"The index at {self.index.path} was rebuilt after this retriever was created; create a new "
                "retriever from it (e.g. index.retriever(...)) to search the new build."
            )

    # -----------------------------------------------------------------------------------------------------
    def _analyzer(self) -> Analyzer:
        if self.analyzer is not None:
            return self.analyzer
        if self._index_analyzer is None:
            config = self.index.encoder.get("analyzer")
            if config is None:
                raise ValueError(
                    f"{self.index} was built from precomputed `toks` and has no text analyzer: give queries a "
                    "`query_toks` column (e.g. splade.query_encoder() >> index.retriever()), or pass analyzer=."
                )
            self._index_analyzer = Analyzer.from_config(config)
        return self._index_analyzer

    _index_analyzer: Analyzer | None = None

    def _query_weights(self, inp: pd.DataFrame) -> list[dict[str, float]]:
        if "query_toks" in inp.columns:
            toks = inp["query_toks"].tolist()
            for t in toks:
                if not isinstance(t, dict):
                    raise TypeError(f"`query_toks` must be a dict of term -> weight, got {type(t).__name__}.")
            return toks
        terms = self._analyzer().analyze_batch(column_texts(inp, "query"))
        return [dict(Counter(t)) for t in terms]

    def query_matrix(self, queries: Sequence[dict[str, float]]) -> sp.csr_matrix:
        """The (num_queries x num_terms) float32 matrix of query weights (times idf when ``idf=True``).

        Terms the index does not know are dropped.
        """
        term_ids = self.index.term_ids
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for i, q in enumerate(queries):
            for term, w in q.items():
                t = term_ids.get(term)
                if t is not None and w != 0:
                    rows.append(i)
                    cols.append(t)
                    vals.append(w)
                elif t is None and not isinstance(term, str):  # never a term of the index: the mistake said
                    raise TypeError(
                        f"`query_toks` terms must be strings, got {type(term).__name__} {term!r}: convert token ids "
                        "to their vocabulary strings (e.g. tokenizer.convert_ids_to_tokens), as the index holds them."
                    )
        values = query_weights(vals, cols, term_ids)
        cols_arr = np.asarray(cols, dtype=np.int64)
        with np.errstate(over="ignore"):
            if not np.isfinite(weighted := self._weighted(values, cols_arr)).all():
                raise ValueError(
                    "Query term weights beyond float32's range (3.4e38, idf included): scale them down."
                )
        matrix = sp.csr_matrix(
            (weighted, (np.asarray(rows, dtype=np.int64), cols_arr)),
            shape=(len(queries), self.index.num_terms),
        )
        matrix.eliminate_zeros()  # a weight below float32's range is 0 there: a query of such alone is said empty
        return matrix

    def text_query_matrix(self, texts: Sequence[str]) -> sp.csr_matrix:
        """:meth:`query_matrix` of the analysed ``texts``, each term weighted by its count in the query (the same
        matrix, bit for bit), built with array operations instead of a dict per query."""
        indptr, cols, data = self._text_query_rows([_as_text(t) for t in texts])
        return sp.csr_matrix((data, cols, indptr), shape=(len(indptr) - 1, self.index.num_terms))

    def _text_query_rows(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`text_query_matrix`'s (indptr, term ids, weights): what the kernels take (scipy's checks of a new
        matrix cost ~35 us)."""
        rows, ids = self._token_ids(texts)
        known = ids >= 0
        num_terms = max(1, self.index.num_terms)
        # sorted: CSR order
        keys, counts = np.unique(rows[known].astype(np.int64) * num_terms + ids[known], return_counts=True)
        cols = keys % num_terms
        indptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // num_terms, minlength=len(texts)), out=indptr[1:])
        return indptr, cols, self._weighted(counts.astype(np.float64), cols)

    def _token_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(text, term id) of each raw token of ``texts`` (``_textscan.TokenIds``), with the memo kept for this
        analyzer and build (Vaswani's topics: 13 -> 9 us per topic with the frame's savings; the compiled scan a
        further ~2.5 us)."""
        from ._textscan import TokenIds  # imports numba: on first use only

        analyzer, build = self._analyzer(), self.index.build_id
        if self._token_cache is None or self._token_cache[0] is not analyzer or self._token_cache[1] != build:
            tokens = TokenIds.of_vocabulary(analyzer, self.index.term_ids, self.backend_ == "numba")
            self._token_cache = (analyzer, build, tokens)
        return self._token_cache[2](texts)

    _token_cache: tuple[Analyzer, str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:  # the caches of a build are made again where it is unpickled
        return {k: v for k, v in self.__dict__.items() if k not in ("_token_cache", "_ties_cache", "_idf32")}

    def _weighted(self, values: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Query term weights (float64) as the float32 values the kernels take: times idf when ``idf=True``."""
        if self.lucene_:  # BM25Scorer's weight = boost * idf, a float32 product of float32 values
            return values.astype(np.float32) * self._lucene_idf()[cols]
        if self.idf and len(cols):
            values = values * self.index.idf[cols]
        return values.astype(np.float32)

    @property
    def lucene_(self) -> bool:
        """Whether the index holds Lucene BM25 postings (scored as Lucene does; see :class:`~pyterrier_sparse_eval.BM25`)."""
        return self.index.encoder.get("scoring") == "lucene"

    def _check_idf(self) -> None:
        if self.lucene_ and not self.idf:  # Lucene's formula has idf inside
            raise ValueError(
                f"{self.index} holds Lucene BM25 postings, which are scored with idf; idf=False is for indexes of "
                "learned weights (build with pse.BM25(lucene_scores=False) for a plain dot product over BM25 weights)."
            )

    def _lucene_idf(self) -> np.ndarray:
        build = self.index.build_id
        if self._idf32 is None or self._idf32[0] != build:
            idf = lucene_idf(self.index.collection_df, self.index.collection_doc_count)
            self._idf32 = (build, idf)
        return self._idf32[1]

    _idf32: tuple[str, np.ndarray] | None = None

    def _batches(self, q: sp.csr_matrix) -> list[tuple[int, int]]:
        # upper bound on a query's accumulator entries: the postings its terms touch (8 bytes each: id + score)
        touched = postings_per_row(self.index.df, q.indptr, q.indices)
        cost = np.minimum(touched, self.index.num_docs) * 16
        bounds, start, acc = [], 0, 0
        for i, c in enumerate(cost.tolist()):
            if i > start and acc + c > self.memory_budget:
                bounds.append((start, i))
                start, acc = i, 0
            acc += c
        if start < len(cost):
            bounds.append((start, len(cost)))
        return bounds

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        validate_queries(inp, self)
        keep = [c for c in inp.columns if c not in ("docno", "docid", "score", "rank")]
        if len(inp) == 0:
            return self._empty(inp[keep])
        self._check_build()
        if "query_toks" in inp.columns:
            q = self.query_matrix(self._query_weights(inp))
            indptr, terms, weights = q.indptr, q.indices, q.data
        else:
            indptr, terms, weights = self._text_query_rows(column_texts(inp, "query"))
        if self.backend_ == "numba":
            rows, docs, scores, ranks = finite_scores(self._search_numba(indptr, terms, weights))
        else:
            q = sp.csr_matrix((weights, terms, indptr), shape=(len(indptr) - 1, self.index.num_terms))
            rows, docs, scores, ranks = finite_scores(self._search_scipy(q))
        empty_queries = int((np.diff(indptr) == 0).sum())
        if empty_queries:
            warnings.warn(
                f"{empty_queries} of {len(inp)} queries share no term (of non-zero weight) with the index: no results.",
                stacklevel=user_stacklevel(),  # the user's line, past PyTerrier's pipeline frames
            )
        if not len(rows):
            return self._empty(inp[keep])
        columns = {c: take_column(inp[c].array, rows) for c in keep}
        columns["docno"] = docno_values(take_docnos(self.index, docs))  # as bytes (pandas' strings: Arrow's)
        columns["score"] = (
            nudge_ties(rows, scores) if self.ties == "lucene" else scores.astype(np.float64, copy=False)
        )
        columns["rank"] = ranks
        return result_frame(columns)  # every column is new: no copy (1.4x on the frame at k = 10)

    def search_matrix(self, q: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The best ``num_results`` documents for each row of a (queries x terms) weight matrix (see
        :meth:`query_matrix`) as flat arrays ``(query_row, doc_id, score, rank)``, grouped by query row, each
        query best first."""
        if self.backend_ == "numba":
            return finite_scores(self._search_numba(q.indptr, q.indices, q.data))
        return finite_scores(self._search_scipy(q))

    def _tie_order(self) -> tuple[np.ndarray, np.ndarray]:
        """(rank of each document among equal scores, document at each rank): the higher rank wins a tie.

        trec_eval's order puts the larger docno first; Lucene's (Anserini's) the smaller."""
        key = (self.index.build_id, self.ties)
        if self._ties_cache is None or self._ties_cache[0] != key:  # O(N) each: made once per build
            tie_rank = np.asarray(self.index.docno_rank)
            rank_to_doc = self.index.rank_to_doc
            if self.ties == "lucene":
                n = self.index.num_docs
                tie_rank, rank_to_doc = (
                    (n - 1 - tie_rank).astype(np.int32),
                    np.ascontiguousarray(rank_to_doc[::-1]),
                )
            self._ties_cache = (key, (tie_rank, rank_to_doc))
        return self._ties_cache[1]

    _ties_cache: tuple[tuple[str, str], tuple[np.ndarray, np.ndarray]] | None = None

    def _search_numba(self, q_indptr: np.ndarray, q_terms: np.ndarray, q_weights: np.ndarray) -> _Run:
        from ._prune import LIGHT, SCAN, top_k_pruned
        from ._topk import compact, top_k_numba

        postings = self.index.postings
        tie_rank, rank_to_doc = self._tie_order()
        depth = min(int(self.num_results), self.index.num_docs)
        threads = int(self.threads)
        step = max(1, min(4096, self.memory_budget // (8 * depth)))  # result buffers: 8 bytes per slot
        parts, nq = [], len(q_indptr) - 1
        starts: Any = range(0, nq, step)
        if self.verbose:  # a disabled bar still costs ~20 us a call
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc="retrieving", unit="block", disable=None)
        for start in starts:
            a, b = q_indptr[start], q_indptr[min(start + step, nq)]
            block = (q_indptr[start : start + step + 1] - a, q_terms[a:b], q_weights[a:b])
            args = (*block, postings.indptr, postings.indices, postings.data)
            if self.prune:
                # the most postings any query of the block has: whether the index's impacts and bounds are needed
                heaviest = postings_per_row(self.index.df, block[0], block[1]).max(initial=0)
                docs, scores, counts = top_k_pruned(
                    *args, tie_rank, depth, self.index.num_docs, threads, rank_to_doc, lucene=self.lucene_,
                    light=LIGHT, impacts=self._impacts(heaviest, SCAN), bounds=self._bounds(heaviest, LIGHT * depth),
                )  # fmt: skip
            else:
                docs, scores, counts = top_k_numba(
                    *args, tie_rank, depth, self.index.num_docs, threads, rank_to_doc, lucene=self.lucene_
                )
            parts.append(compact(start, docs, scores, counts, threads))
        if not parts:
            return tuple(np.zeros(0, t) for t in (np.int64, np.int32, np.float64, np.int64))  # type: ignore
        if len(parts) == 1:
            return parts[0]
        return tuple(np.concatenate(x) for x in zip(*parts))  # type: ignore[return-value]

    def _impacts(self, heaviest: int, scan: float) -> tuple[np.ndarray, np.ndarray] | None:
        """The index's precomputed Lucene contributions, when a query with ``heaviest`` postings is heavy enough to
        use them (computed once per index handle, on the first such query), or when they are already computed
        (lighter queries then add them too: 1.05-1.1x on frequent-term queries)."""
        if not self.impacts or not self.lucene_:
            return None
        if heaviest < max(1.0, scan * self.index.num_docs) and "lucene_impacts" not in vars(self.index):
            return None
        return self.index.lucene_impacts

    def _bounds(self, heaviest: int, light: float) -> tuple[np.ndarray, np.ndarray] | None:
        """The index's per-term bounds, when the threshold kernel can use them: Lucene scoring, and a query with
        ``heaviest`` postings does not go to the exhaustive kernel (computed once per index handle)."""
        if not self.bounds or not self.lucene_ or heaviest < max(1.0, light):
            return None
        return self.index.term_bounds

    def _search_scipy(self, q: sp.csr_matrix) -> _Run:
        from tqdm.auto import tqdm

        from ._topk import top_k_trec_order

        postings = self.index.postings
        tie_rank, _ = self._tie_order()
        depth = int(self.num_results)
        res_rows, res_docs, res_scores, res_ranks = [], [], [], []
        for start, end in tqdm(
            self._batches(q), desc="retrieving", unit="batch", disable=None if self.verbose else True
        ):
            scores = (
                lucene_product(q[start:end], postings) if self.lucene_ else (q[start:end] @ postings).tocsr()
            )
            for r in range(end - start):
                a, b = scores.indptr[r], scores.indptr[r + 1]
                if a == b:
                    continue
                s, d = scores.data[a:b], scores.indices[a:b]
                top = top_k_trec_order(s, d, tie_rank, depth)
                res_rows.append(np.full(len(top), start + r, dtype=np.int64))
                res_docs.append(d[top])
                res_scores.append(s[top])
                res_ranks.append(np.arange(len(top), dtype=np.int64))
        if not res_rows:
            res_rows, res_docs = [np.zeros(0, np.int64)], [np.zeros(0, np.int32)]
            res_scores, res_ranks = [np.zeros(0, np.float32)], [np.zeros(0, np.int64)]
        return (
            np.concatenate(res_rows),
            np.concatenate(res_docs),
            np.concatenate(res_scores),
            np.concatenate(res_ranks),
        )

    @staticmethod
    def _empty(inp: pd.DataFrame) -> pd.DataFrame:
        empty = {"score": pd.Series([], dtype=np.float64), "rank": pd.Series([], dtype=np.int64)}
        return inp.iloc[:0].assign(docno=empty_docno_column(), **empty)
