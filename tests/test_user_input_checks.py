"""Inputs a user plausibly gives SDM (and the in-house measures) that had failed with a raw Python or pandas error,
or given a meaningless number in silence: each is now refused with a message naming the fix."""

from __future__ import annotations

import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from helpers import simulated_pool_corpus, system_run_over_pool

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import files, sdm
from pyterrier_sparse_eval.datasets import FieldError


@pytest.fixture(scope="module")
def setup():
    docnos, truth, first, qrels = simulated_pool_corpus(2000, 4, seed=5)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    run = system_run_over_pool(pool, docnos, truth)
    return docnos, first, qrels, pool, run


def _toy_files(folder: Path) -> list[str]:
    """A two-document corpus, one topic and its qrels written in ``folder``: the command's options naming them."""
    (folder / "c.tsv").write_text("d1\tquick brown fox\nd2\tlazy dog\n")
    (folder / "t.tsv").write_text("q1\tfox\n")
    (folder / "q.txt").write_text("q1 0 d1 1\n")
    return [
        f"--{name}={folder / f}" for name, f in (("corpus", "c.tsv"), ("topics", "t.tsv"), ("qrels", "q.txt"))
    ]


def _backgrounds(run: pd.DataFrame) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {q: rng.lognormal(0.0, 0.6, 200) for q in run["qid"].unique()}


@pytest.mark.parametrize("shape", ["list", "tuple", "array", "frame"])
def test_a_background_that_is_not_a_mapping_is_refused_by_name(setup, shape):
    """A list (or a tuple, an array, a long frame) of samples had failed with 'list indices must be integers'."""
    _, _, qrels, _, run = setup
    samples = _backgrounds(run)
    given = {
        "list": list(samples.values()),
        "tuple": tuple(samples.values()),
        "array": np.zeros(100),
        "frame": pd.DataFrame(
            {"qid": np.repeat(list(samples), 200), "score": np.concatenate(list(samples.values()))}
        ),
    }[shape]
    with pytest.raises(
        TypeError, match=r"background is a \{qid: scores\} mapping .* not (list|tuple|ndarray|DataFrame)"
    ):
        sdm.evaluate(run, qrels, k_values=[10], background=given, n_unseen=10_000)


def test_a_background_series_is_a_mapping_and_its_missing_queries_are_named(setup):
    _, _, qrels, _, run = setup
    samples = _backgrounds(run)
    as_dict = sdm.evaluate(run, qrels, k_values=[10], background=samples, n_unseen=10_000)["aggregate"]
    as_series = sdm.evaluate(run, qrels, k_values=[10], background=pd.Series(samples), n_unseen=10_000)[
        "aggregate"
    ]
    assert as_series == as_dict
    first = sorted(samples)[0]
    with pytest.raises(
        ValueError, match=rf"background has no entry for 1 evaluated queries, e.g. \['{first}'\]"
    ):
        sdm.evaluate(run, qrels, k_values=[10], background=pd.Series(samples).drop(first), n_unseen=10_000)


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_a_frame_with_both_naming_conventions_is_read_when_they_agree_and_refused_when_not(setup, which):
    """A frame with docno and doc_id (qid and query_id, label and relevance) had given two docno columns after the
    rename, and a raw pandas TypeError; when the two agree they are one column, when not the user is asked which."""
    _, _, qrels, pool, run = setup
    plain = sdm.evaluate(run, qrels, pool, [10])["aggregate"]
    if which == "run":
        both, differ, names = (
            run.assign(doc_id=run["docno"]),
            run.assign(query_id="q0"),
            r"qid column \(PyTerrier\) and a query_id column",
        )
    else:
        both = qrels.assign(relevance=qrels["label"])
        differ, names = qrels.assign(relevance=0), r"label column \(PyTerrier\) and a relevance column"
    args = (both, qrels) if which == "run" else (run, both)
    assert sdm.evaluate(*args, pool, [10])["aggregate"] == plain
    assert pse.evaluate(*args, ["R@10"]).aggregate == pse.evaluate(run, qrels, ["R@10"]).aggregate
    args = (differ, qrels) if which == "run" else (run, differ)
    with pytest.raises(ValueError, match=rf"has both a {names} \(ir_measures\) that differ: drop"):
        sdm.evaluate(*args, pool, [10])
    with pytest.raises(ValueError, match="that differ: drop"):
        pse.evaluate(*args, ["R@10"])


