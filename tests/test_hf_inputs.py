"""hf:REPO collections given in odd shapes: a loaded hf_dataset's mapping kept by the pipelines (and by the index
cache key), float and spaced ids in topics and qrels, empty or null judgments, folders that are not MTEB's layout,
and the byte-order mark of hub TSVs. Every collection is a small folder written here (no hub)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.hf import MIRROR_ENV

datasets = pytest.importorskip("datasets", reason="needs the hf extra")


@pytest.fixture(autouse=True)
def offline_datasets(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv(MIRROR_ENV, raising=False)


def card(folder: Path, corpus: str, queries: str, qrels: str, split: str = "test") -> None:
    (folder / "README.md").write_text(
        "---\nconfigs:\n"
        f"- config_name: corpus\n  data_files:\n  - split: corpus\n    path: {corpus}\n"
        f"- config_name: queries\n  data_files:\n  - split: queries\n    path: {queries}\n"
        f"- config_name: default\n  data_files:\n  - split: {split}\n    path: {qrels}\n---\n"
    )


def jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def folder_of(
    root: Path, docs: list[dict], queries: list[dict], qrels: list[dict], fmt: str = "jsonl"
) -> Path:
    """An MTEB-layout folder of the three parts, as JSONL or as parquet written by pandas."""
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus", docs), ("queries", queries), ("qrels", qrels)):
        if fmt == "jsonl":
            jsonl(root / f"{name}.jsonl", rows)
        else:
            pd.DataFrame(rows).to_parquet(root / f"{name}.parquet")
    card(root, f"corpus.{fmt}", f"queries.{fmt}", f"qrels.{fmt}")
    return root


# a corpus whose `text` column is unrelated English and whose German text is `text_de`: each German query word
# is in its relevant document only, so the mapped data gives nDCG@10 = 1 and the English column 0
BILINGUAL_DOCS = [
    {"_id": "d1", "title": "", "text": "dogs bark", "text_de": "katzen schnurren"},
    {"_id": "d2", "title": "", "text": "fish swim", "text_de": "hunde bellen laut"},
    {"_id": "d3", "title": "", "text": "cats purr", "text_de": "fische schwimmen"},
] + [{"_id": f"f{i}", "title": "", "text": f"filler {i}", "text_de": f"füller wort {i}"} for i in range(60)]
BILINGUAL_QUERIES = [
    {"_id": "q1", "text": "cats", "text_de": "katzen"},
    {"_id": "q2", "text": "dogs", "text_de": "hunde"},
    {"_id": "q3", "text": "fish", "text_de": "fische"},
]
BILINGUAL_QRELS = [{"query-id": f"q{i}", "corpus-id": f"d{i}", "score": 1} for i in (1, 2, 3)]
GERMAN = {"text": "text_de", "query": "text_de"}


def bilingual(tmp_path: Path) -> Path:
    return folder_of(tmp_path / "bilingual", BILINGUAL_DOCS, BILINGUAL_QUERIES, BILINGUAL_QRELS)


def test_run_experiment_evaluates_a_loaded_hf_dataset_with_its_columns_and_language(tmp_path):
    """pse.run_experiment on pse.hf.hf_dataset(spec, columns=, language=) indexes and asks the mapped columns (it
    had reloaded the spec with MTEB's columns: the English text, nDCG@10 0.0)."""
    ds = pse.hf.hf_dataset(f"hf:{bilingual(tmp_path)}", columns=GERMAN, language="de")
    system = pse.systems.parse_system("bm25:language=de")
    res = pse.run_experiment(ds, [system], ["nDCG@10"], index_dir=tmp_path / "idx", verbose=False)
    assert res.table["nDCG@10"].tolist() == [1.0]
    assert res.queries == 3
    (meta,) = (tmp_path / "idx").rglob("vocab.json")
    assert "katz" in json.loads(meta.read_text()) and "cat" not in json.loads(meta.read_text())


@pytest.mark.filterwarnings("ignore:A background sample of 20", "ignore:The run lists at most 1")
def test_sdm_report_evaluates_a_loaded_hf_dataset_with_its_columns(tmp_path):
    ds = pse.hf.hf_dataset(f"hf:{bilingual(tmp_path)}", columns=GERMAN, language="de")
    report = pse.sdm.three_way(
        ds, ["bm25:language=de"], depth=3, sample=20, k_values=[10], index_dir=tmp_path / "idx", verbose=False
    )
    ((name, measures),) = report.results.items()
    assert measures["nDCG@10"]["full"] == 1.0
    assert report.config["dataset"] == ds.spec


def test_two_column_mappings_of_one_folder_never_share_a_cached_index(tmp_path):
    spec = f"hf:{bilingual(tmp_path)}"
    german = pse.hf.hf_dataset(spec, columns=GERMAN)
    english = pse.hf.hf_dataset(spec)
    identity = pse.datasets.dataset_identity
    assert identity(german) != identity(english)
    assert identity(english) == identity(spec)  # MTEB's columns: the key a spec string has always had
    assert identity(pse.hf.hf_dataset(spec, columns={"docno": "_id", "text": "text_de"})) == identity(german)
    # the queries' mapping does not change the documents: one index serves both
    assert identity(pse.hf.hf_dataset(spec, columns={"query": "text_de"})) == identity(english)
    system = pse.systems.parse_system("bm25")
    assert system.cache_name(german) != system.cache_name(english)
    for ds in (german, english):
        system.index(tmp_path / "idx", ds, lambda ds=ds: pse.datasets.corpus_iter(ds), verbose=False)
    assert len(list((tmp_path / "idx").rglob("pt_meta.json"))) == 2


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_float_ids_in_topics_and_qrels_are_refused_naming_the_column(tmp_path, fmt):
    """As a float document id is: 7.0 had been read as '7.0', matching no document (metrics 0, exit 0). Parquet
    written by pandas has a float64 column as soon as one value was missing."""
    docs = [{"_id": str(i), "title": "", "text": f"word{i}"} for i in range(3)]
    qrels = [{"query-id": "10", "corpus-id": float(i), "score": 1} for i in range(3)]
    root = folder_of(tmp_path / "qrels_floats", docs, [{"_id": "10", "text": "word1"}], qrels, fmt)
    with pytest.raises(
        KeyError, match=r"row 1: the document id 0\.0 is a float; .* write the column 'corpus-id'"
    ):
        pse.datasets.get_qrels(f"hf:{root}")
    qrels = [{"query-id": "10", "corpus-id": "1", "score": 1}]
    root = folder_of(tmp_path / "topic_floats", docs, [{"_id": 10.0, "text": "word1"}], qrels, fmt)
    with pytest.raises(KeyError, match=r"row 1: the query id 10\.0 is a float; .* write the column '_id'"):
        pse.datasets.get_topics(f"hf:{root}")


def test_ids_are_stripped_as_files_ids_are(tmp_path):
    docs = [{"_id": " d1 ", "title": "", "text": "cats"}, {"_id": "d2", "title": "", "text": "dogs"}]
    root = folder_of(
        tmp_path / "spaced",
        docs,
        [{"_id": " q1 ", "text": "cats"}],
        [{"query-id": " q1 ", "corpus-id": " d1 ", "score": 1}],
    )
    ds = pse.datasets.get(f"hf:{root}")
    assert pse.datasets.get_topics(ds).values.tolist() == [["q1", "cats"]]
    assert pse.datasets.get_qrels(ds).values.tolist() == [["q1", "d1", 1]]
    res = pse.run_experiment(
        ds, [pse.systems.parse_system("bm25")], ["nDCG@10"], index_dir=tmp_path / "i", verbose=False
    )
    assert res.table["nDCG@10"].tolist() == [1.0]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_true_false_labels_are_read_as_one_and_zero(tmp_path, fmt):
    """A boolean relevance column (JSON true/false, a parquet bool column) is read as 1 and 0, as it always was."""
    docs = [{"_id": "d1", "title": "", "text": "cats"}, {"_id": "d2", "title": "", "text": "dogs"}]
    qrels = [
        {"query-id": "q1", "corpus-id": "d1", "score": True},
        {"query-id": "q1", "corpus-id": "d2", "score": False},
    ]
    root = folder_of(tmp_path / fmt, docs, [{"_id": "q1", "text": "cats"}], qrels, fmt)
    assert pse.datasets.get_qrels(f"hf:{root}").values.tolist() == [["q1", "d1", 1], ["q1", "d2", 0]]


def test_an_empty_qrels_file_and_a_null_label_are_errors_naming_the_file(tmp_path, capsys):
    docs = [{"_id": "d1", "title": "", "text": "cats"}, {"_id": "d2", "title": "", "text": "dogs"}]
    empty = folder_of(tmp_path / "empty", docs, [{"_id": "q1", "text": "cats"}], [])
    with pytest.raises(ValueError, match=r"Qrels .*: the data file .*empty/qrels\.jsonl is empty; give it"):
        pse.datasets.get_qrels(f"hf:{empty}")
    assert (
        main(["experiment", "--dataset", f"hf:{empty}", "--index-dir", str(tmp_path / "idx"), "--quiet"]) == 2
    )
    assert "qrels.jsonl is empty" in capsys.readouterr().err
    null = [
        {"query-id": "q1", "corpus-id": "d1", "score": None},
        {"query-id": "q1", "corpus-id": "d2", "score": 1},
    ]
    root = folder_of(tmp_path / "null", docs, [{"_id": "q1", "text": "cats"}], null)
    with pytest.raises(
        ValueError, match=r"null \(config 'default', split 'test'\), row 1: the label is missing"
    ):
        pse.datasets.get_qrels(f"hf:{root}")


def test_folders_not_in_mteb_layout_name_what_to_give_instead(tmp_path):
    beir = tmp_path / "beir"
    jsonl(beir / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "cats"}])
    jsonl(beir / "queries.jsonl", [{"_id": "q1", "text": "cats"}])
    (beir / "qrels").mkdir()
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    with pytest.raises(ValueError, match=rf"it is a BEIR folder .*: give beir:{beir}\."):
        pse.datasets.dataset_identity(f"hf:{beir}")  # the index cache key: the corpus config's files
    with pytest.raises(ValueError, match=rf"it is a BEIR folder .*: give beir:{beir}\."):
        pse.datasets.get_topics(f"hf:{beir}")
    saved = tmp_path / "saved"
    datasets.disable_progress_bars()
    datasets.DatasetDict(
        {"corpus": datasets.Dataset.from_list([{"_id": "d1", "text": "cats"}])}
    ).save_to_disk(str(saved))
    with pytest.raises(ValueError, match="written by save_to_disk, which hf: does not read; write each part"):
        pse.datasets.get_topics(f"hf:{saved}")
    other = folder_of(tmp_path / "other", [], [], [])
    card(other, "corpus.jsonl", "queries.jsonl", "qrels.jsonl")
    (other / "README.md").write_text((other / "README.md").read_text().replace("name: queries", "name: q"))
    with pytest.raises(ValueError, match=r"has no config 'queries' .*pse\.hf\.hf_dataset\(spec, configs="):
        pse.datasets.get_topics(f"hf:{other}")


