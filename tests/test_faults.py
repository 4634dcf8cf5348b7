"""Faults and bad input, as tables: each row is one case, with the exact exit code or error and the words of
its message. Nothing a failed command or build is given may be written or deleted; no damaged index may
crash the interpreter or return rankings (the kernel-facing cases run in a subprocess, so that a crash fails
the test instead of the test run)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import HAVE_DATA, needs_data

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main

RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root with its size and modification time: what "nothing written or deleted" compares."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


# ----------------------------------------------------------------------------------------------------------
# Bad input on the command line: exit code, one line naming the fix, nothing written or deleted
# ----------------------------------------------------------------------------------------------------------

# one case per line: the table a reviewer reads
# fmt: off
CLI_CASES = [
    # (id, args, files to create, exit code, words of the one-line message)
    ("unknown dataset", ["experiment", "--dataset", "irds:no/such"], {}, 2, "Unknown dataset"),
    ("unknown measure", ["experiment", "--dataset", "irds:vaswani", "--metric", "nDCGx@10"], {}, 2, "Unknown measure"),
    ("bad system parameter", ["experiment", "--dataset", "irds:vaswani", "--system", "bm25:k=1"], {}, 2, "k1, b"),
    ("ray address, no ray", ["experiment", "--dataset", "irds:vaswani", "--ray-address", "h:1"], {}, 2, "give --engine ray"),
    ("empty ray address", ["experiment", "--dataset", "irds:vaswani", "--engine", "ray", "--shards", "2", "--ray-address", ""], {}, 2, "--ray-address is empty"),
    ("unknown system", ["experiment", "--dataset", "irds:vaswani", "--system", "dense"], {}, 2, "Unknown system"),
    ("output suffix", ["experiment", "--dataset", "irds:vaswani", "--output", "x.txt"], {}, 2, ".json or .csv"),
    ("zero results", ["experiment", "--dataset", "irds:vaswani", "--num-results", "0"], {}, 2, "--num-results must"),
    ("index dir is a file", ["experiment", "--dataset", "irds:vaswani", "--index-dir", "notes.txt"], {"notes.txt": "my notes"}, 2, "is a file"),
    ("baseline out of range", ["experiment", "--dataset", "irds:vaswani", "--baseline", "7"], {}, 2, "--baseline"),
    ("same system twice", ["experiment", "--dataset", "irds:vaswani", "--system", "bm25", "--system", "bm25"], {}, 2, "given twice"),
    ("in-house without twin", ["experiment", "--dataset", "irds:vaswani", "--measures", "in-house", "--metric", "ERR@10"], {}, 2, "not computed in-house"),
    ("missing model folder", ["experiment", "--dataset", "irds:vaswani", "--system", "splade:./no/such/model"], {}, 2, "No model folder"),
    ("run file missing", ["evaluate", "--run", "none.run", "--qrels", "q"], {"q": QRELS}, 2, "not found"),
    ("run with 5 columns", ["evaluate", "--run", "r", "--qrels", "q"], {"r": "q1 Q0 d1 1 2.0\n", "q": QRELS}, 2, "expected 6 columns"),
    ("NaN score", ["evaluate", "--run", "r", "--qrels", "q"], {"r": "q1 Q0 d1 1 nan t\n", "q": QRELS}, 2, "'nan' is NaN, which trec_eval cannot rank"),
    ("fractional label", ["evaluate", "--run", "r", "--qrels", "q"], {"r": RUN, "q": "q1 0 d1 0.5\n"}, 2, "must be an integer"),
    ("empty qrels", ["evaluate", "--run", "r", "--qrels", "q"], {"r": RUN, "q": ""}, 2, "is empty"),
    ("run of another split", ["evaluate", "--run", "r", "--qrels", "q"], {"r": RUN, "q": "q9 0 d1 1\n"}, 1, "nothing was evaluated"),
    ("empty run counted as 0", ["evaluate", "--run", "r", "--qrels", "q", "--missing-as-zero"], {"r": "", "q": QRELS}, 1, "every judged query counted as 0: no query of the run"),
    ("empty run", ["crosscheck", "--run", "r", "--qrels", "q"], {"r": "", "q": QRELS}, 1, "NOTHING COMPARED"),
    ("crosscheck unknown measure", ["crosscheck", "--run", "r", "--qrels", "q", "--metric", "XYZ"], {"r": RUN, "q": QRELS}, 2, "Unknown measure"),
    ("output into a file", ["evaluate", "--run", "r", "--qrels", "q", "--output", "f/x.json"], {"r": RUN, "q": QRELS, "f": "a file"}, 2, "f/x.json"),
    ("sdm unknown family", ["sdm", "--dataset", "irds:vaswani", "--family", "gamma"], {}, 2, "Unknown --family"),
    ("sdm depth below k", ["sdm", "--dataset", "irds:vaswani", "--k", "2000", "--num-results", "1000"], {}, 2, "num_results (--num-results) 1000 is below"),
    ("sdm negative sample", ["sdm", "--dataset", "irds:vaswani", "--sample", "-1"], {}, 2, "--sample must be >= 2"),
    ("sdm output suffix", ["sdm", "--dataset", "irds:vaswani", "--output", "x.csv"], {}, 2, "must end in .json"),
    ("check a non-index", ["check-index", "notes"], {"notes/a.txt": "x"}, 2, "is not a sparse index"),
    ("dataset without qrels", ["experiment", "--dataset", "irds:beir/scifact"], {}, 2, "no relevance judgments"),
]
# fmt: on


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_bad_command_line_input(case, tmp_path, monkeypatch, capsys):
    name, args, files, code, message = case
    if name == "dataset without qrels" and not HAVE_DATA:
        pytest.skip("needs the real collections")
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    index_dir = (
        [] if "--index-dir" in args or args[0] not in ("experiment", "sdm") else ["--index-dir", "idx"]
    )
    assert main([*args, *index_dir, "--quiet"] if args[0] in ("experiment", "sdm") else args) == code
    captured = capsys.readouterr()
    err = captured.err.strip()
    if code == 2:
        assert err.startswith("sparse-eval: error:") and len(err.splitlines()) == 1, err
    assert message in err or message in captured.out, (err, captured.out)
    assert tree(tmp_path) == before  # nothing written, nothing deleted


def test_a_bug_is_exit_3_in_one_line_and_a_traceback_with_debug(tmp_path, monkeypatch, capsys):
    from pyterrier_sparse_eval import cli

    def broken(args):
        raise RuntimeError("something the code did not expect")

    (tmp_path / "r").write_text(RUN)
    (tmp_path / "q").write_text(QRELS)
    args = ["evaluate", "--run", str(tmp_path / "r"), "--qrels", str(tmp_path / "q")]
    parser_args = cli.build_parser  # the subcommand's function is bound when the parser is built
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser_args(), "evaluate", broken))
    assert main(args) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("sparse-eval: internal error: RuntimeError") and len(err.splitlines()) == 1
    # --debug shows the traceback, and keeps the exit code (it had re-raised: exit 1, a failed check's code)
    assert main([*args, "--debug"]) == 3
    err = capsys.readouterr().err
    assert (
        "Traceback (most recent call last)" in err
        and "RuntimeError: something the code did not expect" in err
    )
    assert err.strip().splitlines()[-1].startswith("sparse-eval: internal error: RuntimeError")


def _with_func(parser, command, func):
    parser._subparsers._group_actions[0].choices[command].set_defaults(func=func)
    return parser


def test_per_query_values_are_printed_also_with_an_output_file(tmp_path, capsys):
    (tmp_path / "r").write_text(RUN)
    (tmp_path / "q").write_text(QRELS)
    args = [
        "evaluate",
        "--run",
        str(tmp_path / "r"),
        "--qrels",
        str(tmp_path / "q"),
        "--metric",
        "RR",
        "--per-query",
    ]
    assert main([*args, "--output", str(tmp_path / "e.json")]) == 0
    assert "RR  q1  1.0000" in capsys.readouterr().out
    assert json.loads((tmp_path / "e.json").read_text())["per_query"] == {"RR": {"q1": 1.0}}


def test_offline_download_is_one_line_naming_ir_datasets_home(tmp_path):
    # an empty cache, and every download sent to a closed local port: offline even on a connected machine
    closed = "http://127.0.0.1:9"
    proxies = {k: closed for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}
    env = {
        **os.environ,
        **proxies,
        "IR_DATASETS_HOME": str(tmp_path / "empty-cache"),
        "no_proxy": "",
        "NO_PROXY": "",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyterrier_sparse_eval",
            "experiment",
            "--dataset",
            "irds:vaswani",
            "--quiet",
            "--index-dir",
            str(tmp_path / "idx"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "IR_DATASETS_HOME" in done.stderr, done.stderr


def test_version_and_broken_pipe(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "pyterrier_sparse_eval", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and pse.__version__ in out.stdout
    # 20,000 queries: far more per-query output than a pipe buffer (64 KiB) holds, so `head` really leaves
    (tmp_path / "r").write_text("".join(f"q{i} Q0 d1 1 1.0 t\n" for i in range(20_000)))
    (tmp_path / "q").write_text("".join(f"q{i} 0 d1 1\n" for i in range(20_000)))
    cmd = (
        f"{sys.executable} -m pyterrier_sparse_eval evaluate --run {tmp_path / 'r'} --qrels {tmp_path / 'q'} "
        f"--per-query --metric AP --metric RR --metric P@5 | head -1"
    )
    done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr


# ----------------------------------------------------------------------------------------------------------
# Bad input through the Python API
# ----------------------------------------------------------------------------------------------------------

DOCS = [{"docno": f"d{i}", "text": f"alpha beta {'gamma ' * (i % 4)} w{i}"} for i in range(40)]


def test_overwrite_never_deletes_what_is_not_an_index(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ideas.txt").write_text("keep me")
    results = tmp_path / "results.json"
    results.write_text("{}")
    for target in (notes, results):
        before = tree(tmp_path)
        with pytest.raises(FileExistsError, match="an index is only ever written over an index"):
            pse.BM25().indexer(pse.SparseIndex(target), mode="overwrite", verbose=False).index(DOCS)
        assert tree(tmp_path) == before


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("mode", ["create", "overwrite"])
def test_an_empty_folder_made_for_the_index_is_taken(tmp_path, shards, mode):
    """A folder made beforehand (mkdir, tempfile.mkdtemp) holds the index; one that is not empty is still refused,
    and so is a link to an empty folder (what it points at is not the index's to take)."""
    (tmp_path / "index").mkdir()
    index = pse.SparseIndex(tmp_path / "index") if shards is None else pse.ShardedIndex(tmp_path / "index", 2)
    pse.BM25().indexer(index, mode=mode, verbose=False, batch_size=7).index(DOCS)
    expected = pse.BM25().indexer(pse.SparseIndex(tmp_path / "new"), verbose=False).index(DOCS)
    topics = pd.DataFrame({"qid": ["1"], "query": ["gamma w3"]})
    pd.testing.assert_frame_equal(
        pse.BM25().retriever(index).transform(topics), pse.BM25().retriever(expected).transform(topics)
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "empty")
    with pytest.raises(FileExistsError, match="symbolic link"):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "link"), mode=mode, verbose=False).index(DOCS)
    assert list((tmp_path / "empty").iterdir()) == []


