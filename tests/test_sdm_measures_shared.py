"""The SDM measures share one evaluation per run: ir_measures (pt.Experiment) hands every measure the same run frame
in turn, so the run is prepared and fitted once, and each of SDM's warnings about it is given once, not once per
measure. The values are those of each measure evaluated on its own (sdm.evaluate, itself checked against
trec_eval with nothing unseen)."""

from __future__ import annotations

import warnings

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


def test_a_warning_about_the_run_is_given_once_per_run_not_once_per_measure(setup):
    """Both systems cut at 20 documents, four measures at k = 10, 100, 1000: one cut warning per system (it had
    come once per measure past the cut, naming each k), and another kind of warning is not swallowed with it."""
    docnos, truth, first, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    systems = [pt.Transformer.from_df(cut), pt.Transformer.from_df(cut.assign(score=cut["score"] * 2))]
    shallow = sdm.Covariate.from_run(first[first["qid"] != "q0"], pool)  # no ranking for q0: its own warning
    with pytest.warns(UserWarning) as seen:
        pt.Experiment(systems, _topics(qrels), qrels, _measures(pool, covariate=shallow))
    messages = [str(w.message) for w in seen]
    assert sum("documents per query" in m for m in messages) == 2
    assert sum("no ranking for 1 of the 8" in m for m in messages) == 2
    # pointed at the caller outside the package, as before
    assert all("pyterrier_sparse_eval" not in w.filename for w in seen)


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
