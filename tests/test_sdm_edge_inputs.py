"""Inputs at SDM's edges, found by a review acting as a new user: scores compared at trec_eval's precision on both
sides, non-finite background and covariate scores, relevant documents among the sampled ones, empty rankings,
cut-offs far beyond the corpus, and the errors that name their fix. Each expected value comes from the data by
construction (counted by hand) or from ir_measures (pytrec_eval), not from the code under test."""

from __future__ import annotations

import signal
import warnings

import ir_measures
import numpy as np
import pandas as pd
import pytest
from helpers import simulated_pool_corpus, system_run_over_pool

from pyterrier_sparse_eval import sdm
from pyterrier_sparse_eval._covariate import Covariate, covariate_above
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.measures import fit_background


@pytest.fixture(scope="module")
def setup():
    docnos, truth, first, qrels = simulated_pool_corpus(3000, 8, seed=3)
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=10, sample=300, seed=0)
    run = system_run_over_pool(pool, docnos, truth)
    return docnos, truth, first, qrels, pool, run


def _per_query(result):
    return {m: {q: v["sdm"] for q, v in by_q.items()} for m, by_q in result["per_query"].items()}


# --- precision: the relevant rows are ranked in float32 (trec_eval); the background must be compared alike ---


@pytest.mark.parametrize("score", [0.3, 0.5, 0.7])  # float32(0.3) > 0.3, 0.5 exact, float32(0.7) < 0.7
def test_a_relevant_document_at_the_runs_lowest_score_has_nothing_unseen_above(score):
    """The run retrieves only the relevant document: every sampled document scores below it (censored at the
    run's lowest score), so no unseen document is above it and R@10 is 1 whichever way its score rounds."""
    docnos = [f"d{i}" for i in range(1000)]
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "label": [1]})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=100, seed=0)
    run = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "score": [score]})
    out = sdm.evaluate(run, qrels, pool, [10])
    assert out["aggregate"]["R@10"]["sdm"] == 1.0


@pytest.mark.parametrize("score", [0.3, 0.7])
@pytest.mark.parametrize("given", ["run", "background"])
def test_a_sampled_score_equal_to_a_relevant_one_counts_above_it(score, given):
    """10 of 100 sampled documents tie with the relevant one (the documented rule: a tie counts above), 10 score
    lower, 80 are not retrieved: p(s) = 10 / 100 exactly, by counting, through a pool or ``background=``."""
    docnos = [f"d{i}" for i in range(1000)]
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "label": [1]})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=100, seed=0)
    sampled = list(pool.sample)
    run = pd.DataFrame({"qid": "q1", "docno": ["d0"] + sampled[:20], "score": [score] * 11 + [0.1] * 10})
    if given == "run":
        out = sdm.evaluate(run, qrels, pool, [100], family="empirical")
    else:  # the same sample given as scores, the 80 unretrieved ones below every retrieved score
        background = {"q1": np.r_[[score] * 10, [0.1] * 10, [0.05] * 80]}
        out = sdm.evaluate(
            run.head(1), qrels, background=background, n_unseen=900, k_values=[100], family="empirical"
        )
    model = out["models"]["q1"]
    assert float(model.sf(np.float64(np.float32(score)))) == pytest.approx(0.1, abs=1e-12)


