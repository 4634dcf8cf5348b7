"""Regression tests for the input defects of audit B: httpx connection errors seen as offline, the hub's
offline mode named, TREC topic files with closing tags, TREC runs split on whitespace only (no CSV quotes),
messages naming the file and line, TSV corpus headers that do not name the text column."""

from __future__ import annotations

import gzip
import json
import re
import socket
import warnings

import pytest
import pytrec_eval

import pyterrier_sparse_eval as pse
from pyterrier_sparse_eval import console, hf
from pyterrier_sparse_eval.cli import main
from pyterrier_sparse_eval.datasets import read_qrels, read_run


# the shape of httpx's (and httpcore's) exceptions, whatever the installed version calls its module
class TransportError(Exception):
    pass


class NetworkError(TransportError):
    pass


class ConnectError(NetworkError):
    pass


def _raise_from(error: BaseException) -> None:
    try:
        raise error
    except BaseException as e:
        raise RuntimeError("could not open the collection") from e


@pytest.mark.parametrize(
    "error",
    [
        ConnectError("[Errno -2] Name or service not known"),
        socket.gaierror(-2, "Name or service not known"),
        ConnectionRefusedError(111, "Connection refused"),
    ],
)
def test_connection_errors_exit_2_with_the_offline_hint(error, capsys):
    assert console.looks_like_network(error)

    def command() -> int:
        _raise_from(error)
        return 0

    assert console.run(command) == console.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "may be offline" in err and "SPARSE_EVAL_HF_MIRROR" in err


@pytest.mark.parametrize("error", [KeyError("gain"), ValueError("bad"), BrokenPipeError(), TypeError("x")])
def test_other_errors_are_not_network_errors(error):
    assert not console.looks_like_network(error)


def test_hub_offline_mode_is_named_instead_of_a_missing_file(monkeypatch):
    monkeypatch.delenv(hf.MIRROR_ENV, raising=False)
    from pyterrier_sparse_eval import _hf_base

    for module in (hf, _hf_base):  # hf's readers and the base's messages each look them up
        monkeypatch.setattr(module, "_exists", lambda url: False)
        monkeypatch.setattr(module, "_offline", lambda: True)
    # the files are not here (a FileNotFoundError) because the hub was not asked: an OfflineError, as the README
    # says of hf: collections that cannot be read from the hub
    with pytest.raises(pse.datasets.OfflineError, match=r"HF_HUB_OFFLINE is set.*SPARSE_EVAL_HF_MIRROR") as e:
        pse.datasets.get("hf:mmarco:pt")
    assert isinstance(e.value, FileNotFoundError)
    for module in (hf, _hf_base):
        monkeypatch.setattr(module, "_offline", lambda: False)
    with pytest.raises(FileNotFoundError, match="mMARCO's queries file .* is missing"):
        pse.datasets.get("hf:mmarco:pt")


def _files(tmp_path, corpus: str, topics: str, qrels: str, topics_name: str = "t.trec") -> str:
    (tmp_path / "c.tsv").write_text(corpus)
    (tmp_path / topics_name).write_text(topics)
    (tmp_path / "q.txt").write_text(qrels)
    return f"files:{tmp_path / 'c.tsv'},{tmp_path / topics_name},{tmp_path / 'q.txt'}"


