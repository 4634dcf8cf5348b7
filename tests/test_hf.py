"""Hugging Face hub collections (hf:miracl:LANG, hf:mmarco:LANG, hf:REPO[:SPLIT]), read by the real loading code
(the ``datasets`` library, streaming) from local copies the tests build in each repository's own layout: the hub
cannot be reached here. ``SPARSE_EVAL_HF_MIRROR`` points the loaders at the copies, as it does for users on
machines without the hub.

The non-English end-to-end checks use the collections of tests/goldens/make_anserini_lang_runs.py (real text in
the language) and compare pt.Experiment's per-query numbers with pytrec_eval's on Anserini's own run of the same
collection (Anserini 0.22.1, ``-language LANG``, k1=1.2, b=0.75): an independent computation.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
from pathlib import Path

import pandas as pd
import pyterrier as pt
import pytest
import pytrec_eval
from conftest import SHARED_CACHE
from ir_measures import AP, R, nDCG

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.datasets import FieldError
from pyterrier_sparse_eval.hf import MIRROR_ENV

datasets = pytest.importorskip("datasets", reason="needs the hf extra")

LANG_RUNS = Path(__file__).parent / "goldens" / "lucene" / "runs"
TOKENS = SHARED_CACHE.parent / "lucene" / "tokens"
needs_tokens = pytest.mark.skipif(not TOKENS.is_dir(), reason=f"the shared texts are not at {TOKENS}")


def anserini_run(lang: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in (LANG_RUNS / f"{lang}.bm25-k1=1.2-b=0.75.txt").read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        run.setdefault(qid, {})[docno] = float(score)
    return run


def judgments(lang: str) -> list[tuple[str, str, int]]:
    """Seeded judgments over Anserini's run: relevant documents at a few ranks (some beyond 10 and 100 never
    retrieved), judged non-relevant ones, so every measure has something to say."""
    rng = random.Random(1)
    rows = []
    for qid, ranked in anserini_run(lang).items():
        docs = list(ranked)
        for i, doc in enumerate(docs):
            if rng.random() < 0.08 or i == 3:
                rows.append((qid, doc, rng.choice([1, 2])))
            elif rng.random() < 0.05:
                rows.append((qid, doc, 0))
    return rows


def expected(lang: str, qrels: list[tuple[str, str, int]]) -> pd.DataFrame:
    """pytrec_eval (trec_eval) per query on Anserini's run."""
    qd: dict[str, dict[str, int]] = {}
    for q, d, label in qrels:
        qd.setdefault(q, {})[d] = label
    ev = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut_10", "map", "recall_100"})
    res = ev.evaluate({q: r for q, r in anserini_run(lang).items() if q in qd})
    names = {"ndcg_cut_10": "nDCG@10", "map": "AP", "recall_100": "R@100"}
    return pd.DataFrame([(q, names[m], v) for q, ms in res.items() for m, v in ms.items()])


