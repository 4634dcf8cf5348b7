"""Retrieval systems described by short strings, as the command line takes them.

``bm25``, ``bm25:k1=1.2,b=0.75``, ``bm25:stemmer=english,stopwords=terrier``,
``splade:PATH_OR_HUB_ID``, ``splade:PATH_OR_HUB_ID,idf=true,doc_max_length=256``.

A :class:`System` holds its encoder (a :class:`~pyterrier_sparse_eval.BM25` or
:class:`~pyterrier_sparse_eval.Splade`), built once when the spec is parsed, and knows how to index a corpus
with it and retrieve from the index. It knows nothing of datasets: callers hand it the documents.

>>> parse_system("bm25:k1=1.2,b=0.75").name
'BM25(k1=1.2,b=0.75)'
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyterrier as pt

from ._bm25 import BM25
from ._cache import (
    DAMAGED,
    clear_unreadable_entry,
    identity_before,
    index_folder,
    record_identity,
    say_outdated,
)
from ._format import FORMAT_VERSION, IndexCorruptError
from ._index import SparseIndex
from ._sharded import ShardedIndex
from ._splade import Splade
from ._tokenize import EnglishOptionsError
from .files import clean_leftovers, slug

__all__ = [
    "System",
    "parse_system",
    "name_systems",
    "index_folder",
    "resolve_baseline",
    "specs_with_language",
    "specs_in_dataset_language",
    "systems_with_language",
    "with_language",
]


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(text)


def _optional_str(text: str) -> str | None:
    return None if text in ("none", "None") else text


_BM25_PARAMS: dict[str, Callable[[str], Any]] = {
    "k1": float,
    "b": float,
    "language": str,
    "exact_lengths": _bool,
    "lucene_scores": _bool,
    "tokenizer": str,
    "stemmer": _optional_str,
    "stopwords": _optional_str,
}
_BM25_NAMED = ("language", "exact_lengths", "lucene_scores", "tokenizer", "stemmer", "stopwords")
_SPLADE_PARAMS: dict[str, Callable[[str], Any]] = {
    "idf": _bool,
    "doc_max_length": int,
    "query_max_length": int,
    "batch_size": int,
    "doc_top_k": int,
}
_PARAMS = {"bm25": _BM25_PARAMS, "splade": _SPLADE_PARAMS}


@dataclass
class System:
    """A retrieval system parsed from a spec string (see :func:`parse_system`).

    Attributes:
        spec: the spec as given.
        encoder: the BM25 or Splade object that indexes documents and encodes queries.
        params: the parameters the spec set (they name the system).
        idf: multiply SPLADE query weights by idf at retrieval (BM25 always does).
    """

    spec: str
    encoder: BM25 | Splade
    params: dict[str, Any] = field(default_factory=dict)
    idf: bool = False
    label: str | None = None  # the name when the readable one is another system's too (:func:`name_systems`)

    @property
    def kind(self) -> str:
        return "bm25" if isinstance(self.encoder, BM25) else "splade"

    @property
    def name(self) -> str:
        """A readable name, e.g. ``BM25(k1=0.9,b=0.4)`` or ``SPLADE(model,idf=True)`` (a SPLADE model by its
        folder's last part; by its path as given where two systems would share that name: :func:`name_systems`)."""
        return self.label or self._name()

    @property
    def full_name(self) -> str:
        """The name with a SPLADE model as given in full (``SPLADE(runs/a/model)``): two systems of equal full
        names are the same system."""
        return self._name(full=True)

    def _name(self, *, full: bool = False) -> str:
        enc = self.encoder
        if isinstance(enc, BM25):
            defaults = inspect.signature(BM25).parameters
            extra = "".join(
                f",{k}={getattr(enc, k)}" for k in _BM25_NAMED if getattr(enc, k) != defaults[k].default
            )
            return f"BM25(k1={enc.k1},b={enc.b}{extra})"
        extra = "".join(f",{k}={v}" for k, v in self.params.items())
        model = enc.model.rstrip("/")
        return f"SPLADE({model if full else Path(model).name}{extra})"

    @property
    def index_name(self) -> str:
        """The readable part of this system's index folder name (see :meth:`cache_name`)."""
        enc = self.encoder
        if isinstance(enc, BM25) and "stemmer" not in enc.analyzer.config():
            return (
                f"bm25-{enc.language}-k1={enc.k1}-b={enc.b}"  # Lucene's analyzer for the language, as it is
            )
        return self._english_index_name()

    def _english_index_name(self) -> str:
        """The readable name with the English analysis options, which entries of languages other than English
        also had before 2026-11-29 (``bm25-fr-k1=0.9-b=0.4-porter-lucene``: options they never used)."""
        enc = self.encoder
        if isinstance(enc, BM25):
            stop = enc.stopwords if enc.stopwords is None or isinstance(enc.stopwords, str) else "custom"
            lang = "" if enc.language == "en" else f"-{enc.language}"
            return f"bm25{lang}-k1={enc.k1}-b={enc.b}-{enc.stemmer}-{stop}"
        return slug(f"splade-{Path(enc.model.rstrip('/')).name}-{enc.doc_max_length}-{enc.doc_top_k}")

    def cache_name(self, dataset_id: str | Any, *, by_corpus: bool = True) -> str:
        """The folder name of this system's cached index of a dataset: readable settings and a hash of
        everything that determines the index (the dataset's documents, the encoder's full configuration with the
        analyzer's version or the model's fingerprint, the index format), so that two requests share a cached
        index exactly when they would build the same one: the query sets and splits of one corpus share it. A
        local collection (``beir:``, ``files:``) is known by its corpus file's path, size and mtime
        (:func:`.datasets.dataset_identity`): an edited corpus gets a new entry; an ``hf:`` dataset also by the
        configs and columns it reads its documents with. ``by_corpus=False``: the name before 2026-11-30, when
        the key held the dataset's own spec."""
        from .datasets import dataset_identity

        identity = dataset_identity(dataset_id)
        if not by_corpus:
            identity = identity_before(dataset_id, identity)
        key = {
            "dataset": identity,
            "encoder": _identity(self.encoder.encoder_config()),
            "format": FORMAT_VERSION,
        }
        digest = hashlib.sha1(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
        return f"{self.index_name}-{digest[:8]}"

    def _cached_index(
        self, index_dir: str | os.PathLike[str], dataset_id: str | Any, shards: int | None
    ) -> SparseIndex | ShardedIndex:
        """The handle of this system's cache entry for a dataset under ``index_dir``. Entries made under earlier
        names are used where they are while they serve this system: the dataset's own folder and key (before
        2026-11-30, when the datasets of one corpus did not share an entry) and there the name with the English
        analysis options (before 2026-11-29, :meth:`_english_index_name`)."""
        suffix = "" if shards is None else f"-x{shards}"

        def handle(folder: Path, name: str) -> SparseIndex | ShardedIndex:
            path = folder / f"{name}{suffix}"
            return SparseIndex(path) if shards is None else ShardedIndex(path, num_shards=shards)

        index = handle(index_folder(index_dir, dataset_id), self.cache_name(dataset_id))
        if index.directory.exists():
            return index
        own, own_name = (
            index_folder(index_dir, dataset_id, by_corpus=False),
            self.cache_name(dataset_id, by_corpus=False),
        )
        earlier = [handle(own, own_name)]
        if self._english_index_name() != self.index_name:
            earlier.append(handle(own, self._english_index_name() + own_name[len(self.index_name) :]))
        for before in earlier:
            if before.directory != index.directory and self._unusable(before) is None:
                return before
        return index

    def stale_reason(self, index: SparseIndex | ShardedIndex) -> str | None:
        """Why a cached index does not serve this system (its recorded configuration differs), or None."""
        wanted = _identity(self.encoder.encoder_config())
        recorded = _identity(index.encoder)
        changed = sorted(k for k in wanted if recorded.get(k) != wanted[k])
        if not changed:
            return None
        return (
            "built with "
            + ", ".join(f"{k}={recorded.get(k)!r}" for k in changed)
            + " where this run asks for "
            + (", ".join(f"{k}={wanted[k]!r}" for k in changed))
        )

    def index(
        self,
        index_dir: str | os.PathLike[str],
        dataset_id: str | Any,
        corpus: Callable[[], Iterable[dict[str, Any]]],
        *,
        verbose: bool = True,
        shards: int | None = None,
        engine: str = "local",
        ray_address: str | None = None,
    ) -> SparseIndex | ShardedIndex:
        """This system's index of a dataset, cached under ``index_dir`` (see :meth:`cache_name`): built from
        ``corpus()`` on first use, reused after, rebuilt (saying why) when the cached one was built otherwise.

        A lock per cache entry makes concurrent runs wait for one build instead of failing. ``shards=N`` caches
        a :class:`ShardedIndex` of N shards instead (its own entry); ``engine="ray"`` builds it on the Ray cluster at
        ``ray_address`` (the same index as a local build)."""
        from filelock import FileLock, Timeout

        from .datasets import dataset_identity

        if isinstance(self.encoder, Splade) and self.encoder.fingerprint is None:
            # a hub model not yet in the local cache: fetch it first, so that the cache key names its weights
            # now and on every later run
            self.encoder.load()
        index: SparseIndex | ShardedIndex = self._cached_index(index_dir, dataset_id, shards)
        path = index.directory
        if self._unusable(index) is None:  # built and serving this system: read, nothing written (nor a lock)
            if verbose:
                print(f"Reusing index {path}")
            return index
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.parent / f".{path.name}.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if verbose:
                print(f"Waiting for another run that is building {path}")
            lock.acquire()
        try:
            # a build killed between the two renames of its swap (no renameat2: NFS) left the entry moved aside
            clean_leftovers(path)
            index.reload()  # another run may have built it while this one waited
            why = self._unusable(index)
            if why is None:
                if verbose:
                    print(f"Reusing index {path}")
                return index
            mode = "overwrite" if index.built() else "create"
            if mode == "create":
                clear_unreadable_entry(path)
            # damage is a warning, shown however quiet the build (as clear_unreadable_entry's)
            elif why.startswith(DAMAGED):
                warnings.warn(f"Rebuilding {path}: {why}", stacklevel=2)
            elif verbose:
                print(f"Rebuilding {path}: {why}")
            # the documents' identity as the build begins (a corpus file edited during it is not taken for them)
            identity = dataset_identity(dataset_id)
            self.encoder.indexer(
                index, mode=mode, verbose=verbose, engine=engine, ray_address=ray_address
            ).index(corpus())
            record_identity(path, identity)
            if verbose:
                say_outdated([path.parent, index_folder(index_dir, dataset_id, by_corpus=False)], identity)
            return index
        finally:
            lock.release()

    def _unusable(self, index: SparseIndex | ShardedIndex) -> str | None:
        """Why a cache entry cannot serve this system as it is (not built, built otherwise, damaged), or None."""
        if not index.built():
            return "it is not built"
        try:
            if isinstance(index, ShardedIndex):
                _ = index.shards  # every shard checked: a damaged one makes the entry rebuilt
            return self.stale_reason(index)
        except IndexCorruptError as e:  # a damaged cache entry is rebuilt, not reported to the user to fix
            return f"{DAMAGED} ({e})"

    def cached(
        self, index_dir: str | os.PathLike[str], dataset_id: str | Any, *, shards: int | None = None
    ) -> bool:
        """Whether this system's index of a dataset is in the cache, built and serving it: :meth:`index` then reads
        it and writes nothing (a cache on a read-only file system serves)."""
        return self._unusable(self._cached_index(index_dir, dataset_id, shards)) is None

    def retriever(
        self, index: SparseIndex | ShardedIndex, *, num_results: int, verbose: bool = False, **kwargs: Any
    ) -> pt.Transformer:
        """This system's retriever over ``index`` (a full index, a pooled subset of one, or a sharded index;
        ``kwargs`` such as ``engine=`` go to the retriever)."""
        if isinstance(self.encoder, Splade):
            return self.encoder.retriever(
                index, num_results=num_results, idf=self.idf, verbose=verbose, **kwargs
            )
        return self.encoder.retriever(index, num_results=num_results, verbose=verbose, **kwargs)


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    """An encoder configuration as it identifies an index: a model known by the fingerprint of its weights is
    not also known by the path it was loaded from (``model/`` and ``model``, or a moved copy, are the same)."""
    if config.get("fingerprint"):
        return {k: v for k, v in config.items() if k != "model"}
    return config


def name_systems(systems: Sequence[System]) -> list[str]:
    """The systems' names, distinct: those whose readable names collide (two SPLADE checkpoints in folders of
    one name, ``runs/a/model`` and ``runs/b/model``) are named by their model as given, ``SPLADE(runs/a/model)``
    (set as each system's ``label``, which :attr:`System.name` then gives). The same system given twice is
    refused."""
    full = [s.full_name for s in systems]
    if len(set(full)) != len(full):
        raise ValueError(f"The same system is given twice: {[s.name for s in systems]}.")
    short = [s._name() for s in systems]
    for s, name, whole_name in zip(systems, short, full):
        # distinct: a short name has no "/", a full one given for it has (its model's paths differ)
        s.label = whole_name if short.count(name) > 1 else None
    return [s.name for s in systems]


def resolve_baseline(baseline: str | None, names: list[str]) -> int | None:
    """The index of the baseline system named by ``baseline`` (an index or a name), or None; a ValueError names
    the choices."""
    if baseline is None:
        return None
    if baseline.isdigit() and int(baseline) < len(names):
        return int(baseline)
    if baseline in names:
        return names.index(baseline)
    raise ValueError(
        f"--baseline {baseline!r} is neither a system index (0..{len(names) - 1}) nor a name in {names}."
    )


#: where :func:`specs_with_language` found the language when ``--language`` was not given
_FROM_DATASET = "the dataset"


class _LanguageAdded(str):
    """A spec to which :func:`with_language` added ``language=``. It remembers the spec as the user wrote it,
    which :func:`parse_system`'s errors quote, and where the language came from (``source``), whose fix they
    name."""

    written: str
    source: str | None

    def __new__(cls, spec: str, written: str | None = None, source: str | None = None) -> _LanguageAdded:
        self = super().__new__(cls, spec)
        self.written = spec if written is None else written
        self.source = source
        return self


def with_language(spec: str, language: str | None, source: str | None = None) -> str:
    """``spec`` with ``language=`` added when it is a BM25 spec that does not set one (others unchanged); the
    result remembers ``spec``, which :func:`parse_system`'s errors quote, and ``source`` (where ``language`` came
    from)."""
    kind, _, rest = spec.strip().partition(":")
    if language is None or kind.strip().lower() != "bm25" or "language=" in rest:
        return spec
    added = f"bm25:{rest},language={language}" if rest.strip() else f"bm25:language={language}"
    return _LanguageAdded(added, getattr(spec, "written", spec), source)


def specs_with_language(
    specs: Sequence[str], dataset: str, language: str | None = None, *, quiet: bool = False, say: Any = print
) -> list[str]:
    """BM25 specs with the analyzer's language: ``language`` (``--language``), else the one the dataset declares
    (saying which it chose through ``say`` unless ``quiet``); other specs unchanged. An unknown ``language`` is a
    ValueError."""
    from .analysis import language_code
    from .datasets import dataset_language

    source, saying = "--language", _bm25_without_language(specs) and not quiet
    if language is None:
        try:
            language, source = dataset_language(dataset), _FROM_DATASET
        except ValueError:  # an unknown dataset is reported where it is loaded
            return list(specs)
    if language is None:
        if saying:
            say("BM25 analyzer: language en (the dataset declares no one language; --language LANG chooses)")
        return list(specs)
    try:
        language = language_code(language, source)  # as a spec's language=, in any case: "FR" is "fr"
    except ValueError:
        if source == "--language":
            raise
        if saying:
            say(
                f"The dataset's language {language!r} has no Lucene analyzer here; BM25 analyses it as English "
                "(--language LANG chooses another)."
            )
        return list(specs)
    # said for the BM25 systems it applies to: one with its own language= keeps it
    if saying:
        say(f"BM25 analyzer: language {language} (from {source})")
    return [with_language(s, language, source) for s in specs]


def specs_in_dataset_language(specs: Sequence[str], dataset: str | Any, *, quiet: bool = False) -> list[str]:
    """The Python API's :func:`specs_with_language`: each BM25 spec that sets no ``language=`` given the language
    ``dataset`` declares, as the command line gives it; said (unless ``quiet``) only when one is given."""
    out = specs_with_language(specs, dataset, quiet=True)
    added = [new for old, new in zip(specs, out) if new is not old]
    encoder = parse_system(added[0]).encoder if added else None
    if isinstance(encoder, BM25) and not quiet:
        print(f"BM25 analyzer: language {encoder.analyzer.language} (from {_FROM_DATASET})")
    return out


def systems_with_language(
    systems: Sequence[System], dataset: str | Any, *, quiet: bool = False
) -> list[System]:
    """``systems`` with each BM25 system parsed from a spec that sets no ``language=`` parsed again with the
    language ``dataset`` declares (:func:`specs_in_dataset_language`); the others as they are."""
    specs = specs_in_dataset_language([s.spec for s in systems], dataset, quiet=quiet)
    return [
        s if new is s.spec else replace(parse_system(new), label=s.label) for s, new in zip(systems, specs)
    ]


def _bm25_without_language(specs: Sequence[str]) -> bool:
    return any(s.strip().lower().startswith("bm25") and "language=" not in s.lower() for s in specs)


def parse_system(spec: str) -> System:
    """Parse ``kind[:key=value,...]`` into a :class:`System`; raises ValueError with the accepted forms.

    The encoder is built (and its parameters validated) here; no model is loaded. Errors quote the spec as the
    user wrote it (without the ``language=`` that :func:`with_language` added).
    """
    written = getattr(spec, "written", spec)
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind not in _PARAMS:
        raise ValueError(
            f"Unknown system {written!r}; use 'bm25', 'bm25:k1=1.2,b=0.75', 'splade:PATH_OR_HUB_ID' or "
            "'splade:PATH_OR_HUB_ID,idf=true'."
        )
    items = [p.strip() for p in rest.split(",") if p.strip()]
    model = ""
    if kind == "splade":
        if not items or "=" in items[0]:
            raise ValueError(
                f"{written!r}: name the SPLADE model, e.g. 'splade:naver/splade-cocondenser-ensembledistil'."
            )
        model = items.pop(0)
    allowed = _PARAMS[kind]
    params: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if key in params:
            raise ValueError(f"{key} is given twice in {written!r}; give each parameter once.")
        if not eq or key not in allowed:
            example = "'bm25:k1=1.2,b=0.75'" if kind == "bm25" else "'splade:MODEL,idf=true'"
            raise ValueError(
                f"Bad system parameter {item!r} in {written!r}; {kind} takes {', '.join(allowed)} as key=value, "
                f"e.g. {example}."
            )
        try:
            params[key] = allowed[key](value.strip())
        except ValueError:
            raise ValueError(f"Bad value for {key} in {written!r}: {value!r}.") from None
    if kind == "bm25":
        try:
            bm25 = BM25(**params)  # validates the values (k1 >= 0, 0 <= b <= 1, stemmer)
        except EnglishOptionsError as e:
            if getattr(spec, "source", None) != _FROM_DATASET:
                raise
            raise EnglishOptionsError(  # the user did not choose that language: name the way back to English
                f"{e} The language {params['language']} came from the dataset: to customise the English "
                f"analyzer instead, give --language en (or write language=en in {written!r})."
            ) from None
        return System(str(spec), bm25, params)
    settings = {k: v for k, v in params.items() if k != "idf"}
    splade = Splade(model, **settings)
    splade.check_model_path()
    return System(str(spec), splade, params, idf=bool(params.get("idf", False)))