def test_scores_below_single_precision_are_refused_by_name(setup):
    """Probabilities such as exp(-200 + s) all round to 0 in trec_eval's float32: SDM had returned 0 in silence
    (the refusal mirrors that of scores beyond float32's range)."""
    _, _, qrels, pool, run = setup
    with pytest.raises(ValueError, match=r"nonzero scores are below single precision's range.*logarithm"):
        sdm.evaluate(run.assign(score=np.exp(-200.0 + run["score"])), qrels, pool, [10])
    samples = _backgrounds(run)
    samples[sorted(samples)[0]] = samples[sorted(samples)[0]] * 1e-300
    with pytest.raises(ValueError, match="below single precision's range"):
        sdm.evaluate(run, qrels, k_values=[10], background=samples, n_unseen=10_000)
    # exact zeros are scores like any other
    zeros = run.assign(score=np.where(run["score"] < run["score"].median(), 0.0, run["score"]))
    assert np.isfinite(sdm.evaluate(zeros, qrels, pool, [10])["aggregate"]["R@10"]["sdm"])


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_pooling_runs_of_no_judged_query_are_refused_naming_the_float_cast(side):
    """Float qids on one side had matched no judged query: relevant documents were not set aside before each
    query's top documents were taken, and the pool came out smaller, in silence."""
    docnos = [f"d{i}" for i in range(500)]
    qrels = pd.DataFrame({"qid": [1, 2], "docno": ["d1", "d2"], "label": [1, 1]})
    rng = np.random.default_rng(0)
    run = pd.DataFrame({"qid": np.repeat([1, 2], 100), "docno": docnos[:100] * 2, "score": rng.random(200)})
    if side == "run":
        run = run.assign(qid=run["qid"].astype(float))
    else:
        qrels = qrels.assign(qid=qrels["qid"].astype(float))
    with pytest.raises(
        ValueError, match=r"rank no query of the qrels .* was float, e.g. '1.0': cast it to int"
    ):
        sdm.build_pool(qrels, [run], all_docnos=docnos, depth=10, sample=100, seed=0)
    other = run.assign(qid="q9")
    with pytest.raises(ValueError, match=r"rank no query of the qrels .*: pass runs of the qrels' topics\.$"):
        sdm.build_pool(qrels.assign(qid=[1, 2]), [other], all_docnos=docnos, depth=10, sample=100, seed=0)


@pytest.mark.parametrize("tail_sample", [0, [0, 0]])
def test_a_tail_depth_without_a_tail_sample_is_refused(setup, tail_sample):
    """tail_depth= without a tail sample had been ignored in silence (a uniform sample drawn)."""
    docnos, first, qrels, _, _ = setup
    depth = 50 if tail_sample == 0 else [50, 100]
    with pytest.raises(
        ValueError, match=r"tail_depth=.* bounds the tail bands of tail_sample=, which samples none"
    ):
        sdm.build_pool(
            qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=tail_sample, tail_depth=depth
        )
    uniform = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=100, tail_sample=tail_sample)
    assert not uniform.stratified


@pytest.mark.parametrize(
    "pool, fix", [("pool.json", r"sdm\.Pool\.load\(path\)"), (None, "the sdm.Pool built")]
)
def test_a_covariate_given_no_pool_says_what_to_pass(setup, pool, fix):
    _, first, _, _, _ = setup
    with pytest.raises(TypeError, match=rf"pool must be an sdm.Pool, not (str|NoneType): pass {fix}"):
        sdm.Covariate.from_run(first, pool)


@pytest.mark.parametrize("pool, fix", [("pool.json", r"sdm\.Pool\.load\(path\)"), ({}, r"sdm\.build_pool\(")])
def test_sdm_given_a_pool_that_is_not_one_says_what_to_pass(setup, pool, fix):
    _, _, qrels, _, run = setup
    with pytest.raises(TypeError, match=rf"pool must be an sdm.Pool, not (str|dict): pass {fix}"):
        sdm.evaluate(run, qrels, pool=pool, k_values=[10])


# --- measures and runs given to the in-house evaluation and pt.Experiment ---


@pytest.mark.parametrize(
    "spec, words",
    [
        ("nDCG@0", "cut-off k must be >= 1"),
        ("RR@0", "cut-off k must be >= 1"),
        ("nDCG@100000000000000000000", "and <= 2147483647"),
        ("AP(rel=0)", "rel must be >= 1"),
    ],
)
def test_standard_measures_with_a_cut_off_or_level_trec_eval_cannot_take_are_refused_before_any_work(
    tmp_path, spec, words
):
    """nDCG@0 had aborted the process inside pytrec_eval (exit 134, a C assertion), RR@0 had printed 0.0, AP(rel=0)
    had been called a bug (exit 3) and a cut-off beyond a C int a KeyError; all after the corpus was indexed."""
    import ir_measures

    from pyterrier_sparse_eval.cli import main

    topics = pd.DataFrame({"qid": ["q1"], "query": ["fox"]})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d1"], "label": [1]})
    run = pd.DataFrame({"qid": ["q1"], "docno": ["d1"], "score": [1.0]})
    system = pt.Transformer.from_df(run)
    for measure in (spec, ir_measures.parse_measure(spec)):
        with pytest.raises(ValueError, match=re.escape(words)):
            pse.Experiment([system], topics, qrels, [measure])
    files = _toy_files(tmp_path)
    index = tmp_path / "idx"
    assert main(["experiment", *files, f"--index-dir={index}", "--quiet", "--metric", spec]) == 2
    assert not index.exists()


@pytest.mark.parametrize("ranking", [["d1"], ["doc"], [("d1",)], [3.0]])
def test_a_ranking_that_is_not_docno_score_pairs_is_refused(ranking):
    """A list of docnos had been read as pairs: "d1" as docno "d" with score 1 (every measure 0.0, in silence)."""
    with pytest.raises(TypeError, match=r"ranking of query 'q1' holds .*: give \(docno, score\) pairs"):
        pse.evaluate_retrieval({"q1": ranking}, {"q1": {"d1": 1}}, k_values=[1])
    assert pse.evaluate_retrieval({"q1": [("d1", 2.0)]}, {"q1": {"d1": 1}}, k_values=[1])["nDCG@1"] == 1.0


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["fox", "dog"]})
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["d1", "d2"], "label": [1, 1]})
    run = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d2"], "score": [2.0, 1.0, 1.0]})
    return topics, qrels, pt.Transformer.from_df(run)


