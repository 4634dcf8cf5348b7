"""Pooled corpora, pooled indexes, SDM measures in pt.Experiment, and the real-data validation of SDM."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pyterrier as pt
import pytest
import pytrec_eval
from conftest import needs_data

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import sdm

# ------------------------------------------------------------------------------------------------------------
# Pool building (synthetic)
# ------------------------------------------------------------------------------------------------------------


def _synthetic(seed=0, queries=6, docs=400):
    rng = np.random.default_rng(seed)
    all_docnos = [f"d{i:03d}" for i in range(docs)]
    qrels = pd.DataFrame(
        [
            (f"q{q}", all_docnos[d], int(rng.integers(0, 3)))
            for q in range(queries)
            for d in rng.choice(docs, 6, replace=False)
        ],
        columns=["qid", "docno", "label"],
    )
    runs = [
        pd.DataFrame(
            [
                (f"q{q}", all_docnos[d], float(rng.integers(0, 20)))
                for q in range(queries)
                for d in rng.choice(docs, 60, replace=False)
            ],
            columns=["qid", "docno", "score"],
        )
        for _ in range(2)
    ]
    return all_docnos, qrels, runs


def _reference_distractors(qrels, runs, depth):
    """Independent: per query, best 0-based trec_eval rank over the runs, non-relevant only, top depth."""
    relevant = set(map(tuple, qrels[qrels.label >= 1][["qid", "docno"]].to_numpy().tolist()))
    best = {}
    for run in runs:
        for qid, rows in run.groupby("qid"):
            ranked = sorted(zip(rows.score, rows.docno), key=lambda x: (-x[0], [-ord(c) for c in x[1]]))
            for rank, (_, d) in enumerate(ranked):
                best[(qid, d)] = min(best.get((qid, d), rank), rank)
    out = set()
    for qid in {q for q, _ in best}:
        cands = sorted((r, d) for (q, d), r in best.items() if q == qid and (q, d) not in relevant)
        out |= {d for _, d in cands[:depth]}
    return out


def test_pool_holds_relevant_distractors_and_a_seeded_sample(tmp_path):
    all_docnos, qrels, runs = _synthetic()
    pool = sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=50, seed=1, dataset="synthetic")
    relevant = set(qrels[qrels.label >= 1].docno)
    assert set(pool.relevant) == relevant
    assert set(pool.distractors) == _reference_distractors(qrels, runs, 5) - relevant
    assert len(pool.sample) == 50 and not (set(pool.sample) & (relevant | set(pool.distractors)))
    assert len(set(pool.docnos)) == pool.size and pool.num_docs == 400 and pool.n_unseen == 400 - pool.size
    again = sdm.build_pool(
        qrels, runs, all_docnos=reversed(all_docnos), depth=5, sample=50, seed=1, dataset="synthetic"
    )
    assert again.sample == pool.sample and repr(again) == repr(
        pool
    )  # input order does not matter, the seed does
    other = sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=50, seed=2)
    assert other.sample != pool.sample
    pool.save(tmp_path / "pool.json")
    loaded = sdm.Pool.load(tmp_path / "pool.json")
    assert loaded == pool and loaded.fingerprint == pool.fingerprint
    with pytest.raises(ValueError, match=r"lower sample= \(--sample\) or depth= \(--pool-depth\)"):
        sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=400)
    with pytest.raises(
        ValueError, match=r"not in the corpus.*drop their judgments \(qrels\[qrels.docno.isin"
    ):
        sdm.build_pool(qrels, runs, all_docnos=all_docnos[:10], depth=5, sample=0)


def test_a_sample_too_small_to_fit_is_said(recwarn):
    all_docnos, qrels, runs = _synthetic()
    with pytest.warns(UserWarning, match=r"background sample of 2 documents.*Sample more") as caught:
        sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=2)
    assert caught[0].filename == __file__  # points at the user's line
    with pytest.warns(UserWarning, match="background sample of 4 documents"):  # tail samples count too
        sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=2, sample=2, tail_sample=2, tail_depth=40)
    recwarn.clear()
    sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=50)
    small, small_qrels, small_runs = _synthetic(docs=120)
    deep = sdm.build_pool(small_qrels, small_runs, all_docnos=small, depth=20, sample=0)
    assert 2 < (rest := 120 - deep.size) < 50
    sdm.build_pool(small_qrels, small_runs, all_docnos=small, depth=20, sample=rest)  # nothing unseen
    assert not [w for w in recwarn if "background sample" in str(w.message)]
    # a sample of 0: SDM names the fix that applies (a larger sample had been advised for a pool holding the
    # whole corpus, where none can be drawn)
    inside = [r[r.docno.isin(set(deep.docnos))] for r in small_runs]  # the pool's documents as the corpus
    whole = sdm.build_pool(small_qrels, inside, all_docnos=deep.docnos, depth=1000, sample=0)
    run = inside[0]
    assert whole.n_unseen == 0
    with pytest.raises(ValueError, match="pool holds the whole corpus, so the pooled values are the full"):
        sdm.evaluate(run, small_qrels, whole, [10])
    with pytest.raises(ValueError, match=r"SDM needs at least 2 \(build the pool with a larger sample"):
        sdm.evaluate(run, small_qrels, deep, [10])


def test_pools_of_nothing_relevant_or_without_runs_are_said(recwarn):
    """rel= above every label had built a pool of no relevant document (every R@k then 0), and depth= without
    pooling runs a pool without distractors, both without a word; NaN scores name the run at fault."""
    all_docnos, qrels, runs = _synthetic()
    with pytest.raises(ValueError, match=r"No judgment has a label >= rel=3 \(the labels: \[0, 1, 2\]\)"):
        sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=50, rel=3)
    with pytest.warns(UserWarning, match="depth=5 takes each query's top non-relevant documents") as caught:
        pool = sdm.build_pool(qrels, [], all_docnos=all_docnos, depth=5, sample=50)
    assert caught[0].filename == __file__ and not pool.distractors
    recwarn.clear()
    sdm.build_pool(qrels, [], all_docnos=all_docnos, depth=0, sample=50)
    assert not recwarn.list
    nan = runs[0].assign(score=runs[0].score.where(runs[0].index != 3))
    with pytest.raises(ValueError, match="The pooling run has 1 NaN scores.*drop those rows"):
        sdm.build_pool(qrels, [nan, runs[1]], all_docnos=all_docnos, depth=5, sample=50)
    pool = sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=5, sample=50)
    with pytest.raises(ValueError, match="The covariate run has 1 NaN scores"):
        sdm.Covariate.from_run(nan, pool)


def test_background_from_run_censors_unretrieved_sample_documents():
    all_docnos, qrels, runs = _synthetic()
    pool = sdm.build_pool(qrels, runs, all_docnos=all_docnos, depth=3, sample=40, seed=0)
    sampled = list(pool.sample)
    run = pd.DataFrame(
        {
            "qid": ["a"] * 12,
            "docno": sampled[:10] + ["zz1", "zz2"],
            "score": [5.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.1, 1.0, 0.9, 0.8, 7.0, 0.5],
        }
    )
    bg = sdm.background_from_run(run, pool)["a"]
    # at trec_eval's single precision, as the run's relevant rows are ranked and compared with them
    single = np.float32([5.0, 4.0, 3.0, 2.0, 1.5, 1.2, 1.1, 1.0, 0.9, 0.8]).astype(np.float64)
    assert sorted(bg.observed.tolist()) == sorted(single.tolist())
    assert bg.n_below == 30 and bg.below == 0.5


# ------------------------------------------------------------------------------------------------------------
# Real collections
# ------------------------------------------------------------------------------------------------------------


@needs_data
def test_subset_index_scores_documents_as_the_full_index(tmp_path, scifact, scifact_bm25_index):
    topics = pse.datasets.get_topics(scifact, verbose=False).head(40)
    full = scifact_bm25_index
    keep = full.docnos[::7].tolist()
    sub = full.subset(keep, tmp_path / "sub")
    assert sub.num_docs == len(keep) and sub.collection_num_docs == full.num_docs
    np.testing.assert_array_equal(sub.idf, full.idf)
    bm25 = pse.BM25()
    # the raw float32 scores (ties="lucene" would nudge tied scores, differently where neighbours differ)
    full_run = bm25.retriever(full, num_results=full.num_docs, ties="trec_eval").transform(topics)
    sub_run = bm25.retriever(sub, num_results=sub.num_docs, ties="trec_eval").transform(topics)
    expected = full_run[full_run.docno.isin(set(keep))]
    merged = expected.merge(sub_run, on=["qid", "docno"], suffixes=("_full", "_sub"))
    assert len(merged) == len(expected) == len(sub_run)
    np.testing.assert_allclose(merged.score_sub, merged.score_full, rtol=1e-6)
    # same order too: the subset's ranking is the full ranking restricted to its documents
    for qid, rows in sub_run.groupby("qid"):
        assert rows.docno.tolist() == expected[expected.qid == qid].docno.tolist()
    # a subset of a subset keeps the original corpus' statistics
    subsub = sub.subset(keep[:100], tmp_path / "subsub")
    np.testing.assert_array_equal(subsub.idf, full.idf)
    with pytest.raises(KeyError, match="not in"):
        full.subset(["no-such-doc"], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()
    with pytest.raises(FileExistsError, match="overwrite"):
        full.subset(keep, tmp_path / "sub")


@needs_data
def test_sdm_equals_trec_eval_when_the_pool_is_the_whole_corpus(tmp_path, scifact, scifact_bm25_index):
    """Identity on a real run: with every document pooled (no unseen ones) SDM = trec_eval (pytrec_eval)."""
    topics = pse.datasets.get_topics(scifact, verbose=False)
    qrels = pse.datasets.get_qrels(scifact)
    bm25 = pse.BM25()
    run = bm25.retriever(scifact_bm25_index, num_results=1000).transform(topics)
    n_rel = qrels[qrels.label >= 1].docno.nunique()
    pool = sdm.build_pool(
        qrels,
        [run],
        all_docnos=scifact_bm25_index.docnos,
        depth=0,
        sample=scifact_bm25_index.num_docs - n_rel,
        seed=0,
    )
    assert pool.n_unseen == 0
    got = sdm.evaluate(run, qrels, pool, [10, 100, 1000])["per_query"]
    qrels_dict = {q: dict(zip(g.docno, g.label)) for q, g in qrels.groupby("qid")}
    run_dict = {q: dict(zip(g.docno, g.score.astype(float))) for q, g in run.groupby("qid")}
    names = {f"{m}_{k}" for k in (10, 100, 1000) for m in ("recall", "ndcg_cut")}
    ref = pytrec_eval.RelevanceEvaluator(qrels_dict, names).evaluate(run_dict)
    checked = 0
    for k in (10, 100, 1000):
        for ours, theirs in ((f"R@{k}", f"recall_{k}"), (f"nDCG@{k}", f"ndcg_cut_{k}")):
            for qid, v in got[ours].items():
                assert abs(v["sdm"] - ref[qid][theirs]) <= 1e-9, (ours, qid)
                assert abs(v["pooled"] - ref[qid][theirs]) <= 1e-9
                checked += 1
    assert checked == 6 * len(ref)


@needs_data
def test_sdm_measures_inside_pt_experiment_with_two_systems(tmp_path, scifact, scifact_bm25_index):
    topics = pse.datasets.get_topics(scifact, verbose=False)
    qrels = pse.datasets.get_qrels(scifact)
    other = pse.SparseIndex(tmp_path / "bm25-1.2")
    pse.BM25(k1=1.2, b=0.75).indexer(other, verbose=False).index(pse.datasets.corpus_iter(scifact))
    first = pse.BM25().retriever(scifact_bm25_index, num_results=1000)
    pool = sdm.build_pool(
        qrels,
        [first.transform(topics)],
        all_docnos=scifact_bm25_index.docnos,
        depth=2,
        sample=800,
        seed=0,
        dataset="irds:beir/scifact/test",
    )
    systems = []
    for bm25, full in ((pse.BM25(), scifact_bm25_index), (pse.BM25(k1=1.2, b=0.75), other)):
        pooled = pool.index(full, tmp_path / f"pooled-{bm25.k1}")
        systems.append(bm25.retriever(pooled, num_results=pool.size))
    measures = [
        pse.measures.R @ 100,
        sdm.SDM_R(pool=pool) @ 100,
        sdm.SDM_nDCG(pool=pool) @ 100,
        sdm.SDM_nDCG(pool=pool, family="empirical") @ 10,
    ]
    table = pt.Experiment(systems, topics, qrels, measures, names=["a", "b"], baseline=0)
    names = [str(m) for m in measures]
    assert "SDM_R(pool=Pool(beir/scifact/test:" in names[1] and names[1].endswith(")@100")
    assert "family='empirical'" in names[3]
    for m in names[1:]:
        assert f"{m} p-value" in table.columns and np.isfinite(table.loc[1, f"{m} p-value"])
    # each system corrected with its own fits: the same numbers as the functional API on its own run
    for i, system in enumerate(systems):
        direct = sdm.evaluate(system.transform(topics), qrels, pool, [100])["aggregate"]
        assert table.loc[i, names[1]] == pytest.approx(direct["R@100"]["sdm"], abs=1e-12)
        assert table.loc[i, names[2]] == pytest.approx(direct["nDCG@100"]["sdm"], abs=1e-12)
        assert table.loc[i, names[1]] < table.loc[i, names[0]]  # corrected down from the pooled value
    assert table.loc[0, names[1]] != table.loc[1, names[1]]


def test_threshold_estimator_matches_an_independent_rederivation():
    """Parity with the published reference's Recall@k estimator (skew-normal, binary labels, cosine scores)."""
    from scipy import stats

    rng = np.random.default_rng(4)
    a_true, n_docs = 3.0, 200_000
    rows, qrels, sample = [], [], [f"s{i}" for i in range(2000)]
    for q in range(8):
        qid = f"q{q}"
        for i, s in enumerate(np.clip(rng.normal(0.75, 0.08, 12), -1, 1)):
            rows.append((qid, f"{qid}r{i}", float(s)))
            qrels.append((qid, f"{qid}r{i}", 1))
        for i, s in enumerate(np.clip(rng.normal(0.7, 0.05, 20), -1, 1)):
            rows.append((qid, f"{qid}d{i}", float(s)))
        for d, s in zip(
            sample, np.clip(stats.skewnorm.rvs(a_true, 0.1, 0.15, size=2000, random_state=rng), -1, 1)
        ):
            rows.append((qid, d, float(s)))
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    qrels = pd.DataFrame(qrels, columns=["qid", "docno", "label"])
    rel = tuple(qrels.docno)
    dis = tuple(sorted({d for _, d, _ in rows if "d" in d and not d.startswith("s")}))
    pool = sdm.Pool(num_docs=n_docs, relevant=rel, distractors=dis, sample=tuple(sample), depth=20, seed=0)
    models = sdm.fit_run_backgrounds(run, pool, "skewnorm")
    for k in (10, 100, 1000):
        ours = sdm.threshold_recall(run, qrels, pool, k, models=models)
        for qid, rows_q in run.groupby("qid"):
            scores = rows_q.score.to_numpy()
            rel_scores = rows_q[rows_q.docno.isin(set(qrels.docno))].score.to_numpy()
            model = models[qid]

            def total_above(tau, scores=scores, model=model):  # pooled >= tau + expected unseen >= tau
                return float(np.sum(scores >= tau)) + pool.n_unseen * float(model.sf(tau))

            lo, hi = -1.0, 1.0  # the reference's fixed bracket: fine for cosine scores, as here
            for _ in range(100):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if total_above(mid) > k else (lo, mid)
            expected = float(np.mean(rel_scores >= hi))
            assert ours[qid] == pytest.approx(expected, abs=1e-9), (k, qid)


