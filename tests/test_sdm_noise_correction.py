"""``sdm.evaluate(..., noise_correction=True)`` and ``SDM_R`` / ``SDM_nDCG(noise_correction=True)``: each relevant
row's term corrected for the noise of its fitted survival (``second_order``, tested against a Monte Carlo truth in
test_sdm.py) on every path: a pool (uniform, or stratified with weighted kernel fits), per-query samples, the
bootstrap's rounds, pt.Experiment and the command line; the mistakes refused with their fix."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
from helpers import simulated_pool_corpus, system_run_over_pool

from pyterrier_sparse_eval import sdm
from pyterrier_sparse_eval._pool import _UNRETRIEVED, judged_with_backgrounds, models_for
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.measures._sdm import sdm_ndcg, sdm_recall, survival_of_rows, variance_of_rows

K = [10, 100]


@pytest.fixture(scope="module", params=["uniform", "stratified"])
def case(request):
    """A pool with a uniform background sample, or a stratified one (weighted kernel fits)."""
    docnos, truth, first, qrels = simulated_pool_corpus(5000, 6, seed=13)
    design = (
        {"sample": 250}
        if request.param == "uniform"
        else {"sample": 150, "tail_sample": 100, "tail_depth": 200}
    )
    pool = sdm.build_pool(qrels, [first], all_docnos=docnos, depth=5, seed=4, **design)
    assert pool.stratified == (request.param == "stratified")
    return pool, system_run_over_pool(pool, docnos, truth, depth=1000), qrels, first


def _by_hand(j, models, n_unseen, k):
    """Both measures with each row's survival and its variance, straight from the functions."""
    p, v = survival_of_rows(j, models), variance_of_rows(j, models)
    return sdm_recall(j, k, p, n_unseen, variance=v), sdm_ndcg(j, k, p, n_unseen, variance=v)


def test_evaluate_on_a_pool_applies_the_correction_to_every_row(case):
    pool, run, qrels, first = case
    got = sdm.evaluate(run, qrels, pool, K, noise_correction=True, verbose=False)
    plain = sdm.evaluate(run, qrels, pool, K, verbose=False)
    j, samples = judged_with_backgrounds(run, qrels, pool)
    models = models_for(j, samples, "auto")
    assert all(m.family == "kde" for m in models)  # the kernel background, whose variance is estimated
    for k in K:
        recall, ndcg = _by_hand(j, models, pool.n_unseen, k)
        for name, values in ((f"R@{k}", recall), (f"nDCG@{k}", ndcg)):
            per_query = [got["per_query"][name][q]["sdm"] for q in j.qids.tolist()]
            np.testing.assert_allclose(per_query, values, rtol=0, atol=1e-12, err_msg=name)
            assert got["aggregate"][name]["pooled"] == plain["aggregate"][name]["pooled"]
        # the plug-in overstates nDCG@k through the convex discount: the correction lowers it here
        assert got["aggregate"][f"nDCG@{k}"]["sdm"] < plain["aggregate"][f"nDCG@{k}"]["sdm"] - 1e-4


def test_evaluate_from_samples_applies_it_too(case):
    pool, run, qrels, first = case
    j, samples = judged_with_backgrounds(run, qrels, pool)
    background = {q: samples[q].observed for q in j.qids.tolist()}  # the observed scores, as a user has them
    got = sdm.evaluate(run, qrels, background=background, n_unseen=10**5, k_values=K, noise_correction=True)
    plain = sdm.evaluate(run, qrels, background=background, n_unseen=10**5, k_values=K)
    models = [sdm.fit_background(background[q]) for q in j.qids.tolist()]
    assert all(m.family == "kde" for m in models)
    assert got["aggregate"]["nDCG@100"]["sdm"] < plain["aggregate"]["nDCG@100"]["sdm"] - 1e-4
    for k in K:
        recall, ndcg = _by_hand(j, models, 10**5, k)
        np.testing.assert_allclose(
            [got["per_query"][f"nDCG@{k}"][q]["sdm"] for q in j.qids.tolist()], ndcg, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            [got["per_query"][f"R@{k}"][q]["sdm"] for q in j.qids.tolist()], recall, rtol=0, atol=1e-12
        )


