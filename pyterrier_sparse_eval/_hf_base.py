"""The ground ``hf:`` collections stand on: their languages, splits and layouts, the ``datasets`` library, where a
hub repository's files are (the hub or ``SPARSE_EVAL_HF_MIRROR``), their identities and lines, and
:class:`HFDataset`, shaped like a PyTerrier dataset."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ._records import _json_records, _pick, _unreadable
from .analysis import language_code
from .collections import LocalDataset
from .console import HF_OFFLINE_HINT, OfflineError, OfflineModeError

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
    _datasets()  # fsspec (and the hub's file system) come with it: without it, the error names the extra
    import fsspec

    return fsspec.core.url_to_fs(url)


def _exists(url: str) -> bool:
    fs, path = _fs(url)
    return bool(fs.exists(path))


def _missing(spec: str, what: str, url: str) -> FileNotFoundError:
    """The error for a data file that is not there; in offline mode the hub was not asked, so it says that."""
    if "://" in url and _offline():
        return OfflineModeError(
            f"{spec!r}: cannot read {url}: HF_HUB_OFFLINE is set, so the hub is not asked; read a local copy "
            f"with {MIRROR_ENV}=FOLDER (README, 'Collections'), or unset HF_HUB_OFFLINE."
        )
    return FileNotFoundError(f"{spec!r}: {what} file {url} is missing.")


def miracl_topics(rows: Iterable[dict[str, Any]], where: str) -> Iterator[tuple[str, str]]:
    """(qid, query) of MIRACL's rows layout, ids read as a JSON file's are (a float, 1.0, refused naming the fix:
    its text would match no id of the corpus or the qrels)."""
    for n, r in enumerate(rows, 1):
        yield _pick(r, ("query_id",), where, n, "query id", unit="row"), str(r["query"])


def miracl_qrels(rows: Iterable[dict[str, Any]], where: str) -> Iterator[tuple[str, str, int]]:
    """(qid, docno, label) of MIRACL's rows layout: positive passages label 1, the judged negative ones label 0."""
    for n, r in enumerate(rows, 1):
        q = _pick(r, ("query_id",), where, n, "query id", unit="row")
        for label, key in ((1, "positive_passages"), (0, "negative_passages")):
            yield from (
                (q, _pick(p, ("docid",), where, n, "passage id", unit="row"), label) for p in r[key] or ()
            )


def _offline() -> bool:
    try:
        from huggingface_hub import is_offline_mode
    except ImportError:  # pragma: no cover - an old huggingface_hub
        return _flag("HF_HUB_OFFLINE")
    return bool(is_offline_mode())


