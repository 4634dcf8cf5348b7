"""The SDM measures share one evaluation per run: ir_measures (pt.Experiment) hands every measure the same run frame
in turn, so the run is prepared and fitted once, and each of SDM's warnings about it is given once, not once per
measure. The values are those of each measure evaluated on its own (sdm.evaluate, itself checked against
trec_eval with nothing unseen)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from helpers import simulated_pool_corpus, system_run_over_pool

from pyterrier_sparse_eval import sdm


@pytest.fixture(scope="module")
def setup():
    docnos, truth, first, qrels = simulated_pool_corpus(3000, 8, seed=3)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    return docnos, truth, first, qrels, pool


def _topics(qrels):
    return pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "x"})


def _measures(pool, **params):
    return [
        sdm.SDM_R(pool=pool, **params) @ 10,
        sdm.SDM_R(pool=pool, **params) @ 100,
        sdm.SDM_nDCG(pool=pool, **params) @ 10,
        sdm.SDM_nDCG(pool=pool, **params) @ 1000,
    ]


def _by_measure(result, measures):
    name = {"R": "R", "nDCG": "nDCG"}
    return {str(m): result["aggregate"][f"{name[m.POOLED]}@{m.params['cutoff']}"]["sdm"] for m in measures}


@pytest.mark.parametrize("with_covariate", [False, True])
def test_experiment_fits_each_run_once_and_gives_each_measures_own_value(setup, monkeypatch, with_covariate):
    """Two systems, four SDM measures at three cut-offs: one preparation per system's run (not one per measure),
    and each value equals sdm.evaluate's on that system's run."""
    docnos, truth, first, qrels, pool = setup
    runs = [system_run_over_pool(pool, docnos, truth), system_run_over_pool(pool, docnos, truth, depth=150)]
    params = {"covariate": sdm.Covariate.from_run(first, pool)} if with_covariate else {}
    measures = _measures(pool, **params)
    calls = []
    name = "covariate_above" if with_covariate else "judged_with_backgrounds"
    original = getattr(sdm, name)
    monkeypatch.setattr(sdm, name, lambda *a, **kw: calls.append(1) or original(*a, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pt.Experiment([pt.Transformer.from_df(r) for r in runs], _topics(qrels), qrels, measures)
    # the covariate's count distributions stop at k terms: a wider cut-off (10, then 100, 1000) prepares again
    assert len(calls) <= (2 * 3 if with_covariate else 2)
    monkeypatch.setattr(sdm, name, original)
    for i, run in enumerate(runs):
        direct = _by_measure(sdm.evaluate(run, qrels, pool, [10, 100, 1000], **params), measures)
        for m in measures:
            assert table.loc[i, str(m)] == pytest.approx(direct[str(m)], abs=1e-12)


@pytest.mark.parametrize("batch_size", [None, 3])
def test_a_warning_about_the_run_is_given_once_per_system_not_once_per_measure_or_batch(setup, batch_size):
    """Both systems cut at 20 documents, four measures at k = 10, 100, 1000: one cut warning per system (it had
    come once per measure past the cut, and again for every batch), and another kind of warning is not swallowed
    with it. Each points at the pt.Experiment line, not inside ir_measures or PyTerrier."""
    docnos, truth, first, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    systems = [pt.Transformer.from_df(cut), pt.Transformer.from_df(cut.assign(score=cut["score"] * 2))]
    shallow = sdm.Covariate.from_run(first[first["qid"] != "q0"], pool)  # no ranking for q0: its own warning
    with pytest.warns(UserWarning) as seen:
        pt.Experiment(
            systems, _topics(qrels), qrels, _measures(pool, covariate=shallow), batch_size=batch_size
        )
    messages = [str(w.message) for w in seen]
    assert sum("documents per query" in m for m in messages) == 2
    assert sum("no ranking for 1 of the" in m for m in messages) == 2
    assert {w.filename for w in seen} == {__file__}


def test_int_query_ids_give_the_numbers_of_str_ones(setup):
    """pt.Experiment turns a run's int qids into str but not the qrels': the SDM values are reported under the
    qrels' ids, so ir_measures does not add each query again as 0 (the means had been halved, silently)."""
    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    as_int = {"qid": lambda f: f["qid"].str[1:].astype(int)}
    measures = _measures(pool)
    got = {}
    for label, (r, q) in {"str": (run, qrels), "int": (run.assign(**as_int), qrels.assign(**as_int))}.items():
        got[label] = pt.Experiment([pt.Transformer.from_df(r)], _topics(q), q, measures, perquery=True)
        assert len(got[label]) == 8 * len(measures)  # each query once per measure
    assert got["int"]["value"].tolist() == got["str"]["value"].tolist()
    direct = _by_measure(sdm.evaluate(run, qrels, pool, [10, 100, 1000]), measures)
    means = got["int"].groupby("measure")["value"].mean()
    for m in measures:
        assert means[str(m)] == pytest.approx(direct[str(m)], abs=1e-12)