@pytest.mark.parametrize("mode", ["create", "overwrite"])
def test_a_mount_point_is_refused_before_any_work(tmp_path, monkeypatch, mode):
    """An index is built beside its path and swapped in: at a mount point (an empty volume mounted for it, or one
    holding an index) the swap fails with EBUSY, which came after the whole build; it is refused first now."""
    mounted = tmp_path / "volume"
    mounted.mkdir()
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) == str(mounted) or real(p))
    seen = []

    def docs():
        seen.append(1)
        yield from DOCS

    with pytest.raises(
        ValueError, match=r"volume is a mount point.*Give a folder inside it, e.g. .*volume/index"
    ):
        pse.BM25().indexer(pse.SparseIndex(mounted), mode=mode, verbose=False).index(docs())
    assert seen == [] and [p.name for p in tmp_path.iterdir()] == ["volume"] and not list(mounted.iterdir())


def test_overwrite_of_a_link_is_refused(tmp_path):
    real = _build(tmp_path / "v1")
    (tmp_path / "current").symlink_to(real.directory)
    with pytest.raises(FileExistsError, match="symbolic link"):
        pse.BM25(stemmer=None, stopwords=None).indexer(
            pse.SparseIndex(tmp_path / "current"), mode="overwrite", verbose=False
        ).index(DOCS)
    pse.SparseIndex(tmp_path / "current").verify()


@pytest.mark.parametrize("labels, row, shown", [([1, 0.5, 2], 1, "0.5"), ([1, 2, "x", 0], 2, "x")])
def test_non_integer_labels_are_refused_with_their_row(labels, row, shown):
    qrels = pd.DataFrame({"qid": ["q"] * len(labels), "docno": list("abcd")[: len(labels)], "label": labels})
    with pytest.raises(ValueError, match=rf"row {row} \(qid 'q', docno '{'abcd'[row]}'\) has label {shown}"):
        pse.evaluate({"q": {"a": 1.0, "b": 0.5}}, qrels, ["nDCG@10"])


def test_missing_text_is_counted_never_indexed_as_nan(tmp_path):
    docs = [
        {"docno": "1", "title": "only a title"},
        {"docno": "2", "title": None, "text": float("nan")},
        {"docno": "3", "title": "t", "text": "body words"},
    ]
    with pytest.warns(UserWarning, match="1 of 3 documents have no text in fields 'title' \\+ 'text'"):
        index = (
            pse.BM25(stemmer=None, stopwords=None)
            .indexer(pse.SparseIndex(tmp_path / "i"), verbose=False)
            .index(docs)
        )
    assert "nan" not in index.vocab and "none" not in index.vocab
    assert index.encoder["fields"] == ["title", "text"]  # from the whole first batch, not its first document
    assert {"body", "words", "only"} <= set(index.vocab)


def test_unknown_checks_mode():
    with pytest.raises(ValueError, match="checks must be one of"):
        pse.SparseIndex("x", checks="some")


class _FullDiskFile:
    """A spill file on a full disk: closing it fails to flush its buffer (ENOSPC), as a real one does."""

    def __init__(self, f):
        self._f = f

    def __getattr__(self, name):
        return getattr(self._f, name)

    def close(self):
        self._f.close()
        raise OSError(28, "No space left on device")


def _spill_on_a_full_disk(monkeypatch) -> None:
    """Every index writer's values spill file made a :class:`_FullDiskFile`."""
    from pyterrier_sparse_eval._build import IndexWriter

    made = IndexWriter.__init__

    def on_a_full_disk(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self._spill[2] = _FullDiskFile(self._spill[2])

    monkeypatch.setattr(IndexWriter, "__init__", on_a_full_disk)


@pytest.mark.parametrize("shards", [None, 2])
def test_a_build_that_fails_on_a_full_disk_removes_its_folder(tmp_path, monkeypatch, shards):
    """The disk fills while batches are written: the build fails, and its temporary folder goes even though
    closing its files fails again (the close had raised before the folder was removed, leaving it, and the disk
    full, behind)."""
    _spill_on_a_full_disk(monkeypatch)

    def docs():
        yield from DOCS[:20]
        raise OSError(28, "No space left on device")

    index = pse.SparseIndex(tmp_path / "index") if shards is None else pse.ShardedIndex(tmp_path / "index", 2)
    with pytest.raises(OSError, match="No space left"):
        pse.BM25().indexer(index, verbose=False, batch_size=5).index(docs())
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_met_as_a_file_closes_is_said_with_the_file_and_the_space_left(tmp_path, monkeypatch):
    """The last buffer of a spill file, or of a file the index is written into, is written as the file closes:
    the bare "[Errno 28] No space left on device" there named neither the file nor the space left (numpy's short
    writes are said so), and nothing is left."""
    from pyterrier_sparse_eval import _spill

    _spill_on_a_full_disk(monkeypatch)
    with pytest.raises(
        OSError, match=r"No space left \(or a quota reached\) writing .*spill.values.*bytes free"
    ) as e:
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "a"), verbose=False).index(DOCS[:20])
    assert e.value.errno == 28 and list(tmp_path.iterdir()) == []
    monkeypatch.undo()

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_spill, "_write_docnos", full)
    with pytest.raises(
        OSError, match=r"No space left \(or a quota reached\) writing .*\.tmp \(\[Errno 28\]"
    ) as e:
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "b"), verbose=False).index(DOCS[:20])
    assert e.value.errno == 28 and list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------------------------
