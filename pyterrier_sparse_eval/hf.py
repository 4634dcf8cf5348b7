"""Collections on the Hugging Face hub, read with the ``datasets`` library (``pip install
"pyterrier-sparse-eval[hf]"``), streamed so that a 33M-passage corpus never sits in memory.

- ``hf:miracl:LANG[:SPLIT]``: MIRACL (18 languages). Topics and qrels from ``miracl/miracl``
  (``miracl-v1.0-LANG/topics/topics.miracl-v1.0-LANG-SPLIT.tsv`` and ``qrels/qrels.miracl-v1.0-LANG-SPLIT.tsv``,
  whose label-0 rows are the judged negative passages), the corpus from ``miracl/miracl-corpus``
  (``miracl-corpus-v1.0-LANG/docs-*.jsonl.gz``: ``docid``, ``title``, ``text``). A copy holding the rows layout
  instead (``query_id``, ``query``, ``positive_passages``, ``negative_passages``, as parquet with a ``configs``
  card) is read too: positives become label-1 and negatives label-0 judgments. Splits ``dev`` (the default, the
  one to report) and ``train``; the test splits have no public qrels, and asking for them says so.
- ``hf:mmarco:LANG[:SPLIT]``: mMARCO (14 languages; ISO codes or the hub's names, e.g. ``pt`` or
  ``portuguese``) from ``unicamp-dl/mmarco``: ``data/google/collections/NAME_collection.tsv``, the queries of
  ``data/google/queries/``, and MS MARCO's qrels (``data/qrels.dev.small.tsv``). Splits ``dev`` (MS MARCO's dev
  small, 6,980 queries, the default), ``dev.full`` and ``train``.
- ``hf:REPO[:SPLIT]`` (``REPO`` = ``owner/name`` or a local folder): a retrieval dataset in MTEB's layout:
  config ``corpus`` (split ``corpus``: ``_id``, ``title``, ``text``), config ``queries`` (split ``queries``:
  ``_id``, ``text``) and config ``default`` (one split per qrels: ``query-id``, ``corpus-id``, ``score``; default
  ``test``). :func:`hf_dataset` takes other ``configs=`` and a ``columns=`` mapping for other layouts.

Machines without the hub (air-gapped clusters, CI): download the repositories once (``huggingface-cli download
REPO --repo-type dataset --local-dir MIRROR/REPO``) and set ``SPARSE_EVAL_HF_MIRROR=MIRROR``; the same loading
code then reads ``MIRROR/REPO`` instead of ``hf://datasets/REPO``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ._records import FieldError, json_doc, parse_qrels, qrels_frame, topics_frame, tsv_docs, tsv_topics
from .collections import LocalDataset

__all__ = ["HFDataset", "MIRACL_LANGUAGES", "MIRROR_ENV", "MMARCO_LANGUAGES", "hf_dataset", "load_hf"]

MIRROR_ENV = "SPARSE_EVAL_HF_MIRROR"
MIRACL_LANGUAGES = (
    "ar", "bn", "de", "en", "es", "fa", "fi", "fr", "hi", "id", "ja", "ko", "ru", "sw", "te", "th", "yo", "zh",
)  # fmt: skip
MMARCO_LANGUAGES = {
    "ar": "arabic", "zh": "chinese", "nl": "dutch", "en": "english", "fr": "french", "de": "german",
    "hi": "hindi", "id": "indonesian", "it": "italian", "ja": "japanese", "pt": "portuguese", "ru": "russian",
    "es": "spanish", "vi": "vietnamese",
}  # fmt: skip
_MIRACL_TEST = ("test", "testa", "testb", "test-a", "test-b")
_MMARCO_SPLITS = {  # split -> (queries folder and suffix, qrels file)
    "dev": ("dev", "dev.small", "qrels.dev.small.tsv"),
    "dev.full": ("dev", "dev", "qrels.dev.tsv"),
    "train": ("train", "train", "qrels.train.tsv"),
}
#: generic layout (MTEB's): role -> (config, split); "{split}" is the spec's split
MTEB_CONFIGS = {
    "corpus": ("corpus", "corpus"),
    "queries": ("queries", "queries"),
    "qrels": ("default", "{split}"),
}
#: our field -> the dataset's column, for the generic layout
MTEB_COLUMNS = {
    "docno": "_id", "title": "title", "text": "text", "qid": "_id", "query": "text",
    "qrels_qid": "query-id", "qrels_docno": "corpus-id", "label": "score",
}  # fmt: skip


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise ImportError(
            'hf: collections are read with the Hugging Face datasets library: pip install "pyterrier-sparse-eval[hf]"'
        ) from None
    return datasets


def repo_root(repo: str) -> str:
    """Where a hub repository's files are: ``MIRROR/REPO`` when ``SPARSE_EVAL_HF_MIRROR`` is set, else
    ``hf://datasets/REPO``."""
    mirror = os.environ.get(MIRROR_ENV)
    if not mirror:
        return f"hf://datasets/{repo}"
    local = Path(mirror).expanduser() / repo
    if not local.is_dir():
        raise FileNotFoundError(
            f"{MIRROR_ENV}={mirror} has no {repo} folder: download it with `huggingface-cli download {repo} "
            f"--repo-type dataset --local-dir {local}`, or unset {MIRROR_ENV} to read the hub."
        )
    return str(local)


