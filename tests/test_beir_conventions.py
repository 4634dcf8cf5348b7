"""BEIR's evaluation conventions: a query's own document left out of its results (ArguAna's queries are documents;
BEIR's ``ignore_identical_ids``, Anserini's ``-removeQuery``), and queries judged only below 0 (Touché's spam
label -2), on which pytrec_eval crashes the process.

Expected values come from pytrec_eval itself, on the run with the query's own document removed as BEIR's
``EvaluateRetrieval.evaluate`` removes it."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
import pytrec_eval
from helpers import write_beir_folder

import pyterrier_sparse_eval as pse

CORPUS = {
    "arg-1-pro": "nuclear power is clean and safe energy for the future",
    "arg-1-con": "nuclear power waste is dangerous for thousands of years",
    "arg-2-pro": "school uniforms make pupils equal and focused",
    "arg-2-con": "school uniforms take away the freedom of pupils",
    "arg-3-pro": "cats are better pets than dogs",
}
QUERIES = {"arg-1-pro": CORPUS["arg-1-pro"], "arg-2-pro": CORPUS["arg-2-pro"]}
QRELS = {"arg-1-pro": {"arg-1-con": 1}, "arg-2-pro": {"arg-2-con": 1}}


@pytest.fixture
def arguana(tmp_path):
    """A BEIR folder shaped as ArguAna: each query is also a document."""
    rows = [(q, d, r) for q, j in QRELS.items() for d, r in j.items()]
    return write_beir_folder(tmp_path / "arguana", CORPUS, QUERIES, rows)


def _beir_ndcg10(run: pd.DataFrame) -> float:
    """nDCG@10 as BEIR computes it: pytrec_eval on the run without each query's own document."""
    results = {q: {d: float(s) for d, s in zip(g.docno, g.score) if d != q} for q, g in run.groupby("qid")}
    per_query = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.10"}).evaluate(results)
    return sum(v["ndcg_cut_10"] for v in per_query.values()) / len(QRELS)


