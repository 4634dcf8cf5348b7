"""Documents of irds: datasets whose text is not in title/text: the fields their own ``default_text()`` joins.

The datasets here are registered in ir_datasets' registry with its real document classes and format readers
(msmarco-document's ``MsMarcoDocument`` read by ``TsvDocs``), fed from local files, and loaded through
``pt.get_dataset("irds:...")`` as a user's would be.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

ir_datasets = pytest.importorskip("ir_datasets")

import pyterrier as pt  # noqa: E402

import pyterrier_sparse_eval as pse  # noqa: E402
from pyterrier_sparse_eval.datasets import dataset_doc_fields  # noqa: E402

DOCS = {
    # docno: (url, title, body)
    "D1": ("http://a.example/birds", "Birds", "birds sing and fly over the sea"),
    "D2": ("http://b.example/fish", "Fish", "fish swim in the sea all day long"),
    "D3": ("http://c.example/swim", "Swim", "people learn to swim in a pool"),
}


@pytest.fixture(scope="module")
def msdoc(tmp_path_factory):
    """A dataset shaped as irds:msmarco-document (url, title, body), with two queries and their judgments."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.datasets.msmarco_document import MsMarcoDocument
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    name = "pse-test/msdoc-like"
    if name not in ir_datasets.registry:
        d = tmp_path_factory.mktemp("msdoc")
        (d / "docs.tsv").write_text("".join(f"{k}\t{u}\t{t}\t{b}\n" for k, (u, t, b) in DOCS.items()))
        (d / "queries.tsv").write_text("1\tswim\n2\tsea birds\n")
        (d / "qrels").write_text("1 0 D2 1\n1 0 D3 1\n2 0 D1 1\n")
        ir_datasets.registry.register(
            name,
            Dataset(
                TsvDocs(LocalDownload(d / "docs.tsv"), doc_cls=MsMarcoDocument),
                TsvQueries(LocalDownload(d / "queries.tsv")),
                TrecQrels(LocalDownload(d / "qrels"), {1: "relevant"}),
            ),
        )
    return pt.get_dataset(f"irds:{name}")


def test_the_dataset_names_its_own_fields(msdoc, vaswani, scifact):
    assert dataset_doc_fields(msdoc) == ("title", "body")
    assert dataset_doc_fields("irds:pse-test/msdoc-like") == ("title", "body")
    # title/text collections keep the choice they had (their default text is title + text or text)
    assert dataset_doc_fields(vaswani) is None
    assert dataset_doc_fields(scifact) is None
    assert pse.datasets.corpus_iter(msdoc).default_fields == ("title", "body")


@pytest.mark.parametrize(
    "cls, fields",
    [
        ("cord19.Cord19Doc", ("title", "abstract")),
        ("nfcorpus.NfCorpusDoc", ("title", "abstract")),
        ("msmarco_document_v2.MsMarcoV2Document", ("title", "headings", "body")),
        ("wapo.WapoDoc", ("title", "body")),
        # a body parsed from HTML (gov2) and a list joined (anchor text) are more than fields joined: not taken
        ("gov2.Gov2Doc", None),
        ("msmarco_document.MsMarcoAnchorTextDocument", None),
        ("beir.BeirTitleDoc", None),
    ],
)
def test_fields_read_off_the_real_document_classes(cls, fields):
    import importlib

    module, name = cls.rsplit(".", 1)
    doc_cls = getattr(importlib.import_module(f"ir_datasets.datasets.{module}"), name)

    class Irds:  # what pt.get_dataset("irds:...") holds
        def has_docs(self):
            return True

        def docs_cls(self):
            return doc_cls

    class Dataset:
        def irds_ref(self):
            return Irds()

    assert dataset_doc_fields(Dataset()) == fields