@pytest.mark.parametrize(
    "change, words",
    [
        # a TREC qrels file read with pandas: pt had failed with a MergeError
        (
            lambda t, q: (t, pd.DataFrame({0: q.qid, 1: 0, 2: q.docno, 3: q.label})),
            "The qrels need qid, docno, label",
        ),
        (
            lambda t, q: (t, q.drop(columns=["label"])),
            r"The qrels need qid, docno, label .* and have \['qid', 'docno'\]",
        ),
        (lambda t, q: (t.rename(columns={"qid": "id"}), q), "The topics have no qid column"),
        # pt had merged the two rankings of q1 into one, in silence
        (lambda t, q: (pd.concat([t, t.head(1).assign(query="dog")]), q), r"query ids repeat \(\['q1'\]\)"),
    ],
)
def test_experiment_frames_pt_cannot_read_are_refused_by_name(change, words):
    topics, qrels, system = _frames()
    topics, qrels = change(topics, qrels)
    with pytest.raises(ValueError, match=words):
        pse.Experiment([system], topics, qrels, ["AP"])


def test_experiment_without_systems_or_with_a_baseline_out_of_range_says_so():
    """pt had raised bare AssertionErrors ('pipes must contain at least two lists', and an empty one)."""
    topics, qrels, system = _frames()
    with pytest.raises(ValueError, match="No system to evaluate"):
        pse.Experiment([], topics, qrels, ["AP"])
    with pytest.raises(ValueError, match=r"baseline=5 names no system: give the position \(0 to 1\)"):
        pse.Experiment([system, system], topics, qrels, ["AP"], names=["a", "b"], baseline=5)
    table = pse.Experiment([system, system], topics, qrels, ["AP"], names=["a", "b"], baseline=0)
    # pt's own table of the same (valid) call
    expected = pt.Experiment([system, system], topics, qrels, [ir_measures.AP], names=["a", "b"], baseline=0)
    assert table["AP"].tolist() == expected["AP"].tolist() == [1.0, 1.0]


def _read_only_folder() -> Path | None:
    """A folder of a virtual file system where not even root can make a file (sysfs), or None."""
    folder = Path("/sys/kernel")
    # os.access says yes (root), yet no file can be made there: the case os.access does not catch
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return None
    try:
        tempfile.NamedTemporaryFile(dir=folder).close()
    except OSError:
        return folder
    return None


@pytest.mark.skipif(_read_only_folder() is None, reason="needs a folder no one can write into (/sys/kernel)")
@pytest.mark.parametrize("option", ["--output", "--save-runs", "--plots"])
def test_a_destination_no_file_can_be_written_in_is_refused_before_any_work(tmp_path, capsys, option):
    """os.access says yes to root for a read-only or virtual file system: --output there had been found unwritable
    only after the whole run, with a message naming the temporary file."""
    from pyterrier_sparse_eval.cli import main

    given = _toy_files(tmp_path)
    folder = _read_only_folder()
    target = folder / ("results.json" if option == "--output" else "out")
    index = tmp_path / "idx"
    systems = ["--system=bm25", "--system=bm25:k1=1.2"]  # --plots compares two
    assert main(["experiment", *given, *systems, f"--index-dir={index}", "--quiet", option, str(target)]) == 2
    assert f"no file can be written in {folder} (Permission denied)" in capsys.readouterr().err
    assert not index.exists()
    # the same folder on a writable file system passes
    files.check_destination(tmp_path / "out" / "results.json", option=option)


@pytest.mark.parametrize("blank", ["", " "])
@pytest.mark.parametrize("command", ["experiment", "sdm"])
def test_an_empty_index_dir_is_refused(tmp_path, monkeypatch, capsys, command, blank):
    """--index-dir "" had put the cache into the current folder."""
    from pyterrier_sparse_eval.cli import main

    monkeypatch.chdir(tmp_path)
    _toy_files(tmp_path)
    given = (
        ["--corpus=c.tsv", "--topics=t.tsv", "--qrels=q.txt"] if command == "experiment" else ["--dataset=x"]
    )
    with pytest.raises(SystemExit) as exit:
        main([command, *given, "--index-dir", blank, "--quiet"])
    assert exit.value.code == 2
    assert "--index-dir: is empty: give the folder of the index cache" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.tsv", "q.txt", "t.tsv"]


