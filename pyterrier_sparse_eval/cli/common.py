"""What the subcommands share: default measures, help texts, writing outputs, the analyzer language."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ..console import UsageError
from ..files import atomic_write_text, check_destination, is_stream, written_path
from ..measures import json_ready, parse_measures
from ..systems import specs_with_language

DEFAULT_METRICS = ["nDCG@10", "R@100", "AP", "RR"]

DATASET_HELP = (
    "irds:ID, beir:PATH[:SPLIT], files:CORPUS,TOPICS,QRELS, hf:miracl:LANG, hf:mmarco:LANG, hf:REPO"
)
LANGUAGE_HELP = (
    "BM25 analyzer language (ISO 639-1, e.g. fr, zh; a region is dropped: fr-FR is fr); "
    "default: the dataset's declared one, else en"
)


def check_output(
    path: str | None, suffixes: tuple[str, ...], inputs: tuple[str, ...] = (), cache: Path | None = None
) -> None:
    """``--output`` checked before any work: a writable destination (:func:`check_destination`) with one of
    ``suffixes`` (a pipe or a device, such as /dev/stdout, is written as it is), none of the input files, and not
    inside ``cache`` (:func:`outside_indexes`)."""
    refuse_empty(path, "--output")
    if not path:
        return
    outside_indexes(path, "--output", cache)
    check_destination(path, option="--output")
    target = Path(path)
    for given in inputs:
        if target.exists() and os.path.exists(given) and os.path.samefile(target, given):
            raise UsageError(f"--output {path} is an input of this command ({given}); give another file.")
    if not is_stream(written_path(target)) and target.suffix.lower() not in suffixes:
        raise UsageError(f"--output must end in {' or '.join(suffixes)}, got {path!r}.")


def refuse_empty(path: str | None, option: str) -> None:
    """An empty path (an unset shell variable, ``--output "$OUT"``): it had been taken as no option, or as the
    current folder (``--save-runs ""``)."""
    if path == "":
        raise UsageError(f"{option} is empty: give a path, or leave the option out.")


def outside_indexes(path: str | None, option: str, cache: Path | None = None) -> None:
    """A destination is not inside an index's folder (a cache entry), nor inside ``cache`` (the dataset's folder
    of the index cache, where this command's entries are built): a file there had been taken by ``check-index``
    for damage, and is lost when the entry is rebuilt."""
    if not path or is_stream(written_path(Path(path))):
        return
    # symlinks resolved: a link to the cache is the cache
    where = Path(os.path.realpath(path))
    for folder in where.parents:
        if (folder / "pt_meta.json").is_file():
            raise UsageError(f"{option} {path} is inside the index at {folder}: write it elsewhere.")
    # an entry this command is about to build has no pt_meta.json yet
    if cache is not None and Path(os.path.realpath(cache)) in where.parents:
        raise UsageError(
            f"{option} {path} is inside {cache}, the folder this command builds its indexes in: write it elsewhere."
        )


def user_path(value: str) -> str:
    """A path option's value with ``~`` expanded, as the shell does not in ``--output=~/x`` (a literal ``./~``
    folder had been made, which a later ``rm -r ~`` would take for the home folder)."""
    return os.path.expanduser(value)


def dataset_inputs(spec: str | None) -> tuple[str, ...]:
    """The local files a ``beir:`` or ``files:`` dataset is read from (corpus, topics, qrels): never an output."""
    from .. import datasets
    from ..collections import is_local_spec

    if not is_local_spec(spec):
        return ()
    try:  # reads nothing: a spec that cannot load is refused, naming its fix, where the command loads it
        ds = datasets.load_dataset(spec)
    except (OSError, ValueError, KeyError):
        return ()
    return tuple(str(getattr(ds, f)) for f in ("corpus_path", "topics_path", "qrels_path"))


def topic_field_option(p: argparse.ArgumentParser) -> None:
    """``--topic-field``: the topics' field used as the query."""
    p.add_argument(
        "--topic-field", default=None, help="topic field to use as the query (default: chosen and reported)"
    )


def index_dir_option(p: argparse.ArgumentParser) -> None:
    """``--index-dir``: a folder, never empty (an empty one had put the cache into the current folder)."""

    def folder(value: str) -> str:
        if not value.strip():
            raise argparse.ArgumentTypeError(
                "is empty: give the folder of the index cache, e.g. --index-dir indexes"
            )
        return value

    p.add_argument(
        "--index-dir", type=folder, default="indexes", help="where indexes are cached (default ./indexes)"
    )


def measures_named(names: list[str] | None, parse: Any = parse_measures) -> list[Any]:
    """Measures from names through one of the package's parsers (default: computable in-house, names kept)."""
    return list(parse(names or DEFAULT_METRICS))


def write(path: str, text: str | Any, quiet: bool = True) -> None:
    """``text`` (or an object, as JSON, a line) written to ``path`` whole or not at all, and said so unless ``quiet``.
    JSON is strict: a NaN (a measure nothing was evaluated for) or an infinity is written as null."""
    atomic_write_text(
        path,
        text if isinstance(text, str) else json.dumps(json_ready(text), indent=2, allow_nan=False) + "\n",
    )
    if not quiet:
        print(f"Wrote {path}")


def with_language(args: argparse.Namespace, specs: list[str], notes: list[str]) -> list[str]:
    """System specs with the analyzer language of ``args`` (``--language``, else the dataset's); the choice is
    said in ``notes``, which the command prints once its input is checked (not above a usage error)."""
    try:
        return specs_with_language(specs, args.dataset, args.language, quiet=args.quiet, say=notes.append)
    except ValueError as e:
        raise UsageError(str(e)) from None
