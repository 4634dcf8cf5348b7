"""BM25 as sparse vectors: an analyzer plus BM25 document weights, on the shared index and retriever."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyterrier as pt

from ._attributes import InitAttributes
from ._build import (
    batch_docnos,
    batched,
    build_on_ray,
    check_engine,
    check_integer,
    iter_docs,
    open_writer,
    progress,
    python_number,
)
from ._docno_checks import corpus_positions
from ._fields import doc_texts, resolve_fields, warn_empty, watch_fields
from ._format import refuse_path
from ._index import SparseIndex, refuse_ray_options
from ._ray import Encoded
from ._records import FieldError, column_texts
from ._retriever import SparseRetriever
from ._sharded import ShardedIndex, ShardedRetriever
from ._tokenize import ANALYZER_VERSION, MARKS_SEARCHED_WITHOUT, Analyzer
from ._toks import term_ids
from ._weights import (
    LENGTH_TABLE,
    bm25_saturation,
    length_to_norm,
    lucene_avgdl,
    lucene_norm_inverse,
    lucene_tf_factor,
)

__all__ = ["BM25", "BM25Batches", "BM25Indexer", "TermCounter", "TextEncoder"]


#: BM25's keyword options and their defaults (its repr names those that differ)
_DEFAULT_OPTIONS: dict[str, Any] = {
    "exact_lengths": False,
    "lucene_scores": True,
    "tokenizer": "standard",
    "stemmer": "porter",
    "stopwords": "lucene",
    "lowercase": True,
    "fields": None,
}


class BM25:
    """BM25 as Lucene (and so Anserini / Pyserini) computes it, as sparse vectors.

    By default a run equals Anserini's: Lucene's BM25 score idf_t * tf / (tf + k1 * (1 - b + b * dl / avgdl))
    (no (k1 + 1) factor, as Lucene 8+), document lengths stored as Lucene stores them (one byte per document,
    ``SmallFloat.intToByte4``, exact up to 40 tokens, then 4 significant bits), avgdl and idf from Lucene's
    statistics (documents with at least one term), every float operation in Lucene's order and precision, and
    Anserini's analyzer for the language (:class:`Analyzer`). The index stores x = tf / (k1 * (1 - b + b * dl /
    avgdl)) per posting and the retriever adds w - w / (1 + x) with w = query count * idf, in float32, summing
    in float64 as Lucene does. The defaults k1=0.9, b=0.4 are Anserini's BEIR settings.

    Args:
        k1, b: BM25 parameters.
        language: ISO 639-1 code of the analyzer (``"en"``, ``"fr"``, ``"zh"``, ...; see
            ``pse.analysis.LANGUAGES``), in any case, a region dropped (``"fr-FR"`` is ``"fr"``).
        exact_lengths: normalise by the exact document length instead of Lucene's one-byte approximation.
        lucene_scores: ``False`` scores as releases before Lucene parity did: the classic formula with the
            (k1 + 1) factor as a float32 product sum_t q_t * idf_t * d_t (same ranking up to float rounding;
            scores (k1 + 1) times larger).
        tokenizer, stemmer, stopwords, lowercase: the English analysis (see :class:`Analyzer`);
            ``tokenizer="word", stemmer="snowball:porter", exact_lengths=True, lucene_scores=False`` is the
            BM25 of releases before Lucene parity.
        fields: document fields joined with a space to form the indexed text. ``None`` means the fields an
            ``irds:`` dataset's own text joins when the documents come from ``pse.datasets.corpus_iter``
            (msmarco-document's ``title`` + ``body``), else ``title`` + ``text`` when a document has both (BEIR
            convention), else ``text``.

    Example::

        bm25 = pse.BM25()
        index = pse.SparseIndex("indexes/scifact-bm25")
        bm25.indexer(index).index(dataset.get_corpus_iter())
        pt.Experiment([bm25.retriever(index)], topics, qrels, [nDCG@10])
    """

    def __init__(
        self,
        k1: float = 0.9,
        b: float = 0.4,
        *,
        language: str = "en",
        exact_lengths: bool = False,
        lucene_scores: bool = True,
        tokenizer: str = "standard",
        stemmer: str | None = "porter",
        stopwords: str | Iterable[str] | None = "lucene",
        lowercase: bool = True,
        fields: Sequence[str] | None = None,
    ):
        numbers = all(isinstance(x, (int, float, np.number)) and not isinstance(x, bool) for x in (k1, b))
        if not (numbers and 0 <= k1 < float("inf") and 0 <= b <= 1):  # NaN fails both
            raise ValueError(f"BM25 needs numbers, a finite k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}.")
        self.k1, self.b = python_number(k1), python_number(b)
        self.exact_lengths = bool(exact_lengths)
        self.lucene_scores = bool(lucene_scores)
        self.tokenizer = tokenizer
        self.stemmer = stemmer
        self.stopwords = stopwords
        self.lowercase = lowercase
        self.fields = fields
        self.analyzer = Analyzer(
            language, tokenizer=tokenizer, lowercase=lowercase, stopwords=stopwords, stemmer=stemmer
        )
        self.language = self.analyzer.language  # the code as the analyzer checked it ("FR" is "fr")

    def __repr__(self) -> str:
        """The call that makes this BM25 (its options other than the defaults)."""
        options = [f"k1={self.k1}", f"b={self.b}"] + [f"language={self.language!r}"] * (self.language != "en")
        options += [f"{k}={getattr(self, k)!r}" for k, v in _DEFAULT_OPTIONS.items() if getattr(self, k) != v]
        return f"BM25({', '.join(options)})"

    def encoder_config(self) -> dict[str, Any]:
        """What determines the document weights, recorded in the index (``scoring`` and ``lengths`` say which
        formula and which document-length norms the stored weights hold)."""
        return {
            "type": "bm25",
            "k1": self.k1,
            "b": self.b,
            "scoring": "lucene" if self.lucene_scores else "classic",
            "lengths": "exact" if self.exact_lengths else "lucene-byte",
            "analyzer": self.analyzer.config(),
            "analyzer_version": ANALYZER_VERSION,
        }

    def weights(self, tf: np.ndarray, dl: np.ndarray, stats: dict[str, Any]) -> np.ndarray:
        """The stored weight of each posting (term frequency ``tf`` in a document of ``dl`` tokens)."""
        lengths = dl if self.exact_lengths else LENGTH_TABLE[length_to_norm(dl)]
        if self.lucene_scores:
            avgdl = lucene_avgdl(stats["sum_ttf"], stats["doc_count"])
            return lucene_tf_factor(tf, lucene_norm_inverse(lengths, avgdl, self.k1, self.b))
        return bm25_saturation(tf, lengths, stats["avgdl"], self.k1, self.b)

    def indexer(
        self,
        index: SparseIndex | ShardedIndex,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool = True,
        engine: str = "local",
        ray_address: str | None = None,
        num_workers: int | None = None,
    ) -> BM25Indexer:
        """An indexer that analyses raw documents (``docno`` + text fields) into BM25 weights; with
        ``engine="ray"`` as Ray tasks, ``num_workers`` kept busy (default: the CPUs of the cluster at
        ``ray_address``, or ``RAY_ADDRESS``, or a local Ray), giving the same index as a local build."""
        return BM25Indexer(
            self,
            index,
            mode=mode,
            batch_size=batch_size,
            verbose=verbose,
            engine=engine,
            ray_address=ray_address,
            num_workers=num_workers,
        )

    def retriever(
        self, index: SparseIndex | ShardedIndex, *, num_results: int = 1000, **kwargs: Any
    ) -> SparseRetriever | ShardedRetriever:
        """A retriever for ``qid`` + ``query`` frames over an index built by this BM25.

        With Lucene scores, equal scores are ordered as Lucene and Anserini order them (smaller docno first,
        ``ties="lucene"``, see :class:`SparseRetriever`), so that the run evaluates as Anserini's does."""
        self.check_index(index)
        kwargs.setdefault("ties", "lucene" if self.lucene_scores else "trec_eval")
        kwargs.setdefault("idf", True)
        if isinstance(index, ShardedIndex):
            return index.retriever(num_results=num_results, analyzer=self.analyzer, **kwargs)
        refuse_ray_options(kwargs)
        return SparseRetriever(index, num_results=num_results, analyzer=self.analyzer, **kwargs)

    def query_encoder(self) -> TextEncoder:
        """Adds ``query_toks`` (term counts) to a query frame."""
        return TextEncoder(self.analyzer, "query", "query_toks")

    def check_index(self, index: SparseIndex | ShardedIndex) -> None:
        """Raise if ``index`` was built with other BM25 parameters, norms, scoring or analysis than this object."""
        refuse_path(index)
        built = _normalised(index.encoder)
        mine = _normalised(self.encoder_config())
        if built != mine:
            fix = (
                f'rebuild it with {self!r}.indexer(index, mode="overwrite"), or retrieve with a BM25 of the '
                "options it was built with"
                if built.get("type") == "bm25"
                else "search it with index.retriever(), which reads its weights as they are"
            )
            raise ValueError(f"{index} was built with {_describe(built)}, not {_describe(mine)}; {fix}.")