def test_one_corpus_named_relatively_and_absolutely_is_one_cache_entry(tmp_path, monkeypatch):
    """A relative and an absolute path to one corpus had made two cache entries (two builds), and the JSON's
    config had recorded the relative path, which names nothing from another folder."""
    import json

    from pyterrier_sparse_eval.cli import main

    monkeypatch.chdir(tmp_path)
    _toy_files(tmp_path)
    index = tmp_path / "idx"
    for corpus in ("c.tsv", str(tmp_path / "c.tsv"), "./c.tsv"):
        given = [f"--corpus={corpus}", "--topics=t.tsv", "--qrels=q.txt", f"--index-dir={index}"]
        assert main(["experiment", *given, "--quiet", "--output=r.json"]) == 0
        config = json.loads((tmp_path / "r.json").read_text())["config"]
        assert config["dataset"] == f"files:{tmp_path / 'c.tsv'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}"
    # one index of the one system
    (folder,) = index.iterdir()
    assert len([p for p in folder.iterdir() if not p.name.startswith(".")]) == 1
    # a path from the home folder (~ left to the command by the shell after --corpus=), and a current folder whose
    # own path holds a comma (the files are then named as given)
    monkeypatch.setenv("HOME", str(tmp_path))
    given = ["--corpus=~/c.tsv", "--topics=t.tsv", "--qrels=q.txt", f"--index-dir={index}"]
    assert main(["experiment", *given, "--quiet", "--output=r.json"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["config"]["dataset"].startswith(
        f"files:{tmp_path}/c.tsv,"
    )
    odd = tmp_path / "a,b"
    odd.mkdir()
    for name in ("c.tsv", "t.tsv", "q.txt"):
        (odd / name).write_text((tmp_path / name).read_text())
    monkeypatch.chdir(odd)
    given = ["--corpus=c.tsv", "--topics=t.tsv", "--qrels=q.txt", f"--index-dir={index}"]
    assert main(["experiment", *given, "--quiet", "--output=r.json"]) == 0
    assert json.loads((odd / "r.json").read_text())["config"]["dataset"] == "files:c.tsv,t.tsv,q.txt"
    # through the API too, a path through another folder included
    from pyterrier_sparse_eval.datasets import corpus_spec

    monkeypatch.chdir(tmp_path)

    (tmp_path / "sub").mkdir()
    around = tmp_path / "sub" / ".." / "c.tsv"
    expected = f"files:{(tmp_path / 'c.tsv').resolve()}"
    assert corpus_spec("files:c.tsv,t.tsv,q.txt") == corpus_spec(f"files:{around},t.tsv,q.txt") == expected


def test_a_corpus_tsv_with_more_than_three_columns_is_refused_unless_a_header_says_so(tmp_path):
    """docno, title, text, url: the url had been read into the text in silence (a topics file's third column is
    refused already)."""
    (tmp_path / "t.tsv").write_text("q1\tfox\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "c.tsv").write_text("d1\tFoxes\tquick brown fox\thttp://a\nd2\tDogs\tlazy dog\thttp://b\n")
    dataset = pse.datasets.get(f"files:{tmp_path / 'c.tsv'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}")
    with pytest.raises(
        ValueError, match=r"c\.tsv, line 1: 4 tab-separated columns; corpus lines are docno<TAB>text"
    ):
        list(dataset.get_corpus_iter())
    # a header naming more columns is refused too, naming the others
    (tmp_path / "c.tsv").write_text("docno\ttitle\ttext\turl\nd1\tFoxes\tquick brown fox\thttp://a\n")
    dataset = pse.datasets.get(f"files:{tmp_path / 'c.tsv'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}")
    with pytest.raises(
        ValueError, match=r"line 1: the header names 4 columns; .*remove the other columns \(url\)"
    ):
        list(dataset.get_corpus_iter())
    # with the header row, a text that holds a tab is read whole, as before
    (tmp_path / "c.tsv").write_text("docno\ttitle\ttext\nd1\tFoxes\tquick brown\tfox\n")
    dataset = pse.datasets.get(f"files:{tmp_path / 'c.tsv'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}")
    (doc,) = list(dataset.get_corpus_iter())
    assert doc["docno"] == "d1" and doc["text"].endswith("quick brown\tfox")


def test_ids_a_trec_run_file_cannot_hold_are_refused_before_the_work_that_needs_them(tmp_path):
    """save_runs= with a docno holding a space had been refused only once every system's index was built and every
    run retrieved; a qid holding one, too. Now a qid before any index, a docno once the first index is ready."""
    import json

    from pyterrier_sparse_eval.systems import parse_system

    docs = [{"docno": "d 1", "text": "quick brown fox"}, {"docno": "d2", "text": "lazy dog"}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (tmp_path / "t.tsv").write_text("q1\tfox\n")
    (tmp_path / "q.txt").write_text("q1 0 d2 1\n")
    spec = f"files:{tmp_path / 'c.jsonl'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}"
    systems = [parse_system("bm25"), parse_system("bm25:k1=1.2")]
    index, runs = tmp_path / "idx", tmp_path / "runs"
    with pytest.raises(ValueError, match=r"cannot hold a docno with whitespace, e.g. 'd 1' \(save_runs= "):
        pse.run_experiment(spec, systems, ["AP"], index_dir=index, save_runs=runs, verbose=False)
    (folder,) = index.iterdir()
    assert len([p for p in folder.iterdir() if not p.name.startswith(".")]) == 1  # the second was never built
    assert not runs.exists() or not list(runs.iterdir())
    # without run files, the same corpus is evaluated
    assert pse.run_experiment(spec, systems, ["AP"], index_dir=index, verbose=False).queries == 1

    class Spaced:  # a loaded dataset whose qids hold a space (files cannot: their fields are whitespace-separated)
        spec = "spaced"

        def get_topics(self, *args, **kwargs):
            return pd.DataFrame({"qid": ["q 1"], "query": ["fox"]})

        def get_qrels(self, *args, **kwargs):
            return pd.DataFrame({"qid": ["q 1"], "docno": ["d2"], "label": [1]})

        def get_corpus_iter(self, *args, **kwargs):
            return iter(docs)

    with pytest.raises(ValueError, match=r"cannot hold a qid with whitespace, e.g. 'q 1'"):
        pse.run_experiment(
            Spaced(), systems, ["AP"], index_dir=tmp_path / "other", save_runs=runs, verbose=False
        )
    assert not (tmp_path / "other").exists()


def test_a_bm25_that_did_not_build_the_index_names_a_fix_that_runs(tmp_path):
    """The suggested rebuild had been `BM25(k1=1.2, b=0.4, analyzer=Analyzer(...))`, which BM25 does not take; a
    toks index was told to 'use a BM25 that matches', which none does."""
    index = pse.SparseIndex(tmp_path / "bm25")
    pse.BM25(stemmer=None).indexer(index, verbose=False).index([{"docno": "d1", "text": "quick brown fox"}])
    asked = pse.BM25(k1=1.2, stemmer=None, stopwords=None)
    with pytest.raises(
        ValueError, match=r"rebuild it with (BM25\(.*\))\.indexer\(index, mode=\"overwrite\"\)"
    ) as e:
        asked.retriever(index)
    suggested = re.search(r"rebuild it with (BM25\(.*?\))\.indexer", str(e.value))[1]
    assert suggested == "BM25(k1=1.2, b=0.4, stemmer=None, stopwords=None)"
    assert eval(suggested, {"BM25": pse.BM25}).encoder_config() == asked.encoder_config()
    toks = pse.SparseIndex(tmp_path / "toks")
    toks.indexer(verbose=False).index([{"docno": "d1", "toks": {"fox": 1.0}}])
    with pytest.raises(ValueError, match=r"search it with index\.retriever\(\)") as e:
        pse.BM25().retriever(toks)
    assert "rebuild" not in str(e.value)


def test_a_sharded_search_takes_any_number_of_results_a_single_one_does(tmp_path):
    """num_results=2**63 had overflowed a C long in the shards' merge (a single index took it)."""
    docs = [{"docno": f"d{i}", "text": f"fox w{i} " + "dog " * (i % 3)} for i in range(30)]
    sharded, single = pse.ShardedIndex(tmp_path / "s", num_shards=3), pse.SparseIndex(tmp_path / "one")
    for index in (sharded, single):
        pse.BM25().indexer(index, verbose=False).index(docs)
    queries = pd.DataFrame({"qid": ["1", "2"], "query": ["fox dog", "w3"]})
    got = pse.BM25().retriever(sharded, num_results=2**63).transform(queries)
    expected = pse.BM25().retriever(single, num_results=2**64).transform(queries)
    assert len(got) == 31
    for column in ("qid", "docno", "rank", "score"):
        assert got[column].tolist() == expected[column].tolist()


def test_one_measure_given_alone_is_one_measure_and_k_values_are_checked():
    """pse.evaluate(run, qrels, "AP") had read the name letter by letter ("Unknown measure 'A'"); evaluate_retrieval's
    k_values=10 had failed with "'int' object is not iterable" and ["10"] inside numpy."""
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["d2", "d3"], "label": [1, 1]})
    assert (
        pse.evaluate(run, qrels, "AP").aggregate == pse.evaluate(run, qrels, ["AP"]).aggregate == {"AP": 0.25}
    )
    assert (
        pse.evaluate(run, qrels, ir_measures.nDCG @ 2).aggregate
        == pse.evaluate(run, qrels, ["nDCG@2"]).aggregate
    )
    assert pse.crosscheck(run, qrels, "AP").ok
    with pytest.raises(TypeError, match=r"k_values=10: give a list of cut-offs, e\.g\. k_values=\[10, 100\]"):
        pse.evaluate_retrieval({"1": [("d1", 1.0)]}, {"1": {"d1": 1}}, k_values=10)
    for bad in (["10"], [0], [True], [2.5]):
        with pytest.raises(ValueError, match=rf"k_values: {re.escape(repr(bad[0]))} is not a cut-off"):
            pse.evaluate_retrieval({"1": [("d1", 1.0)]}, {"1": {"d1": 1}}, k_values=bad)


def test_a_utf16_file_is_told_to_be_converted_from_utf16(tmp_path, capsys):
    """PowerShell's > writes UTF-16: the fix given had been 'iconv -f latin1', which makes a file of NUL bytes."""
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "r.run").write_bytes("q1 Q0 d1 1 2.0 r\n".encode("utf-16"))
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    assert main(["evaluate", "--run", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "q.txt")]) == 2
    assert (
        "not UTF-8 text (byte 0xff): is it a TREC run file? It is UTF-16 text: convert it first, e.g. iconv -f utf-16"
        in capsys.readouterr().err
    )
    _toy_files(tmp_path)
    (tmp_path / "c.tsv").write_bytes("d1\tquick brown fox\n".encode("utf-16"))
    dataset = pse.datasets.get(f"files:{tmp_path / 'c.tsv'},{tmp_path / 't.tsv'},{tmp_path / 'q.txt'}")
    with pytest.raises(
        ValueError,
        match=r"c\.tsv.*not UTF-8 text .*it is UTF-16 text: convert it first, e\.g\. iconv -f utf-16",
    ):
        list(dataset.get_corpus_iter())