def test_mteb_files_without_their_card_are_given_the_card_that_reads_them(tmp_path):
    """A download of MTEB's data files without its README.md card (qrels/test.jsonl, not a BEIR folder's
    qrels/test.tsv) had been told it was a BEIR folder, which beir: then refused."""
    root = tmp_path / "nocard"
    jsonl(
        root / "corpus.jsonl",
        [{"_id": "d1", "title": "", "text": "cats purr"}, {"_id": "d2", "text": "dogs"}],
    )
    jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "cats"}])
    jsonl(root / "qrels" / "test.jsonl", [{"query-id": "q1", "corpus-id": "d1", "score": 1}])
    with pytest.raises(ValueError, match="has no README.md card naming its files as configs") as e:
        pse.datasets.get_topics(f"hf:{root}")
    assert "BEIR" not in str(e.value)
    said = str(e.value)
    (root / "README.md").write_text(said[said.index("\n---\n") + 1 :] + "\n")
    assert pse.datasets.get_topics(f"hf:{root}").values.tolist() == [["q1", "cats"]]
    assert pse.datasets.get_qrels(f"hf:{root}").values.tolist() == [["q1", "d1", 1]]


def test_tsv_qrels_beside_a_jsonl_corpus_name_the_file(tmp_path):
    root = tmp_path / "mixed"
    jsonl(root / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "cats"}])
    jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "cats"}])
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    card(root, "corpus.jsonl", "queries.jsonl", "qrels.tsv")
    with pytest.raises(
        ValueError, match=r"cannot read .*mixed/qrels\.tsv as json .* write all of its data files"
    ):
        pse.datasets.get_qrels(f"hf:{root}")