def _normalised(encoder: dict[str, Any]) -> dict[str, Any]:
    """An encoder config in today's terms: indexes from before Lucene parity hold classic scores with exact
    lengths and record their analysis in the old form."""
    if encoder.get("type") != "bm25":
        return {"type": encoder.get("type")}
    analyzer = recorded = encoder.get("analyzer")
    if isinstance(recorded, dict):
        try:
            analyzer = Analyzer.from_config(recorded).config()
        except (TypeError, ValueError):
            pass
        else:
            # the analysis it was built with: another version's (or a chain without its mark) is not this one's
            analyzer["version"] = recorded.get("version", 1)
            if recorded.get("language") not in MARKS_SEARCHED_WITHOUT:
                analyzer.pop("chain", None)
                if "chain" in recorded:
                    analyzer["chain"] = recorded["chain"]
    return {
        "type": "bm25",
        "k1": encoder.get("k1"),
        "b": encoder.get("b"),
        "scoring": encoder.get("scoring", "classic"),
        "lengths": encoder.get("lengths", "exact"),
        "analyzer": analyzer,
    }


def _describe(config: dict[str, Any]) -> str:
    if config.get("type") != "bm25":
        return f"encoder {config.get('type')!r}"
    return (
        f"BM25(k1={config.get('k1')}, b={config.get('b')}, {config.get('scoring')} scores, "
        f"{config.get('lengths')} lengths, analyzer={config.get('analyzer')})"
    )