def _tsv(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")


def make_miracl(mirror: Path, lang: str, docs, queries, qrels, *, shards: int = 3) -> None:
    """MIRACL's hub layout: miracl/miracl's topic and qrels TSVs (dev, plus a test-b without qrels, as released)
    and miracl/miracl-corpus's docs-N.jsonl.gz shards (docid, title, text)."""
    folder = mirror / "miracl" / "miracl" / f"miracl-v1.0-{lang}"
    _tsv(folder / "topics" / f"topics.miracl-v1.0-{lang}-dev.tsv", queries)
    _tsv(folder / "qrels" / f"qrels.miracl-v1.0-{lang}-dev.tsv", [(q, "Q0", d, s) for q, d, s in qrels])
    _tsv(folder / "topics" / f"topics.miracl-v1.0-{lang}-test-b.tsv", queries[:2])
    corpus = mirror / "miracl" / "miracl-corpus" / f"miracl-corpus-v1.0-{lang}"
    corpus.mkdir(parents=True)
    for s in range(shards):
        with gzip.open(corpus / f"docs-{s}.jsonl.gz", "wt", encoding="utf-8") as f:
            for docno, title, text in docs[s::shards]:
                f.write(json.dumps({"docid": docno, "title": title, "text": text}, ensure_ascii=False) + "\n")


def make_mmarco(mirror: Path, name: str, docs, queries, qrels) -> None:
    """unicamp-dl/mmarco's layout: translated collection and queries, MS MARCO's qrels (qid 0 pid 1)."""
    root = mirror / "unicamp-dl" / "mmarco" / "data"
    _tsv(root / "google" / "collections" / f"{name}_collection.tsv", docs)
    _tsv(root / "google" / "queries" / "dev" / f"{name}_queries.dev.small.tsv", queries)
    _tsv(root / "qrels.dev.small.tsv", [(q, 0, d, s) for q, d, s in qrels])


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "hub"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    return tmp_path / "hub"


@needs_tokens
def test_miracl_end_to_end_in_russian_through_pt_experiment(tmp_path, mirror):
    """hf:miracl:ru: the language comes from the spec, the documents stream from three gzipped shards, and
    pt.Experiment's per-query nDCG@10, AP and R@100 equal pytrec_eval's on Anserini's Russian run."""
    from goldens.make_anserini_lang_runs import collection

    docs, queries = collection("ru", TOKENS)
    qrels = judgments("ru")
    rng = random.Random(0)
    titled = [(d, "", t) for d, t in docs]
    make_miracl(mirror, "ru", titled, queries, qrels)
    ds = pse.datasets.get("hf:miracl:ru")
    assert ds.language == "ru" and pse.datasets.dataset_language("hf:miracl:ru") == "ru"
    topics, got_qrels = ds.get_topics(), ds.get_qrels()
    assert topics.values.tolist() == [list(q) for q in queries]
    assert sorted(map(tuple, got_qrels.values.tolist())) == sorted(qrels)
    assert (got_qrels.label == 0).any()  # MIRACL's judged negatives are kept as label 0
    corpus = list(ds.get_corpus_iter(verbose=False))
    assert sorted(d["docno"] for d in corpus) == sorted(d for d, _ in docs)
    bm25 = pse.BM25(1.2, 0.75, language=ds.language)
    index = pse.SparseIndex(tmp_path / "idx")
    bm25.indexer(index, verbose=False).index(rng.sample(corpus, len(corpus)))  # any order: same index
    res = pt.Experiment(
        [bm25.retriever(index, num_results=100)],
        topics,
        got_qrels,
        [nDCG @ 10, AP, R @ 100],
        perquery=True,
    )
    # the one query without judgments is NaN in pt.Experiment and absent from pytrec_eval's output
    ours = {(r.qid, str(r.measure)): r.value for r in res.itertuples() if r.value == r.value}
    theirs = {(q, m): v for q, m, v in expected("ru", qrels).itertuples(index=False)}
    assert len(theirs) == 3 * len(set(q for q, _, _ in qrels)) > 60
    assert ours == pytest.approx(theirs, abs=1e-12)


@needs_tokens
def test_mmarco_end_to_end_in_portuguese_through_the_cli(tmp_path, mirror):
    """sparse-eval experiment --dataset hf:mmarco:pt picks the Portuguese analyzer from the dataset and gives
    pytrec_eval's numbers on Anserini's Portuguese run."""
    from goldens.make_anserini_lang_runs import collection

    docs, queries = collection("pt", TOKENS)
    qrels = judgments("pt")
    make_mmarco(mirror, "portuguese", docs, queries, qrels)
    out = tmp_path / "res.json"
    args = [
        "experiment",
        "--dataset",
        "hf:mmarco:pt",
        "--system",
        "bm25:k1=1.2,b=0.75",
        "--num-results",
        "100",
    ]
    args += ["--index-dir", str(tmp_path / "idx"), "--quiet", "--output", str(out)]
    assert main([*args, "--metric", "nDCG@10", "--metric", "AP", "--metric", "R@100"]) == 0
    (result,) = json.loads(out.read_text())["results"].values()
    per_query = expected("pt", qrels)
    for measure in ("nDCG@10", "AP", "R@100"):
        assert result[measure] == pytest.approx(per_query[per_query[1] == measure][2].mean(), abs=1e-12)
    sdm_out = tmp_path / "sdm.json"
    sdm = ["sdm", "--dataset", "hf:mmarco:pt", "--k", "10", "--pool-depth", "5", "--sample", "50"]
    assert main([*sdm, "--index-dir", str(tmp_path / "idx"), "--quiet", "--output", str(sdm_out)]) == 0
    assert json.loads(sdm_out.read_text())["config"]["dataset"] == "hf:mmarco:pt"
    ds = pse.datasets.get("hf:mmarco:portuguese")  # the hub's language names work too
    assert ds.language == "pt" and len(ds.get_topics()) == len(queries)


def test_miracl_rows_layout_turns_negative_passages_into_label_0(mirror):
    """A copy of miracl/miracl in its rows layout (query_id, query, positive_passages, negative_passages; parquet
    with a configs card): positives are label 1, negatives label 0."""
    repo = mirror / "miracl" / "miracl"
    (repo / "sw").mkdir(parents=True)
    rows = [
        {
            "query_id": "1",
            "query": "mji mkuu",
            "positive_passages": [{"docid": "10#0", "title": "A", "text": "a"}],
            "negative_passages": [
                {"docid": "11#0", "title": "B", "text": "b"},
                {"docid": "12#1", "title": "", "text": ""},
            ],
        },
        {"query_id": "2", "query": "mto mrefu", "positive_passages": [], "negative_passages": []},
    ]
    datasets.Dataset.from_list(rows).to_parquet(str(repo / "sw" / "dev.parquet"))
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: sw\n  data_files:\n  - split: dev\n    path: sw/dev.parquet\n---\n"
    )
    make_corpus = mirror / "miracl" / "miracl-corpus" / "miracl-corpus-v1.0-sw"
    make_corpus.mkdir(parents=True)
    with gzip.open(make_corpus / "docs-0.jsonl.gz", "wt") as f:
        f.write(json.dumps({"docid": "10#0", "title": "A", "text": "mji mkuu wa tanzania"}) + "\n")
    ds = pse.datasets.get("hf:miracl:sw")
    assert ds.get_qrels().values.tolist() == [["1", "10#0", 1], ["1", "11#0", 0], ["1", "12#1", 0]]
    assert ds.get_topics().values.tolist() == [["1", "mji mkuu"], ["2", "mto mrefu"]]
    with pytest.warns(UserWarning, match="2 of 3 judged documents .* are not in the corpus"):
        assert [d["docno"] for d in ds.get_corpus_iter(verbose=False)] == ["10#0"]
    # a copy whose ids were written as floats (a pandas column with a gap): "1.0" would match no id, so refused
    rows[0]["query_id"], rows[1]["query_id"] = 1.0, 2.0
    datasets.Dataset.from_list(rows).to_parquet(str(repo / "sw" / "dev.parquet"))
    for read in ("get_topics", "get_qrels"):
        with pytest.raises(
            FieldError, match=r'row 1: the query id 1\.0 is a float; ids must be .*write it as "1"'
        ):
            getattr(pse.datasets.get("hf:miracl:sw"), read)()