def test_the_bootstrap_rounds_are_corrected_as_the_estimate(case):
    """The intervals come from rounds corrected the same way: rebuilt here round by round with the same draws."""
    pool, run, qrels, first = case
    got = sdm.evaluate(run, qrels, pool, [10], noise_correction=True, bootstrap=6, seed=3, verbose=False)
    plain = sdm.evaluate(run, qrels, pool, [10], bootstrap=6, seed=3, verbose=False)
    j, samples = judged_with_backgrounds(run, qrels, pool)
    rng, means = np.random.default_rng(3), []
    for _ in range(6):
        models = [samples.get(q, _UNRETRIEVED).resample(rng).fit("auto") for q in j.qids.tolist()]
        means.append([values.mean() for values in _by_hand(j, models, pool.n_unseen, 10)])
    for name, column in (("R@10", 0), ("nDCG@10", 1)):
        expected = np.percentile(np.array(means)[:, column], [2.5, 97.5])
        np.testing.assert_allclose(got["aggregate"][name]["sdm_ci"], expected, atol=1e-12, err_msg=name)
    assert got["aggregate"]["nDCG@10"]["sdm_ci"] != plain["aggregate"]["nDCG@10"]["sdm_ci"]


def test_measures_in_pt_experiment_take_it(case):
    pool, run, qrels, first = case
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "unused"})
    measures = [
        sdm.SDM_R(pool=pool, noise_correction=True) @ 100,
        sdm.SDM_nDCG(pool=pool, noise_correction=True) @ 10,
        sdm.SDM_nDCG(pool=pool) @ 10,
    ]
    table = pt.Experiment([run], topics, qrels, measures, names=["system"])
    direct = sdm.evaluate(run, qrels, pool, K, noise_correction=True, verbose=False)["aggregate"]
    plain = sdm.evaluate(run, qrels, pool, K, verbose=False)["aggregate"]
    assert table.loc[0, str(measures[0])] == pytest.approx(direct["R@100"]["sdm"], abs=1e-12)
    assert table.loc[0, str(measures[1])] == pytest.approx(direct["nDCG@10"]["sdm"], abs=1e-12)
    assert table.loc[0, str(measures[2])] == pytest.approx(plain["nDCG@10"]["sdm"], abs=1e-12)


def test_a_batch_of_unjudged_topics_does_not_say_the_correction_changed_nothing(case):
    """With batch_size=, a batch holding only topics without judgments has no relevant row to correct: no
    "changed nothing" warning (it had been given although every other batch was corrected), the same value as
    without batches."""
    import warnings

    pool, run, qrels, first = case
    judged = sorted(qrels["qid"].unique())
    topics = pd.DataFrame({"qid": judged + ["x1", "x2"], "query": "unused"})
    ranked = pd.concat([run] + [run[run["qid"] == judged[0]].assign(qid=q) for q in ("x1", "x2")])
    system = pt.Transformer.from_df(ranked)
    measures = [sdm.SDM_nDCG(pool=pool, noise_correction=True) @ 10]
    tables = []
    for size in (None, len(judged)):  # the last batch: the two unjudged topics
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            tables.append(pt.Experiment([system], topics, qrels, measures, names=["system"], batch_size=size))
        assert not [w for w in seen if "changed nothing" in str(w.message)]
    assert tables[1].loc[0, str(measures[0])] == pytest.approx(tables[0].loc[0, str(measures[0])], abs=1e-12)


def test_mistakes_are_refused_with_their_fix(case):
    pool, run, qrels, first = case
    with pytest.raises(ValueError, match="family='auto' or 'kde'"):
        sdm.evaluate(run, qrels, pool, K, family="skewnorm", noise_correction=True)
    with pytest.raises(ValueError, match="not available with covariate="):
        sdm.evaluate(run, qrels, pool, K, covariate=run, noise_correction=True)
    for wrong in ("yes", np.True_, 1):
        with pytest.raises(TypeError, match="give True or False"):
            sdm.evaluate(run, qrels, pool, K, noise_correction=wrong)
    with pytest.raises(ValueError, match="family='auto' or 'kde'"):  # before any indexing
        sdm.three_way(
            "irds:vaswani", ["bm25"], family="empirical", noise_correction=True, index_dir="/nonexistent"
        )
    # models fitted beforehand without a kernel: nothing to correct, and a warning says so
    j, samples = judged_with_backgrounds(run, qrels, pool)
    normal = {q: sdm.fit_background(samples[q].observed, "normal") for q in j.qids.tolist()}
    with pytest.warns(UserWarning, match="noise_correction=True changed nothing"):
        got = sdm.evaluate(run, qrels, background=normal, n_unseen=10**5, k_values=K, noise_correction=True)
    assert (
        got["aggregate"]
        == sdm.evaluate(run, qrels, background=normal, n_unseen=10**5, k_values=K)["aggregate"]
    )
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "unused"})
    with pytest.raises(ValueError, match="family='auto' or 'kde'"):
        pt.Experiment(
            [run], topics, qrels, [sdm.SDM_R(pool=pool, family="normal", noise_correction=True) @ 10]
        )
    covariate = sdm.Covariate.from_run(first, pool)
    with pytest.raises(ValueError, match="not available with covariate="):
        pt.Experiment(
            [run], topics, qrels, [sdm.SDM_R(pool=pool, covariate=covariate, noise_correction=True) @ 10]
        )
    with pytest.raises(TypeError, match="give True or False"):
        pt.Experiment([run], topics, qrels, [sdm.SDM_R(pool=pool, noise_correction=np.True_) @ 10])