# Damaged indexes: a clear error that names the file, never a crash, never rankings
# ----------------------------------------------------------------------------------------------------------


def _build(path: Path, docs=None) -> pse.SparseIndex:
    return (
        pse.BM25(stemmer=None, stopwords=None)
        .indexer(pse.SparseIndex(path), verbose=False)
        .index(docs or DOCS)
    )


def _flip(name: str, where: float = 0.6, mask: int = 0x40):
    def damage(folder: Path) -> None:
        data = bytearray((folder / name).read_bytes())
        header = 128 if name.endswith(".npy") else 0
        pos = header + int((len(data) - header) * where)
        data[pos] ^= mask
        (folder / name).write_bytes(bytes(data))

    return damage


def _truncate(name: str):
    def damage(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: len(data) // 2])

    return damage


def _edit_meta(**changes):
    def damage(folder: Path) -> None:
        meta = json.loads((folder / "pt_meta.json").read_text())
        for key, value in changes.items():
            if key == "k1":
                meta["encoder"]["k1"] = value
            else:
                meta[key] = value
        (folder / "pt_meta.json").write_text(json.dumps(meta))

    return damage


def _remove(name: str):
    return lambda folder: (folder / name).unlink()


def _foreign(name: str):
    def damage(folder: Path) -> None:
        other = _build(folder.parent / "other", [{"docno": f"x{i}", "text": f"zz{i} yy"} for i in range(25)])
        (folder / name).write_bytes((other.directory / name).read_bytes())

    return damage


# one case per line: the table a reviewer reads
# fmt: off
CORRUPTIONS = [
    # (id, damage, words of the error: the file's name)
    ("flip in doc ids", _flip("postings.indices.npy", mask=0x80), "postings.indices.npy"),
    ("flip in weights", _flip("postings.data.npy", mask=0x01), "postings.data.npy"),
    ("flip in offsets", _flip("postings.indptr.npy"), "postings.indptr.npy"),
    ("flip in lengths", _flip("doclen.npy"), "doclen.npy"),
    ("flip in docno ranks", _flip("docno_rank.npy", mask=0x10), "docno_rank.npy"),
    ("flip in docnos", _flip("docnos.json", mask=0x01), "docnos.json"),
    ("flip in vocabulary", _flip("vocab.json", mask=0x01), "vocab.json"),
    ("truncated doc ids", _truncate("postings.indices.npy"), "postings.indices.npy"),
    ("truncated docnos", _truncate("docnos.json"), "docnos.json"),
    ("edited num_docs", _edit_meta(num_docs=41), "pt_meta.json"),
    ("edited num_postings", _edit_meta(num_postings=10), "pt_meta.json"),
    ("edited k1", _edit_meta(k1=1.2), "pt_meta.json"),
    ("metadata not JSON", lambda folder: (folder / "pt_meta.json").write_text("{oops"), "pt_meta.json"),
    ("missing weights", _remove("postings.data.npy"), "postings.data.npy"),
    ("another index's doc ids", _foreign("postings.indices.npy"), "postings.indices.npy"),
]
# fmt: on

PROBE = """
import sys, warnings
warnings.simplefilter("ignore")
import pandas as pd
import pyterrier_sparse_eval as pse
index = pse.SparseIndex(sys.argv[1], checks=sys.argv[2])
try:
    run = pse.BM25(stemmer=None, stopwords=None).retriever(index, num_results=5).transform(
        pd.DataFrame({"qid": ["1"], "query": ["alpha gamma w3"]}))
    _ = index.docnos, index.vocab
except pse.IndexCorruptError as e:
    print("CORRUPT", e)
else:
    print("RANKED", run["docno"].tolist())
"""


@pytest.mark.parametrize("case", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_damaged_index_is_an_error_naming_the_file(case, tmp_path):
    name, damage, file = case
    _build(tmp_path / "index")
    damage(tmp_path / "index")
    # opening and searching runs in a child process: a crash there is a failed test, not a crashed test run
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "index"), "full"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"the process died (status {done.returncode}): {done.stderr[-500:]}"
    assert done.stdout.startswith("CORRUPT") and file in done.stdout, done.stdout
    with pytest.raises(pse.IndexCorruptError, match=file.replace(".", r"\.")):
        pse.SparseIndex(tmp_path / "index").verify()
    assert main(["check-index", str(tmp_path / "index")]) == 1


def _far(arr: np.ndarray) -> None:
    arr[len(arr) // 2] = np.iinfo(arr.dtype).max // 2  # far out of range


def _descend(arr: np.ndarray) -> None:
    arr[[0, 1]] = arr[[1, 0]]  # the first term's first two doc ids swapped: in range, out of order


@pytest.mark.parametrize(
    "name, damage",
    [
        ("postings.indices.npy", _far),
        ("docno_rank.npy", _far),
        ("postings.indptr.npy", _far),
        ("postings.indices.npy", _descend),
    ],
    ids=["doc id out of range", "docno rank out of range", "offset out of range", "doc ids out of order"],
)
def test_structure_checks_alone_stop_what_would_crash_the_kernel(name, damage, tmp_path):
    """With checks="structure" (no CRC-32 on open), whatever could send a kernel out of its buffers is still
    refused on open, in a well-formed .npy of the right size."""
    index = _build(tmp_path / "index", [{"docno": f"d{i}", "text": "alpha beta"} for i in range(50)])
    arr = np.load(index.directory / name)
    damage(arr)
    np.save(index.directory / name, arr)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(index.directory), "structure"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"the process died (status {done.returncode}): {done.stderr[-500:]}"
    assert done.stdout.startswith("CORRUPT") and name in done.stdout, done.stdout


def test_every_bit_flipped_in_an_array_header_is_refused_naming_the_file_under_structure_checks(tmp_path):
    """numpy's header parser raises what the damaged bytes lead it to: a tokenize.TokenError (flipping '{' into
    ';') had escaped checks="structure" naming no file. Each bit of the header's first 64 bytes in turn: refused
    as damage naming the file (on open or by the first search), or (a byte order '<' made '=', spaces) searched
    with the same run."""
    index = _build(
        tmp_path / "index", [{"docno": f"d{i}", "text": f"alpha beta t{i % 7}"} for i in range(50)]
    )
    topics = pd.DataFrame({"qid": ["1"], "query": ["alpha t3"]})
    expected = pse.BM25(stemmer=None, stopwords=None).retriever(index)(topics)
    path = index.directory / "postings.data.npy"
    original = path.read_bytes()
    refused = 0
    for position in range(8, 72):
        for bit in range(8):
            damaged = bytearray(original)
            damaged[position] ^= 1 << bit
            path.write_bytes(bytes(damaged))
            try:  # the arrays are read on open, or by the first search
                opened = pse.SparseIndex(index.directory, checks="structure")
                run = pse.BM25(stemmer=None, stopwords=None).retriever(opened)(topics)
            except pse.IndexCorruptError as e:
                assert "postings.data.npy" in str(e)
                refused += 1
                continue
            pd.testing.assert_frame_equal(run, expected)
    path.write_bytes(original)
    assert refused > 400  # of 512 flips: most


def test_a_foreign_file_in_the_folder_is_reported_by_verify(tmp_path):
    index = _build(tmp_path / "index")
    (index.directory / "notes.txt").write_text("hi")
    with pytest.raises(pse.IndexCorruptError, match="notes.txt: a file the build did not write"):
        pse.SparseIndex(index.directory).verify()


def test_intact_index_verifies_and_old_indexes_still_open(tmp_path):
    index = _build(tmp_path / "index")
    index.verify()
    assert main(["check-index", str(index.directory)]) == 0
    # an index written before files were sealed (no seal in its metadata) opens, checked for structure
    meta = json.loads((index.directory / "pt_meta.json").read_text())
    for key in ("files", "build_id", "checksum"):
        meta.pop(key)
    (index.directory / "pt_meta.json").write_text(json.dumps(meta))
    old = pse.SparseIndex(index.directory)
    old.verify()
    assert old.build_id.startswith("legacy-") and old.num_docs == len(DOCS)


# ----------------------------------------------------------------------------------------------------------
# Kills during a build and during an overwrite: the old or the new index, never none, never a mix
# ----------------------------------------------------------------------------------------------------------

BUILD = """
import sys, warnings
warnings.simplefilter("ignore")
import pyterrier_sparse_eval as pse
n, tag, mode = int(sys.argv[2]), sys.argv[3], sys.argv[4]
docs = ({"docno": f"{tag}{i}", "text": " ".join(f"w{(i * 7 + j) % 5000}" for j in range(40))} for i in range(n))
pse.BM25(stemmer=None, stopwords=None).indexer(pse.SparseIndex(sys.argv[1]), mode=mode, verbose=False,
                                                batch_size=2000).index(docs)
print("done")
"""


def _builder(path: Path, n: int, tag: str, mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", BUILD, str(path), str(n), tag, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigterm_stops_the_command_line_as_ctrl_c_does(tmp_path):
    """SIGTERM (``kill``, ``timeout``, a batch scheduler's time limit) in the middle of a cached build: exit 143
    with one line, and the build's temporary folder removed (it had stayed, gigabytes on a real corpus, until a
    later build of that same entry on that host)."""
    from helpers import sigterm_mid_build

    code, err, left = sigterm_mid_build(tmp_path)
    assert code == 143, err
    assert err[-1] == "sparse-eval: terminated"
    assert left == []


_SIGNAL_IN_A_FINALIZER = """
import os, signal, sys, time
from pyterrier_sparse_eval.console import run
class Finalized:
    def __del__(self):
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        time.sleep(0.05)  # the handler runs here, inside the finalizer
def command():
    Finalized()
    for _ in range(100):
        time.sleep(0.02)
    print("ran to its end")
    return 0
sys.exit(run(command))
"""


@pytest.mark.parametrize("name, code, said", [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted")])
def test_a_signal_arriving_in_a_finalizer_still_stops_the_command(name, code, said):
    """A signal handled while a __del__ runs raises there, and Python only prints "Exception ignored in ..." and goes
    on: a SIGTERM mid-build (a library's finalizer, in CI) had let the build run to its end, exit 0. The signal is
    sent again out of the finalizer: the command stops as it does elsewhere, with its one line."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_A_FINALIZER, name], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == code, done.stderr
    assert "ran to its end" not in done.stdout
    assert done.stderr.strip().splitlines() == [f"sparse-eval: {said}"]


def test_kills_during_build_and_overwrite_leave_old_or_new(tmp_path):
    path = tmp_path / "index"
    n = 20_000
    t0 = time.perf_counter()
    first = _builder(path, n, "old", "create")
    assert first.wait(timeout=600) == 0, first.stderr.read()
    duration = time.perf_counter() - t0
    there_id, there_tag = pse.SparseIndex(path).build_id, "old"
    # a first build killed while it writes (its hidden folder exists) leaves nothing at its path
    fresh = _builder(tmp_path / "fresh", n, "new", "create")
    while not any(p.name.startswith(".fresh.") for p in tmp_path.iterdir()) and fresh.poll() is None:
        time.sleep(0.01)
    fresh.send_signal(signal.SIGKILL)
    fresh.wait()
    assert not (tmp_path / "fresh").exists()
    rng = np.random.default_rng(5)
    for delay in sorted(rng.uniform(0.3, 1.1, 8) * duration):
        proc = _builder(path, n, "new", "overwrite")
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        index = pse.SparseIndex(path)
        index.verify()  # a whole, sealed index is at the path
        # either what was there before this round (same build id, same documents) or the new build
        if index.build_id != there_id:
            there_id, there_tag = index.build_id, "new"
        assert index.num_docs == n and all(
            d.startswith(there_tag) for d in index.docnos[::997]
        )  # never a mix
    # the leftovers of the killed builders are removed by the next build in the folder
    assert _builder(path, 100, "last", "overwrite").wait(timeout=600) == 0
    assert _builder(tmp_path / "fresh", 100, "last", "create").wait(timeout=600) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh", "index"]


SWAPPER = """
import sys
from pathlib import Path
from pyterrier_sparse_eval import files
target = Path(sys.argv[1])
for i in range(int(sys.argv[2])):
    tmp = files.new_temp_dir(target)
    (tmp / "marker").write_text(str(i))
    files.replace_dir(tmp, target, overwrite=True)
"""


def test_an_overwrite_leaves_a_folder_at_the_path_at_every_instant(tmp_path):
    """One process swaps new folders in 300 times while this one looks at the path as fast as it can: the
    path always holds a whole folder (the atomic exchange; two renames would leave a gap)."""
    from pyterrier_sparse_eval import files

    target = tmp_path / "index"
    tmp = files.new_temp_dir(target)
    (tmp / "marker").write_text("first")
    files.replace_dir(tmp, target, overwrite=False)
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(target), "300"])
    looks = gaps = 0
    while swapper.poll() is None:
        looks += 1
        gaps += not (target / "marker").exists()
    assert swapper.returncode == 0 and looks > 1000 and gaps == 0, (looks, gaps)


def test_without_an_atomic_exchange_an_interrupted_swap_is_repaired(tmp_path, monkeypatch):
    """Where renameat2 is missing, an overwrite is two renames; a writer that dies between them leaves the old
    folder aside and nothing at the path, and the next write puts the old folder back first."""
    from pyterrier_sparse_eval import files

    monkeypatch.setattr(files, "_renameat2", lambda *a: False)
    index = _build(tmp_path / "index")
    old_id = index.build_id
    rebuilt = (
        pse.BM25(stemmer=None, stopwords=None).indexer(index, mode="overwrite", verbose=False).index(DOCS[:5])
    )
    assert rebuilt.num_docs == 5 and sorted(p.name for p in tmp_path.iterdir()) == [
        "index"
    ]  # the fallback works
    # a dead writer's half-done swap: the previous index moved aside, nothing at the path
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    aside = tmp_path / f".index.{files._HOST}.{dead.pid}.deadbeef.x.old"
    aside.mkdir()
    (tmp_path / "index").rename(aside / "previous")
    assert not pse.SparseIndex(tmp_path / "index").built()
    files.clean_leftovers(tmp_path / "index")  # what every build next to it does first
    back = pse.SparseIndex(tmp_path / "index")
    assert back.num_docs == 5 and back.build_id != old_id and not aside.exists()


def test_an_entry_a_killed_swap_moved_aside_is_moved_back_and_reused(tmp_path, capsys):
    """A build killed between the two renames of its swap (no renameat2: NFS) leaves the cache entry moved aside.
    The next experiment had failed (exit 2, "A single index already exists"): it chose mode="create" for the
    empty path, and the build's own repair put the index back under it. It is now moved back first and reused;
    a build with mode="create" over it says where the index came from."""
    from pyterrier_sparse_eval import files
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "docs.tsv").write_text("".join(f"{d['docno']}\t{d['text']}\n" for d in DOCS))
    (tmp_path / "topics.tsv").write_text("q1\talpha gamma\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    args = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx"), "--metric", "AP"]
    assert main([*args, "--quiet"]) == 0
    (entry,) = [p for p in (tmp_path / "idx").rglob("pt_meta.json")]
    entry = entry.parent
    build_id = pse.SparseIndex(entry).build_id

    def move_aside(path: Path) -> None:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        aside = path.parent / f".{path.name}.{files._HOST}.{dead.pid}.deadbeef.x.old"
        aside.mkdir()
        path.rename(aside / "previous")

    move_aside(entry)
    capsys.readouterr()
    assert main(args) == 0
    assert "Reusing index" in capsys.readouterr().out
    assert pse.SparseIndex(entry).build_id == build_id
    move_aside(entry)
    with pytest.raises(FileExistsError, match=r"already exists at .* \(moved back: a build killed"):
        pse.BM25().indexer(pse.SparseIndex(entry), mode="create", verbose=False).index(DOCS)
    assert pse.SparseIndex(entry).build_id == build_id


def test_a_live_writer_in_another_pid_namespace_is_left_alone(tmp_path):
    """Two containers sharing a volume under one host name: the other's writer has a PID that is dead here (or
    this process's own); the lock it holds on its temporary folder or file keeps them, until it ends."""
    from pyterrier_sparse_eval import files

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    theirs = [
        tmp_path / f".index.{files._HOST}.{dead.pid}.deadbeef.x.tmp",
        tmp_path / f".index.{files._HOST}.{os.getpid()}.0badf00d.y.tmp",
        tmp_path / f".out.json.{files._HOST}.{dead.pid}.deadbeef.z.tmp.json",
    ]
    theirs[0].mkdir()
    theirs[1].mkdir()
    theirs[2].write_text("{")
    hold = (
        "import fcntl, os, sys\n"
        "fds = [os.open(p, os.O_RDONLY) for p in sys.argv[1:]]\n"
        "[fcntl.flock(fd, fcntl.LOCK_EX) for fd in fds]\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, *map(str, theirs)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        assert files.clean_leftovers(tmp_path / "index") == []
        _build(tmp_path / "index")  # a build beside them, which cleans leftovers first
        files.atomic_write_json(tmp_path / "out.json", {})
        assert all(p.exists() for p in theirs)
    finally:
        holder.stdin.close()
        holder.wait()
    assert sorted(files.clean_leftovers(tmp_path / "index")) == sorted(theirs[:2])
    files.atomic_write_json(tmp_path / "out.json", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index", "out.json"]


# ----------------------------------------------------------------------------------------------------------
# Stale handles and stale caches
# ----------------------------------------------------------------------------------------------------------

QUERY = pd.DataFrame({"qid": ["1"], "query": ["alpha gamma"]})


def test_a_retriever_never_serves_a_rebuilt_index(tmp_path):
    index = _build(tmp_path / "index")
    retriever = pse.BM25(stemmer=None, stopwords=None).retriever(index)
    before = retriever.transform(QUERY)
    # rebuilt by someone else: the handle and its retriever refuse, until the handle is reloaded
    _build_other = pse.BM25(stemmer=None, stopwords=None).indexer(
        pse.SparseIndex(index.directory), mode="overwrite", verbose=False
    )
    _build_other.index([{"docno": f"n{i}", "text": "alpha gamma new"} for i in range(5)])
    with pytest.raises(pse.StaleIndexError, match="rebuilt"):
        retriever.transform(QUERY)
    index.reload()
    with pytest.raises(pse.StaleIndexError, match="rebuilt after this retriever was created"):
        retriever.transform(QUERY)
    fresh = pse.BM25(stemmer=None, stopwords=None).retriever(index).transform(QUERY)
    assert set(fresh["docno"]) <= {f"n{i}" for i in range(5)} and len(before)


def test_a_reader_holding_old_metadata_gets_a_clear_error(tmp_path):
    index = _build(tmp_path / "index")
    assert index.num_docs == len(DOCS)  # metadata read, arrays not yet
    pse.BM25(stemmer=None, stopwords=None).indexer(
        pse.SparseIndex(index.directory), mode="overwrite", verbose=False
    ).index([{"docno": f"n{i}", "text": "other words"} for i in range(7)])
    with pytest.raises(pse.StaleIndexError, match="call index.reload"):
        _ = index.postings


def test_the_same_build_touched_or_copied_back_is_not_stale(tmp_path):
    import shutil

    index = _build(tmp_path / "index")
    retriever = pse.BM25(stemmer=None, stopwords=None).retriever(index)
    expected = retriever.transform(QUERY)
    os.utime(index.directory / "pt_meta.json")  # touched
    shutil.copytree(index.directory, tmp_path / "copy")
    shutil.rmtree(index.directory)
    shutil.copytree(tmp_path / "copy", index.directory)  # the same build, as new files
    pd.testing.assert_frame_equal(retriever.transform(QUERY), expected)


def test_a_file_read_after_a_rebuild_is_never_mixed_in(tmp_path, monkeypatch):
    """The rebuild happens between the check of the build and the read of a file: the read is refused."""
    from pyterrier_sparse_eval import _index

    index = _build(tmp_path / "index")
    assert index.num_docs == len(DOCS)
    real = _index.check_json

    def read_after_a_rebuild(folder, name, meta, full=True):
        pse.BM25(stemmer=None, stopwords=None).indexer(
            pse.SparseIndex(folder), mode="overwrite", verbose=False
        ).index(list(reversed(DOCS)))
        return real(folder, name, meta, full)

    monkeypatch.setattr(_index, "check_json", read_after_a_rebuild)
    with pytest.raises(pse.StaleIndexError):
        _ = index.docnos


@pytest.mark.parametrize("reader", ["check_array", "check_json"])
def test_a_read_that_fails_on_a_rebuild_swapped_in_is_staleness_not_damage(tmp_path, monkeypatch, reader):
    """A rebuild of another size swapped in just before a handle's first read of a file: the read fails on the
    other build's file (its shape, or numpy's "mmap length is greater than file size"), which had been reported
    as damage ("... rebuild it") or as numpy's ValueError. Damage with no rebuild is still damage."""
    from pyterrier_sparse_eval import _index

    index = _build(tmp_path / "index")
    assert index.num_docs == len(DOCS)
    real, rebuilt = getattr(_index, reader), []

    def read_after_a_rebuild(folder, name, *args):
        if not rebuilt:
            rebuilt.append(name)
            more = DOCS + [{"docno": f"e{i}", "text": f"delta w{i}"} for i in range(30)]
            pse.BM25(stemmer=None, stopwords=None).indexer(
                pse.SparseIndex(folder), mode="overwrite", verbose=False
            ).index(more)
        return real(folder, name, *args)

    monkeypatch.setattr(_index, reader, read_after_a_rebuild)
    with pytest.raises(pse.StaleIndexError, match="was rebuilt"):
        _ = index.postings if reader == "check_array" else index.docnos
    assert rebuilt
    monkeypatch.setattr(_index, reader, real)
    # damage is damage: a file cut short under the handle of its own build
    index = pse.SparseIndex(tmp_path / "index", checks="structure")
    _ = index.meta
    with open(index.directory / "doclen.npy", "r+b") as f:
        f.truncate(200)
    with pytest.raises(pse.IndexCorruptError):
        _ = index.doclen


def test_a_damaged_cache_entry_is_rebuilt_saying_why(tmp_path):
    system = pse.systems.parse_system("bm25")
    index = system.index(tmp_path, "irds:x", lambda: DOCS, verbose=False)
    _flip("postings.data.npy")(index.directory)
    # a warning, however quiet the build (--quiet had hidden it)
    with pytest.warns(UserWarning, match=r"Rebuilding .*: it is damaged \("):
        rebuilt = system.index(tmp_path, "irds:x", lambda: DOCS, verbose=False)
    rebuilt.verify()


def test_an_overwrite_through_the_same_handle_stops_its_old_retrievers(tmp_path):
    index = _build(tmp_path / "index")
    retriever = index.retriever(analyzer=pse.Analyzer(stopwords=None, stemmer=None))
    pse.BM25(stemmer=None, stopwords=None).indexer(index, mode="overwrite", verbose=False).index(DOCS[:10])
    with pytest.raises(pse.StaleIndexError, match="rebuilt after this retriever was created"):
        retriever.transform(QUERY)


def test_bm25_cache_is_keyed_by_configuration_and_rebuilds_a_mismatch(tmp_path, capsys):
    a, b = pse.systems.parse_system("bm25"), pse.systems.parse_system("bm25:k1=1.2")
    assert a.cache_name("irds:x") != b.cache_name("irds:x") != b.cache_name("irds:y")
    corpus = lambda: DOCS  # noqa: E731
    built = a.index(tmp_path, "irds:x", corpus, verbose=False)
    # a folder that holds another configuration under this name (renamed, or from an older version) is rebuilt
    target = tmp_path / "x" / b.cache_name("irds:x")
    built.directory.rename(target)
    index = b.index(tmp_path, "irds:x", corpus, verbose=True)
    assert "Rebuilding" in capsys.readouterr().out and index.encoder["k1"] == 1.2


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("damage", ["empty", "cut short", "missing"])
def test_a_cache_entry_with_unreadable_metadata_is_rebuilt(tmp_path, shards, damage):
    """A cache entry whose pt_meta.json is empty, cut short or missing (a machine that crashed during a build) is
    rebuilt, as any damaged entry is (it had been refused, naming a path the user never chose); a folder there
    holding anything but an index's files is still refused, and kept."""
    system = pse.systems.parse_system("bm25")
    corpus = lambda: DOCS  # noqa: E731
    built = system.index(tmp_path, "irds:x", corpus, verbose=False, shards=shards)
    meta = built.directory / "pt_meta.json"
    {"empty": lambda: meta.write_text(""), "cut short": lambda: meta.write_text(meta.read_text()[:40])}.get(
        damage, meta.unlink
    )()
    with pytest.warns(UserWarning, match=r"Rebuilding .*: it is damaged \(its metadata cannot be read\)"):
        index = system.index(tmp_path, "irds:x", corpus, verbose=False, shards=shards)
    index.verify()
    assert index.num_docs == len(DOCS)
    (index.directory / "pt_meta.json").unlink()
    for mine in ("notes.md", "notes.txt", "results.json"):  # a user's files: the entry is kept, refused
        (index.directory / mine).write_text("mine")
        with pytest.raises(FileExistsError, match="move that one away yourself"):
            system.index(tmp_path, "irds:x", corpus, verbose=False, shards=shards)
        assert (index.directory / mine).read_text() == "mine"
        (index.directory / mine).unlink()

    # metadata that cannot be read now (an I/O error) is no proof of damage: the entry is kept
    (index.directory / "pt_meta.json").write_text("{}")
    real = Path.read_bytes

    def failing(p):
        if p.name == "pt_meta.json" and p.parent == index.directory:
            raise OSError(5, "Input/output error")
        return real(p)

    from pyterrier_sparse_eval.systems import clear_unreadable_entry

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_bytes", failing)
        clear_unreadable_entry(index.directory)
    assert (index.directory / "pt_meta.json").exists()


def test_a_cache_holding_every_index_is_only_read(tmp_path, monkeypatch, capsys):
    """A cache that already holds every index is read and nothing is written into it, no lock file either: a
    shared, pre-built cache on a read-only mount serves (--index-dir had been refused as not writable). Root
    writes anywhere, so the read-only mount is os.access saying no."""
    import os

    from pyterrier_sparse_eval import files
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "docs.tsv").write_text("".join(f"{d['docno']}\t{d['text']}\n" for d in DOCS))
    (tmp_path / "topics.tsv").write_text("q1\talpha gamma\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    args = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx"), "--metric", "AP"]
    assert main([*args, "--quiet"]) == 0
    for lock in (tmp_path / "idx").rglob(".*.lock"):
        lock.unlink()
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "idx").rglob("*"))
    real = os.access
    monkeypatch.setattr(files.os, "access", lambda p, mode: False if "idx" in str(p) else real(p, mode))
    assert main(args) == 0
    assert "Reusing index" in capsys.readouterr().out
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "idx").rglob("*")) == before
    # a system whose index is not there is refused before any work, as before
    assert main([*args, "--system", "bm25:k1=1.2"]) == 2
    assert "is not writable" in capsys.readouterr().err


def test_a_language_entry_is_named_by_its_analyzer_and_one_cached_under_the_earlier_name_is_reused(
    tmp_path, capsys
):
    """Lucene's analyzer for a language other than English takes no English option: the entry is named
    ``bm25-fr-k1=..-b=..`` (it was ``bm25-fr-k1=..-b=..-porter-lucene`` before), and an entry built under that
    earlier name is found and reused where it is, not built again."""
    fr, en = pse.systems.parse_system("bm25:language=fr"), pse.systems.parse_system("bm25")
    assert fr.cache_name("irds:x").startswith("bm25-fr-k1=0.9-b=0.4-") and "porter" not in fr.cache_name(
        "irds:x"
    )
    assert en.cache_name("irds:x").startswith("bm25-k1=0.9-b=0.4-porter-lucene-")
    corpus = lambda: DOCS  # noqa: E731
    built = fr.index(tmp_path, "irds:x", corpus, verbose=False)
    assert built.directory.name == fr.cache_name("irds:x")
    earlier = built.directory.with_name(built.directory.name.replace("-b=0.4-", "-b=0.4-porter-lucene-"))
    built.directory.rename(earlier)
    for shards in (None, 2):
        if shards:  # a sharded entry too, under its earlier name
            fr.index(tmp_path, "irds:x", corpus, verbose=False, shards=2).directory.rename(
                earlier.with_name(f"{earlier.name}-x2")
            )
        capsys.readouterr()
        index = fr.index(tmp_path, "irds:x", corpus, verbose=True, shards=shards)
        assert index.directory.name == earlier.name + (f"-x{shards}" if shards else "")
        assert "Reusing" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "x").iterdir() if not p.name.startswith(".")) == [
        earlier.name,
        f"{earlier.name}-x2",
    ]