def test_bm25_indexes_the_body(msdoc, tmp_path):
    topics, qrels = pse.datasets.get_topics(msdoc), pse.datasets.get_qrels(msdoc)
    own = (
        pse.BM25()
        .indexer(pse.SparseIndex(tmp_path / "own"), verbose=False)
        .index(pse.datasets.corpus_iter(msdoc))
    )
    named = pse.BM25(fields=["title", "body"])
    named_index = named.indexer(pse.SparseIndex(tmp_path / "named"), verbose=False).index(
        msdoc.get_corpus_iter()
    )
    run = pse.BM25().retriever(own).transform(topics)
    expected = named.retriever(named_index).transform(topics)
    # the same index as fields=["title", "body"] named: every row, every score
    pd.testing.assert_frame_equal(run, expected)
    assert set(run[run.qid == "1"].docno) == {"D2", "D3"}  # "swim" is in D2's body only
    assert pse.evaluate(run, qrels, ["R@10"]).aggregate["R@10"] == 1.0


def test_splade_indexes_the_body(msdoc, model_dir, tmp_path):
    splade = pse.Splade(model_dir, device="cpu")
    indexer = splade.indexer(pse.SparseIndex(tmp_path / "own"), verbose=False)
    indexer.index(pse.datasets.corpus_iter(msdoc))
    assert indexer.fields_ == ("title", "body")
    named = splade.indexer(pse.SparseIndex(tmp_path / "named"), fields=["title", "body"], verbose=False)
    named.index(msdoc.get_corpus_iter(verbose=False))
    topics = pse.datasets.get_topics(msdoc)
    pd.testing.assert_frame_equal(
        splade.retriever(indexer.index_ref).transform(topics),
        splade.retriever(named.index_ref).transform(topics),
    )


def test_pyterriers_own_iterator_warns_of_the_body(msdoc, tmp_path):
    with pytest.warns(UserWarning, match=r"more text in 'body'.*fields=\['title', 'body'\]") as caught:
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), verbose=False).index(msdoc.get_corpus_iter())
    assert caught[0].filename == __file__  # the user's line