def test_cli_sdm_with_the_noise_correction(tmp_path, capsys):
    """``sparse-eval sdm --noise-correction`` on Vaswani: the same pool, pooled and full values as without it,
    SDM's values those of the library's ``three_way(..., noise_correction=True)`` (which calls ``sdm.evaluate``,
    tested above); the report and its config say so; with ``--covariate`` it is refused before any indexing."""
    args = ["sdm", "--dataset", "irds:vaswani", "--system", "bm25:k1=1.2,b=0.75", "--pool-run", "bm25"]
    args += ["--pool-depth", "5", "--sample", "1000", "--k", "10", "--k", "100", "--index-dir", str(tmp_path)]
    outputs = {}
    for flag in ([], ["--noise-correction"]):
        out_json = tmp_path / f"sdm{len(flag)}.json"
        assert main([*args, *flag, "--output", str(out_json), "--quiet"]) == 0
        printed = capsys.readouterr().out
        assert ("corrected for the noise of the fitted survival" in printed) == bool(flag)
        outputs[bool(flag)] = json.loads(out_json.read_text())
    plain, fixed = outputs[False], outputs[True]
    assert fixed["config"]["noise_correction"] and not plain["config"]["noise_correction"]
    assert fixed["config"]["pool_fingerprint"] == plain["config"]["pool_fingerprint"]
    system = "BM25(k1=1.2,b=0.75)"
    for name, v in fixed["results"][system].items():
        assert (v["pooled"], v["full"]) == (
            plain["results"][system][name]["pooled"],
            plain["results"][system][name]["full"],
        )
    assert fixed["results"][system]["nDCG@10"]["sdm"] != plain["results"][system]["nDCG@10"]["sdm"]
    # the same numbers from the library, on the same pool and the system's run over it
    report = sdm.three_way(
        "irds:vaswani",
        [args[4]],
        pool_runs=["bm25"],
        depth=5,
        sample=1000,
        k_values=[10, 100],
        index_dir=tmp_path,
        noise_correction=True,
        curves=False,
        verbose=False,
    )
    for name in ("R@10", "nDCG@10", "R@100", "nDCG@100"):
        assert report.results[system][name]["sdm"] == pytest.approx(
            fixed["results"][system][name]["sdm"], abs=1e-12
        )
    capsys.readouterr()
    refused = [*args[:-1], str(tmp_path / "never"), "--noise-correction", "--covariate"]
    assert main(refused) == 2
    assert "--noise-correction is not available with --covariate" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("p, variance", [(0.3, 0.01), (1e-4, 1e-8), (1e-4, 4e-8), (8e-5, 4e-8), (0.0, 0.0)])
def test_the_two_points_have_the_estimates_mean_and_variance(p, variance):
    """second_order's two points P' have p^'s mean and variance (its docstring's definition), whether sd < p^ (p^ -+
    sd) or sd > p^ (0 and p^ + v / p^): for a term linear in p the correction changes nothing, and for (1 - p)^2,
    whose second derivative is 2, it takes exactly v off (E (1 - P')^2 = (1 - p)^2 + v). Swapped weights had
    passed every other test (only the branch sd > p^ tells them apart)."""
    from pyterrier_sparse_eval.measures._sdm import second_order

    rows, v = np.array([p]), np.array([variance])
    assert second_order(lambda q: 1.0 - q, rows, v)[0] == pytest.approx(1.0 - p, abs=1e-15)
    assert second_order(lambda q: (1.0 - q) ** 2, rows, v)[0] == pytest.approx(
        (1.0 - p) ** 2 - variance, abs=1e-15
    )
