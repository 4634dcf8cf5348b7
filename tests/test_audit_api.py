"""Retriever and dataset options a user passes: BM25's idf=False, Ray search on a single index, num_results, the
tie order through SparseIndex.retriever, offline downloads from the Python API, BEIR files with a byte-order mark
or a null query text."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import datasets

DOCS = [
    {"docno": "d1", "text": "dielectric constant of water"},
    {"docno": "d2", "text": "plasma waves in water"},
    {"docno": "d3", "text": "plasma waves in water"},
]
QUERY = pd.DataFrame({"qid": ["1"], "query": ["dielectric water"]})


def _index(tmp_path, bm25, name):
    index = pse.SparseIndex(tmp_path / name)
    bm25.indexer(index, verbose=False).index(DOCS)
    return index


def test_bm25_retriever_with_idf_false_is_the_plain_dot_product(tmp_path):
    bm25 = pse.BM25(lucene_scores=False)
    index = _index(tmp_path, bm25, "classic")
    plain = bm25.retriever(index, idf=False)(QUERY)
    # independent: the index's stored weights, summed over the query's terms (each once in the query)
    postings, terms = index.postings, index.term_ids
    rows = {d: i for i, d in enumerate(index.docnos.tolist())}
    for docno, score in zip(plain["docno"], plain["score"]):
        expected = sum(float(postings[terms[t], rows[docno]]) for t in ("dielectr", "water") if t in terms)
        assert score == pytest.approx(expected, rel=1e-6)
    weighted = bm25.retriever(index)(QUERY)
    assert weighted["score"].iloc[0] != pytest.approx(plain["score"].iloc[0])  # idf does weigh in by default


def test_lucene_bm25_refuses_idf_false_when_the_retriever_is_made(tmp_path):
    bm25 = pse.BM25()
    index = _index(tmp_path, bm25, "lucene")
    with pytest.raises(ValueError, match="Lucene BM25 postings.*lucene_scores=False"):
        bm25.retriever(index, idf=False)
    with pytest.raises(ValueError, match=r"pse.ShardedIndex\(path, num_shards=N\)"):
        bm25.retriever(index, engine="ray")
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)  # the advice, followed, is accepted
    assert not sharded.built()
    with pytest.raises(ValueError, match="num_results must be a positive integer"):
        index.retriever(num_results=True)


def test_sparse_index_retriever_takes_the_tie_order(tmp_path):
    bm25 = pse.BM25()
    index = _index(tmp_path, bm25, "ties")
    query = pd.DataFrame({"qid": ["1"], "query": ["plasma"]})  # d2 and d3 tie
    trec = index.retriever(ties="trec_eval")(query)
    lucene = index.retriever(ties="lucene")(query)
    assert trec["docno"].tolist() == ["d3", "d2"] and lucene["docno"].tolist() == ["d2", "d3"]
    assert lucene["docno"].tolist() == bm25.retriever(index)(query)["docno"].tolist()


def test_offline_downloads_from_the_python_api_name_the_fix(monkeypatch):
    """A dataset whose files are missing and whose download fails (as ir_datasets raises it offline)."""

    class Offline:
        def get_topics(self, *args):
            raise RuntimeError("All download sources failed")

        def get_qrels(self):
            raise ConnectionError("HTTPSConnectionPool(host='example.org'): Max retries exceeded")

        def get_corpus_iter(self, verbose=False):
            raise ConnectionError("Name or service not known")
            yield {}

    ds = Offline()
    monkeypatch.setattr(datasets, "load_dataset", lambda d: d)
    monkeypatch.setattr(datasets, "topic_fields", lambda d: ())
    monkeypatch.setattr(datasets, "_irds", lambda d: None)
    for call in (
        lambda: datasets.get_topics(ds),
        lambda: datasets.get_qrels(ds),
        lambda: list(datasets.Corpus(ds, None, False)),
    ):
        with pytest.raises(datasets.OfflineError, match="IR_DATASETS_HOME") as caught:
            call()
        assert isinstance(caught.value, ConnectionError) and caught.value.__cause__ is not None

    class Broken(Offline):
        def get_qrels(self):
            raise ValueError("a bad line")  # not a download: left as it is

    with pytest.raises(ValueError, match="a bad line"):
        datasets.get_qrels(Broken())


def test_beir_files_with_a_byte_order_mark_and_a_null_query_text(tmp_path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "", "text": "plasma"}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "plasma"}) + "\n")
    (folder / "qrels" / "test.tsv").write_bytes("\ufeffquery-id\tcorpus-id\tscore\nq1\td1\t1\n".encode())
    qrels = datasets.get_qrels(f"beir:{folder}")
    assert qrels.values.tolist() == [["q1", "d1", 1]]
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": None}) + "\n")
    with pytest.raises(Exception, match="the query's text is null"):
        datasets.get_topics(f"beir:{folder}")


def test_the_command_line_prints_a_warning_as_one_line(tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "run.txt").write_text("1 Q0 d1 0 2.0 x\n1 Q0 d1 1 1.0 x\n1 Q0 d2 2 0.5 x\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "sparse-eval: warning: The run retrieves 1 judged documents more than once for the same query; only the "
        "best-ranked copy of each counts, as if the run had been deduplicated first."
    ]


@pytest.mark.parametrize("where", ["under a file", "a folder at a run file"])
def test_save_runs_that_cannot_be_written_stops_before_indexing(tmp_path, capsys, where):
    """--save-runs is checked with the other destinations, before any work (it had failed after every index was
    built and every run retrieved)."""
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "docs.tsv").write_text("d1\tplasma waves\nd2\tdielectric water\n")
    (tmp_path / "topics.tsv").write_text("q1\tplasma\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "file").write_text("")
    runs = tmp_path / "file" / "runs" if where == "under a file" else tmp_path / "runs"
    if where == "a folder at a run file":
        (runs / "BM25_k1=0.9_b=0.4.run").mkdir(parents=True)
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    index_dir = tmp_path / "indexes"
    code = main(["experiment", "--dataset", spec, "--index-dir", str(index_dir), "--save-runs", str(runs)])
    assert code == 2 and "save-runs" in capsys.readouterr().err.replace("save_runs", "save-runs")
    assert not index_dir.exists() or not any(index_dir.rglob("pt_meta.json"))


@pytest.mark.parametrize("command", ["experiment", "sdm"])
def test_experiment_without_a_judged_topic_stops_before_indexing(tmp_path, capsys, command):
    """Both commands refuse a collection none of whose topics is judged before any work (sparse-eval sdm had
    indexed, retrieved, printed a table of nan, written NaN into its JSON and exited 0)."""
    from pyterrier_sparse_eval.cli import main

    (tmp_path / "docs.tsv").write_text("d1\tplasma waves\nd2\tdielectric water\n")
    (tmp_path / "topics.tsv").write_text("q1\tplasma\n")
    (tmp_path / "qrels.txt").write_text("q9 0 d1 1\n")  # another query's judgments
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    index_dir = tmp_path / "indexes"
    output = tmp_path / "out.json"
    code = main(
        [command, "--dataset", spec, "--index-dir", str(index_dir), "--quiet", "--output", str(output)]
    )
    assert code == 2 and "no topic has judgments" in capsys.readouterr().err
    assert not index_dir.exists() or not any(index_dir.iterdir())
    assert not output.exists()


def test_numpy_integer_measure_parameters_are_read_as_numbers():
    """nDCG@np.int64(10) is nDCG@10 (a cut-off computed with numpy), against pytrec_eval's value."""
    import numpy as np
    import pytrec_eval
    from ir_measures import P, nDCG

    run = pd.DataFrame({"qid": "1", "docno": [f"d{i}" for i in range(12)], "score": np.arange(12.0)[::-1]})
    qrels = pd.DataFrame({"qid": "1", "docno": ["d1", "d3", "d11"], "label": [1, 2, 2]})
    got = pse.evaluate(run, qrels, [nDCG @ np.int64(10), P(rel=np.int64(2)) @ np.int64(5)]).aggregate
    judged, ranked = {"1": {"d1": 1, "d3": 2, "d11": 2}}, {"1": dict(zip(run.docno, run.score))}
    ndcg = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut_10"}).evaluate(ranked)["1"]["ndcg_cut_10"]
    p5 = pytrec_eval.RelevanceEvaluator(judged, {"P_5"}, relevance_level=2).evaluate(ranked)["1"]["P_5"]
    assert got["nDCG@10"] == pytest.approx(ndcg, abs=1e-12) and got["P(rel=2)@5"] == pytest.approx(
        p5, abs=1e-12
    )