# ----------------------------------------------------------------------------------------------------------
# Concurrent runs on one cache
# ----------------------------------------------------------------------------------------------------------


@needs_data
def test_a_run_waits_for_the_build_of_its_cache_entry(tmp_path):
    """While another process builds a cache entry (holds its lock), a run waits, then reuses that build."""
    from filelock import FileLock

    system = pse.systems.parse_system("bm25")
    entry = tmp_path / "idx" / "vaswani" / system.cache_name("irds:vaswani")
    entry.parent.mkdir(parents=True)
    lock = FileLock(str(entry.parent / f".{entry.name}.lock"))
    lock.acquire()
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyterrier_sparse_eval",
            "experiment",
            "--dataset",
            "irds:vaswani",
            "--index-dir",
            str(tmp_path / "idx"),
            "--metric",
            "AP",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = ""
    while "Waiting for another run" not in seen:
        line = run.stdout.readline()
        assert line, run.stderr.read()
        seen += line
    # this process builds the entry while it holds the lock (as a run would), then lets the waiting run go on
    system.encoder.indexer(pse.SparseIndex(entry), verbose=False).index(
        pse.datasets.corpus_iter("irds:vaswani")
    )
    lock.release()
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert f"Reusing index {entry}" in out


@needs_data
def test_two_concurrent_cli_runs_share_one_build(tmp_path):
    args = [
        sys.executable,
        "-m",
        "pyterrier_sparse_eval",
        "experiment",
        "--dataset",
        "irds:vaswani",
        "--quiet",
        "--index-dir",
        str(tmp_path / "idx"),
        "--metric",
        "AP",
    ]
    procs = [
        subprocess.Popen(
            [*args, "--output", str(tmp_path / f"r{i}.json")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
    results = [json.loads((tmp_path / f"r{i}.json").read_text())["results"] for i in range(2)]
    assert results[0] == results[1]
    built = [p for p in (tmp_path / "idx" / "vaswani").iterdir() if not p.name.startswith(".")]
    assert len(built) == 1
    pse.SparseIndex(built[0]).verify()


def test_an_indexer_called_again_chooses_its_fields_again(tmp_path):
    """A BM25 indexer whose first call failed (title-only documents, a docno twice) indexes the corrected title +
    text documents by both fields on its second call (it had kept 'title' from the first, silently)."""
    indexer = pse.BM25().indexer(pse.SparseIndex(tmp_path / "index"), verbose=False)
    with pytest.raises(ValueError, match="[Dd]uplicate"):
        indexer.index([{"docno": "d1", "title": "first"}, {"docno": "d1", "title": "second"}])
    index = indexer.index(
        [
            {"docno": "d1", "title": "first", "text": "alpha"},
            {"docno": "d2", "title": "second", "text": "beta"},
        ]
    )
    assert index.meta["encoder"]["fields"] == ["title", "text"]
    run = pse.BM25().retriever(index).transform(pd.DataFrame({"qid": ["1"], "query": ["alpha"]}))
    assert run["docno"].tolist() == ["d1"]


@pytest.mark.parametrize(
    "indexer",
    [lambda i: pse.BM25().indexer(i, verbose=False), lambda i: i.indexer(verbose=False)],
    ids=["bm25", "toks"],
)
@pytest.mark.parametrize("docno", [b"d1", None, float("nan"), 1.0, True], ids=repr)
def test_a_docno_that_would_match_no_qrels_is_refused(tmp_path, indexer, docno):
    """bytes, None, NaN and a float (a number column with a gap) had been indexed as "b'd1'", "None", "nan",
    "1.0", matching no qrels (every measure 0, no word); a missing docno past the first document was a bare
    KeyError. Whole numbers are their digits."""
    docs = [
        {"docno": "d0", "text": "alpha", "toks": {"alpha": 1.0}},
        {"docno": docno, "text": "beta", "toks": {"b": 1.0}},
    ]
    with pytest.raises(ValueError, match=r"Document 2 of the corpus has docno .*astype\(str\)"):
        indexer(pse.SparseIndex(tmp_path / "index")).index(docs)
    with pytest.raises(KeyError, match=r"no 'docno' field|missing \['docno'\]"):
        indexer(pse.SparseIndex(tmp_path / "index")).index([docs[0], {"text": "beta", "toks": {"b": 1.0}}])
    assert not (tmp_path / "index").exists()
    whole = [dict(docs[0], docno=7), dict(docs[1], docno=np.int64(8))]
    assert indexer(pse.SparseIndex(tmp_path / "index")).index(whole).docnos.tolist() == ["7", "8"]


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("bm25", [True, False], ids=["bm25", "toks"])
def test_a_bad_docno_deep_in_the_corpus_is_named_by_its_place_in_it(tmp_path, bm25, shards):
    """The refusal had said "Document 2 of a batch" for the 10th document of a million-document corpus."""
    docs = [{"docno": f"d{i}", "text": "alpha", "toks": {"alpha": 1.0}} for i in range(12)]
    docs[9] = dict(docs[9], docno=None)
    index = pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", shards)
    indexer = pse.BM25().indexer(index, verbose=False, batch_size=4) if bm25 else index.indexer(batch_size=4)
    with pytest.raises(ValueError, match=r"^Document 10 of the corpus has docno None \(NoneType\): docnos"):
        indexer.index(docs)
    del docs[9]["docno"]
    with pytest.raises(
        KeyError, match=r"^Document 10 of the corpus (has no 'docno' field|is missing \['docno'\])"
    ):
        indexer.index(docs)
    assert os.listdir(tmp_path) == []


def test_text_given_as_bytes_is_decoded(tmp_path):
    """UTF-8 bytes are text (they had been indexed as their repr, "b'lait frais'", which 'lait' missed);
    bytes that are not UTF-8 are refused naming the fix."""
    docs = [{"docno": "d1", "text": "lait"}, {"docno": "d2", "text": "lait frais café".encode()}]
    index = pse.BM25().indexer(pse.SparseIndex(tmp_path / "index"), verbose=False).index(docs)
    run = pse.BM25().retriever(index).transform(pd.DataFrame({"qid": ["1"], "query": ["café lait"]}))
    assert set(run["docno"]) == {"d1", "d2"} and run["docno"].iloc[0] == "d2"
    with pytest.raises(ValueError, match=r"not UTF-8 .*decode\('latin-1'\)"):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "other"), verbose=False).index(
            [{"docno": "d1", "text": "café".encode("latin-1")}]
        )


def test_text_given_as_a_list_or_dict_is_refused(tmp_path):
    """A list, tuple, dict or array as a document's or a query's text is refused naming the document and the fix (it
    had been indexed through str(), as its repr: BM25 found the words, a model would encode the brackets and
    quotes); a number is its digits, as written."""
    index = pse.SparseIndex(tmp_path / "index")
    for text in (["cats purr", "and sleep"], ("cats",), {"cats": 1}, np.array(["cats"])):
        with pytest.raises(
            ValueError, match=r"Document 'd2': .* is a \w+, not a string: .*' '\.join\(parts\)"
        ):
            pse.BM25().indexer(index, verbose=False).index(
                [{"docno": "d1", "text": "cats"}, {"docno": "d2", "text": text}]
            )
        assert not index.path.exists()
    pse.BM25().indexer(index, verbose=False).index(
        [{"docno": "d1", "text": "cats"}, {"docno": "d2", "text": 2019}]
    )
    assert list(index.vocab) == ["2019", "cat"]
    # a query's is named by its qid (it had not been), through the retriever and the query encoder alike
    queries = pd.DataFrame({"qid": ["1", "q2"], "query": ["cats", ["cats", "2019"]]})
    for transformer in (pse.BM25().retriever(index), pse.BM25().query_encoder()):
        with pytest.raises(ValueError, match=r"The 'query' of qid 'q2': A text .* is a list, not a string"):
            transformer.transform(queries)


def test_a_docno_utf8_cannot_store_is_named(tmp_path):
    """A docno holding a lone surrogate (bytes decoded with errors='surrogateescape') is refused naming it and
    the fix (it had been a UnicodeEncodeError that did not say it was a docno), and nothing is left."""
    docs = [{"docno": "d1", "text": "alpha"}, {"docno": "d\udcff", "text": "beta"}]
    with pytest.raises(ValueError, match="Invalid docno 'd\\\\udcff': it holds a lone surrogate"):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "index"), verbose=False).index(docs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_short_write_says_no_space_left():
    """numpy's short write ("1000000 requested and 0 written", no errno, no path) is said as a full disk, with the
    file: /dev/full fails every write as a full disk does."""
    from pyterrier_sparse_eval.files import write_array

    with (
        open("/dev/full", "wb") as f,
        pytest.raises(OSError, match=r"No space left .* writing /dev/full") as e,
    ):
        write_array(np.arange(1_000_000), f)
    assert e.value.errno == 28


@pytest.mark.parametrize("shards", [None, 3])
@pytest.mark.parametrize("twice", [(0, 1), (5, 1200)], ids=["in one batch", "across batches"])
def test_a_docno_given_twice_is_refused_when_its_batch_arrives(tmp_path, shards, twice):
    """A docno given twice stops a build of a model's output when its batch arrives, not after the whole corpus
    has been read and encoded (the encoding had been lost at the end), and nothing is left."""
    first, again = twice
    read = []

    def docs():  # a model's output (SPLADE's, a pipeline's): BM25's cheap analysis is checked at the end
        for i in range(3000):
            read.append(i)
            yield {"docno": f"d{first if i == again else i}", "toks": {"alpha": 1.0, f"w{i}": 2.0}}

    index = pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", shards)
    with pytest.raises(ValueError, match=rf"Duplicate docnos in the corpus, e.g. \['d{first}'\]"):
        index.indexer(verbose=False, batch_size=500).index(docs())
    assert len(read) <= (again // 500 + 1) * 500 + 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shards", [None, 3])
def test_docnos_whose_hashes_collide_are_not_duplicates(tmp_path, monkeypatch, shards):
    """Every docno hashed alike (the worst collision): each lookup is confirmed against the docnos themselves,
    and the corpus is indexed whole."""
    from pyterrier_sparse_eval import _docno_checks

    monkeypatch.setattr(_docno_checks, "hash", lambda d: 7, raising=False)
    index = pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", shards)
    index.indexer(verbose=False, batch_size=7).index(
        [{"docno": d["docno"], "toks": {"a": 1.0}} for d in DOCS]
    )
    assert sorted(index.docnos.tolist()) == sorted(d["docno"] for d in DOCS)


def test_documents_that_are_mappings_are_indexed():
    """Documents given as any Mapping (not only dict) are read as before (they had been refused, "no 'docno'
    field (it has ['docno', 'text'])")."""
    from types import MappingProxyType

    from pyterrier_sparse_eval._docno_checks import batch_docnos

    assert batch_docnos([MappingProxyType({"docno": "d1", "text": "x"}), {"docno": 2}]) == ["d1", "2"]
    with pytest.raises(KeyError, match=r"Document 1 of a batch has no 'docno' field \(a tuple\)"):
        batch_docnos([("d1", "x")])


def test_seen_docnos_refuses_exactly_what_a_set_would():
    """SeenDocnos against a plain set over random batches (duplicates in the batch itself, the batch before, and
    batches merged long before), with real hashes and with every docno hashed alike (each hit confirmed)."""
    from pyterrier_sparse_eval import _docno_checks

    rng = np.random.default_rng(3)
    for collide in (False, True):
        for _ in range(30):
            seen, plain, written = _docno_checks.SeenDocnos(), set(), []
            with pytest.MonkeyPatch.context() as patch:
                if collide:
                    patch.setattr(_docno_checks, "hash", lambda d: 7, raising=False)

                def among_written(among, written=written):
                    return set(written) & among

                for _ in range(int(rng.integers(1, 40))):
                    batch = [f"d{int(x)}" for x in rng.integers(0, 400, size=int(rng.integers(0, 12)))]
                    twice = len(set(batch)) < len(batch) or bool(plain & set(batch))
                    if twice:
                        with pytest.raises(ValueError, match="Duplicate docnos"):
                            seen.add(batch, among_written)
                        break
                    seen.add(batch, among_written)
                    plain |= set(batch)
                    written += batch


def test_a_docno_with_a_carriage_return_is_confirmed_as_written():
    """A hash hit is confirmed against the docnos as written, a "\r" in them kept (read back with universal
    newlines, "a\rb" had read as "a" and "b")."""
    from pyterrier_sparse_eval import _docno_checks

    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        patch.setattr(_docno_checks, "hash", lambda d: 7, raising=False)
        docs = [{"docno": d, "toks": {"x": 1.0}} for d in ("a\rb", "a", "d\r")]
        index = pse.SparseIndex(Path(folder) / "i").indexer(verbose=False, batch_size=1).index(docs)
        assert sorted(index.docnos.tolist()) == ["a", "a\rb", "d\r"]
        read = []

        def twice():
            for d in [*docs, docs[2], *({"docno": f"n{i}", "toks": {"w": 1.0}} for i in range(50))]:
                read.append(d)
                yield d

        with pytest.raises(ValueError, match="Duplicate docnos"):
            pse.SparseIndex(Path(folder) / "j").indexer(verbose=False, batch_size=1).index(twice())
        assert len(read) <= 5  # refused when the second "d\r" arrived, not at the end


def test_documents_that_are_mappings_are_indexed_end_to_end(tmp_path):
    from types import MappingProxyType

    docs = [MappingProxyType({"docno": f"d{i}", "text": f"alpha w{i}"}) for i in range(5)]
    index = pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), verbose=False).index(docs)
    assert index.docnos.tolist() == [f"d{i}" for i in range(5)]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_short_write_of_a_saved_array_says_no_space_left():
    from pyterrier_sparse_eval.files import save_array

    with pytest.raises(OSError, match=r"No space left .* writing /dev/full") as e:
        save_array("/dev/full", np.arange(1_000_000))
    assert e.value.errno == 28