def test_a_path_where_an_index_goes_names_the_index_to_pass(tmp_path):
    """indexer("path") had failed with "'str' object has no attribute 'path'", retriever("path") with '... 'encoder''."""
    path = str(tmp_path / "index")
    expected = rf"'{re.escape(path)}' is a path, not an index: pass pse\.SparseIndex\('{re.escape(path)}'\)"
    with pytest.raises(TypeError, match=expected):
        pse.BM25().indexer(path)
    with pytest.raises(TypeError, match=expected):
        pse.SparseIndexer(tmp_path / "index")
    pse.BM25().indexer(pse.SparseIndex(path), verbose=False).index([{"docno": "d1", "text": "fox"}])
    with pytest.raises(TypeError, match=expected):
        pse.BM25().retriever(path)
    with pytest.raises(TypeError, match=expected):
        pse.SparseRetriever(path)


def test_a_sharded_index_opened_without_its_shard_count_is_rebuilt_with_it(tmp_path):
    """pse.open_index(path) knows the shard count, yet indexer(mode="overwrite") had asked for it."""
    docs = [{"docno": f"d{i}", "text": f"fox w{i}"} for i in range(9)]
    pse.BM25().indexer(pse.ShardedIndex(tmp_path / "s", num_shards=3), verbose=False).index(docs)
    opened = pse.open_index(tmp_path / "s")
    pse.BM25().indexer(opened, mode="overwrite", verbose=False).index(docs[:6])
    again = pse.open_index(tmp_path / "s")
    assert again.num_shards == 3 and again.num_docs == 6
    with pytest.raises(ValueError, match=r"Say how many shards to build"):
        pse.BM25().indexer(pse.ShardedIndex(tmp_path / "new"), verbose=False).index(docs)