def test_trec_topics_with_and_without_closing_tags(tmp_path):
    topics = (
        "<top>\n<num>q1</num>\n<title>red fruit</title>\n<desc>about fruit</desc>\n</top>\n"
        "<top>\n<num> Number: 302\n<title> Topic: yellow  bananas\n\n<desc> Description:\nabout bananas\n</top>\n"
        "<top><num>q3</num><title>green</title></top>\n"
    )
    spec = _files(
        tmp_path, "d1\tred fruit\nd2\tyellow bananas\n", topics, "q1 0 d1 1\n302 0 d2 1\nq3 0 d1 0\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pse.datasets.get(spec).get_topics().values.tolist()
    assert got == [["q1", "red fruit"], ["302", "yellow bananas"], ["q3", "green"]]


def test_a_trec_title_keeps_its_no_break_spaces(tmp_path):
    """A <title>'s U+202F (the French thousands separator: "1 000") and U+00A0 had become ASCII spaces, so the
    query lost the token "1\u202f000\u202f" its documents hold. Anserini 0.22.1's TrecTopicReader, with its
    DumpAnalyzedQueries -language fr on this topic (run by hand), gives "pri 1\u202f000\u202f abc def two line":
    the line break and ASCII spaces are one space, the no-break spaces stay."""
    title = "prix 1\u202f000\u202f\u20ac abc\u00a0def\n  two lines"
    topics = (
        f"<top>\n<num> Number: 1\n<title> {title}\n\n<desc> Description:\nx\n<narr> Narrative:\ny\n</top>\n"
    )
    spec = _files(tmp_path, "d1\tx\n", topics, "1 0 d1 1\n")
    query = pse.datasets.get(spec).get_topics()["query"].iloc[0]
    assert query == "prix 1\u202f000\u202f\u20ac abc\u00a0def two lines"
    assert pse.Analyzer(language="fr")(query) == ["pri", "1\u202f000\u202f", "abc", "def", "two", "line"]


def test_run_fields_are_split_on_whitespace_only(tmp_path):
    quoted = tmp_path / "quoted.run"
    quoted.write_text('1 Q0 "d99 1 2.0 t\n1 Q0 d100 2 0.5 t\n')
    run = read_run(str(quoted))
    assert run["docno"].tolist() == ['"d99', "d100"]
    # the same as pytrec_eval on the ids as written
    res = pse.evaluate(run, {"1": {'"d99': 1}}, ["RR", "P@1"]).per_query
    ref = pytrec_eval.RelevanceEvaluator({"1": {'"d99': 1}}, {"recip_rank", "P_1"}).evaluate(
        {"1": {'"d99': 2.0, "d100": 0.5}}
    )["1"]
    assert res == {"RR": {"1": ref["recip_rank"]}, "P@1": {"1": ref["P_1"]}}
    seven = tmp_path / "seven.run"
    seven.write_text('1 Q0 d1 1 1.0 t\n1 Q0 "a b" 2 0.5 t\n')
    with pytest.raises(
        ValueError, match=r"seven.run is not a TREC run file, line 2 \(7 columns\): expected 6"
    ):
        read_run(str(seven))
    # the line itself, wherever it is: pandas' parser had named line 2 for a short first line, and no line for a
    # short later one or a long first one
    good = "".join(f"1 Q0 d{i} {i} {10 - i} t\n" for i in range(8))
    for name, lines, where in (
        ("short1", ["1 Q0 d9", *good.splitlines()], "line 1 (3 columns)"),
        ("short5", [*good.splitlines()[:4], "1 Q0 d9", *good.splitlines()[4:]], "line 5 (3 columns)"),
        ("long1", ["1 Q0 d9 1 2.0 t x", *good.splitlines()], "line 1 (7 columns)"),
        # a no-break space separates no fields (for trec_eval and pandas alike), and is named
        (
            "nbsp3",
            [*good.splitlines()[:2], "1 Q0\u00a0d9 1 2.0 t", *good.splitlines()[2:]],
            "line 3 (5 columns; it holds '\\xa0', which separates no fields)",
        ),
    ):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        with pytest.raises(
            ValueError, match=rf"{name} is not a TREC run file, {re.escape(where)}: expected 6"
        ):
            read_run(str(tmp_path / name))
    # form feeds and vertical tabs separate fields, as in trec_eval (pandas alone splits on spaces and tabs),
    # and a line of them is blank, as it is to the qrels reader: the same run as the plain file, gzip too
    feeds = good.replace(" Q0 ", "\fQ0\v").replace("\n1 Q0 d3", "\n\f\v\n1 Q0 d3")
    (tmp_path / "feeds.run").write_text(feeds)
    (tmp_path / "feeds.run.gz").write_bytes(gzip.compress(feeds.encode()))
    (tmp_path / "plain.run").write_text(good)
    for name in ("feeds.run", "feeds.run.gz"):
        assert read_run(str(tmp_path / name)).equals(read_run(str(tmp_path / "plain.run"))), name
    (tmp_path / "feeds.qrels").write_text("1 0 d1 1\n\f\n1\f0\vd2 2\n")
    assert pse.datasets.read_qrels(str(tmp_path / "feeds.qrels"))["docno"].tolist() == ["d1", "d2"]
    # compression told by content, not by name: a gzip file not named *.gz is read
    (tmp_path / "zipped.run").write_bytes(gzip.compress(good.encode()))
    assert len(read_run(str(tmp_path / "zipped.run"))) == 8
    # read as they are, as a pipe's gzip bytes are: a run of one line, and qrels
    (tmp_path / "one.run").write_bytes(gzip.compress(b"1 Q0 d1 1 1.0 t\n"))
    assert read_run(str(tmp_path / "one.run"))["docno"].tolist() == ["d1"]
    (tmp_path / "qrels").write_bytes(gzip.compress(b"1 0 d1 1\n"))
    assert pse.datasets.read_qrels(str(tmp_path / "qrels")).to_dict("list") == {
        "qid": ["1"], "docno": ["d1"], "label": [1]
    }  # fmt: skip
    (tmp_path / "plain.gz").write_text(good)
    with pytest.raises(ValueError, match=r"plain.gz: not gzip-compressed, though named \*.gz .*rename it"):
        read_run(str(tmp_path / "plain.gz"))


def test_file_messages_name_the_file_line_and_fix(tmp_path):
    binary = tmp_path / "binary.run"
    binary.write_bytes(b"\x00\x01\xff\xfe garbage\n")
    with pytest.raises(
        ValueError, match=r"binary.run is not UTF-8 text .*Convert it first, e.g. iconv -f latin1"
    ):
        read_run(str(binary))
    blank = tmp_path / "blank.run"
    blank.write_text("1 Q0 a 1 1.0 t\n\n  \n\n1 Q0 x 1 bad t\n")
    with pytest.raises(ValueError, match=r"blank.run, line 5: the score \(5th column\) 'bad'"):
        read_run(str(blank))
    qrels = tmp_path / "blank.qrels"
    qrels.write_text("1 0 a 1\n\n1 0 b 1.5\n")
    with pytest.raises(ValueError, match=r"blank.qrels, line 3: the label"):
        read_qrels(str(qrels))


def test_qrels_labels_are_integers_as_written(tmp_path):
    """A label in scientific notation was read as a float: '1e1' as 10 (trec_eval's atoi reads 1), '1e20' wrapped to
    a negative int64 (a relevant document silently non-relevant), 'inf' stopped with pandas' raw error."""
    for label in ("1e1", "1E3", "1e20", "inf", "0x1", "1" * 19):
        (tmp_path / "q").write_text(f"1 0 a 1\n1 0 b {label}\n")
        with pytest.raises(
            ValueError, match=rf"q, line 2: the label \(4th column\) '{label}' must be an integer"
        ):
            read_qrels(str(tmp_path / "q"))
    # what trec_eval's atoi reads alike is read
    (tmp_path / "q").write_text("1 0 a +2\n1 0 b 2.0\n1 0 c -1\n1 0 d 007\n")
    assert read_qrels(str(tmp_path / "q"))["label"].tolist() == [2, 2, -1, 7]


def test_a_beir_qrels_file_s_error_names_its_bad_row(tmp_path):
    """A BEIR TSV with one bad row was blamed on the TREC layout ("line 1 (3 columns): expected 4 columns")."""
    for row, message in (
        ("q1\td2\t0.5", r"line 3: the label '0.5' must be an integer"),
        ("q1\td2", r"line 3: expected 3 columns like the first line"),
    ):
        (tmp_path / "q.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t1\n{row}\n")
        with pytest.raises(ValueError, match=message):
            read_qrels(str(tmp_path / "q.tsv"))
    # a TREC file's error is still TREC's
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b\n")
    with pytest.raises(ValueError, match=r"not a TREC qrels file, line 2 \(3 columns\)"):
        read_qrels(str(tmp_path / "q"))


def test_qrels_ids_holding_unicode_spaces_are_kept_whole_as_trec_eval_keeps_them(tmp_path):
    """The BEIR/files: qrels reader split fields with str.split(), which also splits on a no-break space, U+0085
    and U+2003; trec_eval (C's isspace) and the TREC run reader split on ASCII whitespace only."""
    docnos = ["d\u00a01", "d\u20032", "d\x853"]
    (tmp_path / "q.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q1\t{d}\t1\n" for d in docnos) + "q1\td4\f\t0\n"
    )
    (tmp_path / "q.trec").write_text("".join(f"q1 0 {d} 1\n" for d in docnos))
    for name in ("q.tsv", "q.trec"):
        qrels = read_qrels(str(tmp_path / name))
        assert qrels["docno"].tolist()[:3] == docnos, name
    run = tmp_path / "r"
    run.write_text("".join(f"q1 Q0 {d} {i} {5 - i} t\n" for i, d in enumerate(docnos + ["d4"])))
    qrels = read_qrels(str(tmp_path / "q.tsv"))
    assert qrels["label"].tolist() == [1, 1, 1, 0]
    # pytrec_eval on the same ids: every judged document retrieved, so AP is 1 (the ids split, it had been refused)
    ref = pytrec_eval.RelevanceEvaluator({"q1": dict(zip(qrels["docno"], map(int, qrels["label"])))}, {"map"})
    scores = {d: float(s) for d, s in zip(read_run(str(run))["docno"], read_run(str(run))["score"])}
    assert ref.evaluate({"q1": scores})["q1"]["map"] == 1.0
    # at an id's ends a Unicode space is stripped, as the corpus and topics readers strip ids: both sides match
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    ids = ["d1\u00a0", "\u2003d2", "d3"]
    (beir / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": "x"}) + "\n" for d in ids))
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1\u00a0", "text": "x"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q1\u00a0\t{d}\t1\n" for d in ids)
    )
    ds = pse.datasets.get(f"beir:{beir}")
    qrels = pse.datasets.get_qrels(ds)
    assert qrels["docno"].tolist() == [d["docno"] for d in pse.datasets.corpus_iter(ds)] == ["d1", "d2", "d3"]
    assert qrels["qid"].unique().tolist() == pse.datasets.get_topics(ds)["qid"].tolist() == ["q1"]


