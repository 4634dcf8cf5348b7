import json
import subprocess
import sys

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
    assert data["results"]["BM25(k1=0.9,b=0.4)"]["AP"] == pytest.approx(
        0.2856, abs=5e-5
    )  # Anserini's run: 0.2856
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