def hub_unreachable(wait: float = 5.0) -> str | None:
    """Why the hub's endpoint cannot be reached (no name resolution, no route), or None when it answers (remembered
    for the process) or a proxy stands between (as the HTTP library finds one: the environment, or the system's
    settings); a failure is asked again after a minute. A hub library meeting an offline machine retries for about
    a minute before it says so."""
    import socket
    import time
    import urllib.request
    from urllib.parse import urlsplit

    if _HUB.get("answered") or time.monotonic() < _HUB.get("failed_until", 0.0):
        return _HUB.get("why")
    try:
        from huggingface_hub import constants

        endpoint = urlsplit(constants.ENDPOINT)
        host = endpoint.hostname or "huggingface.co"
        port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    except (ImportError, AttributeError, ValueError):  # pragma: no cover - an old or unusual huggingface_hub
        return None
    proxies = urllib.request.getproxies()
    if (proxies.get(endpoint.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host):
        return None
    try:
        socket.create_connection((host, port), timeout=wait).close()
    except OSError as e:
        _HUB.update(why=f"{endpoint.netloc}: {e}", failed_until=time.monotonic() + 60)
        return _HUB["why"]
    _HUB.update(answered=True, why=None)
    return None


#: what :func:`hub_unreachable` found: the hub answered, or why not and until when that stands
_HUB: dict[str, Any] = {}


def _flag(name: str) -> bool:
    """Whether a boolean environment variable is set, as huggingface_hub and datasets read theirs."""
    return os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE")


def _identity(url: str) -> str:
    """A data file's identity: size, mtime and ctime (fsspec's "created") for a local file, size and content hash
    on the hub."""
    fs, path = _fs(url)
    info = fs.info(path)
    lfs = info.get("lfs") or {}
    times = ":".join(str(info[k]) for k in ("mtime", "created") if info.get(k) is not None)
    version = lfs.get("sha256") or info.get("blob_id") or times or info.get("last_commit")
    return f"{url}:{info.get('size')}:{version}"


def _lines(url: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text file, local or on the hub (gunzipped when named *.gz), streamed; blank
    lines and byte-order marks skipped, as ``files:`` reads them. Only ``\n`` ends a line (``datasets``' text
    builder also ended one at a ``\r`` or U+2028 inside a text, making up a record there); text that is not UTF-8
    is refused naming the file, the line and the fix."""
    _datasets()  # fsspec comes with it
    import fsspec

    n = 0
    with fsspec.open(url, "rb", compression="infer") as f:
        for n, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8").rstrip("\r\n").removeprefix("\ufeff")
            except UnicodeDecodeError as e:
                raise _unreadable(Path(url), e, f", line {n}") from None
            if text.strip():
                yield n, text


def local_jsonl(files: list[str]) -> list[Path] | None:
    """The files, when all are local JSON Lines (``.jsonl``, ``.jsonl.gz``): read as ``files:`` reads them (the
    ``datasets`` JSON builder guesses types, turning a text such as ``2019-04-18`` into a timestamp), else None."""
    paths = [Path(f) for f in files]
    if all("://" not in f and f.removesuffix(".gz").endswith(".jsonl") for f in files):
        return paths
    return None


def jsonl_rows(files: list[Path], role: str, where: str) -> Iterator[dict[str, Any]]:
    """The rows of local JSON Lines files, as written; none at all is :func:`empty_file`'s error."""
    empty = True
    for path in files:
        for _, rec in _json_records(path):
            empty = False
            yield rec
    if empty:
        raise empty_file(role, where, str(files[0]))


def empty_file(role: str, where: str, file: str) -> ValueError:
    what = "Qrels" if role == "qrels" else f"The {role}"
    return ValueError(
        f"{what} {where}: the data file {file} is empty; give it the "
        f"{'judgments' if role == 'qrels' else role} (or point the card's configs at the right file)."
    )


def csv_options(builder: Any, columns: Mapping[str, str]) -> dict[str, Any]:
    """Options of the ``datasets`` CSV builder keeping ids and texts as written (pandas, which it reads with,
    would read the id ``007`` as 7 and the text ``NA`` as missing); none for other builders."""
    if builder.name != "csv":
        return {}
    texts = ("docno", "title", "text", "qid", "query", "qrels_qid", "qrels_docno")
    return {"converters": {columns[k]: str for k in texts}, "keep_default_na": False}


def card_language(path: str) -> str | None:
    """The one language a repository's ``README.md`` card declares (``language: de``, ``de-DE`` or a one-item list;
    the primary subtag, as the analyzers are named), or None: none declared, several (a multilingual collection has
    no one analyzer), or the card unreadable. A hub repository's card is asked for once per process, never when
    offline (``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE``)."""
    local = Path(path) / "README.md"
    if local.is_file():
        return _declared(local)
    if "://" in path or _offline() or _flag("HF_DATASETS_OFFLINE"):
        return None
    return _hub_card_language(path)


@functools.lru_cache(maxsize=64)
def _hub_card_language(repo: str) -> str | None:
    return _declared(repo)


def _declared(card_path: Path | str) -> str | None:
    try:
        from huggingface_hub import DatasetCard

        card = DatasetCard.load(card_path, repo_type="dataset")
        meta = card.data.to_dict()
        declared = meta.get("language", meta.get("languages"))
    except Exception:  # a card that cannot be read declares nothing; reading the data reports real problems
        return None
    if isinstance(declared, list) and len(declared) == 1:
        declared = declared[0]
    if declared is False:  # YAML 1.1 reads Norwegian's code, no, as false
        declared = "no"
    if not isinstance(declared, str) or not declared.strip():
        return None
    try:  # de-DE, pt_BR: the language, not the region; deu (MTEB's cards): de
        return language_code(declared)
    except ValueError:  # a language without an analyzer here: said as the card says it
        return re.split(r"[-_]", declared.strip())[0].lower()


def _no_folder(spec: str, repo: str, why: str) -> str:
    return (
        f"{spec!r}: there is no folder {repo} (from {os.getcwd()}), {why}: check the path, or read a local copy "
        f"of the repository with {MIRROR_ENV}=FOLDER (README, 'Collections')."
    )


def mirrored(spec: str, repo: str) -> str:
    """Where a REPO that is no local folder is read: the mirror's copy, or the hub (an owner/name id, refused at
    once, naming the fix, when the hub cannot be reached)."""
    if os.environ.get(MIRROR_ENV):
        return repo_root(repo)
    if "://" not in repo and (re.fullmatch(r"[\w.-]+/[\w.-]+", repo) is None or repo.startswith(".")):
        raise FileNotFoundError(_no_folder(spec, repo, "nor is it a hub id (owner/name)"))
    if not (_offline() or _flag("HF_DATASETS_OFFLINE")) and (why := hub_unreachable()):
        # a mistyped relative folder has the shape of a hub id too
        raise OfflineError(
            f"{spec}'s files: {HF_OFFLINE_HINT} ({why}). No folder {repo} exists here either (from "
            f"{os.getcwd()}): if a local folder was meant, check its path."
        )
    return repo


def no_split(spec: str, config: str, split: str, e: Exception) -> ValueError:
    """A config without the split asked for, with the mapping that reads MTEB's newer cards."""
    return ValueError(
        f"{spec!r}: config {config!r} has no split {split!r} ({e}). For a card whose corpus and queries configs are "
        "split like the qrels, with ids in 'id': pse.hf.hf_dataset(spec, configs={'corpus': ('corpus', '{split}'), "
        "'queries': ('queries', '{split}')}, columns={'docno': 'id', 'qid': 'id'})."
    )


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


def layout_fix(spec: str, folder: Path, config: str, e: Exception) -> str:
    """For a local folder without the config asked for: what it looks like instead, and how to read it."""
    cause = f"{spec!r}: {folder} has no config {config!r} ({e})"
    if (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file():
        return (
            f"{cause}: it was written by save_to_disk, which hf: does not read; write each part with to_json "
            "or to_parquet and a README.md card naming them as configs (README, 'Collections')."
        )
    qrels = sorted(p.name for p in (folder / "qrels").glob("*") if p.is_file())
    corpus, queries = (
        [p.name for p in sorted(folder.glob(f"{n}.*")) if p.is_file()] for n in ("corpus", "queries")
    )
    if corpus and any(q.endswith(".tsv") for q in qrels):
        return f"{cause}: it is a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv): give beir:{folder}."
    if corpus and queries and qrels and not (folder / "README.md").is_file():
        # MTEB's files without the card that names each one's config (a download of the data files alone)
        card = "".join(
            f"- config_name: {c}\n  data_files:\n  - split: {s}\n    path: {p}\n"
            for c, s, p in [
                ("corpus", "corpus", corpus[0]),
                ("queries", "queries", queries[0]),
                *(("default", q.split(".")[0], f"qrels/{q}") for q in qrels),
            ]
        )
        return (
            f"{cause}: it has no README.md card naming its files as configs, as MTEB's repositories have; "
            f"add one:\n---\nconfigs:\n{card}---"
        )
    return (
        f"{cause}: hf:REPO reads MTEB's layout (configs corpus, queries and default in the README.md card); "
        "name other configs with pse.hf.hf_dataset(spec, configs={'corpus': (CONFIG, SPLIT), ...})."
    )


def _split(spec: str, parts: list[str], default: str) -> str:
    if len(parts) > 1:
        raise ValueError(f"{spec!r}: too many ':' parts.")
    return parts[0] if parts and parts[0] else default