def _mteb(
    folder: Path,
    docs,
    queries,
    qrels,
    *,
    split="test",
    names=("_id", "text", "query-id", "corpus-id", "score"),
    card_language: str = "",
):
    doc_id, text, q_id, c_id, score = names
    for sub, rows in (
        ("corpus", [{doc_id: d, "title": t, text: x} for d, t, x in docs]),
        ("queries", [{doc_id: q, text: x} for q, x in queries]),
        ("qrels", [{q_id: q, c_id: d, score: s} for q, d, s in qrels]),
    ):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        name = f"{split}.jsonl" if sub == "qrels" else f"{sub}.jsonl"
        (folder / sub / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "README.md").write_text(
        f"---\n{card_language}configs:\n"
        "- config_name: corpus\n  data_files:\n  - split: corpus\n    path: corpus/corpus.jsonl\n"
        "- config_name: queries\n  data_files:\n  - split: queries\n    path: queries/queries.jsonl\n"
        f"- config_name: default\n  data_files:\n  - split: {split}\n    path: qrels/{split}.jsonl\n---\n"
    )


TOY_DOCS = [
    ("d1", "Cats", "cats purr and sleep"),
    ("d2", "Dogs", "dogs bark at cats"),
    ("d3", "", "fish swim"),
]
TOY_DOCS += [(f"f{i}", "", f"filler cats {i} dogs {i % 3} fish {i % 5}") for i in range(30)]
TOY_QUERIES = [("q1", "purring cats"), ("q2", "barking dogs"), ("q3", "swimming fish")]
TOY_QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d3", 2), ("q3", "f1", 0)]