def test_no_warning_where_text_is_indexed(tmp_path):
    # TREC documents: text beside the longer marked-up copy of it
    docs = [{"docno": "d1", "text": "a b c", "marked_up_doc": "<DOC><TEXT>a b c</TEXT></DOC>"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pse.BM25().indexer(pse.SparseIndex(tmp_path / "i"), verbose=False).index(docs)


def test_the_cache_key_names_the_fields(msdoc, vaswani):
    assert pse.datasets.dataset_identity(msdoc).startswith(
        "irds:pse-test/msdoc-like|fields=title+body|files="
    )
    assert pse.datasets.dataset_identity(vaswani) == "irds:vaswani"


def test_a_pool_of_the_dataset_keeps_its_fields(msdoc):
    pool = pse.sdm.Pool(num_docs=3, relevant=("D2",), distractors=(), sample=(), depth=1, seed=0)
    docs = pool.corpus_iter(msdoc)
    assert docs.default_fields == ("title", "body")
    assert len(docs) == 1 and [d["docno"] for d in docs] == ["D2"]


def _register_topics(
    tmp_path_factory, name: str, query_cls: type, rows: list[tuple[str, ...]], others: int = 0
):
    """A dataset of one judged document (and ``others`` unjudged ones) whose topics are ``rows`` read by
    ir_datasets' TsvQueries as ``query_cls``."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import GenericDoc, TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    if name not in ir_datasets.registry:
        d = tmp_path_factory.mktemp("topics")
        (d / "docs.tsv").write_text(
            "D1\tbirds sing\n" + "".join(f"O{i}\tbirds fly {i}\n" for i in range(others))
        )
        (d / "queries.tsv").write_text("".join("\t".join(r) + "\n" for r in rows))
        (d / "qrels").write_text("".join(f"{r[0]} 0 D1 1\n" for r in rows))
        ir_datasets.registry.register(
            name,
            Dataset(
                TsvDocs(LocalDownload(d / "docs.tsv"), doc_cls=GenericDoc),
                TsvQueries(LocalDownload(d / "queries.tsv"), query_cls=query_cls),
                TrecQrels(LocalDownload(d / "qrels"), {1: "relevant"}),
            ),
        )
    return pt.get_dataset(f"irds:{name}")


def test_topics_take_the_datasets_own_query_text(tmp_path_factory, capsys):
    from ir_datasets.datasets.beir import BeirCovidQuery
    from ir_datasets.datasets.medline import TrecPmQuery
    from ir_datasets.formats import TrecQuery

    # BEIR trec-covid: text is BEIR's query (its published BM25 uses it), query the keyword title
    covid = _register_topics(
        tmp_path_factory,
        "pse-test/covid-like",
        BeirCovidQuery,
        [("1", "what is the origin of covid", "covid origin", "n")],
    )
    assert pse.datasets.get_topics(covid).to_dict("records") == [
        {"qid": "1", "query": "what is the origin of covid"}
    ]
    assert "using 'text' (the dataset's own query text)" in capsys.readouterr().out
    assert pse.datasets.get_topics(covid, "query")["query"].tolist() == ["covid origin"]
    # TREC PM: disease + gene + demographic, joined by a space as TrecPmQuery.default_text() joins them
    pm = _register_topics(
        tmp_path_factory, "pse-test/pm-like", TrecPmQuery, [("1", "melanoma", "BRAF", "64-year-old")]
    )
    topics = pse.datasets.get_topics(pm, verbose=False)
    assert topics["query"].tolist() == [
        pm.irds_ref().queries_cls()("1", "melanoma", "BRAF", "64-year-old").default_text()
    ]
    assert topics["query"].tolist() == ["melanoma BRAF 64-year-old"]
    # TREC topics: the title, as before
    trec = _register_topics(
        tmp_path_factory, "pse-test/trec-like", TrecQuery, [("1", "birds", "about birds", "n")]
    )
    assert pse.datasets.get_topics(trec, verbose=False)["query"].tolist() == ["birds"]


def test_mmarcos_dutch_is_analysed_as_dutch():
    from pyterrier_sparse_eval.systems import specs_with_language

    # ir_datasets' own metadata (no download): mMARCO's Dutch is declared "dt", which no ISO 639 code is
    assert ir_datasets.load("mmarco/v2/dt/dev/small").docs_lang() == "dt"
    assert pse.datasets.dataset_language("irds:mmarco/v2/dt/dev/small") == "nl"
    assert specs_with_language(["bm25"], "irds:mmarco/v2/dt/dev/small", quiet=True) == ["bm25:language=nl"]


@pytest.mark.parametrize(
    "command, dataset, message",
    [
        # a corpus id given for one of its query sets (142 registered ids have documents and no queries)
        (
            "experiment",
            "irds:msmarco-passage",
            "irds:msmarco-passage has no topics (queries); use a split that",
        ),
        (
            "sdm",
            "irds:cord19",
            "irds:cord19 has no topics (queries); use a split that has them (e.g. irds:cord19/",
        ),
        # topics and judgments whose documents ir_datasets does not give
        (
            "experiment",
            "irds:wapo/v3/trec-news-2020",
            "irds:wapo/v3/trec-news-2020 has no documents in ir_datasets",
        ),
    ],
)
def test_a_dataset_without_a_part_is_a_usage_error(command, dataset, message, tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    # ir_datasets' own metadata: no download is attempted before the refusal
    assert main([command, "--dataset", dataset, "--index-dir", str(tmp_path / "i")]) == 2
    out, err = capsys.readouterr()
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not out  # the analyzer's language is said only of good input
    assert not (tmp_path / "i").exists() or not any((tmp_path / "i").rglob("pt_meta.json"))


def test_empty_qrels_and_repeated_query_ids_are_refused(tmp_path_factory):
    from ir_datasets.formats import GenericQuery

    empty = _register_topics(tmp_path_factory, "pse-test/no-judgments", GenericQuery, [("1", "birds")])
    (Path(empty.irds_ref().qrels_handler()._qrels_dlc._path)).write_text("")
    with pytest.raises(ValueError, match="irds:pse-test/no-judgments's qrels hold no judgment"):
        pse.datasets.get_qrels(empty)
    twice = _register_topics(
        tmp_path_factory, "pse-test/twice", GenericQuery, [("2", "birds"), ("2", "fish")]
    )
    with pytest.raises(ValueError, match=r"irds:pse-test/twice's topics repeat query ids \(\['2'\]\)"):
        pse.datasets.get_topics(twice)


def test_sdm_takes_a_topic_field(tmp_path_factory, tmp_path, capsys):
    from ir_datasets.formats import TrecQuery

    from pyterrier_sparse_eval.cli import main

    trec = _register_topics(
        tmp_path_factory, "pse-test/trec-like", TrecQuery, [("1", "birds", "about birds", "n")]
    )
    with pytest.raises(ValueError, match="Topics have no field 'nope'"):
        pse.sdm.three_way(trec, ["bm25"], topic_field="nope", index_dir=tmp_path)
    argv = [
        "sdm",
        "--dataset",
        "irds:pse-test/trec-like",
        "--topic-field",
        "nope",
        "--index-dir",
        str(tmp_path),
    ]
    assert main([*argv, "--quiet"]) == 2
    assert (
        "Topics have no field 'nope'; available: ['title', 'description', 'narrative']"
        in capsys.readouterr().err
    )


def test_a_corpus_registered_over_local_files_is_known_by_them(tmp_path):
    import os

    docs = tmp_path / "docs.tsv"
    docs.write_text("a\tbirds sing\n")
    ir_datasets.registry.register(
        f"pse-test/local-{tmp_path.name}", ir_datasets.create_dataset(docs_tsv=docs)
    )
    spec = f"irds:pse-test/local-{tmp_path.name}"
    before = pse.datasets.dataset_identity(spec)
    assert before.startswith(f"{spec}|files={docs.resolve()}:13:")
    docs.write_text("a\tfish swim!\n")  # the same size
    os.utime(docs, ns=(docs.stat().st_atime_ns, int(before.split(":")[-2])))  # and the same mtime
    assert pse.datasets.dataset_identity(spec) != before  # ctime tells
    # a dataset of ir_datasets' cache is known by its id alone (its files are checked by ir_datasets)
    assert pse.datasets.dataset_identity("irds:beir/scifact/test") == "irds:beir/scifact"


def test_a_dataset_without_a_documents_language_takes_its_topics():
    # ir_datasets' own metadata (no download): istella22 declares Italian topics, no language for its documents
    assert ir_datasets.load("istella22/test").docs_lang() is None
    assert ir_datasets.load("istella22/test").queries_lang() == "it"
    assert pse.datasets.dataset_language("irds:istella22/test") == "it"


def test_a_missing_local_file_is_named_as_missing(tmp_path, capsys):
    from pyterrier_sparse_eval.cli import main

    gone = tmp_path / "gone.tsv"
    name = f"pse-test/missing-{tmp_path.name}"
    ir_datasets.registry.register(
        name, ir_datasets.create_dataset(docs_tsv=gone, queries_tsv=gone, qrels_trec=gone)
    )
    assert (
        main(["experiment", "--dataset", f"irds:{name}", "--index-dir", str(tmp_path / "i"), "--quiet"]) == 2
    )
    # ir_datasets raises FileNotFoundError(path): the line had held the path alone
    assert capsys.readouterr().err.strip() == f"sparse-eval: error: No such file or directory: {gone}"


def test_a_corpus_folder_registered_is_known_by_its_files(tmp_path):
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecDocs
    from ir_datasets.util import LocalDownload

    (tmp_path / "trec").mkdir()
    doc = tmp_path / "trec" / "a.trec"
    doc.write_text("<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>apple pie</TEXT>\n</DOC>\n")
    name = f"pse-test/folder-{tmp_path.name}"
    ir_datasets.registry.register(
        name, Dataset(TrecDocs(LocalDownload(tmp_path / "trec"), path_globs=["*.trec"]))
    )
    before = pse.datasets.dataset_identity(f"irds:{name}")
    assert f"|files={doc.resolve()}:" in before
    doc.write_text("<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>apple tart</TEXT>\n</DOC>\n")
    assert pse.datasets.dataset_identity(f"irds:{name}") != before


def test_a_query_set_without_judgments_names_its_corpus_other_sets():
    # irds:msmarco-passage/eval has topics, no qrels (ir_datasets' metadata: nothing is downloaded)
    with pytest.raises(
        ValueError,
        match=r"irds:msmarco-passage/eval has no relevance judgments; use a split .*"
        r"irds:msmarco-passage/dev",
    ):
        pse.datasets.get_qrels("irds:msmarco-passage/eval")


def test_judged_documents_the_corpus_lacks_are_counted(tmp_path, msdoc):
    """As a local dataset's are: an irds: dataset's qrels naming documents its corpus lacks had gone unsaid."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    (tmp_path / "docs.tsv").write_text("a\tbirds sing\nb\tfish swim\n")
    (tmp_path / "queries.tsv").write_text("1\tbirds\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 GONE 1\n1 0 b 0\n")
    name = f"pse-test/missing-{tmp_path.name}"
    ir_datasets.registry.register(
        name,
        Dataset(
            TsvDocs(LocalDownload(tmp_path / "docs.tsv")),
            TsvQueries(LocalDownload(tmp_path / "queries.tsv")),
            TrecQrels(LocalDownload(tmp_path / "qrels"), {1: "relevant"}),
        ),
    )
    with pytest.warns(
        UserWarning, match=rf"1 of 3 judged documents in irds:{name}'s qrels are not in the corpus"
    ):
        assert [d["docno"] for d in pse.datasets.corpus_iter(f"irds:{name}")] == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every judged document present: nothing said
        assert len(list(pse.datasets.corpus_iter(msdoc))) == len(DOCS)


def test_reports_name_the_topic_field_used(tmp_path_factory, tmp_path):
    """The JSON reports of experiment and sdm record which topic field was the query (they had not: a run on
    TREC descriptions and one on titles gave reports that differed in their numbers only)."""
    import json

    from ir_datasets.datasets.beir import BeirCovidQuery
    from ir_datasets.formats import TrecQuery

    from pyterrier_sparse_eval.cli import main

    _register_topics(
        tmp_path_factory, "pse-test/trec-fields", TrecQuery, [("1", "birds", "about birds", "n")], 8
    )
    # BEIR trec-covid's own query text is its text field alone
    _register_topics(
        tmp_path_factory, "pse-test/covid-fields", BeirCovidQuery, [("1", "birds", "sing birds", "n")]
    )
    cases = [
        ("irds:pse-test/trec-fields", [], "title"),
        ("irds:pse-test/trec-fields", ["--topic-field", "description"], "description"),
        ("irds:pse-test/covid-fields", [], "text"),
    ]
    for i, (spec, option, field) in enumerate(cases):
        common = ["--dataset", spec, *option, "--index-dir", str(tmp_path / "i"), "--quiet"]
        out = tmp_path / f"e{i}.json"
        assert main(["experiment", *common, "--output", str(out)]) == 0
        assert json.loads(out.read_text())["config"]["topic_field"] == field
    three = pse.sdm.three_way(
        "irds:pse-test/trec-fields",
        ["bm25"],
        index_dir=tmp_path / "i",
        verbose=False,
        k_values=[1],
        depth=1,
        sample=2,
    )
    assert three.config["topic_field"] == "title"
    assert pse.datasets.get_topics("irds:pse-test/trec-fields", verbose=False).attrs["topic_field"] == "title"