def test_a_run_row_without_a_docno_is_named_as_such():
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", None], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [1]})
    with pytest.raises(ValueError, match=r"1 rows without a docno \(None or NaN\): drop them"):
        pse.evaluate(run, qrels, ["P@1"])


def test_tail_sample_zero_is_a_uniform_sample_for_every_family(tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    argv = ["sdm", "--dataset", "irds:nothing/here", "--index-dir", str(tmp_path / "i"), "--quiet"]
    main([*argv, "--tail-sample", "0", "--family", "empirical-gpd"])
    assert "stratified sample" not in capsys.readouterr().err  # refused later, for the unknown dataset only


def test_a_tsv_corpus_with_a_byte_order_mark_and_a_header_counts_its_documents(tmp_path):
    (tmp_path / "docs.tsv").write_bytes("\ufeffdocno\ttext\nd1\tplasma\nd2\twater\n".encode())
    (tmp_path / "topics.tsv").write_text("q1\tplasma\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    docs = list(datasets.corpus_iter(spec))
    assert [d["docno"] for d in docs] == ["d1", "d2"] and datasets.num_docs(spec) == len(docs)


@pytest.mark.parametrize("k1", ["nan", "inf", "-1"])
def test_bm25_specs_refuse_k1_that_is_not_a_finite_nonnegative_number(k1):
    from pyterrier_sparse_eval.systems import parse_system

    with pytest.raises(ValueError, match="finite k1 >= 0"):
        parse_system(f"bm25:k1={k1}")


@pytest.mark.parametrize("given", [{"k1": "0.9"}, {"b": None}, {"k1": True}])
def test_bm25_refuses_parameters_that_are_no_numbers_showing_them(given):
    """A string k1 had stopped with "'<=' not supported between instances of 'int' and 'str'"."""
    import pyterrier_sparse_eval as pse

    name, value = next(iter(given.items()))
    with pytest.raises(ValueError, match=rf"BM25 needs numbers.*{name}={re.escape(repr(value))}"):
        pse.BM25(**given)


def test_a_system_spec_gives_each_parameter_once():
    from pyterrier_sparse_eval.systems import parse_system

    with pytest.raises(ValueError, match="k1 is given twice"):
        parse_system("bm25:k1=1.2,k1=0.5")
    assert parse_system("bm25:k1=1.2,b=0.5").params == {"k1": 1.2, "b": 0.5}


def test_run_experiment_refuses_a_baseline_or_measures_it_cannot_use_before_any_work(tmp_path):
    from pyterrier_sparse_eval.systems import parse_system

    systems = [parse_system("bm25"), parse_system("bm25:k1=1.2")]
    with pytest.raises(ValueError, match=r"baseline=5 is not a system index \(0..1\)"):
        pse.run_experiment("irds:nothing/here", systems, ["P@5"], baseline=5, index_dir=tmp_path)
    with pytest.raises(ValueError, match="at least one system and one measure"):
        pse.run_experiment("irds:nothing/here", systems, [], index_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_built_is_true_only_for_an_index_of_its_own_kind_that_can_be_opened(tmp_path):
    from pyterrier_sparse_eval.cli import main

    single = _index(tmp_path, pse.BM25(), "single")
    sharded = pse.ShardedIndex(tmp_path / "sharded", num_shards=2)
    pse.BM25().indexer(sharded, verbose=False).index(DOCS)
    assert single.built() and sharded.built()
    assert not pse.ShardedIndex(single.path).built() and not pse.SparseIndex(sharded.path).built()
    with pytest.raises(ValueError, match=r"is a sharded index: open it with pse.ShardedIndex"):
        pse.SparseIndex(sharded.path).retriever()  # opening the other kind still says which it is
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "pt_meta.json").write_text("{oops")
    assert not pse.SparseIndex(tmp_path / "garbage").built()
    assert not pse.ShardedIndex(tmp_path / "garbage").built()
    with pytest.raises(pse.IndexCorruptError, match="not valid JSON"):
        _ = pse.SparseIndex(tmp_path / "garbage").num_docs  # damage, not "no index"
    assert main(["check-index", str(tmp_path / "garbage")]) == 1  # a failed check, as before
    # README's idiom `if not index.built(): indexer(index).index(docs)` on such folders says what is there
    with pytest.raises(
        FileExistsError, match=r"A sharded index already exists .* open it with pse.ShardedIndex"
    ):
        pse.BM25().indexer(pse.SparseIndex(sharded.path), verbose=False).index(DOCS)
    with pytest.raises(
        FileExistsError, match=r"A single index already exists .* open it with pse.SparseIndex"
    ):
        pse.BM25().indexer(pse.ShardedIndex(single.path, num_shards=2), verbose=False).index(DOCS)
    with pytest.raises(FileExistsError, match=r"pt_meta.json that is not a readable index .* check-index"):
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "garbage"), verbose=False).index(DOCS)
    assert (
        pse.ShardedIndex(sharded.path).built()
        and (tmp_path / "garbage" / "pt_meta.json").read_text() == "{oops"
    )