def test_compression_is_told_by_content_not_by_name(tmp_path):
    """pandas guessed the compression from the name: a plain run named *.zip, *.xz or *.tar was an internal error,
    *.bz2 'Invalid data stream'; a bzip2 run's bad line was called 'not UTF-8 text'."""
    import bz2
    import lzma
    import zipfile

    text = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"
    for name in ("r.zip", "r.xz", "r.tar", "r.bz2", "r.zst"):
        (tmp_path / name).write_text(text)
        assert read_run(str(tmp_path / name))["docno"].tolist() == ["a", "b"]
    for name, compress in (
        ("plain.bz2", bz2.compress),
        ("named.run", lzma.compress),
        ("b.run", bz2.compress),
    ):
        (tmp_path / name).write_bytes(compress(text.encode()))
        assert read_run(str(tmp_path / name))["docno"].tolist() == ["a", "b"]
    (tmp_path / "bad.bz2").write_bytes(bz2.compress(b"1 Q0 a 1 2.0 t\n1 Q0 b 2 nan t\n"))
    with pytest.raises(ValueError, match=r"bad.bz2, line 2: the score \(5th column\) 'nan'"):
        read_run(str(tmp_path / "bad.bz2"))
    (tmp_path / "cut.xz").write_bytes(lzma.compress(text.encode() * 50)[:40])
    with pytest.raises(ValueError, match=r"cut.xz: the xz data is cut short or damaged"):
        read_run(str(tmp_path / "cut.xz"))
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as z:
        z.writestr("run", text)
    with pytest.raises(ValueError, match=r"z.zip is zip-compressed: decompress it, or compress it with gzip"):
        read_run(str(tmp_path / "z.zip"))
    (tmp_path / "q.bz2").write_bytes(bz2.compress(b"1 0 a 1\n"))
    assert read_qrels(str(tmp_path / "q.bz2"))["label"].tolist() == [1]


