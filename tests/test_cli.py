import gzip
import json
import os
import subprocess
import sys
import threading
import warnings

import pytest
from conftest import needs_data

from pyterrier_sparse_eval.cli import main


@needs_data
def test_experiment_writes_json_and_reuses_index(tmp_path, capsys):
    out = tmp_path / "res.json"
    args = [
        "experiment",
        "--dataset",
        "irds:vaswani",
        "--system",
        "bm25",
        "--system",
        "bm25:k1=1.2,b=0.75",
        "--metric",
        "AP",
        "--metric",
        "nDCG@10",
        "--index-dir",
        str(tmp_path / "idx"),
        "--baseline",
        "0",
        "--output",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    data = json.loads(out.read_text())
    assert set(data["results"]) == {"BM25(k1=0.9,b=0.4)", "BM25(k1=1.2,b=0.75)"}
    assert set(data["results"]["BM25(k1=0.9,b=0.4)"]) == {"AP", "nDCG@10"}
    # same value as the Python API gives (tests/test_golden.py pins it against the peers)
    # Anserini's run: 0.2856
    assert data["results"]["BM25(k1=0.9,b=0.4)"]["AP"] == pytest.approx(0.2856, abs=5e-5)
    assert "AP p-value" in data["significance"]["BM25(k1=1.2,b=0.75)"]
    built = sorted(p.name for p in (tmp_path / "idx" / "vaswani").iterdir() if not p.name.startswith("."))
    assert len(built) == 2
    plots = tmp_path / "plots"
    # second run reuses both indexes, and draws the per-query comparison
    assert main(args[:-1] + ["--output", str(tmp_path / "res.csv"), "--plots", str(plots)]) == 0
    assert "AP" in (tmp_path / "res.csv").read_text().splitlines()[0]
    pngs = list(plots.glob("per-query-*.png"))
    assert len(pngs) == 1 and pngs[0].stat().st_size > 10_000
    assert (
        sorted(p.name for p in (tmp_path / "idx" / "vaswani").iterdir() if not p.name.startswith("."))
        == built
    )
    # one system and --baseline 0: its significance cells are null (they had been the string "None")
    alone = args[:5] + args[7:-3] + ["--output", str(tmp_path / "alone.json"), "--quiet"]
    assert main(alone) == 0
    significance = json.loads((tmp_path / "alone.json").read_text())["significance"]
    assert list(significance) == ["BM25(k1=0.9,b=0.4)"], alone
    assert set(significance["BM25(k1=0.9,b=0.4)"].values()) == {None}
    # into a pipe (as /dev/stdout): JSON, not refused for its name
    import os
    import threading

    fifo, got = tmp_path / "fifo", []
    os.mkfifo(fifo)
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    assert main(alone[:-3] + ["--output", str(fifo), "--quiet"]) == 0
    reader.join(timeout=60)
    assert json.loads(got[0])["significance"] == {"BM25(k1=0.9,b=0.4)": significance["BM25(k1=0.9,b=0.4)"]}


@needs_data
def test_experiment_with_in_house_measures_gives_the_standard_values(tmp_path):
    """--measures in-house computes the same metrics in-house (pse.AP ...) as pytrec_eval does (AP ...)."""
    common = [
        "experiment",
        "--dataset",
        "irds:vaswani",
        "--metric",
        "AP",
        "--metric",
        "nDCG@10",
        "--metric",
        "R@100",
    ]
    common += ["--index-dir", str(tmp_path / "idx"), "--quiet", "--output"]
    assert main([*common, str(tmp_path / "standard.json")]) == 0
    assert main([*common, str(tmp_path / "inhouse.json"), "--measures", "in-house"]) == 0
    standard = json.loads((tmp_path / "standard.json").read_text())["results"]["BM25(k1=0.9,b=0.4)"]
    inhouse = json.loads((tmp_path / "inhouse.json").read_text())
    assert inhouse["config"]["measures"] == "in-house"
    values = inhouse["results"]["BM25(k1=0.9,b=0.4)"]
    assert set(values) == {"pse.AP", "pse.nDCG@10", "pse.R@100"}
    for name, value in standard.items():
        assert values[f"pse.{name}"] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("command", ["experiment", "evaluate", "crosscheck", "check-index", "sdm"])
def test_every_subcommand_help_has_a_worked_example(command):
    out = subprocess.run(
        [sys.executable, "-m", "pyterrier_sparse_eval", command, "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "example:" in out and f"sparse-eval {command} " in out
    assert max(len(line) for line in out.splitlines()) <= 100  # fits a 100-column terminal
    if command in ("evaluate", "crosscheck"):  # both read BEIR TSV qrels, as the README says
        assert "BEIR TSV" in out.split("--qrels QRELS", 2)[-1].split("--metric")[0]
    if command == "sdm":  # every option with a default gives it, --family's (auto) too
        assert "(default auto)" in " ".join(out.split("--family FAMILY", 2)[-1].split("--k K")[0].split())


@needs_data
def test_experiment_on_shards_gives_the_same_table_and_saves_runs(tmp_path):
    """--shards 3 (a sharded index, searched locally) gives the single index's table; --save-runs writes each
    system's run, which evaluates to the same values read back from the file."""
    from pyterrier_sparse_eval import datasets, evaluate

    common = ["experiment", "--dataset", "irds:vaswani", "--metric", "AP", "--metric", "nDCG@10", "--quiet"]
    common += ["--index-dir", str(tmp_path / "idx"), "--output"]
    assert main([*common, str(tmp_path / "single.json")]) == 0
    runs = tmp_path / "runs"
    assert main([*common, str(tmp_path / "sharded.json"), "--shards", "3", "--save-runs", str(runs)]) == 0
    single = json.loads((tmp_path / "single.json").read_text())["results"]
    sharded = json.loads((tmp_path / "sharded.json").read_text())["results"]
    assert sharded == single
    assert sorted(p.name for p in (tmp_path / "idx" / "vaswani").iterdir() if not p.name.startswith("."))[
        1
    ].endswith("-x3")
    (path,) = runs.iterdir()
    run = datasets.read_run(path)
    assert run.groupby("qid").size().max() == 1000
    qrels = datasets.get_qrels(datasets.load_dataset("irds:vaswani"))
    ap = evaluate(run, qrels, ["AP"]).aggregate["AP"]
    assert ap == pytest.approx(single["BM25(k1=0.9,b=0.4)"]["AP"], abs=1e-12)
    assert main([*common, str(tmp_path / "x.json"), "--engine", "ray"]) != 0  # ray needs --shards


# a run of one query: d2 (the one relevant document retrieved) at rank 2, d9 (relevant) not retrieved;
# by hand: AP = (1/2) / 2 = 0.25, RR = 1/2
PIPED_RUN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 1.0 t\n"
BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\td2\t1\nq1\td9\t1\n"


def _fifo(tmp_path, name, data: bytes):
    """A named pipe fed ``data`` once by a thread (as a shell's ``<(...)`` is), and the thread."""
    path = tmp_path / name
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return path, writer


def _drain(*fifos):
    for path, writer in fifos:
        if writer.is_alive():  # never opened by the command: let the writer finish
            with open(path, "rb") as f:
                f.read()
        writer.join(timeout=10)


@pytest.mark.parametrize("command", ["evaluate", "crosscheck"])
def test_run_and_qrels_are_read_from_pipes(tmp_path, command):
    """--run and --qrels may be pipes (a process substitution <(...), /dev/stdin), read once as trec_eval reads
    them: BEIR TSV qrels (tried as TREC first) and a gzipped run come through a pipe too."""
    run = _fifo(tmp_path, "run", gzip.compress(PIPED_RUN.encode()))
    qrels = _fifo(tmp_path, "qrels", BEIR_QRELS.encode())
    out = tmp_path / "out.json"
    argv = [command, "--run", str(run[0]), "--qrels", str(qrels[0]), "--metric", "AP", "--metric", "RR"]
    try:
        code = main([*argv, "--output", str(out)])
    finally:
        _drain(run, qrels)
    assert code == 0
    data = json.loads(out.read_text())
    if command == "evaluate":
        assert data["aggregate"] == pytest.approx({"AP": 0.25, "RR": 0.5}, abs=1e-12)
    else:
        assert data["ok"] is True and data["measures"]["AP"]["queries"] == 1


def test_run_from_stdin_and_bad_line_of_a_pipe(tmp_path):
    (tmp_path / "q.tsv").write_text(BEIR_QRELS)
    cli = [sys.executable, "-m", "pyterrier_sparse_eval", "evaluate", "--run", "/dev/stdin"]
    cli += ["--qrels", str(tmp_path / "q.tsv")]
    done = subprocess.run([*cli, "--metric", "AP"], input=PIPED_RUN, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["AP", "all", "0.2500"]
    # a bad score on the 3rd line of a pipe: the line is found in the bytes read, not by reading the pipe again
    bad = subprocess.run(cli, input="\n\nq1 Q0 d1 1 x t\n", capture_output=True, text=True)
    assert bad.returncode == 2
    assert "/dev/stdin, line 3: the score (5th column) 'x' is not a number" in bad.stderr
    # a gzipped run redirected to stdin (< run.gz: /dev/stdin is then a regular file) is read as piped
    (tmp_path / "r.gz").write_bytes(gzip.compress(PIPED_RUN.encode()))
    with open(tmp_path / "r.gz", "rb") as f:
        redirected = subprocess.run([*cli, "--metric", "AP"], stdin=f, capture_output=True, text=True)
    assert redirected.returncode == 0, redirected.stderr
    assert redirected.stdout.split() == ["AP", "all", "0.2500"]


def test_output_dev_stdout_into_a_pipe_or_a_redirected_file(tmp_path):
    """--output /dev/stdout with stdout a pipe or a file (a shell's | or >): the JSON alone there, its last line
    ended, the table on stderr; it had been refused for its name ("--output must end in .json"), the link's target
    ("pipe:[123]") being no path."""
    (tmp_path / "q.tsv").write_text(BEIR_QRELS)
    (tmp_path / "r.run").write_text(PIPED_RUN)
    cli = [sys.executable, "-m", "pyterrier_sparse_eval", "evaluate", "--run", str(tmp_path / "r.run")]
    cli += ["--qrels", str(tmp_path / "q.tsv"), "--metric", "AP", "--output", "/dev/stdout"]
    piped = subprocess.run(cli, capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["aggregate"] == {"AP": 0.25} and piped.stdout.endswith("}\n")
    assert piped.stderr.split() == ["AP", "all", "0.2500"]  # the table, off the JSON's way
    with open(tmp_path / "out.json", "w") as f:
        redirected = subprocess.run(cli, stdout=f, stderr=subprocess.PIPE, text=True)
    assert redirected.returncode == 0, redirected.stderr
    assert json.loads((tmp_path / "out.json").read_text())["aggregate"] == {"AP": 0.25}
    # appended to what stdout's file holds (a shell's >>, or > with 2>&1 after a table): it had been cut
    (tmp_path / "all.log").write_text("earlier line\n")
    with open(tmp_path / "all.log", "a") as f:
        assert subprocess.run(cli, stdout=f, stderr=f).returncode == 0
    log = (tmp_path / "all.log").read_text()
    assert log.startswith("earlier line\nAP") and json.loads(log[log.index("{") :])["aggregate"] == {
        "AP": 0.25
    }
    # a shell's ( ...; echo after ) > file: what follows the command lands after the JSON (written through stdout's
    # own descriptor; reopened, the file's shared offset stayed at 0 and "after" overwrote the JSON's start)
    with open(tmp_path / "group.txt", "wb") as f:
        assert subprocess.run(cli, stdout=f, stderr=subprocess.DEVNULL).returncode == 0
        os.write(f.fileno(), b"after\n")
    group = (tmp_path / "group.txt").read_text()
    assert group.endswith("}\nafter\n") and json.loads(group[: -len("after\n")])["aggregate"] == {"AP": 0.25}


def test_an_option_the_command_does_not_know_names_the_commands_help(capsys):
    # the top-level --help, which had been named, does not list a command's options
    with pytest.raises(SystemExit) as stopped:
        main(["sdm", "--dataset", "irds:vaswani", "--save-runs", "runs"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "sparse-eval sdm: error: unrecognized arguments: --save-runs runs (see sparse-eval sdm --help)"
    )


@pytest.mark.parametrize("option", ["--run", "--qrels"])
def test_a_directory_as_run_or_qrels_is_named_a_directory(tmp_path, capsys, option):
    (tmp_path / "r.run").write_text(PIPED_RUN)
    (tmp_path / "q.tsv").write_text(BEIR_QRELS)
    files = {"--run": str(tmp_path / "r.run"), "--qrels": str(tmp_path / "q.tsv"), option: str(tmp_path)}
    assert main(["evaluate", "--run", files["--run"], "--qrels", files["--qrels"]]) == 2
    err = capsys.readouterr().err
    assert f"file {tmp_path} is a directory" in err and "not found" not in err


def test_local_files_refuse_a_directory_and_a_pipe_naming_them(tmp_path, capsys):
    """files: reads its files more than once: a pipe is refused (save it to a file), a folder named one."""
    (tmp_path / "c.tsv").write_text("d1\thello\n")
    (tmp_path / "q.tsv").write_text(BEIR_QRELS)
    topics = _fifo(tmp_path, "topics", b"q1\thello\n")
    argv = ["experiment", "--corpus", str(tmp_path / "c.tsv"), "--qrels", str(tmp_path / "q.tsv"), "--quiet"]
    argv += ["--index-dir", str(tmp_path / "idx")]
    try:
        assert main([*argv, "--topics", str(topics[0])]) == 2
    finally:
        _drain(topics)
    assert "is not a regular file (a pipe?)" in capsys.readouterr().err
    assert main([*argv, "--topics", str(tmp_path)]) == 2
    assert f"Topics file {tmp_path} is a directory" in capsys.readouterr().err


def _apple_files(tmp_path):
    """Three documents about apples, all relevant to the one query "apple", and one about bananas."""
    (tmp_path / "c.tsv").write_text("d1\tapple\nd2\tapple apple pie\nd3\tapple tree leaf\nd4\tbanana\n")
    (tmp_path / "t.tsv").write_text("q1\tapple\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 1\n")
    return [str(tmp_path / n) for n in ("c.tsv", "t.tsv", "q.txt")]


def test_experiment_warns_when_num_results_is_below_a_cut_off(tmp_path, capsys):
    """--num-results 1 with R@3: R@3 sees one document (1 of 3 relevant: 1/3, by hand), and a warning names
    --num-results and the measure; with --num-results 3 (R@3 = 3/3) there is none."""
    corpus, topics, qrels = _apple_files(tmp_path)
    argv = ["experiment", "--corpus", corpus, "--topics", topics, "--qrels", qrels, "--metric", "R@3"]
    argv += ["--metric", "P@1", "--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main([*argv, "--num-results", "1", "--output", str(tmp_path / "short.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: num_results (--num-results) 1 is below the cut-off of R@3:" in err
    assert "P@1" not in err and "raise num_results to 3" in err
    short = json.loads((tmp_path / "short.json").read_text())["results"]["BM25(k1=0.9,b=0.4)"]
    assert short["R@3"] == pytest.approx(1 / 3, abs=1e-12)
    assert main([*argv, "--num-results", "3", "--output", str(tmp_path / "full.json")]) == 0
    assert "num_results" not in capsys.readouterr().err
    assert json.loads((tmp_path / "full.json").read_text())["results"]["BM25(k1=0.9,b=0.4)"]["R@3"] == 1.0


def test_run_experiment_warns_when_num_results_is_below_a_cut_off(tmp_path):
    import pyterrier_sparse_eval as pse

    spec = "files:" + ",".join(_apple_files(tmp_path))
    bm25 = [pse.systems.parse_system("bm25")]
    with pytest.warns(UserWarning) as caught:
        pse.run_experiment(
            spec, bm25, ["nDCG@3", "AP", "RR"], num_results=2, index_dir=tmp_path, verbose=False
        )
    said = [str(w.message) for w in caught]
    assert any(m.startswith("num_results (--num-results) 2 is below the cut-off of nDCG@3:") for m in said)
    assert (
        "AP, RR: computed on the 2 documents retrieved per query (num_results, --num-results)"
        in said[0] + said[1]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 1000 documents (the default): nothing to say of AP
        pse.run_experiment(spec, bm25, ["AP", "nDCG@3"], index_dir=tmp_path, verbose=False)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--covariate", "--noise-correction"], "--noise-correction is not available with --covariate"),
        (
            ["--covariate", "terms", "--noise-correction"],
            "--noise-correction is not available with --covariate",
        ),
        (
            ["--noise-correction", "--family", "normal"],
            "use --family auto or kde, or drop --noise-correction.",
        ),
        (["--k", "10", "--k", "0"], "--k must be >= 1, got 0."),
        (["--num-results", "0"], "--num-results must be >= 1, got 0."),
        (["--bootstrap", "1"], "--bootstrap must be 0 (no intervals) or >= 2 rounds (e.g. 200), got 1."),
        # refused after the whole run before (the measures of the full runs refuse it)
        (["--k", "3000000000"], "--k must be <= 2147483647, got 3000000000."),
    ],
)
def test_sdm_errors_name_the_flags_given(tmp_path, capsys, flags, message):
    """The command line's errors name its flags, not the Python parameters sdm.three_way names."""
    argv = ["sdm", "--dataset", "irds:vaswani", "--index-dir", str(tmp_path / "idx"), "--quiet", *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert not any(
        python in err
        for python in ("noise_correction", "covariate=", "family=", "k_values", "num_results=", "bootstrap=")
    )


def test_output_goes_through_links_into_pipes_and_never_over_an_input(tmp_path, capsys):
    """--output had replaced a symbolic link, a FIFO or a device (/dev/full, as root) by a file of its own, and
    had overwritten the run given as --run; evaluate had written JSON into a .csv name."""
    import os
    import threading

    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    run.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n")
    qrels.write_text("1 0 d2 1\n")
    base = ["--run", str(run), "--qrels", str(qrels), "--metric", "RR"]
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("before")
    link.symlink_to(target)
    for command in ("evaluate", "crosscheck"):
        assert main([command, *base, "--output", str(link)]) == 0
        assert link.is_symlink() and json.loads(target.read_text()) != json.loads('"before"')
        target.write_text("before")
    fifo, got = tmp_path / "fifo", []
    os.mkfifo(fifo)
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    assert main(["evaluate", *base, "--output", str(fifo)]) == 0
    reader.join(timeout=60)
    assert json.loads(got[0])["aggregate"] == {"RR": 0.5} and fifo.is_fifo()
    capsys.readouterr()
    csv = tmp_path / "table.csv"
    for output, said in (
        (run, f"--output {run} is an input of this command"),
        (qrels, f"--output {qrels} is an input of this command"),
        (csv, f"--output must end in .json, got '{csv}'"),
    ):
        assert main(["evaluate", *base, "--output", str(output)]) == 2
        assert said in capsys.readouterr().err
    assert run.read_text().startswith("1 Q0 d1") and not (tmp_path / "table.csv").exists()


def test_check_index_of_a_path_that_does_not_exist_says_so(tmp_path, capsys):
    """It had said "is not a sparse index (no pt_meta.json)"."""
    assert main(["check-index", str(tmp_path / "nothing")]) == 2
    assert "nothing does not exist; give an index folder" in capsys.readouterr().err


def test_a_warning_is_its_own_line_above_a_running_progress_bar(capsys):
    """A warning raised while a bar was drawn (a late field while indexing) had been printed at the end of the
    bar's line."""
    from tqdm.auto import tqdm

    from pyterrier_sparse_eval.console import _warnings_as_lines

    with _warnings_as_lines("sparse-eval", debug=False):
        bar = tqdm(total=3, desc="indexing", disable=False, file=sys.stderr)
        bar.update(1)
        warnings.warn("a field seen late", stacklevel=1)
        bar.update(2)
        bar.close()
    lines = capsys.readouterr().err.replace("\r", "\n").split("\n")
    assert "sparse-eval: warning: a field seen late" in lines
    assert any(line.startswith("indexing: 100%") for line in lines)


@pytest.mark.parametrize("where", ["import", "finalizer"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130(where):
    """The command's imports take seconds: Ctrl-C there had printed Python's traceback, or, landing in a finalizer
    (a regex's __del__, found by a user's test), been ignored, the command then running to its end with exit 0."""
    code = "import os, signal, sys, time\nsys.argv[0] = '/usr/local/bin/sparse-eval'\nimport pyterrier_sparse_eval\n"
    if where == "import":
        code += "os.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"
    else:
        code += (
            "class Late:\n    def __del__(self):\n        os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(0.5)\n"
            "Late()\ntime.sleep(2)\n"
        )
    code += "print('ran on')\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "sparse-eval: interrupted\n")
    # another program importing the package keeps Python's Ctrl-C
    other = "import signal, pyterrier_sparse_eval\nprint(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    assert subprocess.run([sys.executable, "-c", other], capture_output=True, text=True).stdout == "True\n"


def _toy_files(folder):
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "cats purr"}\n{"_id": "d2", "text": "dogs bark"}\n'
    )
    (folder / "topics.tsv").write_text("q1\tcats\nq2\tdogs\n")
    (folder / "qrels.csv").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    return [
        f"--{part}={folder / name}"
        for part, name in (("corpus", "corpus.jsonl"), ("topics", "topics.tsv"), ("qrels", "qrels.csv"))
    ]


def test_experiment_and_sdm_never_write_over_their_inputs_and_say_what_they_cannot_do(
    tmp_path, capsys, monkeypatch
):
    """Found by a user's bug hunt: experiment --output qrels.csv had replaced the qrels by the table (exit 0), as had
    a files: dataset's topics and sdm's --output; --save-runs of a system that retrieves nothing had left an empty
    run file and pyterrier's bare message; --plots with one system ran to the end to draw nothing; a run line not in
    UTF-8 with a wrong column count gave a bare codec error; --output=~/x (no shell expansion) made a folder './~';
    --measures in-house named ir_measures as the fix for ERR@10."""
    local = _toy_files(tmp_path / "toy")
    qrels, topics = tmp_path / "toy" / "qrels.csv", tmp_path / "toy" / "topics.tsv"
    before = qrels.read_text(), topics.read_text()
    index_dir = ["--index-dir", str(tmp_path / "idx"), "--quiet"]
    spec = f"files:{tmp_path / 'toy' / 'corpus.jsonl'},{topics},{qrels}"
    for argv, given in (
        (["experiment", *local, "--output", str(qrels)], qrels),
        (["experiment", "--dataset", spec, "--output", str(topics)], topics),
        (["sdm", "--dataset", spec, "--output", str(qrels)], qrels),
    ):
        assert main([*argv, *index_dir]) == 2
        assert f"--output {given} is an input of this command" in capsys.readouterr().err
    assert (qrels.read_text(), topics.read_text()) == before
    topics.write_text("q1\tzebra\nq2\tquux\n")
    assert main(["experiment", *local, "--save-runs", str(tmp_path / "runs"), *index_dir]) == 2
    err = capsys.readouterr().err
    assert "A system retrieved no document for any of the 2 topics" in err and "no results from BM25" in err
    assert not (tmp_path / "runs").exists()
    assert main(["experiment", *local, "--plots", str(tmp_path / "plots"), *index_dir]) == 2
    assert "--plots draws per-query comparisons of two systems or more" in capsys.readouterr().err
    run = tmp_path / "bad.run"
    run.write_bytes(b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\xff 2\n")
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels)]) == 2
    assert (
        f"{run} is not UTF-8 text (byte 0xff): is it a TREC run file? Convert it" in capsys.readouterr().err
    )
    run.write_bytes(b"q1 Q0 d1 1 2.0 t\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--output=~/x.json"]) == 0
    assert (tmp_path / "home" / "x.json").is_file() and not (tmp_path / "~").exists()
    assert main(["experiment", *local, "--measures", "in-house", "--metric", "ERR@10", *index_dir]) == 2
    err = capsys.readouterr().err
    assert (
        "ERR@10 is not computed in-house" in err and "(evaluate it with --measures standard instead)" in err
    )


def test_outputs_are_never_written_into_an_index_folder(tmp_path, capsys):
    """--save-runs into a cache entry had been accepted: check-index then called the entry damaged (a file the build
    did not write), and a rebuild of the entry would lose the runs."""
    local = _toy_files(tmp_path / "toy")
    index_dir = ["--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main(["experiment", *local, *index_dir]) == 0
    (entry,) = [p for p in (tmp_path / "idx").glob("*/*") if p.is_dir()]
    capsys.readouterr()
    for option, target in (("--save-runs", entry / "runs"), ("--output", entry / "sub" / "x.json")):
        assert main(["experiment", *local, *index_dir, option, str(target)]) == 2
        assert (
            f"{option} {target} is inside the index at {entry}: write it elsewhere."
            in capsys.readouterr().err
        )
    assert main(["check-index", str(entry)]) == 0
    # the same entry before it is built (a fresh cache) had been accepted, and the outputs written into it
    fresh = ["--index-dir", str(tmp_path / "fresh"), "--quiet"]
    for option, target in (("--save-runs", "runs"), ("--output", "x.json")):
        inside = tmp_path / "fresh" / entry.parent.name / entry.name / target
        assert main(["experiment", *local, *fresh, option, str(inside)]) == 2
        assert (
            f"is inside {tmp_path / 'fresh' / entry.parent.name}, the folder this command builds its indexes in"
            in capsys.readouterr().err
        )
        assert not (tmp_path / "fresh").exists()
    for option in ("--output", "--save-runs"):  # --save-runs "" had written into the current folder
        assert main(["experiment", *local, *fresh, option, ""]) == 2
        assert f"{option} is empty: give a path, or leave the option out." in capsys.readouterr().err
    # the cache reached through a symlink is the cache
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    inside = tmp_path / "real" / entry.parent.name / entry.name / "x.json"
    assert (
        main(
            ["experiment", *local, "--index-dir", str(tmp_path / "link"), "--quiet", "--output", str(inside)]
        )
        == 2
    )
    assert "the folder this command builds its indexes in" in capsys.readouterr().err
    assert not (tmp_path / "real" / entry.parent.name).exists()


def test_check_index_names_the_fix_of_a_foreign_file(tmp_path, capsys):
    """A file the build did not write: `experiment` reuses the entry as it is, so check-index names moving it out,
    not (as it had) a rebuild by `experiment`; damage proper still names the rebuild."""
    local = _toy_files(tmp_path / "toy")
    assert main(["experiment", *local, "--index-dir", str(tmp_path / "idx"), "--quiet"]) == 0
    (entry,) = [p for p in (tmp_path / "idx").glob("*/*") if p.is_dir()]
    (entry / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["check-index", str(entry)]) == 1
    err = capsys.readouterr().err
    assert "notes.txt: a file the build did not write is in the index folder; move it out." in err
    assert "rebuilds" not in err
    (entry / "notes.txt").unlink()
    (entry / "docnos.json").write_text("[]")
    assert main(["check-index", str(entry)]) == 1
    assert "sparse-eval experiment rebuilds a damaged cache entry" in capsys.readouterr().err


def test_a_custom_gain_is_not_suggested_as_the_in_house_spelling(tmp_path, capsys):
    """pse.nDCG's gain= is "linear" or "exp": a dict had been suggested as pse.nDCG(gain={...}), which is refused."""
    (tmp_path / "r.run").write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n")
    (tmp_path / "q.qrels").write_text("1 0 d1 2\n1 0 d2 1\n")
    files = ["--run", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "q.qrels")]
    assert main(["evaluate", *files, "--metric", "nDCG(gain={0:0,1:1,2:5})@10"]) == 2
    err = capsys.readouterr().err
    assert "use pse.nDCG(gain=" not in err and "pse.evaluate computes it in-house" not in err
    assert (
        "a gain per label is gains={label: gain, ...}; the in-house pse.nDCG takes gain='linear' or 'exp'"
        in err
    )
    assert main(["evaluate", *files, "--metric", "nDCG(gain=exp)@10"]) == 2
    assert "did you mean 'pse.nDCG(gain=exp)@10'?" in capsys.readouterr().err


def test_standard_input_spellings_are_named(tmp_path, capsys):
    """`--run -` names /dev/stdin; one file for both --run and --qrels (stdin twice) is said as such (it had been
    reported as a malformed qrels file); a crosscheck that compared no query does not say "ok" per measure."""
    (tmp_path / "q.qrels").write_text("1 0 d1 2\n")
    (tmp_path / "empty.run").write_text("")
    qrels = ["--qrels", str(tmp_path / "q.qrels")]
    assert main(["evaluate", "--run", "-", *qrels]) == 2
    assert "Run file not found: - (to read standard input, give /dev/stdin)." in capsys.readouterr().err
    (tmp_path / "link.qrels").symlink_to(tmp_path / "q.qrels")
    for command in ("evaluate", "crosscheck"):
        for run in (tmp_path / "q.qrels", tmp_path / "link.qrels"):
            assert main([command, "--run", str(run), *qrels]) == 2
            assert "--run and --qrels are the same file" in capsys.readouterr().err
    assert main(["crosscheck", "--run", str(tmp_path / "empty.run"), *qrels, "--metric", "AP"]) == 1
    out = capsys.readouterr().out
    assert "0           0  nothing compared" in out and " ok" not in out
