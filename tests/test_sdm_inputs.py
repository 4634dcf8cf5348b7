"""What SDM takes as input: int ids read as the pool's string ids, duplicate rows, runs that are not over the pool,
judged queries without results, bad pool files and options. Each comparison is against the same evaluation of
the same data with string ids and clean rows (``sdm.evaluate``'s own path, tested against trec_eval elsewhere)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import simulated_pool_corpus, system_run_over_pool

from pyterrier_sparse_eval import sdm
from pyterrier_sparse_eval.cli import main

KS = (10, 50)


@pytest.fixture(scope="module")
def setup():
    """A 3000-document simulated corpus with numeric ids ("42", as Vaswani's), 8 queries: a pool (uniform
    sample) and the system's run over it, deep."""
    docnos, truth, first, qrels = simulated_pool_corpus(3000, 8, seed=3)
    docnos = np.array([str(int(d[1:])) for d in docnos])
    truth = {q[1:]: v for q, v in truth.items()}
    first, qrels = (_as_ints(f).astype({"qid": str, "docno": str}) for f in (first, qrels))
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    run = system_run_over_pool(pool, docnos, truth)
    return docnos, first, qrels, pool, run, truth


def _as_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """The same frame with integer ids ("q3" or "3" -> 3, "d000042" or "42" -> 42)."""
    return frame.assign(**{c: frame[c].str.lstrip("qd").astype(int) for c in ("qid", "docno")})


def _values(result):
    return {m: (v["pooled"], v["sdm"]) for m, v in result["aggregate"].items()}


@pytest.mark.parametrize("with_covariate", [False, True])
def test_int_ids_give_the_values_of_string_ids(setup, with_covariate):
    docnos, first, qrels, pool, run, _ = setup
    covariate = first if with_covariate else None
    expected = _values(sdm.evaluate(run, qrels, pool, KS, covariate=covariate))
    assert any(s < p for p, s in expected.values())  # something to correct
    int_covariate = _as_ints(first) if with_covariate else None
    got = sdm.evaluate(_as_ints(run), _as_ints(qrels), pool, KS, covariate=int_covariate)
    assert _values(got) == expected
    # a pool built from int ids is the pool built from their strings
    int_pool = sdm.build_pool(
        _as_ints(qrels), [_as_ints(first)], all_docnos=[int(d) for d in docnos], depth=10, sample=300
    )
    assert int_pool == pool


def test_sdm_measures_report_queries_as_the_run_names_them(setup):
    """ir_measures gets the measure's values keyed by the run's own query ids (int here), equal to sdm.evaluate's."""
    _, _, qrels, pool, run, _ = setup
    expected = sdm.evaluate(run, qrels, pool, [50])["per_query"]["R@50"]
    measure = sdm.SDM_R(pool=pool) @ 50
    got = {m.query_id: m.value for m in measure.runtime_impl(_as_ints(qrels), _as_ints(run))}
    assert got == {int(q): v["sdm"] for q, v in expected.items()}
    assert len(got) == 8


def test_duplicate_rows_keep_each_documents_best_score_with_a_warning(setup):
    _, _, qrels, pool, run, _ = setup
    expected = _values(sdm.evaluate(run, qrels, pool, KS))
    lowered = run.assign(score=run["score"] - 1.0)  # the same documents again, lower
    with pytest.warns(UserWarning, match="documents again for a query"):
        got = sdm.evaluate(pd.concat([run, lowered], ignore_index=True), qrels, pool, KS)
    assert _values(got) == expected


def test_a_run_not_over_the_pool_is_refused(setup):
    docnos, first, qrels, pool, _, truth = setup
    with pytest.raises(ValueError, match="outside Pool.*pool.index"):
        sdm.evaluate(first, qrels, pool, KS)  # the full-corpus run
    other = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=7)
    with pytest.raises(ValueError, match="outside Pool"):
        sdm.evaluate(system_run_over_pool(other, docnos, truth), qrels, pool, KS)  # another pool's run
    with pytest.raises(ValueError, match="outside Pool"):
        sdm.evaluate(first, qrels, pool, KS, covariate=first)
    with pytest.raises(ValueError, match="outside Pool"):
        sdm.threshold_recall(first, qrels, pool, 10)