# ------------------------------------------------------------------------------------------------------------
# Real-data validation of SDM: pooled vs SDM vs full corpus
# ------------------------------------------------------------------------------------------------------------


def _closure_ok(report, k=100):
    failures = []
    for system, measures in report.results.items():
        for name in (f"R@{k}", f"nDCG@{k}"):
            v = measures[name]
            gap = abs(v["pooled"] - v["full"])
            if gap >= 0.01 and abs(v["sdm"] - v["full"]) > 0.25 * gap:
                failures.append((system, name, v))
    return failures


@needs_data
def test_sdm_closes_the_gap_on_vaswani(tmp_path):
    from pyterrier_sparse_eval.sdm import three_way

    report = three_way(
        "irds:vaswani",
        ["bm25", "bm25:k1=1.2,b=0.75"],
        depth=10,
        sample=1000,
        seed=0,
        k_values=[10, 100, 1000],
        index_dir=tmp_path,
        curves=False,
        verbose=False,
    )
    assert report.pool.size <= report.pool.num_docs / 3 and len(report.pool.sample) <= 2000
    for system in report.results.values():  # the pool really flatters: there is a gap to close
        assert system["R@100"]["pooled"] - system["R@100"]["full"] > 0.1
    assert not _closure_ok(report), report.table()
    header = report.table().splitlines()[1]  # no bootstrap, no interval column (it had been printed, empty)
    assert header.split() == ["system", "measure", "pooled", "SDM", "full", "gap", "closed"]
    # systems whose names share their first 28 characters are named whole, in one column as wide as the longest
    long = [f"splade:naver/splade-cocondenser-{tail}" for tail in ("ensembledistil", "selfdistil")]
    renamed = dataclasses.replace(report, results=dict(zip(long, report.results.values())))
    rows = renamed.table().splitlines()[2:]
    assert {row.split()[0] for row in rows} == set(long)
    assert len({row.index(row.split()[1], len(row.split()[0])) for row in rows}) == 1, rows