def test_scores_off_the_float32_grid_give_the_values_of_their_float32_roundings(setup):
    """A run cut at 5 per query (its lowest rows relevant for some queries, the sampled ones censored there), with
    scores that float32 does not hold exactly: the same values as the run rounded to float32 beforehand, with
    and without the covariate (trec_eval ranks at that precision; SDM must not see the difference either)."""
    docnos, truth, first, qrels, pool, _ = setup
    run = system_run_over_pool(pool, docnos, truth, depth=5)
    assert (run["score"].to_numpy() != run["score"].to_numpy().astype(np.float32)).all()
    rounded = run.assign(score=run["score"].to_numpy().astype(np.float32).astype(np.float64))
    a, b = (sdm.evaluate(r, qrels, pool, [5, 10, 100]) for r in (run, rounded))
    assert _per_query(a) == _per_query(b)
    # the covariate's model needs the system's scores of sampled documents: a run 100 deep
    run = system_run_over_pool(pool, docnos, truth, depth=100)
    rounded = run.assign(score=run["score"].to_numpy().astype(np.float32).astype(np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the covariate serves the queries
        a, b = (sdm.evaluate(r, qrels, pool, [5, 10, 100], covariate=first) for r in (run, rounded))
    assert _per_query(a) == _per_query(b)


# --- non-finite scores: refused, naming the fix ---


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_background_scores_are_refused(bad):
    run = pd.DataFrame({"qid": "q1", "docno": ["r0", "d1"], "score": [3.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["r0"], "label": [1]})
    background = {"q1": np.r_[np.linspace(0.0, 2.0, 200), [bad] * 5]}
    with pytest.raises(ValueError, match=r"background\['q1'\] has 5 scores that are not finite"):
        sdm.evaluate(run, qrels, background=background, n_unseen=1000)
    with pytest.raises(ValueError, match="not finite.*n_below"):
        fit_background(background["q1"])


def test_fitted_models_with_bootstrap_are_refused_by_name():
    run = pd.DataFrame({"qid": "q1", "docno": ["r0", "d1"], "score": [3.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["r0"], "label": [1]})
    background = {"q1": fit_background(np.linspace(0.0, 2.0, 200))}
    assert sdm.evaluate(run, qrels, background=background, n_unseen=1000)["aggregate"]["R@10"]["sdm"] > 0
    with pytest.raises(ValueError, match="fitted model.*arrays, or bootstrap=0"):
        sdm.evaluate(run, qrels, background=background, n_unseen=1000, bootstrap=2)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_non_finite_covariate_scores_are_refused(setup, bad):
    _, _, first, qrels, pool, run = setup
    covariate = first.copy()
    covariate.loc[covariate.index[0], "score"] = bad
    with pytest.raises(ValueError, match="covariate run has 1 scores that are not finite"):
        sdm.evaluate(run, qrels, pool, [10], covariate=covariate)


def test_a_huge_n_unseen_is_refused_not_wrapped_round():
    run = pd.DataFrame({"qid": "q1", "docno": ["r0", "d1"], "score": [3.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["r0"], "label": [1]})
    with pytest.raises(ValueError, match="no corpus's number of unseen documents"):
        sdm.evaluate(run, qrels, background={"q1": np.linspace(0, 2, 50)}, n_unseen=10**19)


# --- qrels and runs that do not fit the pool ---


def test_a_relevant_document_among_the_sampled_ones_is_refused(setup):
    """Qrels other than the pool's that mark a sampled (background) document relevant: refused, as a relevant
    document outside the pool is (it would be a relevant row and background both)."""
    _, _, _, qrels, pool, run = setup
    sampled = run[(run["qid"] == "q0") & run["docno"].isin(pool.sample_set)]["docno"].iloc[0]
    extra = pd.concat(
        [qrels, pd.DataFrame({"qid": ["q0"], "docno": [sampled], "label": [1]})], ignore_index=True
    )
    with pytest.raises(ValueError, match="among Pool.*sampled background documents.*build the pool"):
        sdm.evaluate(run, extra, pool, [10])
    with pytest.raises(ValueError, match="sampled background documents"):
        list((sdm.SDM_R(pool=pool) @ 10).runtime_impl(extra, run))
    # judged non-relevant there: fine (it is background)
    zero = pd.concat(
        [qrels, pd.DataFrame({"qid": ["q0"], "docno": [sampled], "label": [0]})], ignore_index=True
    )
    sdm.evaluate(run, zero, pool, [10])


def test_an_empty_ranking_in_a_dict_run_counts_as_trec_eval_counts_it(setup):
    """{qid: {}} for a judged query: evaluated as retrieving nothing (0), as pytrec_eval does, not left out."""
    _, _, _, qrels, pool, run = setup
    as_dict = {q: dict(zip(g["docno"], g["score"])) for q, g in run.groupby("qid")}
    as_dict["q0"] = {}
    judged = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"})
    expected = ir_measures.calc_aggregate([ir_measures.R @ 10], judged, as_dict)[ir_measures.R @ 10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sdm.evaluate(as_dict, qrels, pool, [10])
    assert out["aggregate"]["R@10"]["pooled"] == pytest.approx(expected, abs=1e-12)
    assert out["per_query"]["R@10"]["q0"] == {"pooled": 0.0, "sdm": 0.0}


def test_rows_without_a_docno_are_refused(setup):
    _, _, _, qrels, pool, run = setup
    broken = run.astype({"docno": object})
    broken.loc[broken.index[:3], "docno"] = None
    with pytest.raises(ValueError, match="3 rows without a docno.*dropna"):
        sdm.evaluate(broken, qrels, pool, [10])
    with pytest.raises(ValueError, match="covariate run has 3 rows without a docno"):
        Covariate.from_run(broken, pool)


# --- cut-offs beyond the corpus ---


@pytest.mark.parametrize("with_covariate", [False, True])
def test_a_cut_off_beyond_the_corpus_gives_the_values_at_the_corpus_size(setup, with_covariate):
    """Beyond N every document is in the top k: the values at k = 10^6 are those at k = N, and the covariate's
    count distribution stops at the unseen documents (n_unseen + 1 terms), not at k."""
    docnos, _, first, qrels, pool, run = setup
    covariate = first if with_covariate else None
    at_n = sdm.evaluate(run, qrels, pool, [len(docnos)], covariate=covariate)["aggregate"]
    # the largest cut-off taken: the covariate's weights had been an array of k (16 GiB, a MemoryError)
    far = sdm.evaluate(run, qrels, pool, [10**6, 2**31 - 1], covariate=covariate)["aggregate"]
    for m in ("R", "nDCG"):
        assert far[f"{m}@{10**6}"] == far[f"{m}@{2**31 - 1}"] == at_n[f"{m}@{len(docnos)}"]
    if with_covariate:
        _, above, _ = covariate_above(run, qrels, pool, Covariate.from_run(first, pool), 10**6)
        assert above.pmf.shape[1] == pool.n_unseen + 1
        assert np.allclose(above.pmf.sum(axis=1), 1.0)


def test_threshold_recall_returns_on_scores_beyond_float64s_unit_resolution():
    """Scores of 1e17 (a step of 1.0 vanishes in float64 there): the reference estimator still returns."""
    docnos = [f"d{i}" for i in range(1000)]
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "label": [1]})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=100, seed=0)
    run = pd.DataFrame({"qid": "q1", "docno": ["d0"] + list(pool.sample), "score": 1e17})

    def stuck(*_):
        raise TimeoutError("threshold_recall did not return within 60 s")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = sdm.threshold_recall(run, qrels, pool, 10, family="normal")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # 100 sampled documents tie with the relevant one and stand for 900 unseen: it falls out of the top 10
    assert out == {"q1": 0.0}


def test_threshold_recall_compares_at_single_precision_and_counts_empty_rankings(setup):
    """The reference estimator ranks and fits at trec_eval's precision too: a run and its float32 rounding give
    the same recall; a {qid: {}} ranking retrieves none of its relevant documents (0), as in sdm.evaluate."""
    docnos, truth, _, qrels, pool, _ = setup
    run = system_run_over_pool(pool, docnos, truth, depth=5)
    rounded = run.assign(score=run["score"].to_numpy().astype(np.float32).astype(np.float64))
    assert sdm.threshold_recall(run, qrels, pool, 10) == sdm.threshold_recall(rounded, qrels, pool, 10)
    as_dict = {q: dict(zip(g["docno"], g["score"])) for q, g in run.groupby("qid")}
    as_dict["q0"] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = sdm.threshold_recall(as_dict, qrels, pool, 10)
        evaluated = sdm.evaluate(as_dict, qrels, pool, [10])["per_query"]["R@10"]
    assert got["q0"] == 0.0 == evaluated["q0"]["sdm"] and set(got) == set(evaluated)


def test_scores_beyond_single_precision_are_refused_by_name(setup):
    _, _, _, qrels, pool, run = setup
    with pytest.raises(ValueError, match=r"beyond single precision's range.*Rescale"):
        sdm.evaluate(run.assign(score=run["score"] * 1e39), qrels, pool, [10])
    background = {"q1": np.r_[np.linspace(0.0, 2.0, 50), 1e39]}
    one = pd.DataFrame({"qid": "q1", "docno": ["r0"], "score": [3.0]})
    with pytest.raises(ValueError, match="beyond single precision's range"):
        sdm.evaluate(one, qrels.head(1).assign(qid="q1", docno="r0"), background=background, n_unseen=100)


def test_lower_grades_among_the_sampled_documents_of_a_rel_2_pool_are_warned_about(setup):
    """A rel=2 pool may sample a label-1 document: nDCG@k counts its gain and it stands for background too."""
    docnos, truth, first, qrels, _, _ = setup
    graded = qrels.assign(label=2)
    strict = sdm.build_pool(graded, [first], all_docnos=docnos, depth=10, sample=300, seed=0, rel=2)
    run = system_run_over_pool(strict, docnos, truth)
    extra = pd.DataFrame({"qid": ["q0"], "docno": [sorted(strict.sample_set)[0]], "label": [1]})
    with pytest.warns(
        UserWarning, match=r"1 judged documents with label 1 .*\(0\) or among its sampled.*\(1\)"
    ):
        sdm.evaluate(run, pd.concat([graded, extra], ignore_index=True), strict, [10])


def test_a_whole_corpus_rel_2_pool_does_not_warn_about_lower_grades(setup):
    """Every document pooled: nothing unseen for a sampled label-1 document to stand for, SDM is trec_eval."""
    docnos, truth, first, qrels, _, _ = setup
    graded = qrels.assign(label=np.where(np.arange(len(qrels)) % 2 == 0, 2, 1))
    whole = sdm.build_pool(graded, [first], all_docnos=docnos, depth=10, sample=2000, seed=0, rel=2)
    whole = sdm.build_pool(graded, [first], all_docnos=docnos, depth=10, sample=whole.n_unseen + 2000, rel=2)
    assert whole.n_unseen == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sdm.evaluate(system_run_over_pool(whole, docnos, truth), graded, whole, [10])
    assert all(v["sdm"] == pytest.approx(v["pooled"], abs=1e-12) for v in out["aggregate"].values())


def test_pooling_runs_from_another_corpus_are_refused(setup):
    """all_docnos of a pooled index, not of the full corpus the pooling run ranks: refused (it was accepted when
    only the top-depth distractors were checked, and SDM's numbers were silently off)."""
    docnos, _, first, qrels, pool, _ = setup
    with pytest.raises(ValueError, match="pooling runs rank are not in the corpus.*same dataset"):
        sdm.build_pool(qrels, [first], all_docnos=pool.docnos, depth=10, sample=300)


def test_a_run_cut_above_the_cut_off_is_warned_about(setup):
    """Every query cut at 20 documents, evaluated at k = 100: the documents below the cut count as not retrieved
    (R@100 low). A warning on every path; none for the run 100 deep, nor for rankings of varying length (a
    lexical system retrieving only the documents that match)."""
    docnos, truth, first, qrels, pool, run = setup
    cut = system_run_over_pool(pool, docnos, truth, depth=20)
    for call in (
        lambda r: sdm.evaluate(r, qrels, pool, [10, 100]),
        lambda r: sdm.evaluate(r, qrels, pool, [10, 100], covariate=first),
        lambda r: list((sdm.SDM_R(pool=pool) @ 100).runtime_impl(qrels, r)),
        lambda r: sdm.threshold_recall(r, qrels, pool, 100),
    ):
        with pytest.warns(
            UserWarning, match=r"at most 20 documents per query \(8 of its 8 queries.*k=100"
        ) as seen:
            call(cut)
        # pointed at the caller outside the package (pt.Experiment's or the user's line), here this file
        assert {w.filename for w in seen if "cut" in str(w.message)} == {__file__}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            call(system_run_over_pool(pool, docnos, truth, depth=100))
    varying = pd.concat(
        [g.head(10 + 5 * i) for i, (_, g) in enumerate(run.groupby("qid", sort=True))], ignore_index=True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdm.evaluate(varying, qrels, pool, [100])
        # one or two queries, however short: too few to tell a cut from short rankings (pt.Experiment batches)
        for queries in (["q0"], ["q0", "q1"]):
            one = qrels[qrels["qid"].isin(queries)]
            sdm.evaluate(cut[cut["qid"].isin(queries)], one, pool, [100])
    with pytest.warns(UserWarning, match=r"fewer than 414 \(k=1000, a pool of 414\).*Retrieve at least 414"):
        sdm.evaluate(cut, qrels, pool, [1000])


def test_a_covariate_that_serves_no_query_says_so(setup):
    _, _, first, qrels, pool, run = setup
    shallow = first.sort_values("score", ascending=False).groupby("qid").head(20)
    with pytest.warns(UserWarning, match="covariate served none of the 8 queries.*1000 deep"):
        got = sdm.evaluate(run, qrels, pool, [10], covariate=shallow)
    alone = sdm.evaluate(run, qrels, pool, [10])["aggregate"]
    for m, values in got["aggregate"].items():
        assert values["sdm"] == pytest.approx(alone[m]["sdm"], abs=1e-12)  # binomial pmf sum vs its cdf


# --- measure parameters and options, each mistake named with its fix ---


def test_sdm_ndcg_takes_the_pools_rel(setup):
    _, _, _, qrels, pool, run = setup
    plain = [m.value for m in (sdm.SDM_nDCG(pool=pool) @ 10).runtime_impl(qrels, run)]
    assert [m.value for m in (sdm.SDM_nDCG(pool=pool, rel=1) @ 10).runtime_impl(qrels, run)] == plain
    with pytest.raises(ValueError, match="rel=2.*built with rel=1"):
        list((sdm.SDM_nDCG(pool=pool, rel=2) @ 10).runtime_impl(qrels, run))


@pytest.mark.parametrize(
    "measure, named",
    [
        (lambda pool: sdm.SDM_R(pool=pool) @ np.int64(10), "cutoff=np.int64"),
        (lambda pool: sdm.SDM_nDCG(pool=pool, gain="log") @ 10, r"gain='log'"),
        (lambda pool: sdm.SDM_R(pool=pool, gain="exp") @ 10, r"takes no parameter\(s\) \['gain'\]"),
    ],
)
def test_measure_parameter_mistakes_are_named_with_what_the_measure_takes(setup, measure, named):
    _, _, _, qrels, pool, run = setup
    with pytest.raises(ValueError, match=named + ".*it takes cutoff, pool, family") as error:
        list(measure(pool).runtime_impl(qrels, run))
    assert "gain" not in str(error.value).split("it takes")[1] or "gain (linear/exp)" in str(error.value)


def test_sdm_measures_with_an_unknown_parameter_are_refused_when_made():
    """Refused on construction: ir_measures' repr of such a measure (printed, or in pt.Experiment) raised
    KeyError."""
    with pytest.raises(ValueError, match=r"SDM_R takes no parameter\(s\) \['gain'\]; it takes cutoff"):
        sdm.SDM_R(gain="exp")
    assert repr(sdm.SDM_nDCG(gain="exp") @ 10) == "SDM_nDCG(gain='exp')@10"


@pytest.mark.parametrize("systems", ["bm25", [], (), None])
def test_three_way_refuses_a_system_list_that_is_not_one_before_loading_anything(systems):
    with pytest.raises(ValueError, match="give a list of system specs"):
        sdm.three_way("irds:no-such-dataset", systems)
    with pytest.raises(ValueError, match="num_results=1000.5"):
        sdm.three_way("irds:no-such-dataset", ["bm25"], num_results=1000.5)


def test_build_pool_refuses_a_fractional_rel(setup):
    docnos, _, first, qrels, _, _ = setup
    with pytest.raises(TypeError, match="rel=1.5: give a whole relevance label"):
        sdm.build_pool(qrels, [first], all_docnos=docnos, rel=1.5)


@pytest.mark.parametrize(
    "args, named",
    [
        (["sdm", "--dataset", "irds:vaswani", "--k", "ten"], "argument --k: invalid int value: 'ten'"),
        (["sdm"], "required: --dataset"),
        (["no-such-command"], "invalid choice"),
        (
            ["sdm", "--dataset", "irds:vaswani", "--per-query"],
            "--per-query adds each query's values to the --output",
        ),
    ],
)
def test_command_line_usage_errors_are_one_line(capsys, args, named):
    if "--per-query" in args:  # a refusal of the command itself, before any work: main returns 2
        assert main(args) == 2
    else:  # argparse's
        with pytest.raises(SystemExit) as stop:
            main(args)
        assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err


def test_the_background_figure_weighs_a_stratified_sample_as_its_fit_does():
    """Three observed scores, one from a stratum of weight 1 and two of weight 9, and one censored document of
    weight 1: the sample curve is (1 + 9 + 9, 9 + 9, 9) / 20 and the mass below the lowest score 1 / 20 (counted
    by hand), not the unweighted (3, 2, 1) / 4 and 1 / 4."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from pyterrier_sparse_eval import plots
    from pyterrier_sparse_eval._sample import BackgroundSample

    sample = BackgroundSample(
        np.array([3.0, 1.0, 2.0]), 1, 1.0, np.array([1, 0, 1]), np.array([1, 0]), np.array([1.0, 9.0])
    )
    fig = plots.background_fit(sample, sample.fit("empirical"))
    ax = fig.axes[0]
    curve = next(line for line in ax.lines if line.get_label().startswith("sample"))
    assert np.allclose(curve.get_ydata(), [19 / 20, 18 / 20, 9 / 20])
    assert "mass below lowest score: 5%" in [text.get_text() for text in ax.get_legend().get_texts()]


@pytest.mark.parametrize("floated", ["run", "qrels"])
def test_float_query_ids_against_int_ones_get_a_hint_naming_the_cast(setup, floated):
    """A qid column read as float (1.0) against int ids (1): SDM compares ids as strings, so no query matches;
    the warning says why and names the cast, on SDM's path and on pse.evaluate's (ids already cast to str), and
    points at the caller's line."""
    import pyterrier_sparse_eval as pse

    docnos, _, first, qrels, pool, run = setup
    as_int = {"qid": lambda f: f["qid"].str[1:].astype(int)}
    run_i, qrels_i = run.assign(**as_int), qrels.assign(**as_int)
    # the same pool, from the same pooling run and qrels with int ids
    pool_i = sdm.build_pool(
        qrels_i, [first.assign(**as_int)], all_docnos=docnos, depth=10, sample=300, seed=0
    )
    assert pool_i.docno_set == pool.docno_set
    if floated == "run":
        run_i = run_i.assign(qid=run_i["qid"].astype(float))
    else:
        qrels_i = qrels_i.assign(qid=qrels_i["qid"].astype(float))
    hint = (
        rf"8 of the {floated} query ids are the .* with '\.0' \(e\.g\. '0\.0' for '0'\).*{floated}\['qid'\]"
    )
    with pytest.warns(UserWarning, match=hint) as seen:
        sdm.evaluate(run_i, qrels_i, pool_i, [10])
    assert {w.filename for w in seen} == {__file__}
    with pytest.warns(UserWarning, match=hint):
        pse.evaluate(run_i.astype({"qid": str}), qrels_i.astype({"qid": str}), ["R@10"])
    with warnings.catch_warnings():  # matching ids: no warning at all
        warnings.simplefilter("error")
        sdm.evaluate(run_i.astype({"qid": int}), qrels_i.astype({"qid": int}), pool_i, [10])


def test_options_users_write_as_build_pool_takes_them(setup):
    """tail_band_sizes takes one tail depth as build_pool does (it had raised "'int' object is not iterable"); a
    generator of runs and a confidence outside (0, 1) without a bootstrap are refused naming the fix (a raw
    TypeError, and accepted silently)."""
    docnos, truth, first, qrels, pool = setup[:5]
    one = sdm.tail_band_sizes(qrels, [first], all_docnos=docnos, depth=10, tail_depth=200)
    assert one == sdm.tail_band_sizes(qrels, [first], all_docnos=docnos, depth=10, tail_depth=[200])
    assert one[0] > 0
    with pytest.raises(TypeError, match=r"list\(\.\.\.\) for a generator"):
        sdm.build_pool(qrels, (r for r in [first]), all_docnos=docnos)
    run = system_run_over_pool(pool, docnos, truth)
    with pytest.raises(ValueError, match="confidence=95: give the intervals' coverage as a share"):
        sdm.evaluate(run, qrels, pool, [10], confidence=95)


def test_per_query_comparison_takes_the_measure_given_to_pt_experiment(setup):
    """plots.per_query_comparison with the SDM measure object passed to pt.Experiment (it had raised ir_measures'
    NotImplementedError), and a measure not in the frame named as such (it had blamed the systems)."""
    pytest.importorskip("matplotlib")
    import pyterrier as pt

    from pyterrier_sparse_eval import plots

    docnos, truth, first, qrels, pool = setup[:5]
    runs = [system_run_over_pool(pool, docnos, truth), system_run_over_pool(pool, docnos, truth, depth=150)]
    measure = sdm.SDM_R(pool=pool) @ 100
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "x"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_query = pt.Experiment(
            [pt.Transformer.from_df(r) for r in runs],
            topics,
            qrels,
            [measure],
            names=["a", "b"],
            perquery=True,
        )
    fig = plots.per_query_comparison(per_query, "a", "b", measure)
    assert fig is not None
    with pytest.raises(ValueError, match=r"No measure 'R@5' in the per-query frame; measures: \['SDM_R"):
        plots.per_query_comparison(per_query, "a", "b", "R@5")


def test_background_from_runs_samples_are_named_with_their_fix(setup):
    """sdm.background_from_run's samples given as background= name their .fit() (a raw "float() argument" error
    had come), and their fits there give the pool's own values."""
    docnos, truth, first, qrels, pool, run = setup
    samples = sdm.background_from_run(run, pool)
    with pytest.raises(ValueError, match=r"is a BackgroundSample .*pass its \.fit\(family\)"):
        sdm.evaluate(run, qrels, background=samples, n_unseen=pool.n_unseen, k_values=[10])
    # a query with fewer than 2 sampled scores is named (the message had named no query)
    short = {q: s.observed[:1] if i == 1 else s.fit() for i, (q, s) in enumerate(samples.items())}
    with pytest.raises(
        ValueError, match=rf"background\[{list(samples)[1]!r}\] has 1 sampled score\(s\): .* at least 2"
    ):
        sdm.evaluate(run, qrels, background=short, n_unseen=pool.n_unseen, k_values=[10])
    fitted = {q: s.fit() for q, s in samples.items()}
    given = sdm.evaluate(run, qrels, background=fitted, n_unseen=pool.n_unseen, k_values=[10, 100])
    from_pool = sdm.evaluate(run, qrels, pool, [10, 100])["aggregate"]
    for m, v in from_pool.items():
        assert given["aggregate"][m]["sdm"] == pytest.approx(v["sdm"], abs=1e-12)


def test_a_tail_band_deeper_than_the_pooling_runs_says_where_it_ends(setup):
    """A tail depth beyond what the pooling runs list is said (the pool had called the band '@2000' though it
    ends at the runs' depth, 200 here, silently)."""
    docnos, truth, first, qrels = setup[:4]
    top = first.sort_values(["qid", "score"], ascending=[True, False]).groupby("qid").head(200)
    options = dict(all_docnos=docnos, depth=10, sample=100, tail_sample=20)
    with pytest.warns(
        UserWarning, match="list at most 200 documents per query, so the tail band bounded at 2000"
    ):
        sdm.build_pool(qrels, [top], tail_depth=2000, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdm.build_pool(qrels, [top], tail_depth=200, **options)


def test_judged_queries_a_run_lacks_are_said_duplicates_counted_once_and_a_pool_s_level_named(setup):
    """Found by a user's bug hunt: the background= path had left judged queries the run lacks out of the mean
    without the warning the pool path gives; sdm.background_from_run had counted a document listed twice twice
    (its censored share 0 where it was 0.5); and a rel=2 pool's measures (rel 2 unless given) had names that did
    not say so, beside R@10 at rel 1."""
    docnos, truth, first, qrels, pool, run = setup
    judged = sorted(qrels["qid"].unique())
    lacking = run[run["qid"] != judged[-1]]
    background = {q: np.linspace(0.0, 1.0, 50) for q in judged}
    with pytest.warns(UserWarning, match=rf"evaluating {len(judged) - 1} of {len(judged)} judged queries"):
        sdm.evaluate(lacking, qrels, k_values=[10], background=background, n_unseen=1000)
    once = sdm.background_from_run(run, pool)
    with pytest.warns(UserWarning, match=r"lists \d+ documents again .* keeps each one's highest score"):
        twice = sdm.background_from_run(pd.concat([run, run]), pool)
    for q, sample in once.items():
        assert np.array_equal(twice[q].observed, sample.observed) and twice[q].n_below == sample.n_below
    graded = qrels.assign(label=qrels["label"] * 2)
    level2 = sdm.build_pool(graded, [first], all_docnos=docnos, depth=10, sample=300, seed=0, rel=2)
    assert ",rel=2," in repr(level2) and ",rel=" not in repr(pool)
    assert ",rel=2," in str(sdm.SDM_R(pool=level2) @ 10)
