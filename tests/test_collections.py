"""Local collections: BEIR folders (beir:PATH[:SPLIT]) and files (files:CORPUS,TOPICS,QRELS)."""

import gzip
import json
import os
import re
import shutil
import time
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pyterrier as pt
import pytest
from conftest import needs_data
from ir_measures import AP, ERR, R, nDCG

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.datasets import FieldError

DOCS = [
    {"_id": 1, "title": "Cats", "text": "cats purr and sleep"},
    {"_id": "d2", "title": "Dogs", "text": "dogs bark at cats"},
    {"_id": "d3", "title": "", "text": "fish swim in water"},
    {"_id": "007", "title": "Birds", "text": "birds sing and fly"},
]
QUERIES = [
    {"_id": "q1", "text": "purring cats"},
    {"_id": 2, "text": "barking dogs"},
    {"_id": "q3", "text": "swimming fish"},
    {"_id": "q4", "text": "unjudged query"},
]
TEST_QRELS = [("q1", "1", 1), ("2", "d2", 1), ("q3", "d3", 2)]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


def _beir_qrels(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows))
    return path


def make_beir(folder: Path, docs=DOCS, queries=QUERIES, qrels=TEST_QRELS, *, gz: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _jsonl(folder / ("corpus.jsonl.gz" if gz else "corpus.jsonl"), docs)
    _jsonl(folder / "queries.jsonl", queries)
    _beir_qrels(folder / "qrels" / "test.tsv", qrels)
    _beir_qrels(folder / "qrels" / "train.tsv", [("q4", "d3", 1)])
    return folder


def docs_of(spec_or_ds) -> list[dict]:
    return list(pse.datasets.corpus_iter(spec_or_ds))


@pytest.mark.parametrize("gz", [False, True])
def test_beir_folder_gives_str_ids_title_text_and_judged_topics(tmp_path, gz):
    folder = make_beir(tmp_path / "toy", gz=gz)
    ds = pse.datasets.load_dataset(f"beir:{folder}")
    assert ds.language is None and pse.datasets.dataset_language(ds) is None
    assert docs_of(ds) == [{"docno": str(d["_id"]), "title": d["title"], "text": d["text"]} for d in DOCS]
    assert pse.datasets.num_docs(ds) == 4  # counted, gzipped or not, for the progress bar's total
    topics = pse.datasets.get_topics(ds)
    assert topics.to_dict("list") == {
        "qid": ["q1", "2", "q3"],
        "query": ["purring cats", "barking dogs", "swimming fish"],
    }
    qrels = pse.datasets.get_qrels(ds)
    assert list(qrels.itertuples(index=False, name=None)) == TEST_QRELS
    train = pse.datasets.get(f"beir:{folder}:train")
    assert list(pse.datasets.get_topics(train).qid) == ["q4"]


def test_files_jsonl_corpus_tsv_topics_trec_qrels(tmp_path):
    corpus = _jsonl(
        tmp_path / "docs.jsonl", [{"docno": "a", "text": "x y"}, {"doc_id": 5, "title": "t", "text": "z"}]
    )
    (tmp_path / "topics.tsv").write_text("1\tx\n2\tz query\n")
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n2 0 5 0\n")
    ds = pse.datasets.load_dataset(f"files:{corpus},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}")
    assert docs_of(ds) == [
        {"docno": "a", "title": "", "text": "x y"},
        {"docno": "5", "title": "t", "text": "z"},
    ]
    assert pse.datasets.get_topics(ds).to_dict("list") == {"qid": ["1", "2"], "query": ["x", "z query"]}
    assert pse.datasets.get_qrels(ds).to_dict("list") == {
        "qid": ["1", "2"],
        "docno": ["a", "5"],
        "label": [1, 0],
    }


def test_files_tsv_corpus_jsonl_topics_beir_qrels_gzipped(tmp_path):
    with gzip.open(tmp_path / "docs.tsv.gz", "wt") as f:
        f.write("docno\ttext\nd1\tsome text\twith a tab\nd2\tmore\n")
    _jsonl(tmp_path / "q.jsonl", [{"qid": 1, "query": "text"}])
    _beir_qrels(tmp_path / "qrels.tsv", [("1", "d1", 1)])
    ds = pse.datasets.get(f"files:{tmp_path / 'docs.tsv.gz'},{tmp_path / 'q.jsonl'},{tmp_path / 'qrels.tsv'}")
    assert docs_of(ds) == [
        {"docno": "d1", "title": "", "text": "some text\twith a tab"},
        {"docno": "d2", "title": "", "text": "more"},
    ]
    assert pse.datasets.get_topics(ds).to_dict("list") == {"qid": ["1"], "query": ["text"]}
    assert pse.datasets.get_qrels(ds).to_dict("list") == {"qid": ["1"], "docno": ["d1"], "label": [1]}


# bad input: (how to break a good BEIR folder, the error, a phrase of its message)
def _no_folder(f):
    return f"beir:{f}-missing"


def _no_corpus(f):
    (f / "corpus.jsonl").unlink()
    return f"beir:{f}"


def _no_text(f):
    _jsonl(f / "corpus.jsonl", [{"_id": "a", "body": "x"}])
    return f"beir:{f}"


def _no_id(f):
    _jsonl(f / "corpus.jsonl", [{"key": "a", "text": "x"}])
    return f"beir:{f}"


def _dup_ids(f):
    _jsonl(f / "corpus.jsonl", [*DOCS, {"_id": "d2", "text": "again"}])
    return f"beir:{f}"


def _no_query_text(f):
    _jsonl(f / "queries.jsonl", [{"_id": "q1", "question": "x"}])
    return f"beir:{f}"


def _unknown_split(f):
    return f"beir:{f}:dev"


def _bad_json(f):
    (f / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": \n')
    return f"beir:{f}"


def _bad_label(f):
    _beir_qrels(f / "qrels" / "test.tsv", [("q1", "1", "high")])  # type: ignore[list-item]
    return f"beir:{f}"


def _files_two_paths(f):
    return f"files:{f / 'corpus.jsonl'},{f / 'queries.jsonl'}"


def _files_missing(f):
    return f"files:{f / 'corpus.jsonl'},{f / 'nope.tsv'},{f / 'qrels' / 'test.tsv'}"


FAULTS = [
    (_no_folder, FileNotFoundError, "BEIR folder not found"),
    (_no_corpus, FileNotFoundError, "has no corpus.jsonl"),
    (_no_text, FieldError, "line 1: the document has no 'text' field"),
    (_no_id, FieldError, "no document id"),
    (_dup_ids, ValueError, "line 5: duplicate document id 'd2'"),
    (_no_query_text, FieldError, "rename its field to 'text'"),
    (_unknown_split, ValueError, "no split 'dev'; splits present: test, train"),
    (_bad_json, ValueError, "line 2: not a JSON object"),
    (_bad_label, ValueError, "the label 'high' must be an integer"),
    (_files_two_paths, ValueError, "files:CORPUS,TOPICS,QRELS"),
    (_files_missing, FileNotFoundError, "Topics file not found"),
]


@pytest.mark.parametrize("fault,error,message", FAULTS, ids=[f.__name__ for f, _, _ in FAULTS])
def test_bad_input_is_a_clear_error(tmp_path, fault, error, message):
    spec = fault(make_beir(tmp_path / "toy"))
    with pytest.raises(error, match=message):
        ds = pse.datasets.load_dataset(spec)
        pse.datasets.get_topics(ds)
        docs_of(ds)


def test_qrels_naming_unknown_queries_or_documents_are_counted(tmp_path):
    qrels = [*TEST_QRELS, ("q9", "d2", 1), ("q1", "gone", 1), ("q1", "lost", 0)]
    ds = pse.datasets.load_dataset(f"beir:{make_beir(tmp_path / 'toy', qrels=qrels)}")
    with pytest.warns(
        UserWarning, match=r"1 judged queries in .*test.tsv are not in .*queries.jsonl \(e.g. 'q9'\)"
    ):
        topics = pse.datasets.get_topics(ds)
    assert list(topics.qid) == ["q1", "2", "q3"]
    assert len(pse.datasets.get_qrels(ds)) == 6  # reported, not dropped
    with pytest.warns(
        UserWarning, match=r"2 of 5 judged documents .* are not in the corpus \(e.g. 'gone', 'lost'\)"
    ):
        assert len(docs_of(ds)) == 4


@pytest.mark.filterwarnings("ignore:1 of 3 queries share no term")  # q3's only document is edited out
def test_cache_key_changes_when_the_corpus_is_edited(tmp_path):
    folder = make_beir(tmp_path / "toy")
    spec = f"beir:{folder}"
    system = pse.systems.parse_system("bm25")
    assert (
        pse.datasets.dataset_identity("irds:vaswani") == "irds:vaswani"
    )  # irds cache entries keep their names
    before = system.cache_name(spec)
    assert system.cache_name(spec) == before
    corpus = folder / "corpus.jsonl"
    st = corpus.stat()
    os.utime(corpus, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # touched: same size, new mtime
    touched = system.cache_name(spec)
    _jsonl(corpus, [d for d in DOCS if d["_id"] != "d3"])  # edited: d3 (judged for q3) removed
    edited = system.cache_name(spec)
    assert len({before, touched, edited}) == 3
    # edited in place, size and mtime kept (as `touch -r` or `cp -p` of an edited copy leave them): served the
    # stale index before
    st = corpus.stat()
    text = corpus.read_bytes()
    time.sleep(0.01)
    corpus.write_bytes(text.replace(b"d1", b"e1", 1))
    os.utime(corpus, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert corpus.stat().st_size == st.st_size and corpus.stat().st_mtime_ns == st.st_mtime_ns
    assert system.cache_name(spec) != edited
    corpus.write_bytes(text)

    # through the experiment: the edited corpus is indexed anew, not served from the first index
    measures = [nDCG @ 10]
    with pytest.warns(UserWarning, match="1 of 3 judged documents"):
        first = pse.run_experiment(spec, [system], measures, index_dir=tmp_path / "idx", verbose=False)
    _jsonl(corpus, DOCS)
    second = pse.run_experiment(spec, [system], measures, index_dir=tmp_path / "idx", verbose=False)
    entries = sorted(p.name for p in pse.systems.index_folder(tmp_path / "idx", spec).iterdir() if p.is_dir())
    assert len(entries) == 2
    assert first.table["nDCG@10"][0] < second.table["nDCG@10"][0]  # d3 (judged for q3) is back


def test_the_query_sets_of_one_corpus_share_its_cached_index(tmp_path, capsys):
    """The splits of a BEIR folder (and ir_datasets' query sets of one corpus, by ir_datasets.docs_parent_id) are
    served by one cached index; each had built its own (an 8.8M-document MS MARCO index for dev and again for each
    TREC DL year). An entry made under the dataset's own name before is used where it is while it serves."""
    folder = make_beir(tmp_path / "toy")
    _beir_qrels(folder / "qrels" / "dev.tsv", [("q1", "d3", 1)])  # 'purring cats': a fish document
    system, measures = pse.systems.parse_system("bm25"), [nDCG @ 10, R @ 10]
    test = pse.run_experiment(f"beir:{folder}:test", [system], measures, index_dir=tmp_path / "idx")
    dev = pse.run_experiment(f"beir:{folder}:dev", [system], measures, index_dir=tmp_path / "idx")
    printed = capsys.readouterr().out
    entries = [
        p for p in pse.systems.index_folder(tmp_path / "idx", f"beir:{folder}").iterdir() if p.is_dir()
    ]
    assert len(entries) == 1 and list((tmp_path / "idx").iterdir()) == [entries[0].parent]
    assert f"Reusing index {entries[0]}" in printed
    assert system.cache_name(f"beir:{folder}:test") == system.cache_name(f"beir:{folder}:dev")
    # each split evaluated on its own topics and qrels
    assert test.table["R@10"][0] == 1.0 and dev.table["R@10"][0] == 0.0
    assert pse.datasets.corpus_spec("irds:msmarco-passage/trec-dl-2019/judged") == "irds:msmarco-passage"
    assert pse.datasets.corpus_spec("irds:msmarco-passage/dev") == "irds:msmarco-passage"
    assert pse.datasets.corpus_spec("msmarco-passage/dev") == "irds:msmarco-passage"  # read as irds: ids are
    assert pse.datasets.corpus_spec("irds:vaswani") == "irds:vaswani"

    # an entry of the dataset's own (its folder and key before the sharing) serves while it is current
    spec, idx = f"beir:{folder}:test", tmp_path / "before"
    own = pse.systems.index_folder(idx, spec, by_corpus=False) / system.cache_name(spec, by_corpus=False)
    system.encoder.indexer(pse.SparseIndex(own), verbose=False).index(pse.datasets.corpus_iter(spec))
    again = pse.run_experiment(spec, [system], measures, index_dir=idx)
    assert f"Reusing index {own}" in capsys.readouterr().out
    assert again.table["nDCG@10"][0] == test.table["nDCG@10"][0]
    assert [p.name for p in idx.iterdir()] == [own.parent.name]  # nothing built beside it


def test_a_build_names_the_cached_indexes_an_earlier_analyzer_left(tmp_path, capsys, monkeypatch):
    """After ANALYZER_VERSION changes, an entry of the version before is never read again (its terms are not this
    version's); the build of the new entry says so, with the space it takes and the command that frees it, and so
    of a pooled index of sparse-eval sdm made by that version."""
    import pyterrier_sparse_eval._bm25 as bm25_module
    import pyterrier_sparse_eval._tokenize as tokenize_module

    folder = make_beir(tmp_path / "toy")
    spec, system = f"beir:{folder}", pse.systems.parse_system("bm25")
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    (old,) = [p for p in pse.systems.index_folder(tmp_path / "idx", spec).iterdir() if p.is_dir()]
    pooled = old.parent / "pool-0123abcd" / old.name  # where sparse-eval sdm caches its pooled indexes
    shutil.copytree(old, pooled)
    assert "earlier version" not in capsys.readouterr().out
    version = tokenize_module.ANALYZER_VERSION
    for module in (bm25_module, tokenize_module):
        monkeypatch.setattr(module, "ANALYZER_VERSION", version + 1)
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    out = capsys.readouterr().out
    assert len([p for p in old.parent.iterdir() if p.is_dir()]) == 3 and old.is_dir()  # said, never removed
    assert re.search(
        rf"2 cached indexes of this corpus were built by an earlier version of the package \(analyzer version "
        rf"{version}\) and will not be read again \([0-9.]+ MiB\): remove them to free the space: rm -r "
        rf"{re.escape(str(old))} {re.escape(str(pooled))}\n",
        out,
    ), out  # the pooled one had not been named


def test_a_build_names_the_cached_indexes_a_chain_without_its_mark_left(tmp_path, capsys, monkeypatch):
    """A language's analysis can change within one analyzer version, recorded as a chain mark (Japanese's entry
    order, 2026-12-02): an entry without the mark is a new cache entry and refused by a BM25, so never read again;
    it had not been named with the entries of earlier versions."""
    import pyterrier_sparse_eval._tokenize as tokenize_module

    folder = make_beir(tmp_path / "toy")
    spec, system = f"beir:{folder}", pse.systems.parse_system("bm25:language=de")
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    (old,) = [p for p in pse.systems.index_folder(tmp_path / "idx", spec).iterdir() if p.is_dir()]
    monkeypatch.setitem(tokenize_module._CHAIN_MARKS, "de", {"chain": "later"})
    pse.run_experiment(
        spec, [pse.systems.parse_system("bm25:language=de")], [nDCG @ 10], index_dir=tmp_path / "idx"
    )
    out = capsys.readouterr().out
    assert len([p for p in old.parent.iterdir() if p.is_dir()]) == 2 and old.is_dir()
    assert re.search(
        r"1 cached index of this corpus was built by an earlier version of the package \(de analysis without "
        rf"'later'\) and will not be read again \([0-9.]+ MiB\): remove them to free the space: rm -r "
        rf"{re.escape(str(old))}\n",
        out,
    ), out
    # a language whose unmarked index is still searched is not named
    monkeypatch.setattr(tokenize_module, "MARKS_SEARCHED_WITHOUT", ("de",))
    assert pse._cache.outdated_entries(old.parent) == []


def test_a_build_names_the_cached_index_of_the_corpus_file_before_its_edit(tmp_path, capsys):
    """An edited local corpus gets a new entry (its key holds the file's size and times): the entry of the file
    before the edit, never read again, had been left unnamed (found by a user's test: three edits, three full
    entries)."""
    folder = make_beir(tmp_path / "toy")
    spec, system = f"beir:{folder}", pse.systems.parse_system("bm25")
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    (old,) = [p for p in pse.systems.index_folder(tmp_path / "idx", spec).iterdir() if p.is_dir()]
    assert "earlier version" not in capsys.readouterr().out
    with open(folder / "corpus.jsonl", "a") as f:
        f.write(json.dumps({"_id": "late", "title": "", "text": "a document added later"}) + "\n")
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    out = capsys.readouterr().out
    assert old.is_dir() and len([p for p in old.parent.iterdir() if p.is_dir()]) == 2  # said, never removed
    assert re.search(
        r"1 cached index of this corpus was built from an earlier version \(the corpus file edited since\) and "
        rf"will not be read again \([0-9.]+ MiB\): remove them to free the space: rm -r {re.escape(str(old))}\n",
        out,
    ), out
    # the entries of the current file (another system's, built now) are not named; the old one still is
    pse.run_experiment(
        spec, [pse.systems.parse_system("bm25:k1=1.2")], [nDCG @ 10], index_dir=tmp_path / "idx"
    )
    assert capsys.readouterr().out.endswith(
        f"built from an earlier version (the corpus file edited since) and will "
        f"not be read again (0.0 MiB): remove them to free the space: rm -r {old}\n"
    )


def test_documents_read_otherwise_since_get_a_new_entry_and_the_old_one_is_named(
    tmp_path, capsys, monkeypatch
):
    """The reader's version is in a local corpus's cache key: documents read otherwise since (version 2 ends lines
    at \\n only, where a stray \\r had made up a document) are indexed again, not served from the entry of the
    earlier reading, which is named (here the entry of a monkeypatched version 1)."""
    spec = f"beir:{make_beir(tmp_path / 'toy')}"
    system = pse.systems.parse_system("bm25")
    monkeypatch.setattr(pse.datasets, "READER_VERSION", 1)
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    (old,) = [p for p in pse.systems.index_folder(tmp_path / "idx", spec).iterdir() if p.is_dir()]
    monkeypatch.undo()
    capsys.readouterr()
    pse.run_experiment(spec, [system], [nDCG @ 10], index_dir=tmp_path / "idx")
    (new,) = [p for p in old.parent.iterdir() if p.is_dir() and p != old]
    assert pse.SparseIndex(new).num_docs == pse.SparseIndex(old).num_docs == len(DOCS)
    assert re.search(
        r"1 cached index of this corpus was built by an earlier version of the package \(its documents read as an "
        rf"earlier version read them\) and will not be read again .*rm -r {re.escape(str(old))}\n",
        capsys.readouterr().out,
    )


def test_cli_experiment_and_sdm_on_a_beir_folder(tmp_path, capsys):
    filler = [
        {"_id": f"f{i}", "title": "", "text": f"filler cats {i} dogs {i % 3} fish {i % 5}"} for i in range(30)
    ]
    folder = make_beir(tmp_path / "toy", docs=DOCS + filler)
    out = tmp_path / "res.json"
    common = ["--dataset", f"beir:{folder}", "--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main(["experiment", *common, "--metric", "nDCG@10", "--output", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["config"]["dataset"] == f"beir:{folder}" and data["config"]["queries"] == 3
    assert data["results"]["BM25(k1=0.9,b=0.4)"]["nDCG@10"] == pytest.approx(1.0)
    sdm_out = tmp_path / "sdm.json"
    assert (
        main(["sdm", *common, "--k", "2", "--pool-depth", "2", "--sample", "10", "--output", str(sdm_out)])
        == 0
    )
    assert json.loads(sdm_out.read_text())["config"]["dataset"] == f"beir:{folder}"
    capsys.readouterr()
    assert main(["experiment", *common[:1], f"beir:{folder}:dev", *common[2:]]) == 2
    assert "splits present: test, train" in capsys.readouterr().err


def _files_spec(tmp_path, topics="q1\tpurring cats\n2\tbarking dogs\nq3\tswimming fish\n", qrels=None):
    folder = make_beir(tmp_path / "toy")
    (tmp_path / "topics.tsv").write_text(topics)
    (tmp_path / "qrels.trec").write_text(qrels or "".join(f"{q} 0 {d} {s}\n" for q, d, s in TEST_QRELS))
    return f"files:{folder / 'corpus.jsonl'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.trec'}"


def test_cli_experiment_on_files(tmp_path):
    spec = _files_spec(tmp_path)
    out = tmp_path / "res.json"
    args = [
        "experiment",
        "--dataset",
        spec,
        "--index-dir",
        str(tmp_path / "idx"),
        "--quiet",
        "--output",
        str(out),
    ]
    assert main([*args, "--metric", "nDCG@10"]) == 0
    assert json.loads(out.read_text())["results"]["BM25(k1=0.9,b=0.4)"]["nDCG@10"] == pytest.approx(1.0)
    # the same files as --corpus/--topics/--qrels, and the usage errors when they are incomplete or doubled
    parts = spec.removeprefix("files:").split(",")
    separate = ["--corpus", parts[0], "--topics", parts[1], "--qrels", parts[2]]
    rest = args[3:]
    out.unlink()
    assert main(["experiment", *separate, *rest, "--metric", "nDCG@10"]) == 0
    assert json.loads(out.read_text())["results"]["BM25(k1=0.9,b=0.4)"]["nDCG@10"] == pytest.approx(1.0)
    assert main(["experiment", *separate[:4], *rest]) == 2
    assert main(["experiment", "--dataset", spec, *separate, *rest]) == 2
    assert main(["experiment", *rest]) == 2


@needs_data
def test_scifact_as_a_beir_folder_gives_the_irds_run_and_numbers(tmp_path, scifact, scifact_bm25_index):
    """SciFact re-exported from the shared irds cache (its source.zip: BEIR's own files) into a BEIR folder."""
    source = Path(os.environ["IR_DATASETS_HOME"]) / "beir" / "scifact" / "source.zip"
    with zipfile.ZipFile(source) as z:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "qrels/train.tsv"):
            target = tmp_path / "scifact" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(f"scifact/{name}"))
    local = pse.datasets.load_dataset(f"beir:{tmp_path / 'scifact'}")
    assert len(pse.datasets.corpus_iter(local)) == 5183
    topics, qrels = pse.datasets.get_topics(local), pse.datasets.get_qrels(local)
    pd.testing.assert_frame_equal(topics, pse.datasets.get_topics(scifact))
    pd.testing.assert_frame_equal(qrels, pse.datasets.get_qrels(scifact))

    index = pse.SparseIndex(tmp_path / "bm25")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every judged document is in the corpus, no id repeats
        pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(local))
    assert index.docnos.tolist() == scifact_bm25_index.docnos.tolist()
    ours, irds = pse.BM25().retriever(index), pse.BM25().retriever(scifact_bm25_index)
    pd.testing.assert_frame_equal(
        ours.transform(topics), irds.transform(topics)
    )  # the same run, query by query
    res = pt.Experiment([ours, irds], topics, qrels, [nDCG @ 10, AP], names=["beir", "irds"])
    beir_row, irds_row = res.to_dict("records")
    assert beir_row["nDCG@10"] == irds_row["nDCG@10"] and beir_row["AP"] == irds_row["AP"]
    assert beir_row["nDCG@10"] == pytest.approx(0.6789, abs=5e-5)  # Anserini's BM25 flat


def test_files_with_trec_topics(tmp_path):
    # the layout of TREC's topic files (e.g. TREC-8 ad hoc): <num> with "Number:", the title is the query
    (tmp_path / "topics.301").write_text(
        "<top>\n<num> Number: 301\n<title> International Organized Crime\n\n<desc> Description:\nIdentify...\n"
        "<narr> Narrative:\nA relevant...\n</top>\n\n<top>\n<num> Number: 302 \n<title> Poliomyelitis and\n"
        "  Post-Polio\n<desc> Description:\nIs the disease...\n</top>\n"
    )
    corpus = _jsonl(tmp_path / "docs.jsonl", [{"docno": "a", "text": "crime"}])
    (tmp_path / "qrels.txt").write_text("301 0 a 1\n")
    ds = pse.datasets.load_dataset(f"files:{corpus},{tmp_path / 'topics.301'},{tmp_path / 'qrels.txt'}")
    assert pse.datasets.get_topics(ds).to_dict("list") == {
        "qid": ["301", "302"],
        "query": ["International Organized Crime", "Poliomyelitis and Post-Polio"],
    }
    (tmp_path / "bad.txt").write_text("<top>\n<title> no number\n</top>\n")
    with pytest.raises(ValueError, match="without <num>"):
        pse.datasets.get_topics(
            pse.datasets.load_dataset(f"files:{corpus},{tmp_path / 'bad.txt'},{tmp_path / 'qrels.txt'}")
        )


def test_id_types_float_ids_refused_mixed_ids_counted_tsv_counted(tmp_path):
    """Ids must be JSON strings or integers: a float is refused with the fix; a file mixing numbers and strings is
    read (every id as a string) with a counted warning; a TSV corpus's count skips its header row."""
    folder = make_beir(tmp_path / "toy")  # DOCS: one numeric id (1) among three strings
    with pytest.warns(UserWarning, match=r"1 of 4 document ids in .*corpus.jsonl are JSON numbers"):
        docs_of(f"beir:{folder}")
    _jsonl(folder / "corpus.jsonl", [*DOCS[1:], {"_id": 2.5, "text": "x"}])
    with pytest.raises(
        FieldError, match=r'line 4: the document id 2.5 is a JSON float; .* write it as "2.5"'
    ):
        docs_of(f"beir:{folder}")
    _jsonl(
        folder / "corpus.jsonl", [*DOCS[1:], {"_id": 7.0, "text": "x"}]
    )  # a whole float: its integer's text
    with pytest.raises(FieldError, match=r'the document id 7.0 is a JSON float; .* write it as "7" \(pandas'):
        docs_of(f"beir:{folder}")
    tsv = tmp_path / "corpus.tsv"
    tsv.write_text("id\ttitle\ttext\nd1\tCats\tcats purr\nd2\t\tdogs bark\n")
    (tmp_path / "t.tsv").write_text("q1\tcats\n")
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n")
    ds = pse.datasets.load_dataset(f"files:{tsv},{tmp_path / 't.tsv'},{tmp_path / 'q.trec'}")
    assert pse.datasets.num_docs(ds) == 2 and [d["docno"] for d in docs_of(ds)] == ["d1", "d2"]


@pytest.mark.parametrize("damage", ["cut short", "damaged", "not utf-8"])
def test_an_unreadable_corpus_file_is_named_with_its_fix(tmp_path, damage):
    """A gzip corpus cut short (an interrupted download) or damaged, or a corpus that is not UTF-8: a ValueError
    naming the file and the fix, exit 2 on the command line (they had been EOFError / zlib.error, exit 3 as "a
    bug", and a UnicodeDecodeError naming no file)."""
    import gzip
    import json

    from pyterrier_sparse_eval.cli import main

    data = gzip.compress(
        "".join(json.dumps({"_id": f"d{i}", "text": f"alpha w{i} " * 5}) + "\n" for i in range(5000)).encode()
    )
    corpus = tmp_path / ("corpus.tsv" if damage == "not utf-8" else "corpus.jsonl.gz")
    corpus.write_bytes(
        {
            "cut short": data[: len(data) * 2 // 3],
            "damaged": b"\x1f\x8b\x08\x00garbage" + data[20:200],
            "not utf-8": "d1\tcaf\xe9 au lait\n".encode("latin-1"),
        }[damage]
    )
    (tmp_path / "topics.tsv").write_text("q1\talpha\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    spec = f"files:{corpus},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    fix = "iconv" if damage == "not utf-8" else "copy or download it again"
    with pytest.raises(ValueError, match=rf"{corpus}.*{fix}"):
        list(pse.datasets.corpus_iter(spec))
    args = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main(args) == 2


def test_a_gzip_run_cut_short_is_named_with_its_fix(tmp_path, capsys):
    """sparse-eval evaluate on a gzip run cut short: exit 2 naming the file and the fix (it had been an internal
    error, exit 3)."""
    import gzip

    from pyterrier_sparse_eval.cli import main

    data = gzip.compress("".join(f"1 Q0 d{i} {i} {100 - i} x\n" for i in range(5000)).encode())
    (tmp_path / "run.gz").write_bytes(data[: len(data) // 2])
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    assert main(["evaluate", "--run", str(tmp_path / "run.gz"), "--qrels", str(tmp_path / "qrels.txt")]) == 2
    assert "run.gz: the gzip file is cut short or damaged" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------------------
# A new user's own files (a bug hunt's findings): each was silently wrong or a crash before
# ------------------------------------------------------------------------------------------------------------


def test_a_topic_field_a_local_collection_lacks_is_refused(tmp_path, capsys):
    """--topic-field desc on a local collection had been ignored (the titles evaluated, exit 0)."""
    spec = _files_spec(tmp_path)
    assert pse.datasets.get_topics(spec, field="query")["query"].tolist()[0] == "purring cats"
    for ds in (spec, f"beir:{tmp_path / 'toy'}"):
        with pytest.raises(ValueError, match="one text field, the query.*no 'desc' to choose"):
            pse.datasets.get_topics(ds, field="desc")
    args = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main([*args, "--topic-field", "desc"]) == 2 and "no 'desc' to choose" in capsys.readouterr().err
    assert not (tmp_path / "idx").exists()  # refused before any index


def test_tsv_ids_are_stripped_and_a_third_topic_column_is_refused(tmp_path):
    """A third column had been read into the query ('apple<TAB>description text' retrieved 'description'); a
    trailing space in an id had kept it from matching the qrels, which are split on whitespace."""
    (tmp_path / "docs.tsv").write_text("d1 \tcats purr\nd2\tdogs bark\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "topics.tsv").write_text("q1 \tcats\nq2\tdogs\t\n")  # a trailing tab is no column
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    assert [d["docno"] for d in docs_of(spec)] == ["d1", "d2"]
    assert pse.datasets.get_topics(spec).to_dict("list") == {"qid": ["q1", "q2"], "query": ["cats", "dogs"]}
    (tmp_path / "three.tsv").write_text("q1\tcats\n2\tapple\tdescription text\n")
    with pytest.raises(ValueError, match=r"three.tsv, line 2: expected 'qid<TAB>query' lines.*cut -f1,2"):
        pse.datasets.get_topics(
            f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'three.tsv'},{tmp_path / 'qrels.txt'}"
        )


def test_long_paths_commas_and_loaded_datasets_on_the_command_line_and_api(tmp_path, capsys):
    """Three long paths had made a cache folder name beyond 255 bytes ('File name too long'); a comma in a path
    was read as a files: spec the user never wrote; run_experiment on pse.datasets.get(...) was an
    AttributeError."""
    deep = tmp_path / ("a" * 60) / ("b" * 60)
    deep.mkdir(parents=True)
    make_beir(deep)
    (deep / "topics.tsv").write_text("q1\tpurring cats\n2\tbarking dogs\nq3\tswimming fish\n")
    (deep / "qrels.trec").write_text("".join(f"{q} 0 {d} {s}\n" for q, d, s in TEST_QRELS))
    files = ["--corpus", str(deep / "corpus.jsonl"), "--topics", str(deep / "topics.tsv")]
    files += ["--qrels", str(deep / "qrels.trec")]
    out = tmp_path / "res.json"
    args = ["experiment", *files, "--index-dir", str(tmp_path / "idx"), "--quiet", "--output", str(out)]
    assert main([*args, "--metric", "nDCG@10"]) == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["results"]["BM25(k1=0.9,b=0.4)"]["nDCG@10"] == pytest.approx(1.0)
    (cache,) = (tmp_path / "idx").iterdir()
    assert len(cache.name) <= 150
    (tmp_path / "my,topics.tsv").write_text("q1\tcats\n")
    comma = ["experiment", *files[:2], "--topics", str(tmp_path / "my,topics.tsv"), *files[4:]]
    assert main([*comma, "--index-dir", str(tmp_path / "idx")]) == 2
    assert "a path holding ',' cannot be read" in capsys.readouterr().err
    spec = f"files:{deep / 'corpus.jsonl'},{deep / 'topics.tsv'},{deep / 'qrels.trec'}"
    for dataset in (spec, pse.datasets.get(spec)):
        result = pse.run_experiment(
            dataset,
            [pse.systems.parse_system("bm25")],
            ["nDCG@10"],
            index_dir=tmp_path / "idx",
            verbose=False,
        )
        assert result.table["nDCG@10"].tolist() == [pytest.approx(1.0)]
    assert [p.name for p in (tmp_path / "idx").iterdir()] == [cache.name]  # the same cached index
    with pytest.raises(TypeError, match="give the dataset's id"):
        pse.run_experiment(
            object(), [pse.systems.parse_system("bm25")], ["nDCG@10"], index_dir=tmp_path / "i"
        )


def test_evaluate_reads_beir_qrels_and_writes_strict_json(tmp_path, capsys):
    """The BEIR qrels experiment reads had been refused by evaluate and crosscheck; a measure nothing was
    evaluated for had been written as NaN, which strict JSON readers refuse."""
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    beir = _beir_qrels(tmp_path / "qrels.tsv", [("q1", "d2", 1), ("q1", "d1", 0)])
    trec = tmp_path / "qrels.trec"
    trec.write_text("q1 0 d2 1\nq1 0 d1 0\n")
    for qrels in (beir, trec):
        out = tmp_path / f"{qrels.name}.json"
        cmd = ["evaluate", "--run", str(tmp_path / "run"), "--qrels", str(qrels), "--metric", "RR"]
        assert main([*cmd, "--output", str(out)]) == 0
        assert json.loads(out.read_text())["aggregate"]["RR"] == pytest.approx(0.5)  # d2 at rank 2
    (tmp_path / "other").write_text("q9 Q0 d1 1 2.0 t\n")
    out = tmp_path / "nothing.json"
    main(
        [
            "evaluate",
            "--run",
            str(tmp_path / "other"),
            "--qrels",
            str(trec),
            "--metric",
            "RR",
            "--output",
            str(out),
        ]
    )
    text = out.read_text()
    assert "NaN" not in text and json.loads(text)["aggregate"]["RR"] is None


def test_labels_with_a_plus_sign_and_a_gzip_file_without_its_suffix(tmp_path):
    spec = _files_spec(tmp_path, qrels="q1 0 1 +1\n2 0 d2 1\nq3 0 d3 2\n")
    assert pse.datasets.get_qrels(spec)["label"].tolist() == [1, 1, 2]  # as trec_eval's atoi reads +1
    corpus = tmp_path / "toy" / "corpus.jsonl"
    corpus.write_bytes(gzip.compress(corpus.read_bytes()))
    with pytest.raises(
        ValueError, match=r"corpus.jsonl.*not UTF-8 text.*it is gzip-compressed: name it \*.gz"
    ):
        docs_of(spec)


def test_experiment_with_int_qids_names_the_cast(tmp_path):
    """pse.Experiment had let pandas' merge error through ('You are trying to merge on int64 and str')."""
    spec = _files_spec(tmp_path, topics="1\tpurring cats\n2\tbarking dogs\n", qrels="1 0 1 1\n2 0 d2 1\n")
    index = pse.SparseIndex(tmp_path / "i")
    pse.BM25().indexer(index, verbose=False).index(docs_of(spec))
    topics, qrels = pse.datasets.get_topics(spec), pse.datasets.get_qrels(spec)
    with pytest.raises(TypeError, match=r"qid types differ.*qrels\['qid'\] = qrels\['qid'\].astype\(str\)"):
        pse.Experiment([pse.BM25().retriever(index)], topics, qrels.astype({"qid": int}), [nDCG @ 10])
    table = pse.Experiment([pse.BM25().retriever(index)], topics, qrels, [nDCG @ 10])
    assert table["nDCG@10"].tolist() == [pytest.approx(1.0)]


def test_anserini_json_documents_are_read_and_a_list_as_text_is_refused(tmp_path):
    """Anserini's JsonCollection ({"id", "contents"}) had been refused; a list as a document's text had been indexed
    as its Python repr ("['a', 'b']")."""
    spec = _files_spec(tmp_path)
    corpus = tmp_path / "toy" / "corpus.jsonl"
    _jsonl(corpus, [{"id": d["_id"], "contents": d["title"] + " " + d["text"]} for d in DOCS])
    assert [(d["docno"], d["text"]) for d in docs_of(spec)][:2] == [
        ("1", "Cats cats purr and sleep"),
        ("d2", "Dogs dogs bark at cats"),
    ]
    _jsonl(corpus, [{"_id": "1", "text": ["cats purr", "and sleep"]}])
    with pytest.raises(
        FieldError, match=r"corpus.jsonl, line 1: the document's 'text' is a JSON list; give a string"
    ):
        docs_of(spec)


def test_ids_equal_as_numbers_but_not_as_text_are_named(tmp_path, capsys):
    """Topic '001' and qrels '1' share no id (ids match as text, as trec_eval matches them): the refusal had
    asked only whether both come from the same split."""
    spec = _files_spec(tmp_path, topics="001\tpurring cats\n002\tbarking dogs\n", qrels="1 0 1 1\n2 0 d2 1\n")
    args = ["experiment", "--dataset", spec, "--index-dir", str(tmp_path / "idx"), "--quiet"]
    assert main(args) == 2
    assert (
        "2 topic ids equal qrels ids as numbers, not as text (e.g. topic '001', qrels '1')"
        in capsys.readouterr().err
    )


def test_a_gdeval_measure_refuses_query_ids_and_labels_gdeval_cannot_read(tmp_path, capsys):
    """ERR@k is gdeval's (a Perl script reading a query id as the digits after its last '-'): ids 'a-1' and 'b-1'
    had been merged silently into one query '1' (ERR@10 0.0104, not the mean of the two queries), and ids such as
    'q1' or labels above 4 had failed after every run (a CalledProcessError; the command line: "a bug")."""
    # each query's one relevant document is ranked first: ERR@10 = (2**1 - 1) / 2**4 (gdeval's grades of at most 4)
    spec = _files_spec(
        tmp_path, topics="a-1\tpurring cats\nb-1\tbarking dogs\n", qrels="a-1 0 1 1\nb-1 0 d2 1\n"
    )
    index = pse.SparseIndex(tmp_path / "i")
    pse.BM25().indexer(index, verbose=False).index(docs_of(spec))
    topics, qrels, bm25 = (
        pse.datasets.get_topics(spec),
        pse.datasets.get_qrels(spec),
        pse.BM25().retriever(index),
    )
    with pytest.raises(ValueError, match=r"ERR@10 is computed by .*gdeval.*digits.*\['a-1', 'b-1'\]"):
        pse.Experiment([bm25], topics, qrels, [ERR @ 10])
    numbered = {"a-1": "1", "b-1": "2"}
    topics, qrels = (
        topics.assign(qid=topics["qid"].map(numbered)),
        qrels.assign(qid=qrels["qid"].map(numbered)),
    )
    assert pse.Experiment([bm25], topics, qrels, [ERR @ 10])["ERR@10"].tolist() == [pytest.approx(1 / 16)]
    with pytest.raises(ValueError, match=r"whole labels of at most 4; the qrels hold \[5\].*clip\(upper=4\)"):
        pse.Experiment([bm25], topics, qrels.assign(label=5), [ERR @ 10])
    # the command line: refused before any index is built
    spec = _files_spec(tmp_path / "cli")
    args = [
        "experiment",
        "--dataset",
        spec,
        "--quiet",
        "--metric",
        "ERR@10",
        "--index-dir",
        str(tmp_path / "i"),
    ]
    assert main(args) == 2
    assert "gdeval, which reads only query ids made of digits" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_a_tab_in_the_first_documents_text_names_the_header_row(tmp_path):
    (tmp_path / "docs.tsv").write_text("d1\tcats\tpurr\nd2\tdogs bark\n")
    (tmp_path / "topics.tsv").write_text("q1\tcats\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    spec = f"files:{tmp_path / 'docs.tsv'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    with pytest.raises(
        ValueError, match=r"docs.tsv, line 2: .*start the file with the header row 'docno<TAB>text'"
    ):
        docs_of(spec)
    (tmp_path / "docs.tsv").write_text("docno\ttext\nd1\tcats\tpurr\nd2\tdogs bark\n")  # the fix named
    assert [d["text"] for d in docs_of(spec)] == ["cats\tpurr", "dogs bark"]


def test_qrels_judging_a_document_twice_are_said_once_and_the_last_label_counts(tmp_path):
    """With standard measures (pytrec_eval) the repeat had been used silently; the in-house ones warned, twice."""
    spec = _files_spec(tmp_path, qrels="q1 0 1 1\n2 0 d2 1\nq3 0 d3 2\n2 0 d2 0\n")  # d2 for 2: 1, then 0
    with pytest.warns(
        UserWarning, match=r"judge 1 document again for a query \(e.g. query '2', document 'd2'\)"
    ):
        qrels = pse.datasets.get_qrels(spec)
    assert qrels.to_dict("list") == {"qid": ["q1", "q3", "2"], "docno": ["1", "d3", "d2"], "label": [1, 2, 0]}


def test_review_edges_of_local_ids_topics_and_cache_names(tmp_path):
    """A topics line 'q2<TAB>' is an empty query (not two columns missing); JSONL ids are stripped as TSV ids
    are; a cache folder made under a long whole name before names were bounded is still used."""
    from pyterrier_sparse_eval.systems import index_folder

    (tmp_path / "topics.tsv").write_text("q1\tcats\nq2\t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    _jsonl(tmp_path / "docs.jsonl", [{"_id": " d1 ", "text": "cats"}])
    spec = f"files:{tmp_path / 'docs.jsonl'},{tmp_path / 'topics.tsv'},{tmp_path / 'qrels.txt'}"
    assert pse.datasets.get_topics(spec).to_dict("list") == {"qid": ["q1", "q2"], "query": ["cats", ""]}
    assert [d["docno"] for d in docs_of(spec)] == ["d1"]
    long_spec = "files:" + ",".join(f"/data/{'x' * 60}/{name}" for name in ("c.jsonl", "t.tsv", "q.txt"))
    # (the folder named by the dataset's own spec, where entries made before 2026-11-30 are looked for)
    bounded = index_folder(tmp_path, long_spec, by_corpus=False)
    assert len(bounded.name) <= 150
    earlier = tmp_path / pse.files.slug(long_spec, bound=False)
    earlier.mkdir()
    assert 150 < len(earlier.name) <= 255 and index_folder(tmp_path, long_spec, by_corpus=False) == earlier


def test_files_read_as_written_whatever_their_line_ends_marks_and_missing_fields(tmp_path):
    """Inputs a user's tools write, each of which had been read wrong without a word: a stray carriage return in a
    text (Python's universal newlines had ended a line there, making up the document 'q1'), a byte-order mark
    starting a later line (files joined with cat: the docno had been '\\ufeffd3'), a JSON NaN field (json.dumps
    writes pandas' missing values so: it had been indexed as the word 'nan'), BEIR TSV qrels whose ids hold a
    space (split on whitespace, 'q1 Global warming 1' had been read as TREC with the docno 'warming'), labels
    written 2.0 outside `evaluate`, and a TREC topic block without its </top> (it had swallowed the next topic)."""
    corpus = tmp_path / "corpus.tsv"
    corpus.write_bytes(b"d1\tcats purr\nd2\tdogs bark\rq1\tloudly\n" + "\ufeffd3\tnan birds\n".encode())
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tGlobal warming\t2.0\nq1\td2\t1\n")
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"_id": "q1", "text": "dogs"}\n{"_id": "q2", "text": NaN}\n')
    ds = pse.datasets.get(f"files:{corpus},{topics},{qrels}")
    assert ds.num_docs() == 3
    assert docs_of(ds) == [
        {"docno": "d1", "title": "", "text": "cats purr"},
        {"docno": "d2", "title": "", "text": "dogs bark\rq1\tloudly"},
        {"docno": "d3", "title": "", "text": "nan birds"},
    ]
    assert pse.datasets.get_topics(ds).values.tolist() == [["q1", "dogs"], ["q2", ""]]
    assert pse.datasets.get_qrels(ds).values.tolist() == [["q1", "Global warming", 2], ["q1", "d2", 1]]
    # a JSON corpus's NaN title is missing, not a word a query could match
    docs = _jsonl(tmp_path / "docs.jsonl", [{"_id": "d1", "text": "cats"}, {"_id": "d2", "text": "dogs"}])
    docs.write_text(docs.read_text().replace('"cats"}', '"cats", "title": NaN}'))
    assert docs_of(f"files:{docs},{topics},{qrels}")[0] == {"docno": "d1", "title": "", "text": "cats"}
    trec = tmp_path / "topics.txt"
    trec.write_text(
        "<top>\n<num> Number: 301\n<title> organized crime\n<desc> Description:\nGangs.\n\n"
        "<top>\n<num> Number: 302\n<title> polio\n</top>\n<top>\n<num> Number: 303\n<title> hubble\n"
    )
    with pytest.warns(UserWarning, match=r"some <top> blocks have no </top>; each was read up to the next"):
        got = pse.datasets.get_topics(f"files:{corpus},{trec},{qrels}")
    assert got.values.tolist() == [["301", "organized crime"], ["302", "polio"], ["303", "hubble"]]