def test_a_language_code_in_any_case_is_one_language_in_a_spec_and_on_the_command_line(capsys):
    from pyterrier_sparse_eval.cli import main
    from pyterrier_sparse_eval.systems import parse_system, specs_with_language

    upper, lower = parse_system("bm25:language=FR"), parse_system("bm25:language=fr")
    assert upper.encoder.language == "fr" and pse.BM25(language="Fr").language == "fr"
    assert (upper.name, upper.index_name) == (lower.name, lower.index_name)  # one cache entry, one name
    assert specs_with_language(["bm25"], "irds:nothing/here", "FR", quiet=True) == ["bm25:language=fr"]
    # a region is dropped, as a dataset card's language is read ("de-DE" is "de")
    assert pse.BM25(language="fr-FR").language == "fr" and pse.BM25(language="pt_BR").language == "pt"
    assert parse_system("bm25:language=zh-TW").name == parse_system("bm25:language=zh").name
    assert specs_with_language(["bm25"], "irds:nothing/here", "de-DE", quiet=True) == ["bm25:language=de"]
    # ISO 639-2/3 codes (MTEB's cards: deu, eng) and English names are their 639-1 code; they had been unknown
    for given, code in (
        ("deu", "de"),
        ("ger", "de"),
        ("ENG", "en"),
        ("cmn", "zh"),
        ("German", "de"),
        ("persian", "fa"),
        # other English names (a card's "Farsi" had been analysed as English)
        ("Farsi", "fa"),
        ("Bangla", "bn"),
        ("mandarin", "zh"),
        ("Kiswahili", "sw"),
    ):
        assert pse.BM25(language=given).language == code, given
    assert parse_system("bm25:language=jpn").name == parse_system("bm25:language=ja").name
    # in BCP 47's shape only: a dangling hyphen or a list is no language
    for bad in ("fr-", "fr-FR,en"):
        with pytest.raises(ValueError, match=f"Unknown language '{bad}'"):
            pse.BM25(language=bad)
    for bad in (lambda: parse_system("bm25:language=xx"), lambda: pse.BM25(language="XX")):
        with pytest.raises(ValueError, match="Unknown language '(xx|XX)'; supported: ar, bn, de, en, "):
            bad()
    argv = ["experiment", "--dataset", "irds:nothing/here", "--quiet", "--system", "bm25:k1=x"]
    assert main([*argv, "--language", "FR"]) == 2  # refused for the spec, not for --language FR
    err = capsys.readouterr().err
    assert "Bad value for k1" in err and "--language" not in err
    assert main([*argv, "--language", "xx"]) == 2
    assert "Unknown --language 'xx'; supported: ar, bn, de, en, " in capsys.readouterr().err


