import pandas as pd
import pytest
from conftest import needs_data

import pyterrier_sparse_eval as pse


def test_align_warns_with_counts():
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "query": ["a", "b", "c"]})
    qrels = pd.DataFrame({"qid": ["1", "2", "9"], "docno": ["d", "d", "d"], "label": [1, 0, 1]})
    with pytest.warns(UserWarning, match="evaluating 2 of 3 queries"):
        out = pse.datasets.align_topics_qrels(topics, qrels)
    assert list(out.qid) == ["1", "2"]


def test_align_hints_at_int_ids():
    topics = pd.DataFrame({"qid": ["01", "02"], "query": ["a", "b"]})
    qrels = pd.DataFrame({"qid": [1, 2], "docno": ["d", "d"], "label": [1, 1]})
    with pytest.warns(UserWarning, match="same split, with str ids"):
        pse.datasets.align_topics_qrels(topics, qrels)


@needs_data
def test_ids_are_strings_and_counts(scifact, vaswani):
    t, q = pse.datasets.get_topics(scifact), pse.datasets.get_qrels(scifact)
    assert len(t) == 300 and len(q) == 339
    assert t.qid.map(type).eq(str).all() and q.docno.map(type).eq(str).all()
    assert pse.datasets.num_docs("irds:beir/scifact/test") == 5183
    assert pse.datasets.num_docs(vaswani) == 11429
    assert len(pse.datasets.get_topics("vaswani")) == 93  # bare ids get the irds: prefix


def test_unknown_dataset_names_the_form():
    with pytest.raises(ValueError, match="irds:beir/scifact/test"):
        pse.datasets.load_dataset("irds:definitely/not/here")