def test_a_judged_query_without_results_is_reported(setup):
    _, _, qrels, pool, run, _ = setup
    with pytest.warns(UserWarning, match="evaluating 7 of 8 judged queries"):
        got = sdm.evaluate(run[run["qid"] != "0"], qrels, pool, KS)
    with pytest.warns(UserWarning, match="evaluating 7 of 8 judged queries"):
        assert "0" not in sdm.threshold_recall(run[run["qid"] != "0"], qrels, pool, 10)
    assert "0" not in got["per_query"]["R@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the complete run warns of nothing
        sdm.evaluate(run, qrels, pool, KS)


def test_bad_arguments_name_the_fix(setup, tmp_path):
    docnos, first, qrels, pool, run, _ = setup
    with pytest.raises(ValueError, match="at least one cut-off"):
        sdm.evaluate(run, qrels, pool, [])
    with pytest.raises(ValueError, match="at least one cut-off"):
        sdm.evaluate(run, qrels, pool, [], covariate=first)
    with pytest.raises(ValueError, match="background has no entry for 1 evaluated queries"):
        background = {q: np.linspace(0.0, 1.0, 20) for q in qrels["qid"].unique() if q != "1"}
        sdm.evaluate(run, qrels, background=background, n_unseen=100, bootstrap=3)
    with pytest.raises(ValueError, match="n_unseen has no entry"):
        sdm.evaluate(run, qrels, background={q: np.arange(9.0) for q in qrels["qid"]}, n_unseen={"0": 5})
    with pytest.raises(ValueError, match="empty list"):
        sdm.build_pool(qrels, [first], all_docnos=docnos, tail_sample=[], tail_depth=[])
    tail = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=10, sample=50, tail_sample=np.int64(20), tail_depth=40
    )
    assert len(tail.tail) == 20
    broken = tmp_path / "pool.json"
    broken.write_text(json.dumps({"num_docs": 5}))
    with pytest.raises(ValueError, match="Not a pool written by Pool.save: missing"):
        sdm.Pool.load(broken)
    spec = pool.spec()
    for text, message in (
        (json.dumps(spec)[:50], "is not a pool written by Pool.save .*Unterminated string"),  # a cut-off file
        (json.dumps({**spec, "num_docs": str(spec["num_docs"])}), r"wrongly typed \['num_docs'\]"),
        (json.dumps({**spec, "sample": spec["sample"] + spec["relevant"][:1]}), "documents listed twice"),
        (json.dumps({**spec, "distractors": "abc"}), r"wrongly typed \['distractors'\]"),
        (json.dumps({**spec, "bands": [[1, 2]]}), r"wrongly typed \['bands'\]"),
    ):
        broken.write_text(text)
        with pytest.raises(ValueError, match=message):
            sdm.Pool.load(broken)
    measure = sdm.SDM_R(pool=pool, rel=2) @ 10
    assert "rel=2" in repr(measure)
    with pytest.raises(ValueError, match=r"build_pool\(\.\.\., rel=2\)"):
        list(
            measure.runtime_impl(
                qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"}), run
            )
        )


def test_pool_membership_is_pandas_isin():
    """The pool-membership test SDM runs on every run (one test per distinct docno) answers as pandas' isin does,
    repeated docnos and a missing one included."""
    from pyterrier_sparse_eval._sample import in_set

    rng = np.random.default_rng(5)
    values = pd.Series(rng.choice([f"d{i}" for i in range(50)], size=2000).astype(object))
    values[[3, 700]] = None
    members = frozenset(f"d{i}" for i in range(0, 80, 3))
    got = in_set(values, members)
    assert got.dtype == bool and got.tolist() == values.isin(members).tolist() and 0 < got.sum() < len(values)


