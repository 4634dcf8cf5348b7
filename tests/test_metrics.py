import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import pytrec_eval
from conftest import needs_data
from ir_measures import AP, ERR, RR, Judged, P, R, Rprec, Success, nDCG

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.measures import _metrics as M
from pyterrier_sparse_eval.measures import prepare

PM = pse.measures


def _ranked(labels):
    """One query whose ranking holds documents with these labels, in this order."""
    run = {"q": {f"d{i}": float(len(labels) - i) for i in range(len(labels))}}
    qrels = {"q": {f"d{i}": lab for i, lab in enumerate(labels)}}
    return prepare(run, qrels)


def test_seed_worked_examples_with_linear_gain():
    # values worked from the definitions: sum gain_i / log2(i + 1); exact, not the seed's rounded 0.9694 / 0.9664
    assert M.dcg(_ranked([5, 2, 4, 0, 1]), 5)[0] == pytest.approx(8.6487, abs=5e-5)
    assert M.dcg(_ranked([2, 0, 5, 1, 4]), 5)[0] == pytest.approx(6.4781, abs=5e-5)
    assert M.ndcg(_ranked([5, 2, 4]), 3)[0] == pytest.approx(0.96928, abs=5e-6)
    assert M.ndcg(_ranked([5, 2, 4, 0, 1]), 5)[0] == pytest.approx(0.96586, abs=5e-6)


def test_exponential_gain_worked_by_hand():
    # [5,2,4]: gains 31, 3, 15. DCG = 31 + 3/log2(3) + 15/2 = 40.39279; ideal [5,4,2]: 31 + 15/log2(3) + 3/2 = 41.96395
    assert M.ndcg(_ranked([5, 2, 4]), 3, gain="exp")[0] == pytest.approx(
        40.39279 / 41.96395, abs=1e-6
    )  # 0.96256
    # [5,2,4,0,1]: 31 + 1.89279 + 7.5 + 0 + 1/log2(6) = 40.77964; ideal [5,4,2,1,0]: 31 + 9.46395 + 1.5 + 1/log2(5) = 42.39462
    assert M.ndcg(_ranked([5, 2, 4, 0, 1]), 5, gain="exp")[0] == pytest.approx(
        40.77964 / 42.39462, abs=1e-6
    )  # 0.96191
    with pytest.raises(ValueError, match="gain must be one of"):
        M.ndcg(_ranked([1]), 1, gain="cubic")


def test_rank_column_and_row_order_are_ignored():
    rows = [("q", "a", 1.0, 5), ("q", "b", 3.0, 0), ("q", "c", 3.0, 9), ("q", "d", 2.0, 1)]
    run = pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"]).sample(frac=1, random_state=3)
    qrels = pd.DataFrame([("q", "b", 1)], columns=["qid", "docno", "label"])
    # trec_eval order: c (3.0), b (3.0; 'c' > 'b' so c first), d, a -> the relevant b is at rank 2
    assert pse.evaluate(run, qrels, ["RR"]).aggregate["RR"] == 0.5


def test_negatives_and_zero_labels_are_never_relevant():
    run = {"q": {"neg": 3.0, "zero": 2.0, "pos": 1.0}}
    qrels = {"q": {"neg": -1, "zero": 0, "pos": 1}}
    res = pse.evaluate(run, qrels, ["R@2", "P@2", "nDCG@2", "Judged@2", "RR"]).aggregate
    assert res == {"R@2": 0.0, "P@2": 0.0, "nDCG@2": 0.0, "Judged@2": 1.0, "RR": 1 / 3}


def test_int_and_str_ids_are_detected_with_the_fix():
    with pytest.raises(TypeError, match=r"astype\(str\)"):
        pse.evaluate({1: {"a": 1.0}}, {"1": {"a": 1}}, ["AP"])
    with pytest.raises(TypeError, match="docno types differ"):
        pse.evaluate({"1": {7: 1.0}}, {"1": {"7": 1}}, ["AP"])


def test_wrong_split_warns_with_overlap_counts():
    with pytest.warns(UserWarning, match=r"evaluating 0 of 2 judged queries.*same split"):
        res = pse.evaluate({"9": {"a": 1.0}}, {"1": {"a": 1}, "2": {"a": 1}}, ["AP"])
    assert math.isnan(res.aggregate["AP"]) and res.missing == ["1", "2"] and res.unjudged == ["9"]


def test_relevance_thresholds_and_the_last_of_two_judgments_equal_pytrec_eval():
    """pse.evaluate applies each measure's rel= (pytrec_eval's relevance_level), and of a document judged twice
    the last judgment, as its warning says (a run over qrels of dicts, as the property tests build, has none)."""
    import pytrec_eval

    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}}
    got = pse.evaluate(run, qrels, ["P(rel=2)@2", "AP(rel=2)", "R(rel=2)@1", "P@2", "AP"]).aggregate
    at2 = pytrec_eval.RelevanceEvaluator(qrels, {"P_2", "map", "recall_1"}, relevance_level=2).evaluate(run)[
        "q1"
    ]
    at1 = pytrec_eval.RelevanceEvaluator(qrels, {"P_2", "map"}).evaluate(run)["q1"]
    assert got == pytest.approx(
        {"P(rel=2)@2": at2["P_2"], "AP(rel=2)": at2["map"], "R(rel=2)@1": at2["recall_1"], "P@2": at1["P_2"],
         "AP": at1["map"]},
        abs=1e-12,
    )  # fmt: skip
    assert got["P(rel=2)@2"] == 0.5 and got["R(rel=2)@1"] == 0.0  # (pytrec_eval's, with rel=1: 1.0 and 0.5)
    twice = pd.DataFrame({"qid": ["q1"] * 3, "docno": ["a", "a", "b"], "label": [0, 1, 0]})
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    with pytest.warns(UserWarning, match="the last judgment is used"):
        got = pse.evaluate(frame, twice, ["nDCG@10", "AP", "RR"]).aggregate
    last = {"q1": {"a": 1, "b": 0}}
    ref = pytrec_eval.RelevanceEvaluator(last, {"ndcg_cut_10", "map", "recip_rank"}).evaluate(
        {"q1": {"a": 2.0, "b": 1.0}}
    )["q1"]
    assert got == pytest.approx({"nDCG@10": ref["ndcg_cut_10"], "AP": ref["map"], "RR": ref["recip_rank"]})
    assert got["AP"] == 1.0


