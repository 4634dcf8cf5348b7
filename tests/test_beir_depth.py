"""BEIR's ArguAna convention at the cut-off, and `sparse-eval sdm` on judgments a dataset's topics or corpus lack.

BEIR's search retrieves k + 1 documents and leaves the query's own out, so k documents other than the query
remain; `experiment` and `sdm` (its full-corpus values, its check that a run was not cut) do the same. Expected
values come from pytrec_eval on runs built here independently (the full ranking, the query's own document dropped,
then cut to k).
"""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
import pytrec_eval
from helpers import write_beir_folder

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main


def _arguana_like(folder, n_queries=6, n_docs=60, extra_qrels=()):
    """A BEIR folder whose queries are documents; each query's relevant documents share its topic's words."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(200)]
    docs, qrels, queries = {}, [], {}
    for i in range(n_docs):
        topic = i % n_queries
        # "argument" in every document: a query's run over a pool lists the whole pool
        words = rng.sample(vocab, 6) + rng.sample([f"topic{topic}w{j}" for j in range(8)], 6) + ["argument"]
        docs[f"d{i}"] = " ".join(words)
    for t in range(n_queries):
        members = [f"d{i}" for i in range(n_docs) if i % n_queries == t]
        queries[members[0]] = docs[members[0]]
        qrels += [(members[0], d, 1) for d in members[1:3]]
    qrels += list(extra_qrels)
    write_beir_folder(folder, docs, queries, qrels)
    return {q: {d: r for qq, d, r in qrels if qq == q} for q in queries}


def _recall_at(folder, index_dir, qrels, k):
    """R@k as BEIR computes it, with pytrec_eval on the full BM25 ranking without each query's own document."""
    (entry,) = {p.parent for p in index_dir.rglob("pt_meta.json") if "pool" not in str(p)}
    topics = pse.datasets.get_topics(f"beir:{folder}")
    run = pse.BM25().retriever(pse.SparseIndex(entry), num_results=1000)(topics)
    results = {
        q: {d: float(s) for d, s in list(zip(g.docno, g.score)) if d != q} for q, g in run.groupby("qid")
    }
    results = {q: dict(sorted(r.items(), key=lambda x: -x[1])[:k]) for q, r in results.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}"}).evaluate(results)
    return sum(v[f"recall_{k}"] for v in per_query.values()) / len(qrels)


def test_experiment_keeps_k_documents_besides_the_query(tmp_path):
    folder = tmp_path / "arg"
    qrels = _arguana_like(folder)
    out = tmp_path / "r.json"
    argv = ["experiment", "--dataset", f"beir:{folder}", "--index-dir", str(tmp_path / "i"), "--quiet"]
    assert main([*argv, "--metric", "R@2", "--num-results", "2", "--output", str(out)]) == 0
    (got,) = json.loads(out.read_text())["results"].values()
    expected = _recall_at(folder, tmp_path / "i", qrels, 2)
    assert expected > 0  # the relevant documents rank below each query's own
    assert got["R@2"] == pytest.approx(expected, abs=1e-12)


