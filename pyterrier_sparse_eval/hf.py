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

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ._hf_base import (
    _MIRACL_TEST,
    _MMARCO_SPLITS,
    MIRACL_LANGUAGES,
    MIRROR_ENV,
    MMARCO_LANGUAGES,
    MTEB_COLUMNS,
    MTEB_CONFIGS,
    HFDataset,
    _datasets,
    _exists,
    _fs,
    _lines,
    _missing,
    _no_folder,
    _offline,
    _split,
    card_language,
    csv_options,
    empty_file,
    jsonl_rows,
    layout_fix,
    local_jsonl,
    miracl_qrels,
    miracl_topics,
    mirrored,
    no_split,
    repo_root,
)
from ._records import (
    FieldError,
    _json_records,
    json_doc,
    parse_qrels,
    qrels_frame,
    topics_frame,
    tsv_docs,
    tsv_topics,
)
from .analysis import language_code
from .console import OfflineModeError

__all__ = ["HFDataset", "MIRACL_LANGUAGES", "MIRROR_ENV", "MMARCO_LANGUAGES", "hf_dataset", "load_hf"]


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

    @property
    def corpus_spec(self) -> str:
        """``hf:miracl:LANG``: the splits (and spellings) of a language share its indexes."""
        return f"hf:miracl:{self.lang}"

    def data_files(self) -> list[str]:
        fs, path = _fs(self.corpus_name)
        files = fs.glob(f"{path}/docs-*.jsonl.gz")
        if not files:
            raise FileNotFoundError(
                f"{self.spec!r}: no MIRACL corpus at {self.corpus_name} (docs-*.jsonl.gz); "
                + (
                    f"is {self.lang!r} released in miracl/miracl-corpus?"
                    if "://" in self.corpus_name
                    else "download it with `huggingface-cli download miracl/miracl-corpus --repo-type dataset "
                    f"--include 'miracl-corpus-v1.0-{self.lang}/*' --local-dir {self.corpus_root}`."
                )
            )
        number = re.compile(r"docs-(\d+)\.jsonl\.gz$")
        files.sort(key=lambda f: int(m.group(1)) if (m := number.search(f)) else -1)
        return [fs.unstrip_protocol(f) if "://" in self.corpus_name else f for f in files]

    def _records(self) -> Iterator[tuple[int, str, str, str]]:
        files = self.data_files()
        if any("://" in f for f in files):  # on the hub: streamed by the datasets library
            docs = _datasets().load_dataset("json", data_files=files, split="train", streaming=True)
        else:  # a mirror's shards, read as files: reads JSONL (the datasets library's builder is ~7x slower)
            docs = (rec for path in files for _, rec in _json_records(Path(path)))
        for n, rec in enumerate(docs, 1):
            yield json_doc(rec, self.corpus_name, n, self._id_kinds, unit="row")

    def _rows(self) -> Any:
        try:
            return _datasets().load_dataset(self.root, self.lang, split=self.split, streaming=True)
        # a mirror without this language: no files (FileNotFoundError), no rows config (ValueError)
        except (ValueError, FileNotFoundError) as e:
            if isinstance(e, ValueError) and "BuilderConfig" not in str(e):
                raise
        raise FileNotFoundError(
            f"{self.spec!r}: {self.root} has no miracl-v1.0-{self.lang} folder (nor a config {self.lang!r} in the "
            f"rows layout): download it with `huggingface-cli download miracl/miracl --repo-type dataset --include "
            f"'miracl-v1.0-{self.lang}/*' --local-dir {self.root}`."
        )

    def _read_topics(self) -> pd.DataFrame:
        if not self.rows_layout:
            return topics_frame(tsv_topics(_lines(self.topics_url), self.topics_url), self.topics_url)
        return topics_frame(miracl_topics(self._rows(), self.topics_name), self.topics_name)

    def _read_qrels(self) -> pd.DataFrame:
        if not self.rows_layout:
            return parse_qrels(_lines(self.qrels_url), self.qrels_url)
        return qrels_frame(list(miracl_qrels(self._rows(), self.qrels_name)), self.qrels_name)


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

    @property
    def corpus_spec(self) -> str:
        """``hf:mmarco:CODE``: every split and spelling of a language (``pt``, ``PT``, ``portuguese``) shares its
        indexes."""
        return f"hf:mmarco:{self.language}"

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
        self.repo, self.path = repo, str(local) if local.is_dir() else mirrored(spec, repo)
        self.split = split
        self.configs = {
            role: (c, s.format(split=split)) for role, (c, s) in {**MTEB_CONFIGS, **(configs or {})}.items()
        }
        self.columns = {**MTEB_COLUMNS, **(columns or {})}
        where = {role: f"{repo} (config {c!r}, split {s!r})" for role, (c, s) in self.configs.items()}
        super().__init__(
            spec,
            language=language_code(language) if language else card_language(self.path),
            corpus=where["corpus"],
            topics=where["queries"],
            qrels=where["qrels"],
        )
        # MTEB's queries config holds every split's queries (as a BEIR folder's queries.jsonl): the split's
        # topics are those its qrels judge
        self.judged_topics_only = self.configs["queries"] == MTEB_CONFIGS["queries"]

    def _hub_unread(self, e: Exception) -> Exception:
        """``e``, or for a hub id read while offline, an error saying that no folder of that name exists."""
        offline = _offline() or "OfflineModeIsEnabled" in f"{e} {type(e.__cause__).__name__}"
        if not isinstance(e, ConnectionError) or self.path != self.repo or not offline:
            return e
        why = "offline mode is set (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE), so the hub was not asked for a repository of that name"
        return OfflineModeError(_no_folder(self.spec, self.repo, why))

    def _where(self, role: str) -> str:
        return {"corpus": self.corpus_name, "queries": self.topics_name, "qrels": self.qrels_name}[role]

    def _load(self, role: str) -> Iterator[dict[str, Any]]:
        """The rows of a role's config and split, streamed; the ``datasets`` library's errors on a folder that is
        not in this layout, an empty data file or one it cannot parse are re-raised naming the file and the fix."""
        config, split = self.configs[role]
        offline: Exception | None = None
        if (jsonl := local_jsonl(self._files(role))) is not None:
            yield from jsonl_rows(jsonl, role, self._where(role))
            return
        try:
            options = csv_options(self._builder(config), self.columns)
            rows = _datasets().load_dataset(self.path, config, split=split, streaming=True, **options)
        except StopIteration:  # the JSON builder's answer to an empty file
            raise empty_file(role, self._where(role), self._files(role)[0]) from None
        except ValueError as e:
            if "split" in str(e).lower() and role == "qrels":
                raise ValueError(f"{self.spec!r}: {e} (the spec is hf:REPO[:SPLIT]).") from None
            # a card naming each config's split after the qrels' (MTEB's newer)
            if "bad split" in str(e).lower():
                raise no_split(self.spec, config, split, e) from None
            raise self._not_this_layout(config, e) from None
        except ConnectionError as e:
            offline = self._hub_unread(e)
        except FileNotFoundError as e:
            raise self._unfound(e) from None
        if offline is not None:  # raised here, not from the connection error, which would name the network
            raise offline
        try:
            yield from rows
        except ValueError as e:  # e.g. pyarrow's ArrowInvalid on a TSV read by the JSON builder
            if isinstance(e, UnicodeDecodeError) or "codec can't decode" in str(e):
                raise ValueError(
                    f"{self._where(role)}: {', '.join(self._files(role))} is not UTF-8 ({e}); re-encode it as "
                    "UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > NEW), as the datasets library reads only UTF-8."
                ) from None
            builder = self._builder(config)
            raise ValueError(
                f"{self._where(role)}: cannot read {', '.join(self._files(role))} as {builder.name} ({e}): the "
                "datasets library reads every config of a repository with one builder, chosen by the most common "
                "file type; write all of its data files in one format (e.g. JSONL), or give the collection as "
                "files:CORPUS,TOPICS,QRELS."
            ) from None

    def _not_this_layout(self, config: str, e: ValueError) -> ValueError:
        """``e``, or for a folder that lacks the config asked for, an error naming what it looks like instead."""
        if "BuilderConfig" not in str(e) or "not found" not in str(e):
            return e
        return ValueError(layout_fix(self.spec, Path(self.path), config, e))

    @property
    def corpus_spec(self) -> str:
        """``hf:REPO`` (a local folder's absolute path): the splits of a repository share its indexes (the cache
        key's identity, its corpus files and mapping, keeps a split with other documents apart)."""
        local = Path(os.path.expanduser(self.repo))
        return f"hf:{local.resolve() if local.is_dir() else self.repo}"

    def identity(self) -> str:
        """The corpus data files (:meth:`HFDataset.identity`), and the config and columns the documents are read
        with when they are not MTEB's: two mappings of one repository never share an index."""
        mapping = {
            k: self.columns[k] for k in ("docno", "title", "text") if self.columns[k] != MTEB_COLUMNS[k]
        }
        if self.configs["corpus"] != MTEB_CONFIGS["corpus"]:
            mapping["corpus"] = "/".join(self.configs["corpus"])
        return super().identity() + "".join(f"|{k}={v}" for k, v in sorted(mapping.items()))

    def data_files(self) -> list[str]:
        return self._files("corpus")

    def _files(self, role: str) -> list[str]:
        """The data files of a role's config and split."""
        config, split = self.configs[role]
        by_split = self._builder(config).config.data_files or {}
        files = by_split.get(split)
        if not files and by_split and role == "qrels":  # the spec's split
            raise ValueError(
                f"{self.spec!r}: the qrels have no split {split!r} (they have {sorted(by_split)})."
            )
        if not files and by_split:  # split otherwise (MTEB's newer cards: like the qrels)
            raise no_split(self.spec, config, split, ValueError(f"its splits: {sorted(by_split)}"))
        if not files:
            raise FileNotFoundError(f"{self.spec!r}: {self._where(role)} has no data files.")
        return [str(f) for f in files]

    def _builder(self, config: str) -> Any:
        """The ``datasets`` builder of a config; a folder not in this layout, or a hub id read offline, is an
        error naming the fix."""
        error: Exception
        try:
            return _datasets().load_dataset_builder(self.path, config)
        except ValueError as e:
            error = self._not_this_layout(config, e)
        except ConnectionError as e:
            error = self._hub_unread(e)
        except FileNotFoundError as e:
            error = self._unfound(e)
        raise error  # here, not from the connection error, which would name the network

    def _unfound(self, e: FileNotFoundError) -> FileNotFoundError:
        """``e``, or for a data file the card names but the repository lacks, an error naming the card's line."""
        if (missing := re.match(r"Unable to find '([^']+)'", str(e))) is None:
            return e  # (the datasets library's own message lists every file extension it knows)
        return FileNotFoundError(
            f"{self.spec!r}: the README.md card of {self.path} names the data file {missing.group(1)}, which is "
            "not there; fix the card's path: line, or add the file."
        )

    def _id(self, rec: Mapping[str, Any], field: str, where: str, n: int, what: str) -> str:
        """An id column's value as a string, stripped (as the corpus's ids); a float (7.0), null or blank id is
        refused, naming the fix."""
        name, value = self.columns[field], self._col(rec, field, where, n)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            if value is None:
                raise FieldError(
                    f"{where}, row {n}: the {what} ({name!r}) is missing (null); give every row one."
                )
            raise FieldError(
                f"{where}, row {n}: the {what} {value!r} is a {type(value).__name__}; ids must be strings (or "
                f"integers), as in the corpus: write the column {name!r} as strings (pandas makes an integer column "
                "with a missing value float: fill the gaps and cast it, e.g. .astype('int64'))."
            )
        if not str(value).strip():
            raise FieldError(f"{where}, row {n}: the {what} ({name!r}) is blank; give every row one.")
        return str(value).strip()  # as TSV ids and qrels ids (split on whitespace) are read

    def _col(self, rec: Mapping[str, Any], field: str, where: str, n: int) -> Any:
        name = self.columns[field]
        if name not in rec:
            raise FieldError(
                f"{where}, row {n}: no column {name!r} for {field} (the rows have {sorted(rec)}); rename the "
                f"column to {name!r}, or from Python pass columns={{{field!r}: ...}} to pse.hf.hf_dataset."
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
            yield json_doc(doc, where, n, self._id_kinds, unit="row")

    def _read_topics(self) -> pd.DataFrame:
        rows = (
            (
                self._id(r, "qid", self.topics_name, n, "query id"),
                str(self._col(r, "query", self.topics_name, n) or ""),
            )
            for n, r in enumerate(self._load("queries"), 1)
        )
        return topics_frame(rows, self.topics_name)

    def _read_qrels(self) -> pd.DataFrame:
        rows: list[tuple[str, str, int]] = []
        for n, r in enumerate(self._load("qrels"), 1):
            label = self._col(r, "label", self.qrels_name, n)
            if label is None:
                raise ValueError(
                    f"{self.qrels_name}, row {n}: the label is missing (null); give every judgment an integer "
                    "label, or drop the row."
                )
            if isinstance(label, float) and not label.is_integer() or isinstance(label, str):
                raise ValueError(
                    f"{self.qrels_name}, row {n}: the label {label!r} must be an integer; write the column as "
                    'integers (JSON 1, not "1").'
                )
            rows.append(
                (
                    self._id(r, "qrels_qid", self.qrels_name, n, "query id"),
                    self._id(r, "qrels_docno", self.qrels_name, n, "document id"),
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
        # a code in any case, with a region or in ISO 639-3 (pt-BR, PT, por: pt); mMARCO's names as they are
        with contextlib.suppress(ValueError):
            parts[0] = language_code(parts[0])
        lang, split = parts[0].lower(), _split(spec, parts[1:], "dev").lower()
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
    ``label`` to column names; ``language`` (ISO 639-1, or 639-3) chooses BM25's analyzer. Ids are stripped of
    surrounding spaces; float ids, null labels and an empty data file are refused naming the fix. The pipelines
    (``pse.run_experiment``, ``pse.sdm.three_way``) read the dataset returned as it is, and its index cache key
    includes the corpus config and document columns."""
    rest = os.path.expanduser(spec.removeprefix("hf:"))
    repo, split = rest, "test"
    if not Path(rest).is_dir() and ":" in rest.replace("://", ""):
        head, _, tail = rest.rpartition(":")
        repo, split = head, tail or "test"
    if not repo:
        raise ValueError(f"{spec!r}: expected hf:miracl:LANG, hf:mmarco:LANG or hf:REPO[:SPLIT].")
    return HubRetrievalDataset(spec, repo, split, configs=configs, columns=columns, language=language)