@pytest.mark.parametrize(
    "run, qrels, message",
    [
        (
            "qid Q0 docno rank score tag\nq1 Q0 d1 1 2.0 r\n",
            "q1 0 d1 1\n",
            "r.run, line 1: the score (5th column) 'score' is not a number; a header row? a TREC run file has none: remove it.",
        ),
        (
            "q1 Q0 d1 1 2.0 r\n",
            "qid iter docno rel\nq1 0 d1 1\n",
            "q.txt, line 1: the label (4th column) 'rel' must be an integer (of at most 18 digits); a header row? a TREC qrels file has none: remove it.",
        ),
        (
            "q1 Q0 d1 1 2.0 r\n",
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n",
            "q.txt, line 3: expected 3 columns like the first line: 'query-id corpus-id score' (BEIR TSV).",
        ),
        (
            "q1 Q0 d1 1 2.0 r\n",
            "q1 0 d1 1\nq1 Q0 d2 x\n",
            "q.txt, line 2: the label (4th column) 'x' must be an integer (of at most 18 digits).",
        ),
    ],
    ids=["run header", "qrels header", "beir row", "bad label"],
)
def test_a_header_row_in_a_trec_file_is_named_as_one(tmp_path, capsys, run, qrels, message):
    """A header row had been reported as a score or label that is not a number, with no hint; a BEIR row's error
    had cited TREC's 4-column layout."""
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "r.run").write_text(run)
    (tmp_path / "q.txt").write_text(qrels)
    assert main(["evaluate", "--run", str(tmp_path / "r.run"), "--qrels", str(tmp_path / "q.txt")]) == 2
    assert capsys.readouterr().err.strip().endswith(message)


def test_documents_without_text_fields_are_told_where_fields_go(tmp_path):
    """The message had said "pass fields=[...]", and indexer(index, fields=...) is a TypeError: the fields go to
    pse.BM25(fields=...), which the suggestion now names and which then indexes them."""
    docs = [{"docno": "d1", "body": "quick brown fox"}, {"docno": "d2", "body": "lazy dog"}]
    with pytest.raises(FieldError, match=r"name the fields to index, e\.g\. pse\.BM25\(fields=\['body'\]\)"):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "a"), verbose=False).index(docs)
    with pytest.raises(
        FieldError, match=r"no field\(s\) \['text'\]; available: .*pse\.BM25\(fields=\[\.\.\.\]\)"
    ):
        pse.BM25(fields=["text"]).indexer(pse.SparseIndex(tmp_path / "b"), verbose=False).index(docs)
    index = pse.BM25(fields=["body"]).indexer(pse.SparseIndex(tmp_path / "c"), verbose=False).index(docs)
    assert index.num_docs == 2 and "fox" in index.vocab


def test_an_index_whose_metadata_does_not_read_names_a_fix_that_works(tmp_path):
    """check-index had said 'rebuild it (mode="overwrite")', which refuses such a folder and points back to
    check-index."""
    import shutil

    path = tmp_path / "index"
    pse.BM25().indexer(pse.SparseIndex(path), verbose=False).index([{"docno": "d1", "text": "fox"}])
    (path / "pt_meta.json").write_text("")
    with pytest.raises(pse.IndexCorruptError, match=rf"remove {re.escape(str(path))} and build it again"):
        pse.SparseIndex(path).verify()
    with pytest.raises(FileExistsError, match="not a readable index of this package"):
        pse.BM25().indexer(pse.SparseIndex(path), mode="overwrite", verbose=False).index(
            [{"docno": "d1", "text": "fox"}]
        )
    shutil.rmtree(path)
    pse.BM25().indexer(pse.SparseIndex(path), verbose=False).index([{"docno": "d1", "text": "fox"}])
    pse.SparseIndex(path).verify()


def test_open_index_on_a_path_without_an_index_says_so(tmp_path):
    """It had returned an unbuilt handle, whose first use said 'Build one first' even for a file."""
    (tmp_path / "afile").write_text("")
    (tmp_path / "empty").mkdir()
    for name, what in (
        ("nothere", "not there"),
        ("afile", "a file of 0 bytes"),
        ("empty", "an empty folder"),
    ):
        with pytest.raises(FileNotFoundError, match=rf"No index at .*{name}: it is {what}\. Build one with"):
            pse.open_index(tmp_path / name)
    pse.BM25().indexer(pse.SparseIndex(tmp_path / "one"), verbose=False).index(
        [{"docno": "d1", "text": "fox"}]
    )
    assert isinstance(pse.open_index(tmp_path / "one"), pse.SparseIndex)


def _late_titles() -> list[dict[str, str]]:
    """30 documents without a title, then 7 with one: the first batch of 10 chooses 'text' alone."""
    early = [{"docno": f"d{i}", "text": f"word{i} common"} for i in range(30)]
    return early + [{"docno": f"e{i}", "title": "zebra", "text": "common"} for i in range(7)]