def _fs(url: str) -> tuple[Any, str]:
    import fsspec

    return fsspec.core.url_to_fs(url)


def _exists(url: str) -> bool:
    fs, path = _fs(url)
    return bool(fs.exists(path))


def _missing(spec: str, what: str, url: str) -> FileNotFoundError:
    """The error for a data file that is not there; in offline mode the hub was not asked, so it says that."""
    if "://" in url and _offline():
        return FileNotFoundError(
            f"{spec!r}: cannot read {url}: HF_HUB_OFFLINE is set, so the hub is not asked; read a local copy "
            f"with {MIRROR_ENV}=FOLDER (README, 'Collections'), or unset HF_HUB_OFFLINE."
        )
    return FileNotFoundError(f"{spec!r}: {what} file {url} is missing.")


def _offline() -> bool:
    try:
        from huggingface_hub import is_offline_mode
    except ImportError:  # pragma: no cover - an old huggingface_hub
        return os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
    return bool(is_offline_mode())


def _identity(url: str) -> str:
    """A data file's identity: size and mtime for a local file, size and content hash on the hub."""
    fs, path = _fs(url)
    info = fs.info(path)
    lfs = info.get("lfs") or {}
    version = lfs.get("sha256") or info.get("blob_id") or info.get("mtime") or info.get("last_commit")
    return f"{url}:{info.get('size')}:{version}"