def test_generic_mteb_layout_equals_the_same_files_as_a_beir_folder(tmp_path, mirror):
    """hf:REPO[:SPLIT] in MTEB's layout (configs corpus, queries, default) from the mirror and from a folder: the
    same topics, qrels, documents and pt.Experiment numbers as the same data in a BEIR folder."""
    _mteb(mirror / "someone" / "toy", TOY_DOCS, TOY_QUERIES, TOY_QRELS)
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, t, x in TOY_DOCS)
    )
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": x}) + "\n" for q, x in TOY_QUERIES)
    )
    _tsv(beir / "qrels" / "test.tsv", [("query-id", "corpus-id", "score"), *TOY_QRELS])
    results = []
    for spec in ("hf:someone/toy", f"hf:{mirror / 'someone' / 'toy'}:test", f"beir:{beir}"):
        ds = pse.datasets.get(spec)
        topics, qrels = pse.datasets.get_topics(ds), pse.datasets.get_qrels(ds)
        index = pse.SparseIndex(tmp_path / "idx" / str(len(results)))
        pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(ds))
        res = pt.Experiment([pse.BM25().retriever(index)], topics, qrels, [nDCG @ 10, AP], perquery=True)
        results.append((topics, qrels, res))
    for topics, qrels, res in results[:2]:
        pd.testing.assert_frame_equal(topics, results[2][0])
        pd.testing.assert_frame_equal(qrels, results[2][1])
        pd.testing.assert_frame_equal(res.drop(columns="name"), results[2][2].drop(columns="name"))
    identity = pse.datasets.dataset_identity("hf:someone/toy")
    assert "corpus/corpus.jsonl" in identity and identity != pse.datasets.dataset_identity(f"beir:{beir}")
    with pytest.raises(
        ValueError, match=r"'hf:someone/toy:dev': the qrels have no split 'dev' \(they have \['test'\]\)"
    ):
        pse.datasets.get("hf:someone/toy:dev").get_qrels()