def test_file_errors_exit_2_on_the_command_line(tmp_path, capsys):
    (tmp_path / "binary.run").write_bytes(b"\x00\x01\xff\xfe garbage\n")
    (tmp_path / "q").write_text("1 0 a 1\n")
    assert main(["evaluate", "--run", str(tmp_path / "binary.run"), "--qrels", str(tmp_path / "q")]) == 2
    err = capsys.readouterr().err
    assert "binary.run is not UTF-8 text" in err and err.count("\n") == 1


def test_tsv_corpus_header_must_name_the_text_column(tmp_path):
    spec = _files(tmp_path, "doc_id\tcontents\nd1\tred\n", "q1\tred\n", "q1 0 d1 1\n", "t.tsv")
    with pytest.raises(
        ValueError, match=r"line 1: the header 'doc_id\\tcontents' does not name.*docno<TAB>text"
    ):
        list(pse.datasets.get(spec).get_corpus_iter(verbose=False))
    for header in ("docno\ttext", "id\tTitle\ttext"):
        columns = header.count("\t") + 1
        row = "d1\tred" if columns == 2 else "d1\tRed\tred"
        spec = _files(tmp_path, f"{header}\n{row}\n", "q1\tred\n", "q1 0 d1 1\n", "t.tsv")
        docs = list(pse.datasets.get(spec).get_corpus_iter(verbose=False))
        assert [d["docno"] for d in docs] == ["d1"]