def test_sdm_full_values_keep_k_documents_besides_the_query(tmp_path, capsys):
    folder = tmp_path / "arg"
    qrels = _arguana_like(folder)
    out = tmp_path / "s.json"
    argv = ["sdm", "--dataset", f"beir:{folder}", "--index-dir", str(tmp_path / "i"), "--quiet"]
    # the pool holds every document (nothing unseen): pooled, SDM and full are the same number
    assert (
        main(
            [
                *argv,
                "--k",
                "2",
                "--num-results",
                "2",
                "--pool-depth",
                "0",
                "--sample",
                "48",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    (got,) = json.loads(out.read_text())["results"].values()
    expected = _recall_at(folder, tmp_path / "i", qrels, 2)
    assert got["R@2"]["full"] == pytest.approx(expected, abs=1e-12)
    assert got["R@2"]["pooled"] == pytest.approx(expected, abs=1e-12)
    capsys.readouterr()
    # k beyond the pool: each run over the pool lists the pool but the query's own document, which is not a cut
    # run (it had been warned as one, with a fix that cannot be followed)
    assert main([*argv, "--k", "100", "--pool-depth", "0", "--sample", "48"]) == 0
    assert "The run lists at most" not in capsys.readouterr().err


def test_sdm_leaves_out_judgments_of_documents_the_corpus_lacks(tmp_path, capsys):
    folder = tmp_path / "arg"
    qrels = _arguana_like(folder, extra_qrels=[("d0", "GONE", 1)])
    out = tmp_path / "s.json"
    argv = ["sdm", "--dataset", f"beir:{folder}", "--index-dir", str(tmp_path / "i"), "--quiet"]
    # it had stopped with exit 2 ("no pool can hold them") where `experiment` evaluates the dataset
    assert main([*argv, "--k", "5", "--pool-depth", "0", "--sample", "48", "--output", str(out)]) == 0
    assert "1 judgments (1 relevant) name documents that are not in the corpus" in capsys.readouterr().err
    (got,) = json.loads(out.read_text())["results"].values()
    del qrels["d0"]["GONE"]
    assert got["R@5"]["full"] == pytest.approx(_recall_at(folder, tmp_path / "i", qrels, 5), abs=1e-12)


def test_sdm_neither_pools_nor_evaluates_judged_queries_missing_from_the_topics(tmp_path, capsys):
    folder = tmp_path / "arg"
    _arguana_like(folder)
    with (folder / "qrels" / "test.tsv").open("a") as f:
        f.write("elsewhere\td5\t1\n")
    argv = ["sdm", "--dataset", f"beir:{folder}", "--index-dir", str(tmp_path / "i"), "--quiet"]
    assert main([*argv, "--k", "5", "--pool-depth", "0", "--sample", "48"]) == 0
    err = capsys.readouterr().err
    assert "1 judged queries are not in the topics" in err
    assert "have no results in the run" not in err  # as if the retrieval had failed for them


def test_sdm_measures_take_none_as_their_default(tmp_path):
    import pyterrier as pt

    from pyterrier_sparse_eval import sdm

    docnos = [f"d{i}" for i in range(300)]
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d3"], "label": [1, 1, 1]})
    pool = sdm.build_pool(qrels, [], all_docnos=docnos, depth=0, sample=50, seed=0)
    rng = random.Random(0)
    # the relevant documents score high, the background low
    run = pd.DataFrame(
        [
            (q, d, (5.0 if d in ("d1", "d2", "d3") else 0.0) + rng.random())
            for q in ("q1", "q2")
            for d in pool.docnos
        ],
        columns=["qid", "docno", "score"],
    )
    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["a", "b"]})
    # covariate=None had been refused ("invalid param covariate=None"), as sdm.evaluate takes it for no covariate
    plain, given_none = sdm.SDM_R(pool=pool) @ 10, sdm.SDM_R(pool=pool, covariate=None, rel=None) @ 10
    assert plain == given_none and repr(plain) == repr(given_none)
    measures = [given_none, sdm.SDM_nDCG(pool=pool, covariate=None) @ 10]
    table = pt.Experiment([pt.Transformer.from_df(run)], topics, qrels, measures, names=["r"]).set_index(
        "name"
    )
    expected = sdm.evaluate(run, qrels, pool, [10], verbose=False)["aggregate"]
    assert expected["R@10"]["sdm"] > 0.5
    assert table.loc["r", str(given_none)] == pytest.approx(expected["R@10"]["sdm"], abs=1e-12)
    assert table.loc["r", str(measures[1])] == pytest.approx(expected["nDCG@10"]["sdm"], abs=1e-12)


def test_ignore_identical_ids_keeps_the_best_scores_of_a_run_without_ranks():
    """A frame without ranks (pt.Transformer.from_df, a CSV) had kept its first k rows, not its k best."""
    run = pd.DataFrame(
        {
            "qid": ["1"] * 5 + [None],
            "docno": ["8", "1", "5", "7", "2", "3"],
            "score": [1.0, 3.0, 4.0, 2.0, 2.0, 1.0],
        }
    )
    kept = pse.IgnoreIdenticalIds(num_results=2).transform(run)
    # the query's own "1" left out; "7" before "2" at equal scores, as listed
    assert kept[kept["qid"] == "1"]["docno"].tolist() == ["5", "7"]
    # a row without a qid had been a pandas IntCastingNaNError once ranks were renumbered
    ranked = pse.IgnoreIdenticalIds().transform(run.assign(rank=[3, 1, 0, 2, 4, 0]))
    assert ranked["rank"].tolist() == [2, 0, 1, 3, 0]


def test_qrels_label_and_relevance_columns_of_one_judgment_are_the_same():
    """A label 1 (int) and a relevance 1.0 (float) had been refused as columns that differ (compared as text); a
    missing label's fix had been round(), which keeps it missing."""
    import pyterrier as pt

    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, 0], "relevance": [1.0, 0.0]})
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    assert pse.evaluate(run, qrels, ["AP"]).aggregate["AP"] == 1.0
    with pytest.raises(ValueError, match="differ"):
        pse.evaluate(run, qrels.assign(relevance=[0.0, 1.0]), ["AP"])
    missing = qrels.drop(columns="relevance").astype({"label": "Int64"})
    missing.loc[1, "label"] = pd.NA
    with pytest.raises(ValueError, match=r"e.g. qrels = qrels.dropna\(subset=\['label'\]\)"):
        pse.Experiment(
            [pt.Transformer.from_df(run)], pd.DataFrame({"qid": ["1"], "query": ["x"]}), missing, ["AP"]
        )


def test_a_cut_run_is_still_warned_when_query_ids_are_docnos():
    """Numeric ids (qids 1..N, docnos 1..M, as Vaswani's): a query's id is a pooled docno its run does not list.
    Counting it as listed for every dataset had hidden a run cut at 50 (the warning needs most queries at one
    depth); it is counted only for a query that lists every pooled document but its own."""
    import warnings

    from pyterrier_sparse_eval import sdm

    qids = [str(i) for i in range(1, 9)]
    qrels = pd.DataFrame({"qid": qids + ["1", "2"], "docno": [str(100 + i) for i in range(8)] + ["1", "2"]})
    qrels["label"] = 1  # the documents "1" and "2" relevant: pooled
    pool = sdm.build_pool(qrels, [], all_docnos=[str(i) for i in range(1, 3001)], depth=0, sample=500, seed=0)
    assert {"1", "2"} <= pool.docno_set
    rng = random.Random(0)
    run = pd.DataFrame(
        [(q, d, rng.random()) for q in qids for d in [d for d in pool.docnos if d != q][:50]],
        columns=["qid", "docno", "score"],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sdm.evaluate(run, qrels, pool, [100], verbose=False)
    assert any("The run lists at most 50 documents per query (8 of its 8" in str(w.message) for w in caught)


def test_ignore_identical_ids_ranks_scores_as_numbers():
    """Scores read as text ("10.0" had ranked below "3") and a missing score (its row had been dropped below k)."""
    run = pd.DataFrame({"qid": ["q"] * 4, "docno": ["a", "b", "c", "d"], "score": ["3", "10.0", None, "2"]})
    assert pse.IgnoreIdenticalIds(num_results=4).transform(run)["docno"].tolist() == ["a", "b", "c", "d"]
    assert pse.IgnoreIdenticalIds(num_results=2).transform(run)["docno"].tolist() == ["a", "b"]