@pytest.mark.parametrize("fields", [None, ["text"], ["title", "text"], ["titel", "text"]])
def test_a_field_with_text_only_after_the_first_batch_is_named(tmp_path, model_dir, fields):
    """Fields are chosen from the first batch (README, "What is checked"); a default field whose text comes later
    had been dropped in silence. A field given that the first batch lacks is indexed from where it occurs (it had
    been refused, so the fix named here failed), and named if no document has it (a misspelling)."""
    docs = _late_titles()
    builds = {
        "bm25": lambda path: pse.BM25(fields=fields).indexer(
            pse.SparseIndex(path), batch_size=10, verbose=False
        ),
        "splade": lambda path: pse.Splade(model_dir, verbose=False).indexer(
            pse.SparseIndex(path), fields=fields, batch_size=10
        ),
    }
    expected = {
        None: [
            "7 of 37 documents have text in 'title', which is not indexed: the fields were chosen from the first "
            "batch ('text'), where no document has it. To index it, build again with fields=['title', 'text']."
        ],
        "titel": [
            "No document has text in the field 'titel' given in fields=['titel', 'text']: is it misspelt? The "
            "index holds the other field."
        ],
    }
    for name, make in builds.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            index = make(tmp_path / name).index(docs)
        said = [
            str(w.message) for w in caught if "not indexed" in str(w.message) or "misspelt" in str(w.message)
        ]
        assert said == expected.get(fields and fields[0], []), name
        if name == "bm25":
            found = sorted(pse.BM25(fields=fields).retriever(index).search("zebra")["docno"])
            assert found == ([f"e{i}" for i in range(7)] if fields == ["title", "text"] else []), fields


def test_results_as_json_are_strict_json(tmp_path):
    """A mean over no query is NaN, which json.dumps writes as NaN, not JSON: to_json gives None (null)."""
    import json

    result = pse.evaluate({"x": {"d": 1.0}}, {"q": {"d": 1}}, ["AP"], warn=False)
    assert np.isnan(result.aggregate["AP"])
    assert json.dumps(result.to_json(), allow_nan=False) == (
        '{"aggregate": {"AP": null}, "per_query": {"AP": {}}, "missing_queries": ["q"], "unjudged_queries": ["x"]}'
    )
    assert pse.measures.json_ready({"a": (np.float32("inf"), np.int64(3), [float("-inf"), 0.5])}) == {
        "a": [None, 3, [None, 0.5]]
    }


def test_int_query_ids_are_str_keys_in_an_evaluation():
    result = pse.evaluate({1: {"d": 1.0}, 2: {"d": 1.0}}, {1: {"d": 1}, 3: {"d": 1}}, ["AP"], warn=False)
    assert result.per_query == {"AP": {"1": 1.0}}
    assert (result.missing, result.unjudged) == (["3"], ["2"])


def test_exp_gain_refuses_labels_it_cannot_hold():
    from pyterrier_sparse_eval.measures import nDCG

    run = {"q": {"d1": 1.0, "d2": 2.0}}
    # labels 1023 (ranked second) and 1 (first), by hand: DCG = 1 + (2^1023 - 1) / log2(3), ideal (2^1023 - 1) + 1 /
    # log2(3)
    big = 2.0**1023 - 1
    expected = (1 + big / np.log2(3)) / (big + 1 / np.log2(3))
    got = pse.evaluate(run, {"q": {"d1": 1023, "d2": 1}}, [nDCG(gain="exp") @ 10]).aggregate
    assert list(got.values()) == [pytest.approx(expected, rel=1e-12)]
    # the label 2000 unretrieved: its ideal gain is what overflows (nDCG had been 0 here, NaN above)
    for ranked in (run, {"q": {"d2": 2.0}}):
        with pytest.raises(
            ValueError, match="overflows for the label 2000 of these qrels.*use gain='linear'"
        ):
            pse.evaluate(ranked, {"q": {"d1": 2000, "d2": 1}}, [nDCG(gain="exp") @ 10])


def test_crosscheck_refuses_labels_pytrec_eval_takes_minutes_on():
    run = {"q": {"d1": 1.0, "d2": 2.0}}
    assert pse.measures.crosscheck(run, {"q": {"d1": 10_000, "d2": 1}}, ["nDCG", "AP"]).ok
    for label in (10_001, 2**31, 2**40):
        with pytest.raises(ValueError, match="crosscheck takes labels up to 10,000.*pse.evaluate computes"):
            pse.measures.crosscheck(run, {"q": {"d1": label, "d2": 1}}, ["nDCG"])


def test_a_pool_file_that_is_not_text_is_not_a_pool(tmp_path):
    (tmp_path / "run.pkl").write_bytes(b"\x80\x04\x95binary")
    with pytest.raises(ValueError, match="is not a pool written by Pool.save"):
        sdm.Pool.load(tmp_path / "run.pkl")


def test_the_overlap_warning_of_topics_and_qrels_names_no_zero_count():
    from pyterrier_sparse_eval.datasets import align_topics_qrels

    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["a", "b"]})
    qrels = pd.DataFrame({"qid": ["1", "2", "3"], "docno": ["d"] * 3, "label": [1] * 3})
    with pytest.warns(UserWarning) as caught:
        align_topics_qrels(topics, qrels)
    assert [str(w.message) for w in caught] == [
        "evaluating 2 of 2 queries: 1 judged queries are not in the topics."
    ]