def test_spec_errors_quote_the_spec_as_written_not_with_the_language_added(monkeypatch, capsys):
    from pyterrier_sparse_eval.cli import main
    from pyterrier_sparse_eval.systems import parse_system, specs_with_language

    (added,) = specs_with_language(["bm25:k1=1,k1=2"], "irds:nothing/here", "de", quiet=True)
    assert added == "bm25:k1=1,k1=2,language=de"  # what is parsed
    with pytest.raises(ValueError, match=r"k1 is given twice in 'bm25:k1=1,k1=2'; give"):
        parse_system(added)
    monkeypatch.setattr(datasets, "dataset_language", lambda d: "fr")  # a dataset that declares French
    for command in ("experiment", "sdm"):
        for language in ([], ["--language", "de"]):
            argv = [command, "--dataset", "irds:nothing/here", "--quiet", "--system", "bm25:k1=x", *language]
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert "Bad value for k1 in 'bm25:k1=x': 'x'." in err and "language=" not in err, err


def test_english_options_with_the_dataset_language_name_language_en_as_the_fix(monkeypatch, capsys):
    from pyterrier_sparse_eval.cli import main

    monkeypatch.setattr(datasets, "dataset_language", lambda d: "fr")  # a dataset that declares French
    argv = ["experiment", "--dataset", "irds:nothing/here", "--quiet", "--system", "bm25:stemmer=none"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "leave them at their defaults" in err and err.count("\n") == 1
    assert "The language fr came from the dataset" in err and "give --language en" in err
    assert "language=en in 'bm25:stemmer=none'" in err
    for fix in (["--language", "en"], ["--system", "bm25:stemmer=none,language=en"]):
        assert main([*argv[:-2], *fix]) == 2  # either fix gets past the spec: refused for the dataset only
        assert "Unknown dataset 'irds:nothing/here'" in capsys.readouterr().err
    assert main([*argv, "--language", "fr"]) == 2  # French chosen: leave the options at their defaults
    assert "--language en" not in capsys.readouterr().err


def test_an_unknown_measure_name_suggests_the_known_one_it_is_close_to(tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main
    from pyterrier_sparse_eval.measures import parse_measure, parse_measures

    for wrong, meant in [
        ("ndcg@10", "nDCG@10"),  # another case first: nDCG, not its alias NDCG
        ("p(rel=2)@5", "P(rel=2)@5"),  # the parameters and cut-off kept as written
        ("map", "AP"),  # trec_eval's names: ir_measures' for them
        ("recall_100", "R@100"),
        ("ndcg_cut_10", "nDCG@10"),
        ("P_10", "P@10"),
        ("nDGC@10", "nDCG@10"),  # misspelt: the closest name
        ("pse.ndcg@10", "pse.nDCG@10"),  # in-house names too
        ("ndcg10", "nDCG@10"),  # a cut-off without its @ (the name alone, 'nDCG', had been suggested)
        ("NDCG_10", "nDCG@10"),
        ("P10(rel=2)", "P(rel=2)@10"),  # the cut-off after the parameters
        ("p10", "P@10"),
        ("rr10", "RR@10"),  # not the name it is closest to, 'NERR10'
        ("nerr10(max_rel=2)", "NERR10(max_rel=2)"),  # a name that ends in digits stays one
        ("nDCG(gain=exp)@10", "pse.nDCG(gain=exp)@10"),  # a parameter only the in-house measure takes
    ]:
        with pytest.raises(
            ValueError, match=rf"'{re.escape(wrong)}' \(did you mean '{re.escape(meant)}'\?\)"
        ):
            parse_measure(wrong)
        parse_measure(meant)  # the suggestion parses
        if not meant.startswith("pse."):
            assert str(parse_measure(meant)) == meant
    with pytest.raises(ValueError, match=r"'nDGC@10' \(did you mean 'nDCG@10'\?\)"):
        parse_measures(["AP", "nDGC@10"])
    with pytest.raises(ValueError, match=r"Unknown measure 'zzz'; use") as nothing_close:
        parse_measure("zzz")
    assert "did you mean" not in str(nothing_close.value)
    assert [str(parse_measure(n)) for n in ("nDCG@10", "NDCG@10", "P(rel=2)@5")] == ["nDCG@10"] * 2 + [
        "P(rel=2)@5"
    ]
    (tmp_path / "run.txt").write_text("1 Q0 d1 0 2.0 x\n")
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    files = ["--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")]
    assert main(["evaluate", *files, "--metric", "ndcg@10"]) == 2
    assert "Unknown measure 'ndcg@10' (did you mean 'nDCG@10'?)" in capsys.readouterr().err
    argv = ["experiment", "--dataset", "irds:nothing/here", "--quiet", "--metric", "Recall@100", "--metric"]
    assert main([*argv, "mrr"]) == 2  # Recall@100 (an alias) parses; mrr is refused before any work
    assert "Unknown measure 'mrr' (did you mean 'MRR'?)" in capsys.readouterr().err
