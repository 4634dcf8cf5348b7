"""Regression tests for the metric defects of audit B: int docnos tie-broken as text, crosscheck with int
qids, documents retrieved twice (judged or not), id types checked in every row, measure names with
parameters the measure does not take. Expected values come from pytrec_eval, computed here on the same run
with str ids (trec_eval reads ids as text)."""

from __future__ import annotations

import warnings

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.measures import trec_ranks

# in-house name -> trec_eval measure
TREC = {
    "P@5": "P_5",
    "P@10": "P_10",
    "RR": "recip_rank",
    "AP": "map",
    "nDCG@10": "ndcg_cut_10",
    "R@10": "recall_10",
    "Rprec": "Rprec",
    "Success@3": "success_3",
}


def reference(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values, on str ids; a document retrieved twice keeps its highest score."""
    run_d: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run["qid"].astype(str), run["docno"].astype(str), run["score"]):
        docs = run_d.setdefault(q, {})
        docs[d] = max(float(s), docs.get(d, -np.inf))
    qrels_d: dict[str, dict[str, int]] = {}
    for q, d, r in zip(qrels["qid"].astype(str), qrels["docno"].astype(str), qrels["label"]):
        qrels_d.setdefault(q, {})[d] = int(r)
    return pytrec_eval.RelevanceEvaluator(qrels_d, set(TREC.values())).evaluate(run_d)


def int_run_with_ties(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """int64 qid and docno columns (as ``pd.read_csv`` gives them) and coarse scores: many ties."""
    rng = np.random.default_rng(seed)
    runs, qrels = [], []
    for q in range(1, 21):
        docnos = rng.choice(np.arange(1, 200), 30, replace=False)
        runs.append(pd.DataFrame({"qid": q, "docno": docnos, "score": rng.integers(0, 4, 30).astype(float)}))
        judged = rng.choice(docnos, 12, replace=False)
        qrels.append(pd.DataFrame({"qid": q, "docno": judged, "label": rng.integers(0, 3, 12)}))
    return pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True)


def assert_equal_per_query(ours: pse.measures.Evaluation, ref: dict[str, dict[str, float]]) -> None:
    for name, te in TREC.items():
        got = {str(q): v for q, v in ours.per_query[name].items()}
        assert got.keys() == ref.keys()
        for q, v in got.items():
            assert v == pytest.approx(ref[q][te], abs=1e-12), (name, q)


def test_int_docnos_break_ties_as_text_like_trec_eval():
    run, qrels = int_run_with_ties()
    assert run["docno"].dtype.kind == "i" and qrels["docno"].dtype.kind == "i"
    # the data exercise the defect: in some tie, number order and text order disagree
    tied = run.groupby(["qid", "score"])["docno"].agg(list)
    assert any(sorted(d) != sorted(d, key=str) for d in tied)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no duplicate or overlap warning expected
        ours = pse.evaluate(run, qrels, list(TREC))
    assert_equal_per_query(ours, reference(run, qrels))
    # dicts with int ids, and the frame shuffled: the same values
    shuffled = run.sample(frac=1, random_state=3)
    assert_equal_per_query(pse.evaluate(shuffled, qrels, list(TREC)), reference(run, qrels))
    as_dict = {q: list(zip(g["docno"].tolist(), g["score"].tolist())) for q, g in run.groupby("qid")}
    qrels_dict = {q: dict(zip(g["docno"].tolist(), g["label"].tolist())) for q, g in qrels.groupby("qid")}
    assert_equal_per_query(pse.evaluate(as_dict, qrels_dict, list(TREC)), reference(run, qrels))


def test_the_audit_example_and_trec_ranks():
    res = pse.evaluate({1: [(9, 1.0), (10, 1.0)]}, {1: {10: 1}}, ["P@1", "RR"]).per_query
    ref = pytrec_eval.RelevanceEvaluator({"1": {"10": 1}}, {"P_1", "recip_rank"}).evaluate(
        {"1": {"9": 1.0, "10": 1.0}}
    )["1"]
    # per-query values are keyed by str ids, whatever the run's type
    assert res == {"P@1": {"1": ref["P_1"]}, "RR": {"1": ref["recip_rank"]}}
    # ranks against a plain sort by (float32 score, docno as text), both descending
    run, _ = int_run_with_ties(1)
    ranks = trec_ranks(run["qid"], run["score"], run["docno"])
    for _, g in run.assign(rank=ranks).groupby("qid"):
        expected = sorted(g.itertuples(), key=lambda r: (np.float32(r.score), str(r.docno)), reverse=True)
        assert [r.rank for r in expected] == list(range(len(g)))


def test_id_types_are_checked_in_every_row():
    docnos = [f"d{i}" for i in range(1499)] + [7]  # one int docno after row 1,000
    run = pd.DataFrame({"qid": "1", "docno": pd.Series(docnos, dtype=object), "score": np.arange(1500.0)})
    with pytest.raises(TypeError, match=r"docno types differ: the run has \['int', 'str'\].*astype\(str\)"):
        pse.evaluate(run, {"1": {"d1": 1}}, ["R@2000"])
    # numpy int64 columns and Python ints are the same kind: no error, and the values equal pytrec_eval's
    frame = pd.DataFrame({"qid": np.int64(1), "docno": np.arange(5, 12, dtype=np.int64), "score": 1.0})
    res = pse.evaluate(frame, {1: {10: 1, 9: 1}}, ["RR", "P@2"]).per_query
    ref = pytrec_eval.RelevanceEvaluator({"1": {"10": 1, "9": 1}}, {"recip_rank", "P_2"}).evaluate(
        {"1": {str(d): 1.0 for d in range(5, 12)}}
    )["1"]
    assert res == {"RR": {"1": ref["recip_rank"]}, "P@2": {"1": ref["P_2"]}}


def test_crosscheck_with_int_qids():
    run, qrels = int_run_with_ties(2)
    check = pse.crosscheck(run, qrels, ["nDCG@10", "P@5", "AP", "RR"])
    assert check.ok and check.compared == 20, check.summary()
    with pytest.raises(TypeError, match=r"qid types differ.*astype\(str\)"):
        pse.crosscheck(run, qrels.astype({"qid": str}), ["AP"])


def test_unjudged_document_retrieved_twice_takes_one_rank():
    run = pd.DataFrame(
        [("1", "u", 4.0), ("1", "u", 3.0), ("1", "r1", 2.0), ("1", "r2", 1.0)],
        columns=["qid", "docno", "score"],
    )
    qrels = pd.DataFrame([("1", "r1", 1), ("1", "r2", 1)], columns=["qid", "docno", "label"])
    with pytest.warns(UserWarning, match="1 unjudged documents more than once"):
        res = pse.evaluate(run, qrels, list(TREC)).per_query
    ref = reference(run, qrels)["1"]
    for name, te in TREC.items():
        assert res[name]["1"] == pytest.approx(ref[te], abs=1e-12), name
    # pytrec_eval, as ir_measures feeds it (the last copy of u, score 3, is still first): the same P@2
    standard = ir_measures.calc_aggregate(
        [ir_measures.P @ 2], qrels.rename(columns=_IRM), run.rename(columns=_IRM)
    )
    with pytest.warns(UserWarning, match="more than once"):
        assert pse.evaluate(run, qrels, ["P@2"]).aggregate["P@2"] == standard[ir_measures.P @ 2]
    with pytest.warns(UserWarning, match="more than once"):
        assert pse.crosscheck(run, qrels, ["P@2", "AP"]).ok


_IRM = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}


def test_many_duplicates_equal_pytrec_eval_on_the_deduplicated_run():
    rng = np.random.default_rng(4)
    run, qrels = int_run_with_ties(5)
    run = run.astype({"qid": str, "docno": str})
    qrels = qrels.astype({"qid": str, "docno": str})
    extra = run.sample(150, random_state=6).assign(score=lambda f: f["score"] + rng.normal(0, 1.5, len(f)))
    dup_run = pd.concat([run, extra], ignore_index=True).sample(frac=1, random_state=7)
    with pytest.warns(UserWarning, match=r"judged documents and \d+ unjudged documents more than once"):
        ours = pse.evaluate(dup_run, qrels, list(TREC))
    assert_equal_per_query(ours, reference(dup_run, qrels))


def test_crosscheck_names_duplicates_as_the_cause():
    # pytrec_eval, fed a dict, keeps the last copy of 'a' (score 1), the in-house measures the best one (5)
    run = pd.DataFrame(
        [("q", "a", 5.0), ("q", "x", 4.0), ("q", "a", 1.0), ("q", "b", 2.0)],
        columns=["qid", "docno", "score"],
    )
    qrels = {"q": {"a": 1, "b": 2}}
    with pytest.warns(UserWarning, match="1 judged documents more than once"):
        check = pse.crosscheck(run, qrels, ["P@1"])
    last = pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate({"q": {"a": 1.0, "x": 4.0, "b": 2.0}})
    best = pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate({"q": {"a": 5.0, "x": 4.0, "b": 2.0}})
    (diff,) = check.checks[0].differing
    assert (diff["ours"], diff["trec_eval"]) == (best["q"]["P_1"], last["q"]["P_1"])
    assert diff["duplicates"] is True and not check.ok
    assert "retrieves a document twice for this query" in check.summary()


@pytest.mark.parametrize(
    "name,message",
    [
        ("nDCG(gain='exp')@10", r"nDCG takes no parameter\(s\) \['gain'\].*use pse.nDCG\(gain='exp'\)@10"),
        ("Judged(rel=2)@10", r"Judged takes no parameter\(s\) \['rel'\]; it takes \['cutoff'\]\.$"),
        # the parameters the in-house measure takes too (evaluate then refused dcg=, gains=, judged_only=)
        (
            "nDCG(rel=2)@10",
            r"judged_only'\] \(pse.evaluate computes it in-house, taking \['cutoff', 'gain'\]\)",
        ),
        ("P(rel='x')@10", r"rel='x' is not valid for P"),
        ("P", "P needs a cut-off, e.g. P@10"),
        ("P(rel=2)", r"P\(rel=2\) needs a cut-off, e.g. P\(rel=2\)@10"),
        # a parameter other than the cut-off is written inside the parentheses, beside those given
        (
            "NERR10(min_rel=1)",
            r"needs max_rel \(maximum relevance score\), e.g. NERR10\(min_rel=1, max_rel=...\)",
        ),
    ],
)
def test_measure_parameters_the_measure_does_not_take(name, message):
    run, qrels = {"1": {"a": 1.0}}, {"1": {"a": 1}}
    for call in (pse.evaluate, pse.crosscheck):
        with pytest.raises(ValueError, match=message):
            call(run, qrels, [name])
    with pytest.raises(ValueError, match="takes no parameter"):
        pse.evaluate(run, qrels, [ir_measures.nDCG(gain="exp") @ 10])


def test_measure_parameters_on_the_command_line_exit_2(tmp_path, capsys):
    (tmp_path / "r").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    files = ["--run", str(tmp_path / "r"), "--qrels", str(tmp_path / "q")]
    for command, metric in (("evaluate", "nDCG(gain='exp')@10"), ("crosscheck", "Judged(rel=2)@10")):
        assert main([command, *files, "--metric", metric]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "takes no parameter" in err and "internal error" not in err
    assert main(["evaluate", *files, "--metric", "pse.nDCG(gain='exp')@10"]) == 0


@pytest.mark.parametrize("queries, per_query", [(4, 1000), (2000, 2)])  # a count per pair; a sort
def test_repeat_check_finds_a_single_repeated_pair_either_way(queries, per_query):
    """The fast check (no repeated (query, docno) pair: nothing more to do) against Python sets."""
    from pyterrier_sparse_eval.measures._prepare import _has_repeats

    rng = np.random.default_rng(0)
    group = np.repeat(np.arange(queries), per_query)
    local = np.concatenate([rng.permutation(4096)[:per_query] for _ in range(queries)])
    assert not _has_repeats(group, local)
    local[-1] = local[-2]  # the last query retrieves one document twice
    assert _has_repeats(group, local)
    local[-1] = local[0] if queries > 1 else local[-1]  # another query's document: not a repeat
    pairs = list(zip(group.tolist(), local.tolist()))
    assert _has_repeats(group, local) == (len(set(pairs)) < len(pairs))


def test_unmatched_query_ids_name_the_likely_cause():
    """Ids are compared as text, as trec_eval compares them: '001' matches nothing in qrels of '1' (right), and the
    warning had only asked about the split; a float qid column ('1.0') is named too."""
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    for run, hint in (
        (
            {"001": {"a": 1.0}, "002": {"b": 1.0}},
            r"2 of the run query ids are the qrels' with leading zeros \(e.g. '001' for '1'\)",
        ),
        ({"1.0": {"a": 1.0}}, r"1 of the run query ids are the qrels' with '.0' \(e.g. '1.0' for '1'\)"),
    ):
        with pytest.warns(UserWarning, match=hint):
            assert pse.evaluate(run, qrels, ["P@1"]).num_queries == 0