class TextEncoder(pt.Transformer):
    """Adds a {term: count} column computed from a text column with an :class:`Analyzer`."""

    def __init__(self, analyzer: Analyzer, text_column: str, out_column: str):
        self.analyzer = analyzer
        self.text_column = text_column
        self.out_column = out_column

    def __repr__(self) -> str:
        return f"TextEncoder({self.analyzer!r}, {self.text_column!r} -> {self.out_column!r})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        pt.validate.columns(inp, includes=[self.text_column])
        out = inp.copy()
        terms = self.analyzer.analyze_batch(column_texts(inp, self.text_column))
        out[self.out_column] = pd.Series(
            [{k: float(v) for k, v in _counts(t).items()} for t in terms], index=inp.index, dtype=object
        )
        return out


def _counts(terms: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in terms:
        out[t] = out.get(t, 0) + 1
    return out


class TermCounter:
    """Raw texts -> (term id per posting, term frequency, offsets per document, document lengths), with term ids
    from a vocabulary that grows as new terms appear (a writer's, or an encoding worker's own): each raw token is
    analysed once and remembered (:class:`~pyterrier_sparse_eval._textscan.TokenIds`). ``compiled``: numba's
    tokenizer (the same tokens as the analyzer's regex)."""

    def __init__(self, analyzer: Analyzer, compiled: bool):
        from ._textscan import TokenIds  # its kernels compiled only when indexing

        self.tokens = TokenIds(analyzer, compiled=compiled)

    def count(self, texts: list[str], vocab: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``vocab``: anything with ``vocab`` (term -> id) and ``term_ids(terms)`` (an :class:`IndexWriter`)."""
        owner, ids = self.tokens(texts, vocab.term_ids)
        if self.tokens.table is not None:
            from ._textscan import count_terms

            return count_terms(owner, ids.astype(np.int32), len(texts), len(vocab.vocab))
        kept = ids >= 0
        ids, owner = ids[kept], owner[kept]
        lengths = np.bincount(owner, minlength=len(texts))
        # term frequencies per (doc, term): unique over a combined key, sorted by doc then term
        size = len(vocab.vocab) + 1
        uniq, tf = np.unique(owner * size + ids, return_counts=True)
        doc_of = uniq // size
        terms = (uniq % size).astype(np.int32)
        offsets = np.searchsorted(doc_of, np.arange(len(texts) + 1))
        return terms, tf, offsets, lengths


class BM25Batches:
    """Analyses batches of documents where it runs (a Ray worker, for ``engine="ray"``) into :data:`Encoded`
    batches: the same term frequencies and lengths as the local indexer, with the batch's terms as strings."""

    def __init__(self, bm25: BM25, fields: tuple[str, ...], compiled: bool):
        self.bm25, self.fields, self.compiled = bm25, fields, compiled
        self.vocab: dict[str, int] = {}
        self.names: list[str] = []
        self.counter: TermCounter | None = None

    def term_ids(self, terms: list[str]) -> np.ndarray:
        return term_ids(self.vocab, terms, self.names)

    def __call__(self, batch: list[dict[str, Any]]) -> Encoded:
        if self.counter is None:
            self.counter = TermCounter(self.bm25.analyzer, self.compiled)
        texts, missing = doc_texts(batch, self.fields)
        terms, tf, offsets, lengths = self.counter.count(texts, self)
        uniq, idx = np.unique(terms, return_inverse=True)
        names = [self.names[i] for i in uniq.tolist()]
        return batch_docnos(batch), names, idx.astype(np.int32), tf, offsets, lengths, missing


class BM25Indexer(InitAttributes, pt.Indexer):
    """Indexes raw documents with BM25 weights (see :class:`BM25`). Streams in batches; with ``engine="ray"`` the
    documents are analysed by Ray tasks (see :mod:`pyterrier_sparse_eval._ray`)."""

    ATTRIBUTE_OF = {"index": "index_ref"}  # its index() is the method

    def __init__(
        self,
        bm25: BM25,
        index: SparseIndex | ShardedIndex,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool = True,
        engine: str = "local",
        ray_address: str | None = None,
        num_workers: int | None = None,
    ):
        refuse_path(index)
        check_engine(engine, ray_address=ray_address, num_workers=num_workers)
        check_integer("batch_size", batch_size)
        self.bm25 = bm25
        self.index_ref = index
        self.mode = mode
        self.batch_size = batch_size
        self.verbose = verbose
        self.engine = engine
        self.ray_address = ray_address
        self.num_workers = num_workers
        self.fields_: tuple[str, ...] | None = None
        self.default_fields_: tuple[str, ...] | None = None  # the dataset's own (see index)
        self.late_fields_: dict[str, int] = {}  # see _fields.watch_fields
        # the compiled tokenizer (numba) gives the same tokens as the analyzer's regex; None = when numba is
        # installed (tests force either path)
        self._compiled: bool | None = None

    def __repr__(self) -> str:
        return f"BM25Indexer({self.bm25!r}, {self.index_ref!r}, mode={self.mode!r}, engine={self.engine!r})"

    @property
    def fields(self) -> Sequence[str] | None:
        """The fields asked for (None: chosen from the first batch)."""
        return self.bm25.fields

    def _fields(self, batch: list[dict[str, Any]]) -> tuple[str, ...]:
        if self.fields_ is None:
            if "docno" not in batch[0]:
                raise FieldError(f"Documents need a 'docno' field (got {sorted(batch[0])}).")
            self.fields_ = resolve_fields(batch, self.bm25.fields, default=self.default_fields_)
            if self.verbose:
                own = " (the dataset's own text)" if self.bm25.fields is None and self.default_fields_ else ""
                print(f"BM25 indexing fields: {' + '.join(self.fields_)}{own}")
        return self.fields_

    def index(self, docs: Iterable[dict[str, Any]] | pd.DataFrame) -> SparseIndex | ShardedIndex:  # type: ignore[override]
        """Analyse and index ``docs``; returns the (reloaded) index.

        The text fields are chosen from the first batch of documents (see :func:`pse.datasets.resolve_fields`),
        on each call (an indexer called again, after a failed attempt, had kept the fields of its first);
        documents without text in them are indexed empty, counted, and reported once at the end.
        """
        from ._textscan import HAVE_NUMBA  # its kernels compiled only when indexing

        self.fields_ = None
        self.default_fields_ = getattr(docs, "default_fields", None)  # pse.datasets.corpus_iter's
        bm25 = self.bm25
        encoder = bm25.encoder_config()
        compiled = HAVE_NUMBA if self._compiled is None else self._compiled
        if self.engine == "ray":

            def batches(first: list[dict[str, Any]]) -> BM25Batches:
                encoder["fields"] = list(self._fields(first))
                return BM25Batches(bm25, self.fields_ or (), compiled)

            empty, total = build_on_ray(self, docs, encoder, batches, bm25.weights)
        else:
            empty, total = self._index_local(docs, encoder, compiled)
        warn_empty(empty, total, self.fields_ or (), self.late_fields_, self.fields is not None)
        return self.index_ref

    def _index_local(self, docs: Any, encoder: dict[str, Any], compiled: bool) -> tuple[int, int]:
        counter = TermCounter(self.bm25.analyzer, compiled)
        empty = total = 0
        with open_writer(self.index_ref, mode=self.mode, encoder=encoder) as writer:
            bar = progress(docs, self.verbose)
            with corpus_positions(lambda: total):
                for batch in watch_fields(batched(iter_docs(docs), self.batch_size), self):
                    encoder["fields"] = list(self._fields(batch))
                    texts, missing = doc_texts(batch, self.fields_ or ())
                    terms, tf, offsets, lengths = counter.count(texts, writer)
                    writer.add(batch_docnos(batch), terms, tf, offsets, lengths)
                    empty, total = empty + missing, total + len(batch)
                    bar.update(len(batch))
            bar.close()
            writer.finish(self.bm25.weights)
        return empty, total