def test_missing_queries_count_as_zero_when_asked():
    run, qrels = {"1": {"a": 1.0}}, {"1": {"a": 1}, "2": {"b": 1}}
    with pytest.warns(UserWarning, match="evaluating 1 of 2"):
        assert pse.evaluate(run, qrels, ["AP"]).aggregate["AP"] == 1.0
    # counted, so not "evaluating 1 of 2" (the mean is over both)
    with pytest.warns(
        UserWarning, match=r"^1 of 2 judged queries have no results in the run \(counted as 0\)"
    ):
        assert pse.evaluate(run, qrels, ["AP"], missing_as_zero=True).aggregate["AP"] == 0.5


def test_evaluate_retrieval_takes_the_seed_shapes():
    retrieved = {"q1": [("d1", 0.1), ("d2", 0.9), ("d3", 0.5)], "q2": [("d9", 1.0)]}
    qrels = {"q1": {"d1": 1, "d3": 2, "d4": 0}, "q2": {"d9": 1}}
    out = pse.evaluate_retrieval(retrieved, qrels, k_values=[1, 3])
    assert set(out) == {"nDCG@1", "Recall@1", "P@1", "nDCG@3", "Recall@3", "P@3", "MAP", "MRR"}
    # q1 ranking d2, d3, d1: RR 1/2; q2: 1 -> MRR 0.75. AP q1 = (1/2 + 2/3) / 2; q2 = 1
    assert out["MRR"] == pytest.approx(0.75)
    assert out["MAP"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1) / 2)
    assert out["Recall@1"] == pytest.approx(0.5)


def test_unsupported_measure_parameters_are_refused():
    with pytest.raises(ValueError, match="not supported in-house"):
        pse.evaluate({"q": {"a": 1.0}}, {"q": {"a": 1}}, [nDCG(gains={0: 0, 1: 5}) @ 10])
    with pytest.raises(ValueError, match="Unknown measure"):
        pse.evaluate({"q": {"a": 1.0}}, {"q": {"a": 1}}, ["nDCGx@10"])


def test_measure_names_parse_back():
    for m in (PM.nDCG @ 10, PM.nDCG(gain="exp") @ 10, PM.P(rel=2) @ 5, PM.AP, PM.Judged @ 10):
        assert PM.by_name(str(m)) == m


@needs_data
def test_inside_pt_experiment_columns_are_identical(scifact, scifact_bm25_index):
    topics, qrels = pse.datasets.get_topics(scifact), pse.datasets.get_qrels(scifact)
    pairs = [
        (nDCG @ 10, PM.nDCG @ 10),
        (R @ 100, PM.R @ 100),
        (AP, PM.AP),
        (AP @ 100, PM.AP @ 100),
        (RR, PM.RR),
        (RR @ 10, PM.RR @ 10),
        (P @ 5, PM.P @ 5),
        (Rprec, PM.Rprec),
        (Success @ 10, PM.Success @ 10),
        (Judged @ 10, PM.Judged @ 10),
        (nDCG, PM.nDCG),
    ]
    systems = [
        pse.BM25().retriever(scifact_bm25_index),
        pse.BM25().retriever(scifact_bm25_index, num_results=20),
    ]
    measures = [m for pair in pairs for m in pair]
    res = pt.Experiment(systems, topics, qrels, measures, names=["a", "b"], baseline=0)
    for std, ours in pairs:
        np.testing.assert_allclose(res[str(ours)], res[str(std)], rtol=0, atol=1e-12)
        assert f"{ours} p-value" in res.columns
    perq = pt.Experiment(systems[:1], topics, qrels, measures, perquery=True)
    wide = perq.pivot_table(index="qid", columns="measure", values="value")
    for std, ours in pairs:
        np.testing.assert_allclose(wide[str(ours)], wide[str(std)], rtol=0, atol=1e-12)


@needs_data
def test_experiment_with_crosscheck_option(scifact, scifact_bm25_index):
    topics, qrels = pse.datasets.get_topics(scifact), pse.datasets.get_qrels(scifact)
    res = pse.Experiment(
        [pse.BM25().retriever(scifact_bm25_index)],
        topics,
        qrels,
        [nDCG @ 10, PM.AP, "R@100"],
        crosscheck=True,
        names=["bm25"],
    )
    assert res.loc[0, "nDCG@10"] == pytest.approx(0.6789, abs=5e-5)  # Anserini's run on these files: 0.6789


def test_experiment_crosscheck_that_compares_nothing_says_why():
    """pse.Experiment(crosscheck=True) with int-qid qrels gives the cross-check's own cast hint, and with qrels of
    other queries says it compared nothing (both had raised "values differ" above a table of "ok" rows)."""
    run = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["x", "y"]})
    qrels = pd.DataFrame({"qid": [1, 2], "docno": ["a", "a"], "label": [1, 1]})
    with pytest.raises(TypeError, match="astype"):
        pse.Experiment([run], topics, qrels, ["nDCG@10"], crosscheck=True)
    other = qrels.assign(qid=["8", "9"])
    with pytest.raises(ValueError, match="compared nothing for run0: no query of its run has judgments"):
        pse.Experiment([run], topics, other, ["nDCG@10"], crosscheck=True)


