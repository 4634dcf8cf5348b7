"""The default BM25 against Lucene itself: Anserini 0.22.1's runs on the shared collections.

The runs in ../shared/data/lucene/runs were made by Anserini (Lucene 9.5, DefaultEnglishAnalyzer, BM25 k1=0.9
b=0.4, top 1000; see their README). Anserini writes each score rounded to 1e-4 and then nudges tied scores down
by 1e-6 per tie (ScoreTiesAdjusterReranker), so a file line holds docno, rank and that written score. Two
checks: every query evaluates identically (pytrec_eval, seven measures), and every line of Anserini's files is
reproduced by applying Anserini's writer to our float32 scores: the same documents, in the same order, with the
same written scores (which needs the same float32 score for every document, to the rounding of the 4th decimal).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from conftest import SHARED_CACHE, needs_data

import pyterrier_sparse_eval as pse

RUNS = SHARED_CACHE.parent / "lucene" / "runs"
pytestmark = [
    needs_data,
    pytest.mark.skipif(not RUNS.is_dir(), reason=f"Anserini's runs not found at {RUNS}"),
]
MEASURES = {"ndcg_cut_10", "map", "recall_100", "recall_1000", "P_10", "recip_rank", "ndcg"}


def read_anserini(path: Path) -> dict[str, list[tuple[str, str]]]:
    run: dict[str, list[tuple[str, str]]] = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, []).append((docno, score))
    return run


def anserini_written(scores: np.ndarray) -> list[str]:
    """Anserini 0.22.1's ScoreTiesAdjusterReranker + "%.6f" on one query's float32 scores in rank order:
    Math.round(score * 1e4) / 1e4f (double product, half up), then 1e-6f less per tie within 1e-4."""
    f32 = np.float32
    out, dup, prev = [], 0, f32(0)
    for i, s in enumerate(scores.astype(np.float32)):
        r = f32(np.floor(np.float64(s) * 1e4 + 0.5)) / f32(1e4)
        if i == 0 or f32(prev - r) > f32(1e-4):
            dup = 0
        else:
            dup += 1
            r = f32(r - f32(f32(1e-6) * f32(dup)))
        out.append(f"{float(r):.6f}")
        prev = r
    return out


@pytest.fixture(scope="module")
def vaswani_bm25_index(tmp_path_factory, vaswani):
    index = pse.SparseIndex(tmp_path_factory.mktemp("vaswani") / "bm25")
    pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(vaswani))
    return index


@pytest.mark.parametrize(
    "name, run_file", [("scifact", "beir-scifact-test"), ("vaswani", "vaswani")], ids=["scifact", "vaswani"]
)
def test_default_bm25_reproduces_anserini(request, name, run_file):
    dataset = request.getfixturevalue(name)
    index = request.getfixturevalue("scifact_bm25_index" if name == "scifact" else "vaswani_bm25_index")
    topics, qrels = pse.datasets.get_topics(dataset), pse.datasets.get_qrels(dataset)
    topics = topics[topics.qid.isin(set(qrels.qid))]
    anserini = read_anserini(RUNS / f"{run_file}.bm25-k1=0.9-b=0.4.trec.gz")
    retriever = pse.BM25().retriever(index, num_results=1000)

    # per line: our float32 scores through Anserini's writer give its files line for line
    rows, docs, scores, _ = retriever.search_matrix(retriever.query_matrix(retriever._query_weights(topics)))
    qids = topics.qid.tolist()
    same_lines = total = 0
    for r in np.unique(rows):
        sel = rows == r
        ours = list(zip(index.docnos[docs[sel]].tolist(), anserini_written(scores[sel])))
        theirs = anserini[qids[r]]
        total += len(theirs)
        same_lines += sum(a == b for a, b in zip(ours, theirs))
    assert total == sum(len(v) for v in anserini.values())
    assert same_lines == total, f"{total - same_lines} of {total} lines differ from Anserini's"

    # per query: our run as the retriever returns it (tied scores nudged into Lucene's tie order) evaluates as
    # Anserini's file does, on every query and measure
    run = retriever(topics)
    ours_run: dict[str, dict[str, float]] = {}
    for qid, docno, score in zip(run.qid, run.docno, run.score):
        ours_run.setdefault(qid, {})[docno] = float(score)
    judged = {q: dict(zip(g.docno, g.label)) for q, g in qrels.groupby("qid")}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, MEASURES)
    a = evaluator.evaluate({q: {d: float(s) for d, s in v} for q, v in anserini.items()})
    o = evaluator.evaluate(ours_run)
    same = [q for q in a if all(a[q][m] == o[q][m] for m in MEASURES)]
    assert len(same) == len(a), (
        f"{len(a) - len(same)} queries evaluate differently, e.g. {sorted(set(a) - set(same))[:5]}"
    )


def test_ties_are_broken_as_lucene_does(tmp_path):
    # three identical documents: Lucene orders them by docno ascending; trec_eval would read docno descending
    docs = [{"docno": d, "text": "same words here"} for d in ("b", "c", "a")] + [
        {"docno": "z", "text": "other"}
    ]
    index = pse.SparseIndex(tmp_path / "idx")
    bm25 = pse.BM25()
    bm25.indexer(index, verbose=False).index(docs)
    topics = pd.DataFrame({"qid": ["q"], "query": ["same words"]})
    lucene = bm25.retriever(index)(topics)
    assert list(lucene.docno) == ["a", "b", "c"]
    # nudged: evaluators keep the order
    assert lucene.score.is_monotonic_decreasing and lucene.score.is_unique
    assert np.float32(lucene.score.iloc[0]) == np.float32(lucene.score.iloc[1]) + np.spacing(
        np.float32(lucene.score.iloc[1])
    )
    trec = bm25.retriever(index, ties="trec_eval")(topics)
    assert list(trec.docno) == ["c", "b", "a"] and trec.score.nunique() == 1


LANG_RUNS = Path(__file__).parent / "goldens" / "lucene" / "runs"
TOKENS = SHARED_CACHE.parent / "lucene" / "tokens"


@pytest.mark.skipif(not TOKENS.is_dir(), reason=f"the shared texts are not at {TOKENS}")
@pytest.mark.parametrize(
    "lang",
    [
        "en",
        "fr",
        "de",
        "es",
        "it",
        "pt",
        "nl",
        "fi",
        "ru",
        "id",
        "ar",
        "fa",
        "hi",
        "bn",
        "te",
        "ja",
        "zh",
        "ko",
        "sw",
        "vi",
        "yo",  # Anserini indexes and searches it with the WhitespaceAnalyzer (it had been given English)
        "ar-tatweel",  # lone tatweels: Lucene's empty term counts in lengths and the document count
        "fa-tatweel",
    ],
)
def test_bm25_in_other_languages_and_parameters_reproduces_anserini(tmp_path, lang):
    """k1=1.2, b=0.75 and Anserini's ``-language LANG`` on a collection made of the language's texts (lengths from
    1 to ~150 tokens, so the lossy norms matter): every line of Anserini's run, made by
    tests/goldens/make_anserini_lang_runs.py, is reproduced."""
    if lang == "ja":
        pytest.importorskip("janome", reason="needs the ja extra")
    from goldens.make_anserini_lang_runs import collection

    docs, queries = collection(lang, TOKENS)
    bm25 = pse.BM25(1.2, 0.75, language=lang.split("-")[0])
    index = pse.SparseIndex(tmp_path / lang)
    bm25.indexer(index, verbose=False).index([{"docno": d, "text": t} for d, t in docs])
    topics = pd.DataFrame(queries, columns=["qid", "query"])
    retriever = bm25.retriever(index, num_results=100)
    rows, found, scores, _ = retriever.search_matrix(retriever.query_matrix(retriever._query_weights(topics)))
    ours = {}
    for r in np.unique(rows):
        sel = rows == r
        ours[topics.qid[r]] = list(zip(index.docnos[found[sel]].tolist(), anserini_written(scores[sel])))
    theirs = read_anserini_txt(LANG_RUNS / f"{lang}.bm25-k1=1.2-b=0.75.txt")
    assert sum(len(v) for v in theirs.values()) > 500
    assert ours == theirs
    run = retriever(topics)  # the transformer's own query path (compiled token tables) ranks the same
    assert {q: list(g.docno) for q, g in run.groupby("qid")} == {
        q: [d for d, _ in v] for q, v in theirs.items()
    }


def read_anserini_txt(path: Path) -> dict[str, list[tuple[str, str]]]:
    run: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        run.setdefault(qid, []).append((docno, score))
    return run