def test_two_covariates_of_one_pool_are_two_measures(setup):
    """Two pooling runs of the same depth and query count as covariates: two names, two columns, each its own
    value (one column had been kept, its value depending on the order of the measures)."""
    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    other = first.assign(score=first["score"] + np.random.default_rng(0).normal(0, 0.5, len(first)))
    covs = [sdm.Covariate.from_run(r, pool) for r in (first, other)]
    measures = [sdm.SDM_nDCG(pool=pool, covariate=c) @ 10 for c in covs]
    assert str(measures[0]) != str(measures[1]) and measures[0] != measures[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pt.Experiment([pt.Transformer.from_df(run)], _topics(qrels), qrels, measures)
    for m, cov in zip(measures, covs):
        want = sdm.evaluate(run, qrels, pool, [10], covariate=cov)["aggregate"]["nDCG@10"]["sdm"]
        assert table.loc[0, str(m)] == pytest.approx(want, abs=1e-12)
    assert table.loc[0, str(measures[0])] != table.loc[0, str(measures[1])]
    # the same run read twice is the same covariate
    assert repr(sdm.Covariate.from_run(first, pool)) == repr(covs[0])


def test_batches_without_any_query_of_the_covariate_keep_sdms_background(setup):
    """A covariate for some queries only, with batch_size=: a batch of uncovered queries is evaluated as without
    batches (those queries keep SDM's background), not refused (it had raised, as for a covariate of none of the
    run's queries)."""
    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    part = sdm.Covariate.from_run(first[first["qid"].isin(["q0", "q1"])], pool)
    measures = [sdm.SDM_R(pool=pool, covariate=part) @ 100, sdm.SDM_nDCG(pool=pool, covariate=part) @ 10]
    tables = []
    for batch_size in (None, 2):
        with pytest.warns(UserWarning, match="no ranking for"):
            tables.append(
                pt.Experiment(
                    [pt.Transformer.from_df(run)], _topics(qrels), qrels, measures, batch_size=batch_size
                )
            )
    for m in measures:
        assert tables[1].loc[0, str(m)] == pytest.approx(tables[0].loc[0, str(m)], abs=1e-12)
    with pytest.raises(ValueError, match="no ranking for 6 of the 6"):  # sdm.evaluate: the whole run, refused
        sdm.evaluate(run[~run["qid"].isin(["q0", "q1"])], qrels, pool, [10], covariate=part)


def test_in_house_measures_name_pt_experiments_str_qids_in_their_type_error(setup):
    import pyterrier_sparse_eval as pse

    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    as_int = {"qid": lambda f: f["qid"].str[1:].astype(int)}
    q = qrels.assign(**as_int)
    with pytest.raises(
        TypeError, match=r"In pt.Experiment, which gives measures the run's qids as str.*astype\(str\)"
    ):
        pt.Experiment([pt.Transformer.from_df(run.assign(**as_int))], _topics(q), q, [pse.measures.R @ 100])


def test_a_run_changed_in_place_between_two_calls_is_evaluated_again(setup):
    """The shared evaluation is held for the same frame object; a frame changed in place is not the same run."""
    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    measure = sdm.SDM_R(pool=pool) @ 100
    frame = run.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
    q = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    before = {m.query_id: m.value for m in measure.runtime_impl(q, frame)}
    frame["score"] = frame["score"].to_numpy() * 0.5 + frame.groupby("query_id").cumcount().to_numpy() * 0.01
    after = {m.query_id: m.value for m in measure.runtime_impl(q, frame)}
    fresh = {m.query_id: m.value for m in measure.runtime_impl(q, frame.copy())}
    assert after == fresh and after != before