def test_experiment_perquery_both_means_are_the_judged_queries_whatever_the_route():
    """pt.Experiment's perquery="both" (PyTerrier 1.1.2) averages per-query values in which a topic without
    judgments is NaN: pse.Experiment had handed it one system, dataframe=False or highlight= (every mean NaN;
    highlight without a baseline: an AttributeError), and left per-query values unrounded with round=."""
    import pytrec_eval

    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["a", "b", "c"]})  # query 3 has no judgments
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["d1", "d2", "d3"], "label": [1, 2, 1]})
    run = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2", "3"],
            "docno": ["d2", "d9", "d9", "d3", "d1"],
            "score": [3.0, 2, 5, 4, 1],
        }
    )
    other = run.assign(score=run["score"].to_numpy()[::-1])
    judged = {"1": {"d1": 1, "d2": 2}, "2": {"d3": 1}}
    expected = [
        np.mean([v["map"] for v in pytrec_eval.RelevanceEvaluator(judged, {"map"}).evaluate(r).values()])
        for r in ({q: dict(zip(g.docno, g.score)) for q, g in frame.groupby("qid")} for frame in (run, other))
    ]
    table, per_query = pse.Experiment([run], topics, qrels, [AP], names=["r"], perquery="both")
    assert table["AP"].tolist() == pytest.approx(expected[:1]) and len(per_query) == 3
    means, _ = pse.Experiment(
        [run, other], topics, qrels, [AP], names=["r", "o"], perquery="both", dataframe=False
    )
    assert [means["r"]["AP"], means["o"]["AP"]] == pytest.approx(expected)
    styled, _ = pse.Experiment(
        [run, other], topics, qrels, [AP], names=["r", "o"], perquery="both", highlight="bold"
    )
    assert styled.data["AP"].tolist() == pytest.approx(expected)
    _, rounded = pse.Experiment(
        [run, other], topics, qrels, [nDCG @ 10], names=["r", "o"], perquery="both", round=3
    )
    assert rounded["value"].dropna().tolist() == [round(v, 3) for v in rounded["value"].dropna()]
    assert (rounded["value"].dropna() != rounded["value"].dropna().round(2)).any()  # something to round
    with pytest.raises(ValueError, match="perquery='both' for both"):  # pt's bare AssertionError
        pse.Experiment([run, other], topics, qrels, [AP], perquery=True, baseline=0)


def test_experiment_filters_as_pt_does_before_computing_runs_itself():
    """perquery="both" computes the runs here: they had been run on every topic, pt's filter_by_qrels=True left
    out (an unjudged topic reached gdeval, or, retrieving nothing in its batch, was refused); labels of queries not
    evaluated (a NaN) had refused the experiment; mrt with a baseline had been pt's bare AssertionError."""
    topics = pd.DataFrame(
        {"qid": ["1", "2", "abc"], "query": ["cats", "dogs", "birds"]}
    )  # 'abc' is not judged
    qrels = pd.DataFrame({"qid": ["1", "2", "9"], "docno": ["d1", "d3", "d1"], "label": [1.0, 2.0, np.nan]})

    def search(t):
        rows = [(q, d, s) for q in t["qid"] if q != "abc" for d, s in (("d1", 2.0), ("d3", 1.0))]
        return pd.DataFrame(rows, columns=["qid", "docno", "score"]).merge(t[["qid", "query"]])

    system = pt.apply.generic(search)
    # q1: d1 (label 1) first: 1/16; q2: d1 unjudged, then d3 (label 2): 3/16 / 2 (gdeval's grades of at most 4)
    err = (1 / 16 + 3 / 16 / 2) / 2
    for options in ({}, {"batch_size": 1}):
        table, per_query = pse.Experiment(
            [system], topics, qrels, [ERR @ 10, AP, PM.AP], filter_by_qrels=True, perquery="both", **options
        )
        assert table[["ERR@10", "AP", "pse.AP"]].values.tolist() == [pytest.approx([err, 0.75, 0.75])]
        assert set(per_query["qid"]) == {"1", "2"}
    with pytest.raises(ValueError, match="mrt .* cannot be measured there"):
        pse.Experiment([system, system], topics, qrels, [AP, "mrt"], perquery="both", baseline=0)
    with pytest.raises(ValueError, match="perquery='both' for both"):
        pse.Experiment([system, system], topics, qrels, [AP], perquery=1, baseline=0)


def test_gdeval_measures_refuse_ids_it_would_merge_in_runs_and_as_numbers():
    """gdeval reads ids as numbers ('01' is '1') and reads a run's own query ids too: a run frame's 'x-1' was folded
    into query 1 (ERR@10 0.0547 for 0.0781)."""
    topics = pd.DataFrame({"qid": ["1", "01"], "query": ["a", "b"]})
    qrels = pd.DataFrame({"qid": ["1", "01"], "docno": ["d1", "d1"], "label": [1, 1]})
    run = pd.DataFrame({"qid": ["1", "01"], "docno": ["d1", "d2"], "score": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"gdeval.*as numbers.*\['1', '01'\]"):
        pse.Experiment([run], topics, qrels, [ERR @ 10])
    topics, qrels = topics.assign(qid=["1", "2"]), qrels.assign(qid=["1", "2"])
    extra = pd.concat(
        [run.assign(qid=["1", "2"]), pd.DataFrame({"qid": ["x-1"], "docno": ["d1"], "score": [9.0]})]
    )
    with pytest.raises(ValueError, match=r"gdeval.*\['x-1'\]"):
        pse.Experiment([extra], topics, qrels, [ERR @ 10])
    assert pse.Experiment([extra], topics, qrels, [AP])["AP"].tolist() == [pytest.approx(0.5)]  # not gdeval's


def test_experiment_reads_whole_labels_given_as_floats_or_text():
    """Labels read from a CSV (1.0, "1", pandas' nullable Int64) were refused by pytrec_eval under any standard
    measure ("Expected relevance to be integer") while the in-house ones took them; a fractional one is refused
    naming its row."""
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["a", "b"]})
    run = pd.DataFrame(
        {"qid": ["1", "1", "2", "2"], "docno": ["d1", "d9", "d9", "d3"], "score": [3.0, 2, 5, 4]}
    )
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["d1", "d3"], "label": [1, 2]})
    expected = pse.Experiment([run], topics, qrels, [AP, nDCG @ 10, PM.AP])
    for labels in ([1.0, 2.0], ["1", "2"], ["1.0", "+2"], pd.array([1, 2], dtype="Int64")):
        table = pse.Experiment([run], topics, qrels.assign(label=labels), [AP, nDCG @ 10, PM.AP])
        pd.testing.assert_frame_equal(table, expected)
    with pytest.raises(
        ValueError, match=r"Qrels row 1 \(qid '2', docno 'd3'\) has label 1.5: labels must be integers"
    ):
        pse.Experiment([run], topics, qrels.assign(label=[1, 1.5]), [AP])


