"""pyterrier-sparse-eval: evaluate sparse retrieval (BM25, SPLADE) with PyTerrier, with trec_eval-exact metrics.

Importing this package never imports torch or transformers; numba, when installed, is imported with it (its kernels
are compiled when first called, and cached on disk).
"""

# first: Ctrl-C while the command line imports the rest (_startup)
from . import _startup  # noqa: F401, I001
from . import datasets, files, hf, measures, plots, sdm, systems
from ._bm25 import BM25, BM25Indexer, TextEncoder
from ._build import SparseIndexer
from ._experiment import Experiment, ExperimentResult, run_experiment
from ._format import ForeignFileError, IndexCorruptError, StaleIndexError
from ._identical import IgnoreIdenticalIds
from ._index import SparseIndex
from ._retriever import SparseRetriever
from ._sharded import ShardedIndex, ShardedRetriever, open_index
from ._splade import Splade, SpladeEncoder
from ._tokenize import LUCENE_ENGLISH_STOPWORDS, Analyzer
from ._weights import bm25_saturation, idf_lucene
from .measures import crosscheck, evaluate, evaluate_retrieval

__version__ = "0.1.0"

__all__ = [
    "IgnoreIdenticalIds",
    "Analyzer",
    "BM25",
    "BM25Indexer",
    "Experiment",
    "ExperimentResult",
    "ForeignFileError",
    "IndexCorruptError",
    "StaleIndexError",
    "LUCENE_ENGLISH_STOPWORDS",
    "ShardedIndex",
    "open_index",
    "ShardedRetriever",
    "SparseIndex",
    "SparseIndexer",
    "SparseRetriever",
    "Splade",
    "SpladeEncoder",
    "TextEncoder",
    "bm25_saturation",
    "crosscheck",
    "datasets",
    "hf",
    "evaluate",
    "evaluate_retrieval",
    "files",
    "idf_lucene",
    "measures",
    "plots",
    "run_experiment",
    "sdm",
    "systems",
]