@needs_data
@pytest.mark.slow
def test_sdm_command_closes_the_gap_on_scifact(tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    out = tmp_path / "sdm.json"
    code = main(
        [
            "sdm",
            "--dataset",
            "irds:beir/scifact/test",
            "--system",
            "bm25",
            "--system",
            "bm25:k1=1.2,b=0.75",
            "--pool-depth",
            "2",
            "--sample",
            "800",
            "--k",
            "10",
            "--k",
            "100",
            "--k",
            "1000",
            "--index-dir",
            str(tmp_path / "idx"),
            "--output",
            str(out),
            "--plots",
            str(tmp_path / "plots"),
            "--bootstrap",
            "5",
            "--quiet",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    config = report["config"]
    assert config["pool_size"] <= config["num_docs"] / 3 and config["sample"] <= 2000
    assert set(report["results"]) == {"BM25(k1=0.9,b=0.4)", "BM25(k1=1.2,b=0.75)"}
    failures = []
    for system, measures in report["results"].items():
        assert set(measures) == {"R@10", "nDCG@10", "R@100", "nDCG@100", "R@1000", "nDCG@1000"}
        for name in ("R@100", "nDCG@100"):
            v = measures[name]
            assert v["pooled"] - v["full"] >= 0.01
            lo, hi = v["sdm_ci"]
            assert lo <= hi
            if abs(v["sdm"] - v["full"]) > 0.25 * abs(v["pooled"] - v["full"]):
                failures.append((system, name, v))
    assert not failures, capsys.readouterr().out
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert len(pngs) == 4 and all((tmp_path / "plots" / p).stat().st_size > 10_000 for p in pngs)
    assert main(["sdm", "--dataset", "irds:beir/scifact/test", "--family", "gamma"]) == 2