@pytest.mark.parametrize("options", [{"crosscheck": True}, {"perquery": "both", "baseline": 0}])
def test_experiment_computing_runs_itself_keeps_save_dir_and_batch_size(tmp_path, options):
    """On the paths where pse.Experiment computes each run once itself, save_dir= saves it as pt.Experiment does
    (<name>.res.gz) and save_mode="reuse" reads it back instead of calling the system; batch_size= retrieves in
    batches (all three had been dropped without a word)."""
    run = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "3"],
            "docno": ["a", "b", "a", "c"],
            "score": [2.0, 1.0, 1.0, 3.0],
            "rank": [0, 1, 0, 0],
        }
    )
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["x", "y", "z"]})
    qrels = pd.DataFrame({"qid": ["1", "2", "3"], "docno": ["a", "b", "c"], "label": [1, 1, 1]})
    calls = []
    system = pt.apply.generic(lambda f: calls.append(len(f)) or f) >> pt.Transformer.from_df(run)
    systems, names = [system, system], ["s1", "s2"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pt had warned "Evaluation measures differ" at its second call
        first = pse.Experiment(
            systems, topics, qrels, ["nDCG@10"], names=names, save_dir=tmp_path, batch_size=2, **options
        )
    assert calls == [2, 1, 2, 1]  # batches of 2 and 1 topics, one pass per system
    if "baseline" in options:  # the summary on disk is the table returned, its tests included (had been lost)
        saved = pd.read_csv(tmp_path / "aggregated.csv")
        assert list(saved.columns) == list(first[0].columns)
        assert saved["nDCG@10"].tolist() == pytest.approx(first[0]["nDCG@10"].tolist(), abs=1e-12)
    assert {p.name for p in tmp_path.glob("*.res.gz")} == {"s1.res.gz", "s2.res.gz"}
    calls.clear()
    again = pse.Experiment(
        systems, topics, qrels, ["nDCG@10"], names=names, save_dir=tmp_path, save_mode="reuse", **options
    )
    assert calls == []
    if "baseline" in options:  # (table, per-query frame)
        first, again = first[0], again[0]
    pd.testing.assert_frame_equal(first, again)


def test_experiment_computing_runs_itself_evaluates_the_frames_given(tmp_path):
    """A run given as a frame is what is evaluated, whatever save_dir holds under its name (an older run file had
    been evaluated instead, under every save_mode), and the file then holds it; names pt.Experiment would refuse
    with save_dir are refused before any run (they had been written as paths), as is an unknown save_mode."""
    good = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0], "rank": [0]})
    stale = good.assign(docno="b")
    topics = pd.DataFrame({"qid": ["1"], "query": ["x"]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]})
    pt.io.write_results(stale, str(tmp_path / "run0.res.gz"))
    with pytest.warns(UserWarning, match="run0.res.gz exists and is written over"):
        table = pse.Experiment([good], topics, qrels, ["RR"], crosscheck=True, save_dir=tmp_path)
    assert table.loc[0, "RR"] == 1.0
    assert pt.io.read_results(str(tmp_path / "run0.res.gz"))["docno"].tolist() == ["a"]
    calls = []
    system = pt.apply.generic(lambda f: calls.append(1) or f) >> pt.Transformer.from_df(good)
    for names, message in ((["../x"], "hold characters a file name cannot"), (["s", "s"], "not unique")):
        with pytest.raises(ValueError, match=message):
            pse.Experiment(
                [system] * len(names), topics, qrels, ["RR"], names=names, crosscheck=True, save_dir=tmp_path
            )
    with pytest.raises(ValueError, match="save_mode='reus'"):
        pse.Experiment(
            [system], topics, qrels, ["RR"], names=["s"], crosscheck=True, save_dir=tmp_path, save_mode="reus"
        )
    assert calls == [] and not (tmp_path.parent / "x.res.gz").exists()
    for measures in (["map"], ["pse.Judged@5", "pse.nDCG(gain='exp')@10"]):  # the second: no trec_eval twin
        with pytest.warns(
            UserWarning, match="no requested measure is computed both in-house and by trec_eval"
        ):
            pse.Experiment([good], topics, qrels, measures, crosscheck=True)
    # a frame without ranks is saved with them (write_results needs them); names are one per system
    unranked = good.drop(columns="rank")
    table = pse.Experiment([unranked], topics, qrels, ["RR"], names=["u"], crosscheck=True, save_dir=tmp_path)
    assert table.loc[0, "RR"] == 1.0 and (tmp_path / "u.res.gz").exists()
    with pytest.raises(ValueError, match="1 names for 2 systems"):
        pse.Experiment([good, good], topics, qrels, ["RR"], names=["one"], crosscheck=True)


@pytest.fixture
def trec_files(tmp_path):
    rng = np.random.default_rng(5)
    run_lines, qrel_lines = [], []
    for q in range(40):
        for i, d in enumerate(rng.choice(60, size=30, replace=False)):
            run_lines.append(f"{q} Q0 doc{d} {i} {float(rng.integers(0, 6))} sys")
        for d in rng.choice(60, size=8, replace=False):
            qrel_lines.append(f"{q} 0 doc{d} {int(rng.integers(-1, 3))}")
    (tmp_path / "x.run").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "x.qrels").write_text("\n".join(qrel_lines) + "\n")
    return tmp_path / "x.run", tmp_path / "x.qrels"