def test_an_mteb_card_declares_the_language_and_a_split_evaluates_its_own_queries(tmp_path, capsys):
    """The card's ``language: [de]`` chooses BM25's German analyzer (said by ``experiment``), as ``--language de``
    on the same files as a BEIR folder does; a multilingual card declares none, and ``experiment`` says it analyses
    as English. MTEB's queries config holds every split's queries: a split's topics are those its qrels judge."""
    docs = [("d1", "", "Die Häuser stehen am Fluss"), ("d2", "", "Das Haus ist groß"), *TOY_DOCS[3:]]
    queries, qrels = [("q1", "Häuser"), ("q9", "a train query")], [("q1", "d1", 1), ("q1", "d2", 1)]
    _mteb(tmp_path / "de", docs, queries, qrels, card_language="language:\n- de\n")
    ds = pse.datasets.get(f"hf:{tmp_path / 'de'}")
    assert ds.language == "de" and pse.datasets.dataset_language(ds) == "de"
    assert ds.get_topics().values.tolist() == [["q1", "Häuser"]]  # q9 is judged in no qrels of this split
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, t, x in docs)
    )
    (beir / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": x}) + "\n" for q, x in queries))
    _tsv(beir / "qrels" / "test.tsv", [("query-id", "corpus-id", "score"), *qrels])

    def recall(spec: str, *extra: str) -> float:
        out = tmp_path / f"r{len(list(tmp_path.glob('r*.json')))}.json"
        argv = ["experiment", "--dataset", spec, "--metric", "R@10", "--index-dir", str(tmp_path / "idx")]
        assert main([*argv, "--output", str(out), *extra]) == 0
        return next(iter(json.loads(out.read_text())["results"].values()))["R@10"]

    from pyterrier_sparse_eval.cli import main

    german = recall(f"hf:{tmp_path / 'de'}")
    assert "BM25 analyzer: language de (from the dataset)" in capsys.readouterr().out
    assert german == recall(f"beir:{beir}", "--language", "de") == 1.0  # "Häuser" and "Haus" share a stem
    assert recall(f"beir:{beir}") == 0.5  # English analysis keeps them apart
    assert "BM25 analyzer: language en (the dataset declares no one language; --language LANG chooses)" in (
        capsys.readouterr().out
    )
    _mteb(tmp_path / "multi", docs, queries, qrels, card_language="language:\n- de\n- en\n")
    assert pse.datasets.get(f"hf:{tmp_path / 'multi'}").language is None  # no one analyzer for both
    # the language, not the region; [no] is YAML's false, and Norwegian's code
    # ISO 639-3, as MTEB's generated cards declare it (deu had been kept, and analysed as English)
    for declared, code in (("de-DE", "de"), ("[pt_BR]", "pt"), ("[no]", "no"), ("EN", "en"), ("[deu]", "de")):
        _mteb(tmp_path / "tag", docs, queries, qrels, card_language=f"language: {declared}\n")
        assert pse.datasets.get(f"hf:{tmp_path / 'tag'}").language == code


def test_a_hub_card_is_not_asked_for_offline(monkeypatch):
    """A hub id's card is read from the hub, once per process, and never when offline: no wait on a machine
    without the network (each attempt had retried for about 24 s)."""
    import huggingface_hub

    from pyterrier_sparse_eval import _hf_base

    asked = []

    def load(repo, **kwargs):
        asked.append(repo)
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub.DatasetCard, "load", load)
    for flag in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        with monkeypatch.context() as m:
            m.setenv(flag, "1")
            if flag == "HF_HUB_OFFLINE":
                m.setattr(_hf_base, "_offline", lambda: True)  # huggingface_hub reads its flag at import
            assert _hf_base.card_language("someone/collection") is None
    assert asked == []
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(_hf_base, "_offline", lambda: False)
    _hf_base._hub_card_language.cache_clear()
    assert _hf_base.card_language("someone/collection") is None  # unreadable: declares nothing
    assert _hf_base.card_language("someone/collection") is None
    assert asked == ["someone/collection"]  # asked once


def test_generic_layout_with_a_column_mapping(tmp_path):
    folder = tmp_path / "odd"
    _mteb(folder, TOY_DOCS, TOY_QUERIES, TOY_QRELS, split="dev", names=("pid", "body", "qid", "pid_", "rel"))
    columns = {"docno": "pid", "text": "body", "qid": "pid", "query": "body"}
    columns |= {"qrels_qid": "qid", "qrels_docno": "pid_", "label": "rel"}
    ds = pse.hf.hf_dataset(f"hf:{folder}:dev", columns=columns, language="en")
    assert ds.get_topics().values.tolist() == [list(q) for q in TOY_QUERIES]
    assert ds.get_qrels().values.tolist() == [list(q) for q in TOY_QRELS]
    assert [d["docno"] for d in ds.get_corpus_iter(verbose=False)] == [d for d, _, _ in TOY_DOCS]
    with pytest.raises(KeyError, match=r"no column 'score' for label .* pass columns=\{'label': \.\.\.\}"):
        list(pse.hf.hf_dataset(f"hf:{folder}:dev").get_corpus_iter(verbose=False))
    with pytest.raises(ValueError, match=r"unknown keys \[\"columns\['doc'\]\"\]"):
        pse.hf.hf_dataset(f"hf:{folder}", columns={"doc": "x"})