def test_inputs_that_would_give_wrong_numbers_are_refused(setup):
    """Each of these once gave an SDM value with no error: infinite scores (their sampled documents dropped from
    the background), relevant documents outside the pool (counted as missed), a share given as n_unseen (read as
    0: the pooled value), a covariate without a pool (ignored), pooling runs from another corpus."""
    docnos, first, qrels, pool, run, _ = setup
    low = run.groupby("qid")["score"].transform("median")
    with pytest.raises(ValueError, match="3.* infinite scores.*Drop those rows"):
        sdm.evaluate(run.assign(score=run["score"].where(run.index > 2, -np.inf)), qrels, pool, KS)
    with pytest.raises(ValueError, match="infinite scores"):
        sdm.threshold_recall(
            run.assign(score=run["score"].where(run["score"] >= low, np.inf)), qrels, pool, 10
        )
    some = qrels[qrels["qid"].isin(["0", "1", "2"])]  # a pool built for three of the eight queries
    small = sdm.build_pool(some, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    other = run[run["docno"].isin(small.docno_set)]
    for evaluate in (
        lambda: sdm.evaluate(other, qrels, small, KS),
        lambda: sdm.evaluate(other, qrels, small, KS, covariate=first),
        lambda: sdm.threshold_recall(other, qrels, small, 10),
        lambda: list((sdm.SDM_R(pool=small) @ 10).runtime_impl(qrels, other)),
    ):
        with pytest.raises(
            ValueError, match="relevant documents of the qrels for 5 of the run's queries are not in"
        ):
            evaluate()
    with pytest.warns(UserWarning, match="5 run queries have no judgments"):  # the pool's own qrels are fine
        assert sdm.evaluate(other, some, small, KS)["aggregate"]["R@10"]["sdm"] > 0
    background = {q: np.linspace(0.0, 1.0, 20) for q in qrels["qid"].unique()}
    for n_unseen, message in (
        (0.05, "whole number, not a share"),
        (1700.5, "whole number"),
        ([5, 6], "dict"),
        (-1000, "n_unseen must be >= 0"),  # had given R@10 NaN and nDCG@10 0.0
    ):
        with pytest.raises(ValueError, match=message):
            sdm.evaluate(run, qrels, background=background, n_unseen=n_unseen)
    assert sdm.evaluate(run, qrels, background=background, n_unseen=1700.0)[
        "aggregate"
    ]  # a whole float is one
    with pytest.raises(ValueError, match="covariate= needs the pool"):
        sdm.evaluate(run, qrels, background=background, n_unseen=1700, covariate=first)
    with pytest.raises(ValueError, match="not in the corpus"):
        sdm.build_pool(
            qrels, [first.assign(docno="x" + first["docno"])], all_docnos=docnos, depth=10, sample=300
        )


def test_a_pool_above_rel_1_warns_that_ndcg_misses_the_lower_grades(setup):
    """With rel=2 the pool holds the label-2 documents only; the label-1 ones outside it keep their gain in
    nDCG@k's ideal ranking, which no run over the pool can earn: a warning, and nothing for a rel=1 pool."""
    docnos, first, qrels, pool, run, truth = setup
    graded = qrels.assign(label=np.where(np.arange(len(qrels)) % 2 == 0, 2, 1))
    strict = sdm.build_pool(graded, [first], all_docnos=docnos, depth=10, sample=300, seed=0, rel=2)
    over = system_run_over_pool(strict, docnos, truth)
    lower = graded[graded["label"] == 1]["docno"]
    outside, sampled = int((~lower.isin(strict.docno_set)).sum()), int(lower.isin(strict.sample_set).sum())
    assert outside > 0
    with pytest.warns(
        UserWarning,
        match=rf"{outside + sampled} judged documents with label 1 .*\({outside}\) or among its sampled "
        rf"background documents \({sampled}\).* build the pool with rel=1",
    ):
        sdm.evaluate(over, graded, strict, KS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdm.evaluate(run, qrels, pool, KS)


def test_api_arguments_name_the_fix(setup, tmp_path):
    """Mistakes that once hung (threshold_recall with k < 0) or raised an error that named no fix."""
    docnos, first, qrels, pool, run, _ = setup
    for k in (-1, 0, 10.5, [10, 100]):
        with pytest.raises(ValueError, match="integer >= 1"):
            sdm.threshold_recall(run, qrels, pool, k)
    with pytest.raises(ValueError, match="models has no background for 8 .* sdm.fit_run_backgrounds"):
        sdm.threshold_recall(run, qrels, pool, 10, models={})
    for options, message in (
        ({"bootstrap": -1}, "bootstrap=-1"),
        ({"bootstrap": 1}, r"bootstrap=1: give a number of rounds >= 2"),  # had been an interval of width 0
        ({"bootstrap": 2, "confidence": 95}, r"share in \(0, 1\)"),
        ({"bootstrap": 2, "seed": -1}, "seed=-1"),
        ({"family": "KDE"}, "Unknown background family 'KDE'"),
    ):
        with pytest.raises(ValueError, match=message):
            sdm.evaluate(run, qrels, pool, KS, covariate=first, **options)
    with pytest.raises(ValueError, match=r"list of cut-offs, e.g. \[10\]"):
        sdm.evaluate(run, qrels, pool, 10)
    with pytest.raises(ValueError, match="each an integer >= 1"):
        sdm.evaluate(run, qrels, pool, [10.5])
    pool.save(tmp_path / "pool.json")
    with pytest.raises(TypeError, match=r"sdm.Pool.load\(path\)"):
        sdm.evaluate(run, qrels, str(tmp_path / "pool.json"), KS)
    for measure, message in (
        (sdm.SDM_R @ 10, r"needs the pool .* sdm.SDM_R\(pool=pool\) @ 100"),
        (sdm.SDM_nDCG(pool=pool), "needs a cut-off"),
        (sdm.SDM_R(pool=pool, family="KDE") @ 10, "choose one of auto"),
        (sdm.SDM_R(pool=pool, covariate=first) @ 10, r"Covariate.from_run\(pooling_run, pool\)"),
        (sdm.SDM_R(pool="pool.json") @ 10, r"sdm.Pool.load\(path\)"),
    ):
        with pytest.raises((ValueError, TypeError), match=message):
            list(measure.runtime_impl(qrels, run))
    for options, message in (
        ({"sample": 0.05}, "sample=0.05: give a whole number"),
        ({"tail_sample": 0.5}, "whole number"),
        ({"seed": -2}, "seed=-2"),
        # SDM refuses a sample of 1: refused when the pool is built, not after its index is cut
        ({"sample": 1}, "sample=1: SDM needs a background sample of at least 2"),
    ):
        with pytest.raises((ValueError, TypeError), match=message):
            sdm.build_pool(qrels, [first], all_docnos=docnos, **{"depth": 10, "sample": 300, **options})
    for options, message in (
        ({"family": "KDE"}, "Unknown background family"),
        ({"k_values": [0]}, "integer >= 1"),
        ({"sample": 0}, "sample=0: SDM needs a background sample of at least 2"),
    ):
        with pytest.raises(ValueError, match=message):  # three_way: refused before the dataset is looked up
            sdm.three_way("irds:nothing/here", ["bm25"], index_dir=tmp_path / "never", **options)
    assert not (tmp_path / "never").exists()
    with pytest.raises(TypeError, match=r"pass \[run\] for one run"):
        sdm.build_pool(qrels, first, all_docnos=docnos)
    # whole numbers of any type are numbers (read from JSON or numpy): the same pool, the same values
    same = sdm.build_pool(
        qrels, [first], all_docnos=docnos, depth=np.int64(10), sample=300.0, seed=np.int64(0)
    )
    assert same == pool and sdm.Pool.from_spec(json.loads(json.dumps(same.spec()))) == pool
    assert _values(sdm.evaluate(run, qrels, pool, [10.0, np.int64(50)], seed=None)) == _values(
        sdm.evaluate(run, qrels, pool, KS)
    )
    background = {q: np.linspace(0.0, 1.0, 20) for q in qrels["qid"].unique()}
    by_query = pd.Series({q: 1700 for q in background})
    assert _values(sdm.evaluate(run, qrels, background=background, n_unseen=by_query)) == _values(
        sdm.evaluate(run, qrels, background=background, n_unseen=1700)
    )
    with pytest.raises(ValueError, match="whole number"):
        sdm.evaluate(run, qrels, background=background, n_unseen=np.inf)
    with pytest.raises(ValueError, match="is a folder but not a pooled index: pass the JSON file"):
        sdm.Pool.load(tmp_path)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--tail-depth", "50"], "--tail-depth bounds a tail band"),
        (["--tail-sample", "0", "--tail-depth", "50"], "--tail-depth bounds a tail band"),  # had been ignored
        (["--tail-sample", "10", "--family", "empirical-gpd"], "stratified sample"),
        (["--output", "{tmp}/dir.json"], "is a folder"),
        (["--output", "{tmp}/afile/x.json"], "is a file, not a folder"),
        (["--sample", "1"], "--sample must be >= 2"),
        (["--tail-sample", "10", "--tail-sample", "20", "--tail-depth", "200"], "one --tail-depth per"),
        (["--pool-depth", "50", "--tail-sample", "10", "--tail-depth", "40"], "must be deeper than the pool"),
    ],
)
def test_sdm_command_refuses_bad_options_before_any_work(tmp_path, capsys, argv, message):
    (tmp_path / "afile").write_text("")
    (tmp_path / "dir.json").mkdir()
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    index_dir = tmp_path / "indexes"
    code = main(["sdm", "--dataset", "irds:nothing/here", "--index-dir", str(index_dir), "--quiet", *argv])
    assert code == 2 and message in capsys.readouterr().err
    assert not index_dir.exists()  # refused before the dataset was even looked up