def test_cli_evaluate_json(trec_files, tmp_path, capsys):
    run, qrels = trec_files
    out = tmp_path / "e.json"
    assert (
        main(
            [
                "evaluate",
                "--run",
                str(run),
                "--qrels",
                str(qrels),
                "--metric",
                "AP",
                "--metric",
                "nDCG@10",
                "--per-query",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert set(data["aggregate"]) == {"AP", "nDCG@10"}
    assert len(data["per_query"]["AP"]) == 40
    assert data["aggregate"]["AP"] == pytest.approx(np.mean(list(data["per_query"]["AP"].values())))


def test_cli_crosscheck_agrees(trec_files, capsys):
    run, qrels = trec_files
    metrics = [
        "nDCG@10",
        "nDCG",
        "R@10",
        "P@5",
        "AP",
        "AP@10",
        "RR",
        "RR@3",
        "Rprec",
        "Success@5",
        "Judged@10",
        "pse.nDCG(gain=exp)@10",
    ]
    args = ["crosscheck", "--run", str(run), "--qrels", str(qrels)] + [
        a for m in metrics for a in ("--metric", m)
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "all measures agree" in out
    # a column per field however long a measure's name (pse.nDCG(gain='exp')@10 is 23 characters)
    table = [
        line
        for line in out.splitlines()
        if line.split()[0] in {"measure", *metrics, "pse.nDCG(gain='exp')@10"}
    ]
    assert len(table) == len(metrics) + 1
    assert len({line.index(line.split()[1], len(line.split()[0])) for line in table}) == 1, table


def test_cli_crosscheck_reports_a_disagreement(trec_files, capsys, monkeypatch):
    ap = type(PM.AP)
    real = ap.values
    monkeypatch.setattr(ap, "values", lambda self, j: real(self, j) + 1e-6)  # an in-house bug, simulated
    run, qrels = trec_files
    assert main(["crosscheck", "--run", str(run), "--qrels", str(qrels), "--metric", "AP"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREEMENT" in out and "qid 0:" in out


@pytest.mark.parametrize(
    "run, qrels, message",
    [
        ("1 Q0 d 1\n", "1 0 d 1\n", "expected 6 columns"),
        ("1 Q0 d 1 0.5 t extra\n", "1 0 d 1\n", "expected 6 columns"),
        ("1 Q0 d 1 0.5 t\n2 Q0 d 1 0.5 t extra\n", "1 0 d 1\n", "expected 6 columns"),
        ("1 Q0 d 1 nan t\n", "1 0 d 1\n", "'nan' is NaN, which trec_eval cannot rank"),
        ("1 Q0 d 1 high t\n", "1 0 d 1\n", "'high' is not a number"),
        ("1 Q0 d 1 0.5 t\n", "1 0 d\n", "expected 4 columns"),
        ("1 Q0 d 1 0.5 t\n", "1 0 d yes\n", "'yes' must be an integer"),
        ("1 Q0 d 1 0.5 t\n", "1 0 d 0.5\n", "'0.5' must be an integer"),
        ("1 Q0 d 1 0.5 t\n", "", "is empty"),
        (None, "1 0 d 1\n", "not found"),
    ],
)
def test_cli_bad_files(tmp_path, capsys, run, qrels, message):
    if run is not None:
        (tmp_path / "x.run").write_text(run)
    (tmp_path / "q").write_text(qrels)
    for command in ("evaluate", "crosscheck"):
        assert main([command, "--run", str(tmp_path / "x.run"), "--qrels", str(tmp_path / "q")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err


def test_cli_reads_runs_as_trec_eval_does(tmp_path, capsys):
    """The rank column is ignored and ids and tags are kept as written ("007", "NA"), as trec_eval reads them."""
    (tmp_path / "x.run").write_text("007 Q0 NA - 2.0 null\n007 Q0 d2 x 1.0 NA\n")
    (tmp_path / "q").write_text("007 0 NA 1\n007 0 d2 0\n")
    assert (
        main(["evaluate", "--run", str(tmp_path / "x.run"), "--qrels", str(tmp_path / "q"), "--metric", "RR"])
        == 0
    )
    assert "RR  all  1.0000" in capsys.readouterr().out


def test_experiment_names_a_mistyped_measure_s_fix():
    """A measure name neither this package nor ir_measures reads gets the package's error naming the fix (it had
    been pt's "unkonwn measure"); trec_eval's names and pt's mrt still reach pt.Experiment, which reads them."""
    run = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["x", "y"]})
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["b", "a"], "label": [1, 1]})
    for name, message in (
        ("pse.ndcg@10", "did you mean 'pse.nDCG@10'"),
        ("pse.nDCG@0", "cut-off k must be >= 1"),
        ("pse.AP(rel=0)", "rel must be >= 1"),
        ("nDCG(rel=2)@10", "nDCG takes no parameter"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)):
            pse.Experiment([run], topics, qrels, [name], names=["r"])
    with pytest.raises(ValueError, match="known trec name gm_map, but not yet supported"):  # pt's own word
        pse.Experiment([run], topics, qrels, ["gm_map"], names=["r"])
    table = pse.Experiment([run], topics, qrels, ["map", "ndcg_cut_10", "mrt"], names=["r"])
    # independent: by hand, query 1's relevant document at rank 2 (AP 1/2), query 2's at rank 1 (AP 1)
    assert table["map"].iloc[0] == pytest.approx(0.75, abs=1e-12) and "mrt" in table.columns


def test_in_house_measures_in_pt_experiment_say_lacking_queries_count_as_zero():
    """pt.Experiment counts a judged query the run lacks as 0 (trec_eval -c), pse.evaluate leaves it out: the
    in-house measures say which rule gave their number, once per run whatever the number of measures."""
    run = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "b"], "score": [2.0, 1.0, 1.0]})
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["x", "y", "z"]})
    qrels = pd.DataFrame({"qid": ["1", "2", "3"], "docno": ["b", "b", "c"], "label": [1, 1, 1]})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = pt.Experiment([run], topics, qrels, [PM.AP, PM.RR, AP], names=["r"])
    said = [str(w.message) for w in seen if "no results in the run" in str(w.message)]
    assert said == [
        "1 of 3 judged queries have no results in the run (e.g. 3): each counts as 0, as trec_eval -c counts "
        "them (pse.evaluate leaves them out unless missing_as_zero=True)."
    ]
    # by hand: AP 1/2 and 1 for queries 1 and 2, 0 for 3 (trec_eval -c); pytrec_eval's AP, the standard column
    assert table["pse.AP"].iloc[0] == pytest.approx(0.5, abs=1e-12) == table["AP"].iloc[0]
    with pytest.warns(UserWarning, match="evaluating 2 of 3 judged queries"):
        assert pse.evaluate(run, qrels, ["AP"]).aggregate["AP"] == pytest.approx(0.75, abs=1e-12)
    with warnings.catch_warnings(record=True) as seen:  # once too when pse.Experiment evaluates the run twice
        warnings.simplefilter("always")
        pse.Experiment([run, run], topics, qrels, [PM.AP], names=["r", "s"], baseline=0, perquery="both")
    assert len([w for w in seen if "no results in the run" in str(w.message)]) == 2  # one per system