@pytest.mark.parametrize(
    "spec,error,message",
    [
        ("hf:miracl:ru:testB", ValueError, "test splits .* have no public qrels.*use hf:miracl:ru:dev"),
        ("hf:miracl:ru:test", ValueError, "no public qrels"),
        ("hf:miracl:xx", ValueError, "MIRACL has no language 'xx'; it has ar, bn"),
        ("hf:miracl", ValueError, "name the language, e.g. hf:miracl:sw"),
        ("hf:mmarco:pt:eval", ValueError, "mMARCO has no split 'eval'; use dev, dev.full, train"),
        ("hf:mmarco:klingon", ValueError, "mMARCO has no language 'klingon'"),
        ("hf:miracl:fi", FileNotFoundError, "has no miracl/miracl folder: download it with `huggingface-cli"),
        (
            "hf:mmarco:ru",
            FileNotFoundError,
            "mMARCO's queries file .*russian_queries.dev.small.tsv is missing",
        ),
    ],
)
def test_bad_specs_are_clear_errors(mirror, spec, error, message):
    (mirror / "unicamp-dl" / "mmarco").mkdir(parents=True)
    with pytest.raises(error, match=message):
        pse.datasets.get(spec)


def test_duplicates_across_shards_and_edited_shards(mirror):
    docs = [("a#0", "", "one"), ("b#0", "", "two"), ("a#0", "", "three")]
    make_miracl(mirror, "sw", docs, [("1", "one")], [("1", "a#0", 1)], shards=2)
    ds = pse.datasets.get("hf:miracl:sw")
    with pytest.raises(ValueError, match=r"row 2: duplicate document id 'a#0' \(first on row 1\)"):
        list(ds.get_corpus_iter(verbose=False))
    before = pse.datasets.dataset_identity("hf:miracl:sw")
    shard = mirror / "miracl" / "miracl-corpus" / "miracl-corpus-v1.0-sw" / "docs-0.jsonl.gz"
    with gzip.open(shard, "wt") as f:  # the fix: the repeated document gets its own id
        f.write(json.dumps({"docid": "a#0", "title": "", "text": "one"}) + "\n")
        f.write(json.dumps({"docid": "c#0", "title": "", "text": "three"}) + "\n")
    assert pse.datasets.dataset_identity("hf:miracl:sw") != before
    assert sorted(d["docno"] for d in pse.datasets.get("hf:miracl:sw").get_corpus_iter(verbose=False)) == [
        "a#0",
        "b#0",
        "c#0",
    ]


def test_without_the_datasets_library_the_error_names_the_extra(mirror, monkeypatch):
    make_mmarco(mirror, "english", [("0", "a passage")], [("1", "a query")], [("1", "0", 1)])
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ImportError, match=r'pip install "pyterrier-sparse-eval\[hf\]"'):
        pse.datasets.get("hf:mmarco:en").get_topics()


@pytest.mark.parametrize("spec", ["hf:miracl:sw", "hf:mmarco:pt"])
def test_an_offline_machine_gets_offline_error_when_the_collection_is_loaded(monkeypatch, spec):
    """MIRACL and mMARCO look at the hub when loaded: a failed connection there is pse.datasets.OfflineError (a
    ConnectionError) naming the spec, as for irds: ids (it had been the HTTP library's own error)."""
    from pyterrier_sparse_eval import hf

    httpx = pytest.importorskip("httpx2")  # what huggingface_hub raises through, on an offline machine

    def offline(url):
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(hf, "_exists", offline)
    with pytest.raises(pse.datasets.OfflineError, match=f"{spec}'s files: the Hugging Face hub could not be"):
        pse.datasets.get(spec)