@pytest.mark.parametrize("shards", [None, 2])
def test_a_signal_right_after_the_temporary_folder_is_made_leaves_nothing(
    tmp_path, monkeypatch, capsys, shards
):
    """Ctrl-C (or SIGTERM) arriving between a build's temporary folder's creation and the ``try`` that removes it on
    failure (here: inside the writer's constructor; the signal handler runs wherever the main thread is) had left
    the folder behind, and CI saw it once in the SIGTERM test above: the command line removes every folder it
    still holds."""
    import pyterrier_sparse_eval._build as build
    import pyterrier_sparse_eval._shard_writer as shard_writer

    def interrupted(encoder):
        raise KeyboardInterrupt

    # the sharded writer's own check comes after its shards' writers are made
    monkeypatch.setattr(shard_writer if shards else build, "early_check", interrupted)
    (tmp_path / "corpus.tsv").write_text("d1\tw1 w2\nd2\tw2 w3\n")
    (tmp_path / "topics.tsv").write_text("q1\tw1\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    monkeypatch.chdir(tmp_path)
    args = ["experiment", "--corpus", "corpus.tsv", "--topics", "topics.tsv", "--qrels", "qrels.txt"]
    sharding = ["--shards", str(shards)] if shards else []
    assert main([*args, "--index-dir", "idx", "--quiet", *sharding]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "sparse-eval: interrupted"
    assert [p.name for p in (tmp_path / "idx").rglob(".*") if not p.name.endswith(".lock")] == []


def test_a_signal_while_the_temporary_folder_is_locked_removes_it(tmp_path, monkeypatch):
    """The folder is made, then locked: an interrupt in between removes it at once."""
    from pyterrier_sparse_eval import files

    def interrupted(folder):
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "_hold", interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.new_temp_dir(tmp_path / "index")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads this process's open descriptors")
@pytest.mark.parametrize("shards", [None, 2])
def test_a_failed_build_holds_nothing_open_in_its_folder(tmp_path, shards):
    """A failed build removed its temporary folder but kept the descriptor that locked it until the next build: a
    notebook held the deleted folder open (its volume could not be unmounted)."""

    index = (
        pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", num_shards=2)
    )
    twice = [{"docno": "a", "text": "x"}, {"docno": "b", "text": "y"}, {"docno": "a", "text": "z"}]
    with pytest.raises(ValueError, match="Duplicate docnos"):
        pse.BM25().indexer(index, verbose=False, batch_size=1).index(twice)
    assert _open_under(tmp_path) == [] and os.listdir(tmp_path) == []


def _open_under(folder: Path) -> list[str]:
    """The paths under ``folder`` this process holds open."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder)):
                found.append(os.readlink(f"/proc/self/fd/{fd}"))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads this process's open descriptors")
@pytest.mark.parametrize("shards", [None, 3])
def test_a_build_that_fails_as_it_opens_its_files_leaves_nothing(tmp_path, monkeypatch, shards):
    """A spill file that cannot be opened (too many open files; Ctrl-C there does the same) had left the writer's
    temporary folder, and the descriptor locking it, for the life of the process: a later build in the same place
    did not remove it (it belongs to a living process). With shards, the third shard's writer fails after two
    were made."""
    import errno

    from pyterrier_sparse_eval import _build

    index = (
        pse.SparseIndex(tmp_path / "i") if shards is None else pse.ShardedIndex(tmp_path / "i", num_shards=3)
    )
    opens = []

    def open_until_the_last(path, *args, **kwargs):
        if str(path).endswith("spill.values"):
            opens.append(path)
            if len(opens) == (shards or 1):
                raise OSError(errno.EMFILE, "Too many open files", str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(_build, "open", open_until_the_last, raising=False)
    with pytest.raises(OSError, match="Too many open files"):
        pse.BM25().indexer(index, verbose=False).index(DOCS)
    assert _open_under(tmp_path) == [] and os.listdir(tmp_path) == []
    monkeypatch.undo()
    pse.BM25().indexer(index, verbose=False).index(DOCS)
    assert os.listdir(tmp_path) == ["i"]


@pytest.mark.parametrize("step", ["open", "verify", "open sharded", "verify sharded"])
def test_a_rebuild_swapped_in_while_an_index_is_checked_is_staleness_not_damage(tmp_path, monkeypatch, step):
    """Another process's mode="overwrite" swapping its build in while this one opens (or verifies) the index had
    been reported as damage ("its CRC-32 differs ...; rebuild it"): the checks read one build's seal and the
    other's files. The rebuild is made here at that moment, inside the check."""
    from pyterrier_sparse_eval import _format, _index, _sharded

    sharded = step.endswith("sharded")
    path = tmp_path / "index"
    make = (lambda: pse.ShardedIndex(path, num_shards=2)) if sharded else (lambda: pse.SparseIndex(path))

    def build(docs, mode):
        pse.BM25(stemmer=None, stopwords=None).indexer(make(), verbose=False, mode=mode).index(docs)

    build(DOCS, "create")
    real, rebuilt = _format.check_checksums, []

    def rebuilding_first(folder, meta, *args, **kwargs):
        if not rebuilt:
            rebuilt.append(True)
            build([dict(d, text=d["text"] + " delta") for d in DOCS], "overwrite")
        return real(folder, meta, *args, **kwargs)

    for module in (_format, _index, _sharded):
        if hasattr(module, "check_checksums"):
            monkeypatch.setattr(module, "check_checksums", rebuilding_first)
    index = make()
    with pytest.raises(pse.StaleIndexError, match="was rebuilt while it was being"):
        if step.startswith("open"):
            _ = index.shards if sharded else index.meta
        else:
            index.verify()
    assert rebuilt
    # opened again: the new build, whole
    again = make()
    again.verify()
    assert "delta" in (again.shards[0] if sharded else again).vocab
    # damage is still damage
    _flip("postings.data.npy")(path / "shard-000" if sharded else path)
    with pytest.raises(pse.IndexCorruptError, match="CRC-32 differs"):
        make().verify()


def test_an_output_on_a_full_disk_or_past_a_file_size_limit_names_the_file_and_the_fix(tmp_path):
    """--save-runs, --plots and --output on a full disk had said a bare "[Errno 28] No space left on device"; a
    file size limit (ulimit -f) had been called a full disk with gigabytes free (found by a user's test)."""
    import subprocess
    import sys

    from pyterrier_sparse_eval.files import atomic_write

    def full(tmp):
        raise OSError(28, "No space left on device")

    target = tmp_path / "runs" / "bm25.run"
    with pytest.raises(
        OSError, match=r"No space left .* writing .*bm25\.run .*bytes free there\): free some, or write it"
    ):
        atomic_write(target, full)
    assert list((tmp_path / "runs").iterdir()) == []  # its temporary file removed
    # a file size limit, set in a child process (it would limit this one's writes too)
    code = (
        "import resource\nfrom pyterrier_sparse_eval.files import atomic_write_text\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))\n"
        f"atomic_write_text({str(tmp_path / 'big.txt')!r}, 'x' * 3_000_000)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1]
    )
    assert "A file size limit stopped the write (`ulimit -f` 1024 KiB) writing " in done.stderr
    assert "raise it, or write it elsewhere" in done.stderr and not (tmp_path / "big.txt").exists()
