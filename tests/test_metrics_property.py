"""Property-based agreement with trec_eval (pytrec_eval) on random runs and qrels.

Heavy score ties, graded and negative labels, empty rankings, queries missing on either side, docnos whose
string order differs from their numeric order. Every in-house measure and cut-off must agree with
pytrec_eval within 1e-9 on every query, and both must evaluate the same set of queries.
HYPOTHESIS_EXAMPLES scales the campaign (CI default: 1500 examples per test).
"""

import math
import os

import numpy as np
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyterrier_sparse_eval.measures import _metrics as M
from pyterrier_sparse_eval.measures._prepare import prepare

EXAMPLES = int(os.environ.get("HYPOTHESIS_EXAMPLES", "1500"))
CUTOFFS = (1, 2, 3, 5, 10, 20)
DOCNOS = ["d1", "d2", "d10", "d11", "d3", "D4", "d5", "x", "é7", "d12", "d20", "d100", "a", "b9"]
QIDS = ["1", "2", "10", "q", "Q3"]

# ties, float32 values, full doubles, and doubles closer than float32 resolution (trec_eval ties them)
scores = (
    st.sampled_from([0.0, 1.0, 1.0, 2.0, 2.5, -1.0, 3.0, 0.1])
    | st.floats(-5, 5, allow_nan=False, width=32)
    | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from([0.5, 0.5 + 1e-10, 0.5 + 3e-8, 0.5 + 1e-7, 1.0 - 1e-12])
)
ranking = st.dictionaries(st.sampled_from(DOCNOS), scores, max_size=14)
judgments = st.dictionaries(
    st.sampled_from(DOCNOS), st.sampled_from([-1, 0, 0, 1, 1, 2, 3]), min_size=1, max_size=12
)
runs = st.dictionaries(st.sampled_from(QIDS), ranking, max_size=5)
qrels_st = st.dictionaries(st.sampled_from(QIDS), judgments, max_size=5)


def _ours(j):
    out = {
        "ndcg": M.ndcg(j),
        "map": M.average_precision(j),
        "recip_rank": M.reciprocal_rank(j),
        "Rprec": M.r_precision(j),
    }
    for k in CUTOFFS:
        out[f"ndcg_cut_{k}"] = M.ndcg(j, k)
        out[f"recall_{k}"] = M.recall(j, k)
        out[f"P_{k}"] = M.precision(j, k)
        out[f"map_cut_{k}"] = M.average_precision(j, k)
        out[f"success_{k}"] = M.success(j, k)
    return out


def _pytrec(qrels, run, measures, rel):
    # pytrec_eval corrupts memory on negative labels; trec_eval's measures treat them exactly as 0
    clipped = {q: {d: max(r, 0) for d, r in docs.items()} for q, docs in qrels.items()}
    return pytrec_eval.RelevanceEvaluator(clipped, set(measures), relevance_level=rel).evaluate(run)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs, qrels=qrels_st, rel=st.sampled_from([1, 1, 2]))
def test_every_measure_equals_trec_eval(run, qrels, rel):
    j = prepare(run, qrels, rel=rel)
    ours = _ours(j)
    theirs = _pytrec(qrels, run, ours, rel)
    assert set(theirs) == set(j.qids.tolist())
    for name, values in ours.items():
        for qid, value in zip(j.qids.tolist(), values.tolist()):
            assert abs(value - theirs[qid][name]) <= 1e-9, (name, qid, value, theirs[qid][name])


def _trec_sorted(docs):
    # trec_eval's order, with scores in single precision as trec_eval stores them
    return [d for d, _ in sorted(docs.items(), key=lambda x: (np.float32(x[1]), x[0]), reverse=True)]


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(run=runs, qrels=qrels_st, k=st.sampled_from(CUTOFFS))
def test_rr_at_k_equals_trec_eval_on_the_cut_run(run, qrels, k):
    j = prepare(run, qrels)
    cut = {q: {d: docs[d] for d in _trec_sorted(docs)[:k]} for q, docs in run.items()}
    theirs = _pytrec(qrels, cut, ["recip_rank"], 1)
    for qid, value in zip(j.qids.tolist(), M.reciprocal_rank(j, k).tolist()):
        assert abs(value - theirs[qid]["recip_rank"]) <= 1e-9


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(run=runs, qrels=qrels_st, k=st.sampled_from(CUTOFFS))
def test_judged_and_exp_gain_equal_a_plain_python_reference(run, qrels, k):
    j = prepare(run, qrels)
    judged, exp = M.judged_at(j, k), M.ndcg(j, k, gain="exp")
    for i, qid in enumerate(j.qids.tolist()):
        top = _trec_sorted(run[qid])[:k]
        expected_judged = sum(d in qrels[qid] for d in top) / len(top) if top else 0.0
        assert abs(judged[i] - expected_judged) <= 1e-12
        gain = lambda r: 2.0**r - 1 if r > 0 else 0.0  # noqa: E731
        dcg = sum(gain(qrels[qid].get(d, 0)) / math.log2(r + 2) for r, d in enumerate(top))
        ideal = sorted((r for r in qrels[qid].values() if r > 0), reverse=True)[:k]
        idcg = sum(gain(r) / math.log2(i + 2) for i, r in enumerate(ideal))
        assert abs(exp[i] - (dcg / idcg if idcg > 0 else 0.0)) <= 1e-9


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(run=runs, qrels=qrels_st, set_size=st.sampled_from([1, 2, 5]))
def test_chunked_judged_lookup_equals_trec_eval(run, qrels, set_size):
    # the judged-row pass looks rows up chunk by chunk in sets of about `set_size` judged docnos; tiny sets
    # make every example cross chunk boundaries
    from pyterrier_sparse_eval.measures import _prepare

    default = _prepare._SET_SIZE
    _prepare._SET_SIZE = set_size
    try:
        j = prepare(run, qrels)
    finally:
        _prepare._SET_SIZE = default
    ours = _ours(j)
    theirs = _pytrec(qrels, run, ours, 1)
    assert set(theirs) == set(j.qids.tolist())
    for name, values in ours.items():
        for qid, value in zip(j.qids.tolist(), values.tolist()):
            assert abs(value - theirs[qid][name]) <= 1e-9, (name, qid, value, theirs[qid][name])