def test_experiment_both_per_query_and_significance_from_one_set_of_runs():
    """pse.Experiment(perquery="both", baseline=...) equals pt.Experiment's table and its per-query frame,
    which pt.Experiment cannot return together; each system's run is computed once."""
    import pyterrier as pt

    rng = np.random.default_rng(3)
    qrels = pd.DataFrame(
        [(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for q in range(12) for d in range(8)],
        columns=["qid", "docno", "label"],
    )
    topics = pd.DataFrame({"qid": [f"q{q}" for q in range(12)], "query": ["x"] * 12})
    calls = []

    def system(seed: int) -> pt.Transformer:
        def run(frame: pd.DataFrame) -> pd.DataFrame:
            calls.append(seed)
            r = np.random.default_rng(seed)
            rows = [(q, f"d{d}", float(r.random())) for q in frame["qid"] for d in range(8)]
            return pd.DataFrame(rows, columns=["qid", "docno", "score"])

        return pt.apply.generic(run)

    systems, measures = [system(1), system(2)], [nDCG @ 5, AP, PM.AP]
    table, per_query = pse.Experiment(
        systems, topics, qrels, measures, names=["a", "b"], baseline=0, perquery="both"
    )
    assert calls == [1, 2]
    expected = pt.Experiment(systems, topics, qrels, measures, names=["a", "b"], baseline=0)
    # the same table, with the columns in the order the measures were given (pt.Experiment sorts them)
    assert list(table.columns[:5]) == ["name", "nDCG@5", "nDCG@5 +", "nDCG@5 -", "nDCG@5 p-value"]
    assert list(table.columns[5:9]) == ["AP", "AP +", "AP -", "AP p-value"]
    assert sorted(table.columns) == sorted(expected.columns)
    pd.testing.assert_frame_equal(table, expected[table.columns])
    expected_pq = pt.Experiment(systems, topics, qrels, measures, names=["a", "b"], perquery=True)
    pd.testing.assert_frame_equal(per_query.reset_index(drop=True), expected_pq.reset_index(drop=True))


def test_duplicate_warnings_point_at_the_experiment_and_come_once_per_system():
    """Duplicate documents in a run and duplicate judgments in qrels: each warning comes once per system's
    evaluation (it had come once per measure: two systems and four measures gave 8 of each) and points at the
    user's line (it had pointed inside ir_measures)."""
    topics = pd.DataFrame({"qid": ["q"], "query": ["x"]})
    qrels = pd.DataFrame({"qid": ["q", "q", "q"], "docno": ["a", "b", "b"], "label": [1, 1, 1]})
    run = pd.DataFrame({"qid": ["q"] * 3, "docno": ["a", "x", "a"], "score": [3.0, 2.0, 1.0]})
    M = pse.measures
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pt.Experiment([run, run.copy()], topics, qrels, [M.AP, M.P @ 1, M.nDCG @ 10, M.RR], names=["a", "b"])
    messages = sorted(str(w.message)[:30] for w in seen)
    assert messages == ["Qrels judge some documents twi"] * 2 + ["The run retrieves 1 judged doc"] * 2, (
        messages
    )
    assert {w.filename for w in seen} == {__file__}


def test_duplicate_warnings_of_pse_evaluate_come_once_per_call_whatever_the_relevance_thresholds():
    """pse.evaluate prepares run and qrels once per relevance threshold: each warning had come once per
    threshold; now once per call, and again on the next call with the same frames."""
    qrels = pd.DataFrame({"qid": ["q", "q", "q"], "docno": ["a", "b", "b"], "label": [2, 1, 1]})
    run = pd.DataFrame({"qid": ["q"] * 3, "docno": ["a", "x", "a"], "score": [3.0, 2.0, 1.0]})
    for _ in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            pse.evaluate(run, qrels, ["nDCG@10", "P(rel=2)@5", "P@5", "R(rel=2)@10", "AP"])
        messages = sorted(str(w.message)[:30] for w in seen)
        assert messages == ["Qrels judge some documents twi", "The run retrieves 1 judged doc"], messages
        assert {w.filename for w in seen} == {__file__}


def test_duplicate_judged_documents_count_once_as_if_deduplicated():
    import pytrec_eval

    rows = [("q", "a", 5.0), ("q", "x", 4.0), ("q", "a", 3.0), ("q", "b", 2.0), ("q", "y", 1.0)]
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    with pytest.warns(UserWarning, match="1 judged documents more than once"):
        res = pse.evaluate(run, qrels, ["AP", "P@3", "Judged@4", "Judged@10", "nDCG@3"]).aggregate
    deduped = {"q": {"a": 5.0, "x": 4.0, "b": 2.0, "y": 1.0}}  # the best-ranked copy of 'a' kept
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_3", "ndcg_cut_3"}).evaluate(deduped)["q"]
    assert res["AP"] == pytest.approx(ref["map"], abs=1e-12)
    assert res["P@3"] == pytest.approx(ref["P_3"], abs=1e-12)
    assert res["nDCG@3"] == pytest.approx(ref["ndcg_cut_3"], abs=1e-12)
    assert res["Judged@4"] == 0.5  # a, x, b, y: two of four judged
    # beyond the run's depth, Judged@k divides by the documents retrieved, the duplicate counted once: ir_measures
    # on the deduplicated run (2 / 4; the copy counted, 2 / 5)
    import ir_measures

    frame = pd.DataFrame(
        [("q", d, sc) for d, sc in deduped["q"].items()], columns=["query_id", "doc_id", "score"]
    )
    judged = pd.DataFrame(
        [("q", d, rel) for d, rel in qrels["q"].items()], columns=["query_id", "doc_id", "relevance"]
    )
    want = ir_measures.calc_aggregate([ir_measures.Judged @ 10], judged, frame)[ir_measures.Judged @ 10]
    assert res["Judged@10"] == pytest.approx(want, abs=1e-12) and want == 0.5


def test_empty_run_and_unsorted_blocks():
    empty = pd.DataFrame({"qid": [], "docno": [], "score": []})
    with pytest.warns(UserWarning, match="evaluating 0 of 1"):
        assert math.isnan(pse.evaluate(empty, {"q": {"a": 1}}, ["AP"]).aggregate["AP"])
    # the same query split over two blocks, scores out of order
    run = pd.DataFrame({"qid": ["1", "2", "1"], "docno": ["a", "a", "b"], "score": [1.0, 1.0, 2.0]})
    res = pse.evaluate(run, {"1": {"a": 1}, "2": {"a": 1}}, ["RR"]).per_query["RR"]
    assert res == {"1": 0.5, "2": 1.0}


def _alone(system, topics, qrels, measures):
    """The system's means from a table of its own (one system: PyTerrier names its columns right)."""
    return pt.Experiment([system], topics, qrels, measures, names=["x"]).set_index("name").loc["x"]


def test_a_system_retrieving_nothing_judged_never_misnames_the_columns():
    """PyTerrier 1.1.2 names a table's columns by the last system's order of measures and fills each row in its own;
    a system retrieving nothing for any judged query gets ir_measures' defaults, in another order. With it last,
    system a's P@1 (0) had been shown as 0.5 and its R@100 (0.5) as 0 (a bug hunt's finding): the in-house
    measures give every judged query themselves, and pse.Experiment never puts such a run last."""
    topics = pd.DataFrame({"qid": ["1", "2"], "query": ["x", "y"]})
    qrels = pd.DataFrame({"qid": ["2", "2"], "docno": ["a", "b"], "label": [1, 1]})
    a = pd.DataFrame({"qid": ["1", "2", "2"], "docno": ["z", "z", "a"], "score": [1.0, 2.0, 1.0]})
    b = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})  # nothing for the judged topic 2
    # a, by hand: P@1 0, nDCG@10 (1/log2 3) / (1 + 1/log2 3) = 0.3869, AP 0.25, RR 0.5, R@100 0.5
    by_hand = {"P@1": 0.0, "nDCG@10": 0.38685280723454163, "AP": 0.25, "RR": 0.5, "R@100": 0.5}
    M = pse.measures
    for measures, experiment in (
        ([M.P @ 1, M.nDCG @ 10, M.AP, M.RR, M.R @ 100], pt.Experiment),
        ([P @ 1, nDCG @ 10, AP, RR, R @ 100], pse.Experiment),
        ([P @ 1, M.nDCG @ 10, AP, M.RR, R @ 100], pse.Experiment),
    ):
        alone = _alone(a, topics, qrels, measures)
        assert alone.to_dict() == pytest.approx(
            {str(m): by_hand[str(m).removeprefix("pse.")] for m in measures}
        )
        for extra in (
            {},
            {"batch_size": 1},
            {"baseline": 1},
            *([{"perquery": "both"}] * (experiment is pse.Experiment)),
        ):
            table = experiment([a, b], topics, qrels, measures, names=["a", "b"], **extra)
            table = (table[0] if isinstance(table, tuple) else table).set_index("name")
            assert table.loc["a", alone.index].tolist() == alone.tolist(), (measures, extra)
            assert table.loc["b", alone.index].tolist() == [0.0] * len(measures)
    # systems as pt.Experiment takes them too: a dict of them, transformers, names given twice
    as_transformers = {"a": pt.Transformer.from_df(a), "b": pt.Transformer.from_df(b)}
    five = [
        P @ 1,
        nDCG @ 10,
        AP,
        RR,
        R @ 100,
    ]  # in this order pt.Experiment misnames a (b: topic 1 only, unjudged)
    table = pse.Experiment(as_transformers, topics, qrels, five, batch_size=2)[["name", "P@1", "R@100"]]
    assert table.to_dict("list") == {"name": ["a", "b"], "P@1": [0.0, 0.0], "R@100": [0.5, 0.0]}
    table = pse.Experiment([a, b], topics, qrels, five, names=["x", "x"])[["name", "P@1", "R@100"]]
    assert table.to_dict("list") == {"name": ["x", "x"], "P@1": [0.0, 0.0], "R@100": [0.5, 0.0]}
    # a dict's baseline is a name, as pt.Experiment takes it; a batch without a result is refused, as pt refuses it
    table = pse.Experiment({"a": a, "b": b}, topics, qrels, five, baseline="a")
    assert table.set_index("name").loc["a", "R@100"] == 0.5 and "R@100 p-value" in table.columns
    # (the batch, of one topic, named as such with the fix: it had said "2 topics ... (batch 1)")
    with pytest.raises(
        ValueError, match=r"from b for batch 2 of 2 \(1 topics, qids \['2'\]\).*larger batch_size="
    ):
        pse.Experiment(as_transformers, topics, qrels, five, batch_size=1, baseline=0)
    nothing = {"a": as_transformers["a"], "none": pt.Transformer.from_df(b.iloc[:0])}
    with pytest.raises(ValueError, match=r"from none for any of the 2 topics.*Check its index"):
        pse.Experiment(nothing, topics, qrels, five, baseline=0)  # no batch_size= to advise on
    # int topics, str qrels: evaluated by pt.Experiment when it does not filter by topics
    int_topics = topics.astype({"qid": int})
    with pytest.raises(TypeError, match="qid types differ"):
        pse.Experiment([a], int_topics, qrels, [P @ 1])
    pse.Experiment([a], int_topics, qrels, [P @ 1], filter_by_topics=False)
    # int topics and int qrels: pt's runs have str qids, so pytrec_eval had stopped with "Expected string as key"
    # (pandas' merge error with filter_by_topics=False)
    for measure, filtered in ((P @ 1, True), (M.P @ 1, True), (P @ 1, False)):
        with pytest.raises(TypeError, match=r"\['int'\] qids.*qrels\['qid'\].astype\(str\)"):
            pse.Experiment([a], int_topics, qrels.astype({"qid": int}), [measure], filter_by_topics=filtered)
    # int docnos in the run and the qrels: pt.Experiment makes the run's str (in the caller's frame), so the
    # in-house measures had blamed the run and pytrec_eval had stopped with "Expected mapping of document id"
    int_run = pd.DataFrame({"qid": ["1", "1"], "docno": [10, 9], "score": [2.0, 1.0]})
    int_qrels = pd.DataFrame({"qid": ["1"], "docno": [9], "label": [1]})
    for measure in (P @ 1, M.P @ 1):
        with pytest.raises(TypeError, match=r"qrels have \['int'\] docnos.*qrels\['docno'\].astype\(str\)"):
            pse.Experiment([int_run], topics, int_qrels, [measure])
    assert int_run["docno"].tolist() == [10, 9]  # refused before pt.Experiment touched the run
    table = pse.Experiment([int_run], topics, int_qrels.astype({"docno": str}), [R @ 100])
    assert table["R@100"].tolist() == [1.0]