def test_an_index_written_into_a_sharded_index_is_refused(tmp_path):
    """mode="overwrite" on one shard's folder had replaced it, and the sharded index no longer opened."""
    docs = [{"docno": f"d{i}", "text": f"w{i} common"} for i in range(40)]
    sharded = pse.ShardedIndex(tmp_path / "sh", num_shards=2)
    pse.BM25().indexer(sharded, verbose=False, batch_size=10).index(docs)
    before = pse.BM25().retriever(pse.ShardedIndex(tmp_path / "sh")).search("common")
    for folder in ("shard-000", "new"):
        with pytest.raises(
            ValueError, match=f"{folder} lies in the sharded index .*sh: writing an index there"
        ):
            pse.BM25().indexer(
                pse.SparseIndex(tmp_path / "sh" / folder), mode="overwrite", verbose=False
            ).index(docs)
    assert sorted(os.listdir(tmp_path / "sh")) == ["pt_meta.json", "shard-000", "shard-001"]
    after = pse.BM25().retriever(pse.ShardedIndex(tmp_path / "sh")).search("common")
    pd.testing.assert_frame_equal(before, after)


def test_a_numeric_query_column_with_a_gap_is_searched_as_written(tmp_path):
    """pandas reads a column of whole numbers with a missing value as floats: the query 5 had been searched as
    the text "5.0", a token no document holds."""
    docs = [{"docno": "d1", "text": "5 apples"}, {"docno": "d2", "text": "pears"}]
    index = pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), verbose=False).index(docs)
    topics = pd.DataFrame({"qid": ["1", "2"], "query": [5.0, np.nan]})
    assert topics["query"].dtype == np.float64
    with pytest.warns(UserWarning, match="1 of 2 queries share no term"):
        run = pse.BM25().retriever(index).transform(topics)
    assert run[["qid", "docno"]].values.tolist() == [["1", "d1"]]


class _Recorded:
    """An index as a BM25 sees it when checking it: what it records of its build."""

    def __init__(self, analyzer: dict[str, Any]):
        self.encoder = {**pse.BM25().encoder_config(), "analyzer": analyzer}

    def __str__(self) -> str:
        return "SparseIndex('old')"


@pytest.mark.parametrize(
    "analyzer, refused",
    [
        ({"language": "ja", "version": 6, "chain": "entry-order"}, False),
        # built before Japanese ties were broken in Lucene's order (2026-12-02): its terms may differ
        ({"language": "ja", "version": 6}, True),
        # an earlier analyzer version's terms (U+1FBF1 joined to letters before version 5; Ⓜ+ZWJ+😀 split before 6)
        ({"language": "de", "version": 4}, True),
        ({"language": "de", "version": 5}, True),
        ({"language": "de", "version": 6}, False),
        # Arabic without its mark is still searched: queries are analysed as before (README)
        ({"language": "ar", "version": 6}, False),
    ],
)
def test_a_bm25_refuses_an_index_of_another_analysis(analyzer, refused):
    """The version and the chain mark an index records had been dropped when a BM25 checked it, so an index of
    an earlier analysis was searched with today's queries in silence (the command line's cache alone told)."""
    bm25 = pse.BM25(language=analyzer["language"])
    if not refused:
        bm25.check_index(_Recorded(analyzer))
        return
    with pytest.raises(ValueError) as caught:
        bm25.check_index(_Recorded(analyzer))
    said = str(caught.value)
    assert (
        f"SparseIndex('old') was built with BM25(k1=0.9, b=0.4, lucene scores, lucene-byte lengths, analyzer={analyzer})"
        in said
    )
    assert f"rebuild it with BM25(k1=0.9, b=0.4, language='{analyzer['language']}')" in said


@pytest.mark.parametrize("sharded", [False, True])
def test_a_handle_of_a_relative_path_still_finds_its_index_after_a_chdir(tmp_path, monkeypatch, sharded):
    """A notebook's os.chdir had made a relative handle "rebuilt (or removed)", with nothing done to the index: a
    handle now holds its folder absolutely from the moment it is made (and "~" is the home folder)."""
    monkeypatch.chdir(tmp_path)
    docs = [{"docno": "d1", "text": "quick fox"}, {"docno": "d2", "text": "lazy dog"}]
    handle = pse.ShardedIndex("rel", num_shards=2) if sharded else pse.SparseIndex("rel")
    assert str(handle.path) == str(tmp_path / "rel")
    index = pse.BM25().indexer(handle, verbose=False).index(docs)
    retriever = pse.BM25().retriever(index)
    assert retriever.search("fox")["docno"].tolist() == ["d1"]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert retriever.search("fox")["docno"].tolist() == ["d1"]
    assert not (tmp_path / "elsewhere" / "rel").exists()
    # opened again from elsewhere by the home-relative name
    monkeypatch.setenv("HOME", str(tmp_path))
    again = pse.open_index("~/rel")
    assert str(again.path) == str(tmp_path / "rel")
    assert pse.BM25().retriever(again).search("fox")["docno"].tolist() == ["d1"]


def test_a_system_that_retrieves_nothing_at_all_is_named(tmp_path, capsys):
    """Every query retrieving nothing had stopped the command with pt.Experiment's "1 topics, but no results
    received from SparseRetriever(...)"."""
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "c.tsv").write_text("d1\tquick brown fox\nd2\tlazy dog\n")
    (tmp_path / "t.tsv").write_text("q1\tzebra\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    files = [
        f"--{n}={tmp_path / f}" for n, f in (("corpus", "c.tsv"), ("topics", "t.tsv"), ("qrels", "q.txt"))
    ]
    assert main(["experiment", *files, "--index-dir", str(tmp_path / "idx"), "--quiet"]) == 2
    said = capsys.readouterr().err
    assert "A system retrieved no document for any of the 1 topics, so there is nothing to evaluate" in said