def test_the_splits_and_spellings_of_one_hf_corpus_share_its_index(tmp_path, mirror):
    """Each hf: spec had named its own index cache folder: hf:miracl:sw, hf:miracl:sw:dev and hf:MIRACL:SW built
    three indexes of one corpus (hours each for MIRACL's English). One index now, as for a BEIR folder's splits;
    a repository's splits share one too, and a mapping with other documents keeps its own."""
    from pyterrier_sparse_eval.systems import parse_system

    docs = [(f"d{i}", "", f"mbwa paka {i}") for i in range(12)]
    make_miracl(mirror, "sw", docs, [("1", "mbwa")], [("1", "d1", 1)])
    make_mmarco(mirror, "portuguese", [(d, x) for d, _, x in docs], [("1", "mbwa")], [("1", "d1", 1)])
    data = mirror / "unicamp-dl" / "mmarco" / "data"
    (data / "qrels.dev.tsv").write_text("1\t0\td2\t1\n")
    (data / "google" / "queries" / "dev" / "portuguese_queries.dev.tsv").write_text("1\tmbwa\n")
    _mteb(mirror / "someone" / "toy", TOY_DOCS, TOY_QUERIES, TOY_QRELS)
    system = parse_system("bm25")
    for specs in (
        (
            "hf:miracl:sw",
            "hf:miracl:sw:dev",
            "hf:MIRACL:SW",
            "hf:miracl:sw-KE:DEV",
            "hf:miracl:swa",
            "hf:miracl:swahili",
        ),
        ("hf:mmarco:pt", "hf:mmarco:portuguese", "hf:mmarco:pt-BR:dev.full", "hf:mmarco:POR"),
        ("hf:someone/toy", "hf:someone/toy:test"),
    ):
        paths = {
            system.index(
                tmp_path / "idx", spec, lambda s=spec: pse.datasets.corpus_iter(s), verbose=False
            ).directory
            for spec in specs
        }
        assert len(paths) == 1, paths
    assert len(list((tmp_path / "idx").iterdir())) == 3
    # another mapping of the repository's documents: its own index in the same folder
    other = pse.hf.hf_dataset("hf:someone/toy", columns={"text": "title"})
    assert pse.datasets.corpus_spec(other) == "hf:someone/toy"
    assert pse.datasets.dataset_identity(other) != pse.datasets.dataset_identity("hf:someone/toy")


def test_an_unreachable_hub_fails_at_once_naming_the_collection_and_the_fix(monkeypatch, tmp_path, capsys):
    """A hub id on a machine without the network had waited about 50 s (the card's retries, then the loader's)
    and the command line had said only that a download failed, leading with ir_datasets' fix."""
    import socket

    from pyterrier_sparse_eval import _hf_base
    from pyterrier_sparse_eval.cli import main

    for name in (
        "HF_HUB_OFFLINE",
        "HF_DATASETS_OFFLINE",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(MIRROR_ENV, raising=False)

    def no_route(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket, "create_connection", no_route)
    monkeypatch.setattr(_hf_base, "_HUB", {})
    with pytest.raises(
        pse.datasets.OfflineError, match=r"hf:mteb/scifact:test's files: the Hugging Face hub"
    ):
        pse.datasets.get("hf:mteb/scifact:test")
    argv = ["experiment", "--dataset", "hf:someone/toy", "--index-dir", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "hf:someone/toy's files: the Hugging Face hub could not be reached" in err
    # the same shape as a mistyped relative folder: said that there is none
    assert (
        f"No folder someone/toy exists here either (from {os.getcwd()}): if a local folder was meant" in err
    )
    assert "SPARSE_EVAL_HF_MIRROR" in err and "IR_DATASETS_HOME" not in err
    # a failure stands for a minute, then the hub is asked again; an answer stands for the process
    answered = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **kw: answered.append(a) or _Closable())
    assert _hf_base.hub_unreachable() is not None and not answered
    _hf_base._HUB["failed_until"] = 0.0
    assert _hf_base.hub_unreachable() is None and _hf_base.hub_unreachable() is None and len(answered) == 1
    # behind a proxy the HTTP library would use (an http:// endpoint and HTTP_PROXY), the hub is not judged here
    import huggingface_hub.constants

    monkeypatch.setattr(_hf_base, "_HUB", {})
    monkeypatch.setattr(socket, "create_connection", no_route)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://hub-mirror.example.invalid:8080")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    assert _hf_base.hub_unreachable() is None
    monkeypatch.setenv("NO_PROXY", "hub-mirror.example.invalid")  # the proxy bypassed: judged directly
    assert (
        _hf_base.hub_unreachable() == "hub-mirror.example.invalid:8080: [Errno -2] Name or service not known"
    )


class _Closable:
    def close(self):
        pass


def test_a_card_whose_configs_are_split_like_the_qrels_names_the_mapping_that_reads_it(tmp_path, capsys):
    """MTEB's newer cards split the corpus and queries configs like the qrels ('test') with ids in 'id': the
    datasets library's bare "Bad split: queries" had named neither the spec nor the fix; the fix it names reads
    the folder."""
    folder = tmp_path / "v2"
    for sub, rows in (
        ("corpus", [{"id": d, "title": t, "text": x} for d, t, x in TOY_DOCS]),
        ("queries", [{"id": q, "text": x} for q, x in TOY_QUERIES]),
        ("default", [{"query-id": q, "corpus-id": d, "score": s} for q, d, s in TOY_QRELS]),
    ):
        (folder / sub).mkdir(parents=True)
        (folder / sub / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "README.md").write_text(
        "---\nconfigs:\n"
        + "".join(
            f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {c}/test.jsonl\n"
            for c in ("corpus", "queries", "default")
        )
        + "---\n"
    )
    spec = f"hf:{folder}"
    with pytest.raises(
        ValueError, match=r"config 'queries' has no split 'queries' .*columns=\{'docno': 'id'"
    ) as e:
        pse.datasets.get(spec).get_topics()
    assert repr(spec) in str(e.value)
    ds = pse.hf.hf_dataset(
        spec,
        configs={"corpus": ("corpus", "{split}"), "queries": ("queries", "{split}")},
        columns={"docno": "id", "qid": "id"},
    )
    assert ds.get_topics()["qid"].tolist() == ["q1", "q2", "q3"]
    assert len(list(pse.datasets.corpus_iter(ds))) == len(TOY_DOCS)
    # the command line names it too (its index cache, keyed by the corpus files, had said "has no data files")
    from pyterrier_sparse_eval.cli import main

    argv = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx")]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert (
        "config 'corpus' has no split 'corpus' (its splits: ['test'])" in said and "columns={'docno'" in said
    )