def test_the_command_line_leaves_a_querys_own_document_out(arguana, tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    out = tmp_path / "r.json"
    argv = [
        "experiment",
        "--dataset",
        f"beir:{arguana}",
        "--index-dir",
        str(tmp_path / "i"),
        "--metric",
        "nDCG@10",
    ]
    assert main([*argv, "--output", str(out)]) == 0
    assert "each query's own document is left out of its results" in capsys.readouterr().out
    (got,) = json.loads(out.read_text())["results"].values()
    index = pse.SparseIndex(next((tmp_path / "i").rglob("pt_meta.json")).parent)
    topics = pd.DataFrame({"qid": list(QUERIES), "query": list(QUERIES.values())})
    run = pse.BM25().retriever(index)(topics)
    assert run.groupby("qid").head(1)["docno"].tolist() == list(QUERIES)  # each query's own document first
    assert got["nDCG@10"] == pytest.approx(_beir_ndcg10(run), abs=1e-12)
    assert (
        got["nDCG@10"]
        > pse.evaluate(
            run,
            pd.DataFrame(
                [(q, d, r) for q, j in QRELS.items() for d, r in j.items()], columns=["qid", "docno", "label"]
            ),
            ["nDCG@10"],
        ).aggregate["nDCG@10"]
    )


def test_the_transformer_in_a_pyterrier_experiment(arguana):
    import pyterrier as pt
    from ir_measures import nDCG

    dataset = pse.datasets.get(f"beir:{arguana}")
    index = (
        pse.BM25()
        .indexer(pse.SparseIndex(arguana / "idx"), verbose=False)
        .index(pse.datasets.corpus_iter(dataset))
    )
    topics, qrels = pse.datasets.get_topics(dataset), pse.datasets.get_qrels(dataset)
    retriever = pse.BM25().retriever(index)
    table = pt.Experiment([retriever >> pse.IgnoreIdenticalIds()], topics, qrels, [nDCG @ 10])
    assert table["nDCG@10"].iloc[0] == pytest.approx(_beir_ndcg10(retriever(topics)), abs=1e-12)
    cut = (retriever >> pse.IgnoreIdenticalIds())(topics)
    assert (cut.qid != cut.docno).all() and cut.groupby("qid")["rank"].apply(list).map(
        lambda r: r == list(range(len(r)))
    ).all()


def test_a_query_judged_only_below_zero_is_evaluated(tmp_path):
    # pytrec_eval crashes (SIGSEGV) on such a query after another: run in a child process
    child = """
import pandas as pd, pyterrier as pt, pyterrier_sparse_eval as pse
from ir_measures import nDCG, AP
run = pd.DataFrame({"qid": ["a", "a", "b", "b"], "docno": ["d1", "d2", "d2", "d3"], "score": [2.0, 1.0, 2.0, 1.0]})
qrels = pd.DataFrame({"qid": ["a", "b", "b"], "docno": ["d1", "d2", "d3"], "label": [1, -2, -2]})
topics = pd.DataFrame({"qid": ["a", "b"], "query": ["x", "y"]})
table = pse.Experiment([pt.Transformer.from_df(run)], topics, qrels, [nDCG@10, AP], names=["r"])
print(table[["nDCG@10", "AP"]].to_json(orient="records"))
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # trec_eval reads a label below 0 as 0: query a scores 1, query b 0 (pytrec_eval with b's labels as 0)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [{"nDCG@10": 0.5, "AP": 0.5}]


def test_a_query_text_that_is_not_a_string_is_refused(arguana):
    (arguana / "queries.jsonl").write_text(
        json.dumps({"_id": "arg-1-pro", "text": ["covid origin", "bats"]}) + "\n"
    )
    # a FieldError, a KeyError
    with pytest.raises(KeyError, match="line 1: the query's text is a JSON list; give a string"):
        pse.datasets.get_topics(f"beir:{arguana}")


def test_a_folder_of_beir_folders_names_them(tmp_path, arguana):
    import shutil

    for forum in ("android", "gaming"):  # CQADupStack's layout
        shutil.copytree(arguana, tmp_path / "cqadupstack" / forum)
    with pytest.raises(
        FileNotFoundError, match=r"it holds BEIR folders \(android, gaming\): give one, e.g. beir:"
    ):
        pse.datasets.get(f"beir:{tmp_path / 'cqadupstack'}")


@pytest.mark.parametrize(
    "spec, ignored",
    [
        ("beir:/data/arguana", True),
        ("irds:beir/arguana", True),
        ("hf:mteb/arguana:test", False),  # MTEB leaves it out only in tasks that declare it
        ("hf:miracl:sw", False),
        ("hf:mmarco:pt", False),  # MS MARCO's query and passage ids are two spaces that share numbers
        ("irds:vaswani", False),
        ("files:c.jsonl,t.tsv,q.txt", False),
    ],
)
def test_which_datasets_leave_a_querys_own_document_out(spec, ignored):
    from pyterrier_sparse_eval._identical import ignores_identical_ids

    assert ignores_identical_ids(spec) is ignored


def test_dprs_passages_header_reads_text_then_title(tmp_path):
    # DPR's psgs_w100.tsv: id<TAB>text<TAB>title, texts quoted as its csv writer quotes them
    (tmp_path / "psgs.tsv").write_text('id\ttext\ttitle\n1\t"Aaron ( or ; ""Aharon"") is a prophet"\tAaron\n')
    (tmp_path / "q.tsv").write_text("1\twho is aaron\n")
    (tmp_path / "qrels.txt").write_text("1 0 1 1\n")
    spec = f"files:{tmp_path / 'psgs.tsv'},{tmp_path / 'q.tsv'},{tmp_path / 'qrels.txt'}"
    (doc,) = pse.datasets.corpus_iter(spec)
    assert (doc["docno"], doc["title"], doc["text"]) == (
        "1",
        "Aaron",
        '"Aaron ( or ; ""Aharon"") is a prophet"',
    )
    (tmp_path / "psgs.tsv").write_text("id\tbody\ttitle\n1\tx\ty\n")
    with pytest.raises(ValueError, match="does not name the columns as read"):
        list(pse.datasets.corpus_iter(spec))
