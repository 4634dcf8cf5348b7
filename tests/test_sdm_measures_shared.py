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
    name = "covariate_above" if with_covariate else "judged_run_on_pool"
    original = getattr(sdm, name)
    monkeypatch.setattr(sdm, name, lambda *a, **kw: calls.append(1) or original(*a, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = pt.Experiment([pt.Transformer.from_df(r) for r in runs], _topics(qrels), qrels, measures)
    # once per system's run; with the covariate too (its count distributions made for the largest cut-off, 1000,
    # that the experiment asks of it; made at each cut-off in turn, 10, 100 and 1000, they had been made thrice)
    assert len(calls) == 2
    monkeypatch.setattr(sdm, name, original)
    for i, run in enumerate(runs):
        direct = _by_measure(sdm.evaluate(run, qrels, pool, [10, 100, 1000], **params), measures)
        for m in measures:
            assert table.loc[i, str(m)] == pytest.approx(direct[str(m)], abs=1e-12)


@pytest.mark.parametrize("batch_size", [None, 3])
@pytest.mark.parametrize("with_covariate", [False, True])
def test_a_warning_about_the_run_is_given_once_per_run_not_once_per_measure(
    setup, batch_size, with_covariate
):
    """Both systems cut at 20 documents, four measures at k = 10, 100, 1000 (k = 10 first, which the cut does not
    reach): one cut warning per system's run (it had come once per measure past the cut), or per batch of 3
    queries (8 queries: batches of 3, 3 and 2; two queries cannot tell a cut from short rankings), and another
    kind of warning is not swallowed with it. Each points at the pt.Experiment line, not inside ir_measures or
    PyTerrier."""
    docnos, truth, first, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    systems = [pt.Transformer.from_df(cut), pt.Transformer.from_df(cut.assign(score=cut["score"] * 2))]
    shallow = sdm.Covariate.from_run(first[first["qid"] != "q0"], pool)  # no ranking for q0: its own warning
    params = {"covariate": shallow} if with_covariate else {}
    with pytest.warns(UserWarning) as seen:
        pt.Experiment(systems, _topics(qrels), qrels, _measures(pool, **params), batch_size=batch_size)
    messages = [str(w.message) for w in seen]
    runs = 2 if batch_size is None else 2 * 2
    assert sum("documents per query" in m for m in messages) == runs
    assert sum("no ranking for 1 of the" in m for m in messages) == (2 if with_covariate else 0)
    assert {w.filename for w in seen} == {__file__}


def test_a_second_experiment_on_other_queries_warns_again(setup):
    """Two pt.Experiment calls on disjoint topic sets (dev, then test), both cut: each warns."""
    docnos, truth, _, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    for part in (["q0", "q1", "q2", "q3"], ["q4", "q5", "q6", "q7"]):
        q = qrels[qrels["qid"].isin(part)]
        with pytest.warns(UserWarning, match="documents per query"):
            pt.Experiment(
                [pt.Transformer.from_df(cut[cut["qid"].isin(part)])], _topics(q), q, _measures(pool)
            )


def test_a_covariate_of_none_of_the_queries_is_a_warning_in_an_experiment(setup):
    """In pt.Experiment a covariate without any query of the run is a warning (a batch may hold only such
    queries), and the values are SDM's alone."""
    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    other = sdm.Covariate.from_run(first.assign(qid="x" + first["qid"]), pool)
    with pytest.warns(UserWarning, match="no ranking for 8 of the 8"):
        table = pt.Experiment(
            [pt.Transformer.from_df(run)], _topics(qrels), qrels, _measures(pool, covariate=other)
        )
    alone = pt.Experiment([pt.Transformer.from_df(run)], _topics(qrels), qrels, _measures(pool))
    for a, b in zip(_measures(pool, covariate=other), _measures(pool)):
        assert table.loc[0, str(a)] == pytest.approx(alone.loc[0, str(b)], abs=1e-12)


def test_float_qrels_ids_in_an_experiment_get_the_hint(setup):
    """Int topics, float qrels ids: pt.Experiment gives the measures the run's qids as '0' and the qrels' as 0.0;
    nothing matches, and the SDM measures say why (they had given 0 without a word)."""
    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    as_int = {"qid": lambda f: f["qid"].str[1:].astype(int)}
    q = qrels.assign(**as_int).astype({"qid": float})
    with pytest.warns(
        UserWarning, match=r"8 of the qrels query ids are the run's with '\.0'.*astype\(float\)"
    ):
        pt.Experiment(
            [pt.Transformer.from_df(run.assign(**as_int))],
            _topics(qrels.assign(**as_int)),
            q,
            [sdm.SDM_R(pool=pool) @ 100],
        )


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


@pytest.mark.parametrize("change", ["scores", "order", "qrels"])
def test_a_frame_of_ones_own_is_evaluated_afresh_on_every_call(setup, change):
    """Called on a frame of one's own (runtime_impl, not through ir_measures' evaluator), nothing is shared: a
    frame changed in place between two calls, even keeping its length and sums (scores permuted within each
    query, a relevant docno renamed in the qrels), gives the new value."""
    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    measure = sdm.SDM_R(pool=pool) @ 100
    frame = run.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
    q = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    before = {m.query_id: m.value for m in measure.runtime_impl(q, frame)}
    if change == "scores":
        frame["score"] = (
            frame["score"].to_numpy() * 0.5 + frame.groupby("query_id").cumcount().to_numpy() * 0.01
        )
    elif change == "order":  # each query's scores reversed: same length, same sum
        frame["score"] = frame.groupby("query_id")["score"].transform(lambda x: x.to_numpy()[::-1]).to_numpy()
    else:  # q0's relevant document renamed to another pooled one it ranks: same length, same sums
        rel = q.index[(q["query_id"] == "q0") & (q["relevance"] > 0)][0]
        mine = frame.loc[frame["query_id"] == "q0", "doc_id"]
        q.loc[rel, "doc_id"] = next(
            d
            for d in mine.iloc[::-1]
            if d in pool.docno_set and d not in pool.sample_set and d not in set(q["doc_id"])
        )
    after = {m.query_id: m.value for m in measure.runtime_impl(q, frame)}
    fresh = {m.query_id: m.value for m in measure.runtime_impl(q.copy(), frame.copy())}
    assert after == fresh and after != before


def test_covariates_made_and_dropped_in_turn_each_give_their_own_value(setup):
    """Covariate objects made and freed in turn (their contents kept), on the same frame: a new one can take a
    freed one's id, and each call must give its own covariate's value."""
    import dataclasses

    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    frame = run.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
    q = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    rng = np.random.default_rng(0)
    contents = []
    for i in range(6):
        c = sdm.Covariate.from_run(
            first.assign(score=first["score"] + rng.normal(0, 0.5 * i, len(first))), pool
        )
        contents.append({f.name: getattr(c, f.name) for f in dataclasses.fields(c)})
    want = [
        sdm.evaluate(run, qrels, pool, [10], covariate=sdm.Covariate(**kw))["aggregate"]["nDCG@10"]["sdm"]
        for kw in contents
    ]
    assert len(set(want)) == len(want)
    for i, kw in enumerate(contents):
        cov = sdm.Covariate(**kw)
        measure = sdm.SDM_nDCG(pool=pool, covariate=cov) @ 10
        assert np.mean([m.value for m in measure.runtime_impl(q, frame)]) == pytest.approx(want[i], abs=1e-12)
        del cov, measure


def test_the_pools_fingerprint_is_computed_once(setup):
    """ir_measures hashes a measure (its repr, with the pool's fingerprint) for every value it reports: the
    fingerprint, a hash of every pooled docno, is computed on first use and kept (it had been computed again for
    each of pt.Experiment's per-query values: 20 ms each for a pool of 88,000 documents)."""
    docnos, _, first, qrels, pool = setup
    fresh = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    assert "fingerprint" not in vars(fresh)
    value = fresh.fingerprint
    assert vars(fresh)["fingerprint"] is value and fresh.fingerprint is value
    assert value == pool.fingerprint and repr(fresh) == repr(pool)
    cov = sdm.Covariate.from_run(first, pool)
    assert repr(cov) and vars(cov)["fingerprint"] is cov.fingerprint


def test_the_cut_is_counted_on_the_run_as_sdm_reads_it(setup):
    """8 distinct documents per query, 4 of them listed twice (12 rows), evaluated at k = 10: the run lists 8, so
    it is cut, as sdm.evaluate says; counting rows (12) had hidden it."""
    docnos, truth, _, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=8)
    doubled = pd.concat(
        [cut, cut.groupby("qid").head(4).assign(score=lambda f: f["score"] - 1)], ignore_index=True
    )
    for evaluate in (
        lambda: sdm.evaluate(doubled, qrels, pool, [10]),
        lambda: pt.Experiment(
            [pt.Transformer.from_df(doubled)], _topics(qrels), qrels, [sdm.SDM_R(pool=pool) @ 10]
        ),
    ):
        with pytest.warns(UserWarning, match=r"at most 8 documents per query"):
            evaluate()


def test_other_warnings_are_given_as_python_gives_them(setup, monkeypatch):
    """A warning raised three times at one place while the run is prepared (here a RuntimeWarning from this file,
    standing for one of numpy's or scipy's) keeps its place and its module's registry: under the default filter,
    shown once, as Python shows it (it had been shown three times)."""
    docnos, truth, _, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    original = sdm.models_for

    def noisy(*args, **kwargs):
        for _ in range(3):
            warnings.warn("a warning from elsewhere", RuntimeWarning, stacklevel=1)
        return original(*args, **kwargs)

    monkeypatch.setattr(sdm, "models_for", noisy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        pt.Experiment([pt.Transformer.from_df(run)], _topics(qrels), qrels, _measures(pool))
    assert [str(w.message) for w in seen if w.category is RuntimeWarning] == ["a warning from elsewhere"]
    assert {w.filename for w in seen if w.category is RuntimeWarning} == {__file__}


def test_warnings_reach_a_notebook_cell(setup):
    """A notebook cell (or `python -c`) is no module's file: its warnings are given all the same (they had been
    dropped, warn_explicit taking module=None for interpreter shutdown), under "error" too."""
    docnos, truth, _, qrels, pool = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    cell = compile(
        "pt.Experiment([pt.Transformer.from_df(cut)], topics, qrels, [sdm.SDM_R(pool=pool) @ 100])",
        "<cell>",
        "exec",
    )
    scope = {"pt": pt, "sdm": sdm, "cut": cut, "topics": _topics(qrels), "qrels": qrels, "pool": pool}
    with pytest.warns(UserWarning, match="documents per query") as seen:
        exec(cell, scope)
    assert {w.filename for w in seen if "documents per query" in str(w.message)} == {"<cell>"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="documents per query"):
            exec(cell, scope)


def test_the_covariate_is_prepared_once_for_the_largest_cut_off_asked(setup, monkeypatch):
    """ir_measures' evaluator given the covariate's measures at 10, then 100, then 1000 (pt.Experiment's order is
    its own): one preparation of the run, at width 1000 (made at each larger cut-off in turn, it had been three),
    and each value equal to sdm.evaluate's."""
    from ir_measures.providers.runtime_provider import RuntimeEvaluator

    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    cov = sdm.Covariate.from_run(first, pool)
    measures = [sdm.SDM_R(pool=pool, covariate=cov) @ k for k in (10, 100, 1000)]
    widths = []
    original = sdm.covariate_above
    monkeypatch.setattr(sdm, "covariate_above", lambda *a, **kw: widths.append(a[4]) or original(*a, **kw))
    frame = run.rename(columns={"qid": "query_id", "docno": "doc_id"})[["query_id", "doc_id", "score"]]
    q = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    got = {}
    for metric in RuntimeEvaluator(measures, q)._iter_calc(frame):
        got.setdefault(str(metric.measure), []).append(metric.value)
    assert widths == [1000]
    direct = sdm.evaluate(run, qrels, pool, [10, 100, 1000], covariate=cov)["aggregate"]
    for m in measures:
        assert np.mean(got[str(m)]) == pytest.approx(direct[f"R@{m.params['cutoff']}"]["sdm"], abs=1e-12)


def test_the_covariate_with_no_relevant_document_ranked_gives_zero_alone_and_in_batches(setup):
    """With the covariate, a query none of whose relevant documents the run ranks (evaluated alone, or as a batch
    of one in pt.Experiment) scores 0, as without it; it had raised numpy's "zero-size array" error."""
    docnos, truth, first, qrels, pool = setup
    run = system_run_over_pool(pool, docnos, truth)
    cov = sdm.Covariate.from_run(first, pool)
    relevant = set(zip(qrels["qid"], qrels["docno"]))
    unjudged = np.array([(q, d) not in relevant for q, d in zip(run["qid"], run["docno"])])
    alone = run[(run["qid"] == "q0").to_numpy() & unjudged]
    result = sdm.evaluate(alone, qrels[qrels["qid"] == "q0"], pool, [10, 100], covariate=cov)
    assert {m: v["sdm"] for m, v in result["aggregate"].items()} == dict.fromkeys(
        ["R@10", "nDCG@10", "R@100", "nDCG@100"], 0.0
    )
    measures = [sdm.SDM_R(pool=pool, covariate=cov) @ 10, sdm.SDM_nDCG(pool=pool, covariate=cov) @ 10]
    hidden = pd.concat([alone, run[run["qid"] != "q0"]])
    tables = [
        pt.Experiment([pt.Transformer.from_df(hidden)], _topics(qrels), qrels, measures, batch_size=size)
        for size in (None, 1)
    ]
    direct = _by_measure(sdm.evaluate(hidden, qrels, pool, [10], covariate=cov), measures)
    for m in measures:
        assert tables[1].loc[0, str(m)] == pytest.approx(tables[0].loc[0, str(m)], abs=1e-12)
        assert tables[0].loc[0, str(m)] == pytest.approx(direct[str(m)], abs=1e-12)


@pytest.mark.parametrize("with_covariate", [False, True])
def test_a_system_retrieving_nothing_judged_never_misnames_the_sdm_columns(setup, with_covariate):
    """A second system whose run has none of the judged queries (only an unjudged one): PyTerrier names the
    table's columns by one system's order of measures and fills each row in its own, and the SDM measures had given
    only the run's queries, so ir_measures added the missing ones after all measures: system a's SDM_R@100 had been
    shown under SDM_nDCG@100's name and the other way round (a bug hunt's finding). Each column now equals
    sdm.evaluate's value for a, and 0 for the system retrieving nothing judged, in either order, with an in-house
    measure beside them."""
    import pyterrier_sparse_eval as pse

    docnos, truth, first, qrels, pool = setup
    a = system_run_over_pool(pool, docnos, truth)
    lost = a[a["qid"] == a["qid"].iloc[0]].assign(qid="unjudged")  # nothing for a judged query
    topics = pd.concat(
        [_topics(qrels), pd.DataFrame({"qid": ["unjudged"], "query": ["x"]})], ignore_index=True
    )
    params = {"covariate": sdm.Covariate.from_run(first, pool)} if with_covariate else {}
    measures = [
        pse.measures.R @ 10,
        sdm.SDM_R(pool=pool, **params) @ 10,
        sdm.SDM_nDCG(pool=pool, **params) @ 10,
    ]
    direct = sdm.evaluate(a, qrels, pool, [10], **params)["aggregate"]
    want = [direct["R@10"]["pooled"], direct["R@10"]["sdm"], direct["nDCG@10"]["sdm"]]
    assert len({round(v, 9) for v in want}) == 3  # distinct: a misnamed column cannot pass
    for order in ([a, lost], [lost, a]):
        names = ["a", "lost"] if order[0] is a else ["lost", "a"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pt.Experiment(order, topics, qrels, measures, names=names)
        table = table.set_index("name")
        assert table.loc["a", [str(m) for m in measures]].tolist() == pytest.approx(want, abs=1e-12)
        assert table.loc["lost", [str(m) for m in measures]].tolist() == [0.0, 0.0, 0.0]