def _lines(url: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a text file, streamed by ``datasets``' text builder; blank lines skipped."""
    rows = _datasets().load_dataset("text", data_files=url, split="train", streaming=True)
    for n, row in enumerate(rows, 1):
        if row["text"].strip():
            yield n, row["text"]


class HFDataset(LocalDataset):
    """A collection on the Hugging Face hub (or a local copy of one), shaped like a PyTerrier dataset; see the
    module docstring. Subclasses say where the corpus, topics and qrels are."""

    unit = "row"  # a corpus may span several files: records are counted across them

    def __init__(self, spec: str, *, language: str | None, corpus: str, topics: str, qrels: str):
        super().__init__(spec, Path(), Path(), Path(), judged_topics_only=False)
        self.language = language
        self.corpus_name, self.topics_name, self.qrels_name = corpus, topics, qrels

    def __repr__(self) -> str:
        return f"HFDataset({self.spec!r})"

    def data_files(self) -> list[str]:
        """The corpus's data files (URLs or paths)."""
        raise NotImplementedError

    def identity(self) -> str:
        """The corpus data files with their sizes and versions (mtime locally, content hash on the hub)."""
        return "corpus=" + ",".join(_identity(url) for url in self.data_files())

    def num_docs(self) -> int | None:
        return self._count  # a streamed corpus has no cheap count: the progress bar counts without a total


def _split(spec: str, parts: list[str], default: str) -> str:
    if len(parts) > 1:
        raise ValueError(f"{spec!r}: too many ':' parts.")
    return parts[0] if parts and parts[0] else default


class MIRACL(HFDataset):
    """``hf:miracl:LANG[:SPLIT]``."""

    def __init__(self, spec: str, lang: str, split: str):
        self.spec = spec
        if lang not in MIRACL_LANGUAGES:
            raise ValueError(
                f"{spec!r}: MIRACL has no language {lang!r}; it has {', '.join(MIRACL_LANGUAGES)}."
            )
        if split.lower() in _MIRACL_TEST:
            raise ValueError(
                f"{spec!r}: MIRACL's test splits (test-a, test-b) have no public qrels, so they cannot be "
                f"evaluated here; use hf:miracl:{lang}:dev (the split MIRACL results are reported on)."
            )
        if split not in ("dev", "train"):
            raise ValueError(f"{spec!r}: MIRACL has no split {split!r}; use dev (the default) or train.")
        self.root, self.corpus_root, self.lang, self.split = (
            repo_root("miracl/miracl"),
            repo_root("miracl/miracl-corpus"),
            lang,
            split,
        )
        folder = f"{self.root}/miracl-v1.0-{lang}"
        self.topics_url = f"{folder}/topics/topics.miracl-v1.0-{lang}-{split}.tsv"
        self.qrels_url = f"{folder}/qrels/qrels.miracl-v1.0-{lang}-{split}.tsv"
        # a local copy may hold the rows layout (parquet with a configs card) instead of the hub's TSV files
        self.rows_layout = "://" not in self.root and not _exists(folder)
        corpus = f"{self.corpus_root}/miracl-corpus-v1.0-{lang}"
        super().__init__(
            spec,
            language=lang,
            corpus=corpus,
            topics=f"{self.root} ({lang}, {split})" if self.rows_layout else self.topics_url,
            qrels=f"{self.root} ({lang}, {split})" if self.rows_layout else self.qrels_url,
        )
        if not self.rows_layout:
            for url, what in ((self.topics_url, "topics"), (self.qrels_url, "qrels")):
                if not _exists(url):
                    raise _missing(spec, f"MIRACL's {what}", url)

    def data_files(self) -> list[str]:
        fs, path = _fs(self.corpus_name)
        files = fs.glob(f"{path}/docs-*.jsonl.gz")
        if not files:
            raise FileNotFoundError(
                f"{self.spec!r}: no MIRACL corpus at {self.corpus_name} (docs-*.jsonl.gz); is {self.lang!r} "
                "released in miracl/miracl-corpus?"
            )
        number = re.compile(r"docs-(\d+)\.jsonl\.gz$")
        files.sort(key=lambda f: int(m.group(1)) if (m := number.search(f)) else -1)
        return [fs.unstrip_protocol(f) if "://" in self.corpus_name else f for f in files]

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        docs = _datasets().load_dataset("json", data_files=self.data_files(), split="train", streaming=True)
        for n, rec in enumerate(docs, 1):
            yield json_doc(rec, self.corpus_name, n, self._id_kinds)

    def _rows(self) -> Any:
        return _datasets().load_dataset(self.root, self.lang, split=self.split, streaming=True)

    def _read_topics(self) -> pd.DataFrame:
        if not self.rows_layout:
            return topics_frame(tsv_topics(_lines(self.topics_url), self.topics_url), self.topics_url)
        return topics_frame(((str(r["query_id"]), str(r["query"])) for r in self._rows()), self.topics_name)

    def _read_qrels(self) -> pd.DataFrame:
        if not self.rows_layout:
            return parse_qrels(_lines(self.qrels_url), self.qrels_url)
        rows: list[tuple[str, str, int]] = []
        for r in self._rows():
            for label, key in ((1, "positive_passages"), (0, "negative_passages")):
                rows += [(str(r["query_id"]), str(p["docid"]), label) for p in r[key] or ()]
        return qrels_frame(rows, self.qrels_name)


class MMARCO(HFDataset):
    """``hf:mmarco:LANG[:SPLIT]``."""

    def __init__(self, spec: str, lang: str, split: str):
        self.spec = spec
        codes = {name: code for code, name in MMARCO_LANGUAGES.items()}
        code = lang if lang in MMARCO_LANGUAGES else codes.get(lang)
        if code is None:
            raise ValueError(
                f"{spec!r}: mMARCO has no language {lang!r}; it has "
                + ", ".join(f"{c} ({n})" for c, n in MMARCO_LANGUAGES.items())
                + "."
            )
        if split not in _MMARCO_SPLITS:
            raise ValueError(f"{spec!r}: mMARCO has no split {split!r}; use {', '.join(_MMARCO_SPLITS)}.")
        root, name = repo_root("unicamp-dl/mmarco"), MMARCO_LANGUAGES[code]
        folder, suffix, qrels = _MMARCO_SPLITS[split]
        super().__init__(
            spec,
            language=code,
            corpus=f"{root}/data/google/collections/{name}_collection.tsv",
            topics=f"{root}/data/google/queries/{folder}/{name}_queries.{suffix}.tsv",
            qrels=f"{root}/data/{qrels}",
        )
        for url, what in (
            (self.topics_name, "queries"),
            (self.qrels_name, "qrels"),
            (self.corpus_name, "corpus"),
        ):
            if not _exists(url):
                raise _missing(spec, f"mMARCO's {what}", url)

    def data_files(self) -> list[str]:
        return [self.corpus_name]

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        return tsv_docs(_lines(self.corpus_name), self.corpus_name)

    def _read_topics(self) -> pd.DataFrame:
        return topics_frame(tsv_topics(_lines(self.topics_name), self.topics_name), self.topics_name)

    def _read_qrels(self) -> pd.DataFrame:
        return parse_qrels(_lines(self.qrels_name), self.qrels_name)


class HubRetrievalDataset(HFDataset):
    """``hf:REPO[:SPLIT]``: MTEB's layout, or the ``configs`` and ``columns`` given to :func:`hf_dataset`."""

    def __init__(
        self,
        spec: str,
        repo: str,
        split: str,
        *,
        configs: Mapping[str, tuple[str, str]] | None = None,
        columns: Mapping[str, str] | None = None,
        language: str | None = None,
    ):
        unknown = set(configs or {}) - set(MTEB_CONFIGS)
        unknown |= {f"columns[{k!r}]" for k in set(columns or {}) - set(MTEB_COLUMNS)}
        if unknown:
            raise ValueError(
                f"{spec!r}: unknown keys {sorted(unknown)}; configs take {sorted(MTEB_CONFIGS)}, columns take "
                f"{sorted(MTEB_COLUMNS)}."
            )
        local = Path(os.path.expanduser(repo))
        self.path = str(local) if local.is_dir() else self._mirrored(repo)
        self.split = split
        self.configs = {
            role: (c, s.format(split=split)) for role, (c, s) in {**MTEB_CONFIGS, **(configs or {})}.items()
        }
        self.columns = {**MTEB_COLUMNS, **(columns or {})}
        where = {role: f"{repo} (config {c!r}, split {s!r})" for role, (c, s) in self.configs.items()}
        super().__init__(
            spec, language=language, corpus=where["corpus"], topics=where["queries"], qrels=where["qrels"]
        )

    @staticmethod
    def _mirrored(repo: str) -> str:
        mirror = os.environ.get(MIRROR_ENV)
        return repo_root(repo) if mirror else repo

    def _load(self, role: str) -> Any:
        config, split = self.configs[role]
        datasets = _datasets()
        try:
            return datasets.load_dataset(self.path, config, split=split, streaming=True)
        except ValueError as e:
            if "split" in str(e).lower() and role == "qrels":
                raise ValueError(f"{self.spec!r}: {e} (the spec is hf:REPO[:SPLIT]).") from None
            raise

    def data_files(self) -> list[str]:
        config, split = self.configs["corpus"]
        builder = _datasets().load_dataset_builder(self.path, config)
        files = (builder.config.data_files or {}).get(split)
        if not files:
            raise FileNotFoundError(f"{self.spec!r}: {self.corpus_name} has no data files.")
        return [str(f) for f in files]

    def _col(self, rec: Mapping[str, Any], field: str, where: str, n: int) -> Any:
        name = self.columns[field]
        if name not in rec:
            raise FieldError(
                f"{where}, row {n}: no column {name!r} for {field} (the rows have {sorted(rec)}); pass "
                f"columns={{{field!r}: ...}} to pse.hf.hf_dataset."
            )
        return rec[name]

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        where = self.corpus_name
        for n, rec in enumerate(self._load("corpus"), 1):
            doc = {
                "_id": self._col(rec, "docno", where, n),
                "title": rec.get(self.columns["title"]),
                "text": self._col(rec, "text", where, n),
            }
            yield json_doc(doc, where, n, self._id_kinds)

    def _read_topics(self) -> pd.DataFrame:
        rows = (
            (
                str(self._col(r, "qid", self.topics_name, n)),
                str(self._col(r, "query", self.topics_name, n) or ""),
            )
            for n, r in enumerate(self._load("queries"), 1)
        )
        return topics_frame(rows, self.topics_name)

    def _read_qrels(self) -> pd.DataFrame:
        rows: list[tuple[str, str, int]] = []
        for n, r in enumerate(self._load("qrels"), 1):
            label = self._col(r, "label", self.qrels_name, n)
            if isinstance(label, float) and not label.is_integer() or isinstance(label, str):
                raise ValueError(f"{self.qrels_name}, row {n}: the label {label!r} must be an integer.")
            rows.append(
                (
                    str(self._col(r, "qrels_qid", self.qrels_name, n)),
                    str(self._col(r, "qrels_docno", self.qrels_name, n)),
                    int(label),
                )
            )
        return qrels_frame(rows, self.qrels_name)


def load_hf(spec: str) -> HFDataset:
    """The dataset of an ``hf:`` spec (see the module docstring); the index files are read when first used."""
    rest = spec.removeprefix("hf:")
    head, *parts = rest.split(":", 2)
    if head.lower() in ("miracl", "mmarco"):
        if not parts or not parts[0]:
            raise ValueError(f"{spec!r}: name the language, e.g. hf:{head.lower()}:sw.")
        lang, split = parts[0].lower(), _split(spec, parts[1:], "dev")
        return MIRACL(spec, lang, split) if head.lower() == "miracl" else MMARCO(spec, lang, split)
    return hf_dataset(spec)


def hf_dataset(
    spec: str,
    *,
    configs: Mapping[str, tuple[str, str]] | None = None,
    columns: Mapping[str, str] | None = None,
    language: str | None = None,
) -> HFDataset:
    """``hf:REPO[:SPLIT]`` (REPO on the hub, in the mirror, or a local folder) in MTEB's layout, or another:
    ``configs`` maps ``corpus``/``queries``/``qrels`` to (config, split) (``"{split}"`` is the spec's split) and
    ``columns`` maps ``docno``, ``title``, ``text``, ``qid``, ``query``, ``qrels_qid``, ``qrels_docno`` and
    ``label`` to column names; ``language`` (ISO 639-1) chooses BM25's analyzer."""
    rest = os.path.expanduser(spec.removeprefix("hf:"))
    repo, split = rest, "test"
    if not Path(rest).is_dir() and ":" in rest.replace("://", ""):
        head, _, tail = rest.rpartition(":")
        repo, split = head, tail or "test"
    if not repo:
        raise ValueError(f"{spec!r}: expected hf:miracl:LANG, hf:mmarco:LANG or hf:REPO[:SPLIT].")
    return HubRetrievalDataset(spec, repo, split, configs=configs, columns=columns, language=language)