def test_a_mirrors_miracl_shards_are_read_as_the_datasets_library_reads_them(mirror, monkeypatch):
    """A mirror's shards are read with the project's JSONL reader (the datasets library's streaming builder was
    ~7x slower): the same records, in the same order, as that builder gives for the same files by URL."""
    docs = [
        (f"{i}#{i % 3}", f"T\u00e9{i}" if i % 4 else "", f"maandishi {i} \u2014 \u00e9t\u00e9")
        for i in range(40)
    ]
    make_miracl(mirror, "sw", docs, [("1", "maandishi")], [("1", "1#1", 1)])
    ds = pse.datasets.get("hf:miracl:sw")
    local = list(ds._records())
    files = ds.data_files()
    monkeypatch.setattr(ds, "data_files", lambda: [f"file://{p}" for p in files])
    assert list(ds._records()) == local
    assert sorted(r[1] for r in local) == sorted(d for d, _, _ in docs)


def test_the_python_api_gives_bm25_the_language_the_dataset_declares(tmp_path, capsys):
    """pse.run_experiment and sdm.three_way had analysed a collection whose card declares German as English (the
    command line alone gave BM25 the dataset's language), though the README calls them the same."""
    from pyterrier_sparse_eval import sdm
    from pyterrier_sparse_eval.systems import parse_system

    docs = [("d1", "", "Die Häuser stehen am Fluss"), ("d2", "", "Das Haus ist groß"), *TOY_DOCS[3:]]
    queries, qrels = [("q1", "Häuser")], [("q1", "d1", 1), ("q1", "d2", 1)]
    _mteb(tmp_path / "de", docs, queries, qrels, card_language="language:\n- de\n")
    spec = f"hf:{tmp_path / 'de'}"
    systems = [parse_system("bm25"), parse_system("bm25:language=en")]
    table = pse.run_experiment(spec, systems, ["R@10"], index_dir=tmp_path / "idx").table
    assert "BM25 analyzer: language de (from the dataset)" in capsys.readouterr().out
    # "Häuser" and "Haus" share a German stem; a system that names its language keeps it
    assert table[["name", "R@10"]].values.tolist() == [
        ["BM25(k1=0.9,b=0.4,language=de)", 1.0],
        ["BM25(k1=0.9,b=0.4)", 0.5],
    ]
    report = sdm.three_way(spec, ["bm25"], depth=1, sample=2, k_values=[10], index_dir=tmp_path / "idx")
    assert list(report.results) == ["BM25(k1=0.9,b=0.4,language=de)"]
    assert report.results["BM25(k1=0.9,b=0.4,language=de)"]["R@10"]["full"] == 1.0