def test_rel_below_1_is_refused_and_nothing_to_compare_is_said_as_such(capsys):
    with pytest.raises(ValueError, match="rel must be >= 1"):
        pse.evaluate(
            {"q": {"a": 1.0}}, pd.DataFrame({"qid": ["q"], "docno": ["a"], "label": [1]}), ["P(rel=0)@2"]
        )
    report = pse.crosscheck({"q": {"a": 1.0}}, {"q": {"a": 1}}, ["Judged@5", "pse.nDCG(gain='exp')@10"])
    assert not report.ok and "none of these measures has a trec_eval counterpart" in report.summary()


def test_in_house_measures_in_pt_experiment_join_the_run_once(monkeypatch):
    """ir_measures' runtime evaluator hands every measure the same run and qrels: the run is joined once for all
    of them (each measure had joined and sorted it again: 8 measures, 8 times), and the values stay pytrec_eval's."""
    from pyterrier_sparse_eval.measures import _inhouse

    rng = np.random.default_rng(3)
    run = pd.DataFrame(
        {
            "qid": np.repeat(["1", "2", "3"], 20),
            "docno": [f"d{i}" for i in range(60)],
            "score": rng.random(60),
        }
    )
    qrels = pd.DataFrame(
        {"qid": ["1", "1", "2", "3"], "docno": ["d3", "d7", "d25", "d59"], "label": [1, 2, 1, 2]}
    )
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": "x"})
    names = ["nDCG@10", "AP", "RR", "R@5", "P@5", "Rprec", "Success@3", "nDCG"]
    calls = []
    real = _inhouse.prepare
    monkeypatch.setattr(_inhouse, "prepare", lambda *a, **k: calls.append(k["rel"]) or real(*a, **k))
    inhouse = [pse.measures.parse_measure(f"pse.{n}") for n in names]
    table = pt.Experiment([run], topics, qrels, inhouse)
    assert calls == [1]
    standard = pt.Experiment([run], topics, qrels, [m.standard() for m in inhouse])
    for m in inhouse:
        assert table[str(m)][0] == pytest.approx(standard[str(m.standard())][0], abs=1e-12)
    # another relevance threshold is another join, with its own values
    calls.clear()
    table = pt.Experiment([run], topics, qrels, [pse.measures.parse_measure("pse.P(rel=2)@5"), *inhouse[:2]])
    assert sorted(calls) == [1, 2]
    assert table["pse.P(rel=2)@5"][0] == pytest.approx(
        pt.Experiment([run], topics, qrels, [P(rel=2) @ 5])["P(rel=2)@5"][0], abs=1e-12
    )


def test_a_score_beyond_float32_is_ranked_as_trec_eval_ranks_it_without_numpy_warnings():
    run = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["z", "a", "b"], "score": [1e39, 2e39, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = pse.evaluate(run, {"1": {"z": 1}}, ["RR"])
    # both scores infinite as float32: a tie, broken by docno descending (z first), as pytrec_eval breaks it
    reference = pytrec_eval.RelevanceEvaluator({"1": {"z": 1}}, {"recip_rank"}).evaluate(
        {"1": {"z": 1e39, "a": 2e39, "b": 1.0}}
    )
    assert result.per_query["RR"]["1"] == reference["1"]["recip_rank"] == 1.0