def test_a_missing_folder_read_offline_says_no_folder_and_that_the_hub_was_not_asked(
    tmp_path, monkeypatch, capsys
):
    """A mistyped folder is read as a hub id: offline, that had been 'a download was attempted and failed'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)  # HF_DATASETS_OFFLINE=1, read on import
    for read in (pse.datasets.dataset_identity, pse.datasets.get_topics):
        with pytest.raises(
            pse.datasets.OfflineError, match=r"no folder odd/typo .*offline mode is set .* hub was not"
        ) as e:
            read("hf:odd/typo")
        assert isinstance(e.value, FileNotFoundError)
    assert main(["experiment", "--dataset", "hf:odd/typo", "--index-dir", str(tmp_path / "idx")]) == 2
    assert "there is no folder odd/typo" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match=r"no folder data/odd/typo .*nor is it a hub id"):
        pse.datasets.get("hf:data/odd/typo")  # a path, never a hub id: the hub is not asked


def test_mmarco_tsvs_lose_their_byte_order_mark_as_files_does(tmp_path, monkeypatch):
    mirror = tmp_path / "hub"
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    root = mirror / "unicamp-dl" / "mmarco" / "data"
    files = {
        root / "google" / "collections" / "english_collection.tsv": "0\tcats purr\n1\tdogs bark\n",
        root / "google" / "queries" / "dev" / "english_queries.dev.small.tsv": "10\tcats\n11\tdogs\n",
        root / "qrels.dev.small.tsv": "10 0 0 1\n11 0 1 1\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\ufeff" + text, encoding="utf-8")
    ds = pse.datasets.get("hf:mmarco:en")
    assert pse.datasets.get_topics(ds)["qid"].tolist() == ["10", "11"]
    assert pse.datasets.get_qrels(ds)["qid"].tolist() == ["10", "11"]
    assert [d["docno"] for d in pse.datasets.corpus_iter(ds)] == ["0", "1"]


def test_the_command_line_says_an_unreadable_data_file_once(tmp_path):
    """The datasets library logs an error before raising it ("Failed to load JSON from file ..."), which the command
    line reports in its own words: only that one line is printed (with --quiet too). In a process of its own: under
    pytest the library's records go to pytest's log capture."""
    import subprocess
    import sys

    root = tmp_path / "mixed"
    jsonl(root / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "cats"}])
    jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "cats"}])
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    card(root, "corpus.jsonl", "queries.jsonl", "qrels.tsv")
    for quiet in ([], ["--quiet"]):
        args = ["experiment", "--dataset", f"hf:{root}", "--index-dir", str(tmp_path / "idx"), *quiet]
        done = subprocess.run(
            [sys.executable, "-m", "pyterrier_sparse_eval", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stderr
        err = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(err) == 1 and "cannot read" in err[0] and "qrels.tsv" in err[0], err


DOCS = [{"_id": "d1", "title": "", "text": "cats purr"}, {"_id": "d2", "title": "", "text": "dogs bark"}]
QUERIES = [{"_id": "q1", "text": "cats"}]


def test_a_user_s_mistakes_are_errors_naming_the_fix(tmp_path, monkeypatch):
    """A corpus not in UTF-8, a card naming a file that is not there, labels written as strings, and a mirror
    holding some of MIRACL's languages but not the one asked for: each error names the fix (before, the first
    advised one file format for all, the second listed ~400 file extensions, the last named no download)."""
    latin = folder_of(tmp_path / "latin", DOCS, QUERIES, [{"query-id": "q1", "corpus-id": "d1", "score": 1}])
    with open(latin / "corpus.jsonl", "ab") as f:
        f.write(b'{"_id": "d3", "title": "", "text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"corpus\.jsonl: not UTF-8 text .*iconv -f latin1 -t utf-8"):
        list(pse.datasets.get(f"hf:{latin}").get_corpus_iter(verbose=False))
    typo = folder_of(tmp_path / "typo", DOCS, QUERIES, [{"query-id": "q1", "corpus-id": "d1", "score": 1}])
    card(typo, "corpus-typo.jsonl", "queries.jsonl", "qrels.jsonl")
    with pytest.raises(
        FileNotFoundError, match=r"names the data file .*corpus-typo.jsonl, which is not there; fix the card"
    ):
        list(pse.datasets.get(f"hf:{typo}").get_corpus_iter(verbose=False))
    strings = folder_of(
        tmp_path / "str", DOCS, QUERIES, [{"query-id": "q1", "corpus-id": "d1", "score": "1"}]
    )
    with pytest.raises(ValueError, match=r"the label '1' must be an integer; write the column as integers"):
        pse.datasets.get(f"hf:{strings}").get_qrels()

    mirror = tmp_path / "mirror"
    (mirror / "miracl" / "miracl" / "miracl-v1.0-de" / "topics").mkdir(parents=True)
    (mirror / "miracl" / "miracl" / "miracl-v1.0-de" / "topics" / "topics.miracl-v1.0-de-dev.tsv").write_text(
        "1\tHaus\n"
    )
    (mirror / "miracl" / "miracl-corpus" / "miracl-corpus-v1.0-sw").mkdir(parents=True)
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    with pytest.raises(FileNotFoundError, match=r"no miracl-v1.0-sw folder .*--include 'miracl-v1.0-sw/\*'"):
        pse.datasets.get("hf:miracl:sw").get_topics()
    with pytest.raises(FileNotFoundError, match=r"--include 'miracl-corpus-v1.0-fi/\*' --local-dir"):
        pse.datasets.get("hf:miracl:fi").data_files()


def test_ids_and_texts_are_read_as_written_in_tsv_and_jsonl_folders(tmp_path):
    """The datasets library guesses types: its CSV reader (pandas) had read the ids 007 and 001 as 7 and 1 and the
    texts NA and null as missing, its JSON reader the text 2019-04-18 as a timestamp ('2019-04-18 00:00:00')."""
    tsv = tmp_path / "tsv"
    (tsv / "qrels").mkdir(parents=True)
    (tsv / "corpus.tsv").write_text("_id\ttitle\ttext\n007\t\tcats purr\n008\tNA\tNA\n")
    (tsv / "queries.tsv").write_text("_id\ttext\n001\tcats\n002\tnull\n")
    (tsv / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n001\t007\t1\n002\t008\t2\n")
    card(tsv, "corpus.tsv", "queries.tsv", "qrels/test.tsv")
    ds = pse.datasets.get(f"hf:{tsv}")
    assert [(d["docno"], d["title"], d["text"]) for d in pse.datasets.corpus_iter(ds)] == [
        ("007", "", "cats purr"),
        ("008", "NA", "NA"),
    ]
    assert pse.datasets.get_topics(ds).values.tolist() == [["001", "cats"], ["002", "null"]]
    assert pse.datasets.get_qrels(ds).values.tolist() == [["001", "007", 1], ["002", "008", 2]]
    docs = [{"_id": "2019-04-18", "title": "2019-04-18", "text": "2019-04-18T13:32:05"}]
    root = folder_of(
        tmp_path / "dates",
        docs,
        [{"_id": "q1", "text": "2019-04-18"}],
        [{"query-id": "q1", "corpus-id": "2019-04-18", "score": 1}],
    )
    ds = pse.datasets.get(f"hf:{root}")
    assert [(d["docno"], d["title"], d["text"]) for d in pse.datasets.corpus_iter(ds)] == [
        ("2019-04-18", "2019-04-18", "2019-04-18T13:32:05")
    ]
    assert pse.datasets.get_topics(ds).values.tolist() == [["q1", "2019-04-18"]]


def test_mmarco_tsvs_split_lines_at_newlines_only_and_name_a_file_that_is_not_utf8(tmp_path, monkeypatch):
    """The datasets text reader had ended a line at a stray carriage return (and at U+2028), making up a document;
    a Latin-1 file had given a bare codec error naming no file."""
    mirror = tmp_path / "hub"
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    root = mirror / "unicamp-dl" / "mmarco" / "data"
    collection = root / "google" / "collections" / "english_collection.tsv"
    files = {
        collection: "0\tcats purr\rlines\n1\tdogs\u2028bark\n\ufeff2\tfish\n",
        root / "google" / "queries" / "dev" / "english_queries.dev.small.tsv": "10\tcats\n11\tdogs\n",
        root / "qrels.dev.small.tsv": "10 0 0 1\n11 0 1 1\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    ds = pse.datasets.get("hf:mmarco:en")
    assert [(d["docno"], d["text"]) for d in pse.datasets.corpus_iter(ds)] == [
        ("0", "cats purr\rlines"),
        ("1", "dogs\u2028bark"),
        ("2", "fish"),
    ]
    collection.write_bytes("0\tcats\n1\tS\u00e3o Paulo\n".encode("latin-1"))
    ds = pse.datasets.get("hf:mmarco:en")
    with pytest.raises(
        ValueError, match=r"english_collection\.tsv, line 2: not UTF-8 text .*iconv -f latin1"
    ):
        list(pse.datasets.corpus_iter(ds))
