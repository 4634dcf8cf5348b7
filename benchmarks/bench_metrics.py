"""Evaluating one large run: in-house metrics vs pytrec_eval vs ranx, side by side, in one process.

All three start from the same pandas DataFrames (run: qid, docno, score; qrels: qid, docno, label), as a user
would; the time includes each tool's conversion of those frames. ranx is measured warm (its numba kernels
compiled by a first call). Every tool's values are checked against each other before timing is reported.

    python benchmarks/bench_metrics.py [--queries 5000] [--depth 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from _report import command_line, machine_facts, median_time, positive_int, today, write_section

MEASURES = ["nDCG@10", "R@100", "AP", "RR", "P@10"]
PYTREC = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP": "map", "RR": "recip_rank", "P@10": "P_10"}
RANX = {"nDCG@10": "ndcg@10", "R@100": "recall@100", "AP": "map", "RR": "mrr", "P@10": "precision@10"}


def make_data(queries: int, depth: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n_docs = 2_000_000
    qid = np.repeat(np.arange(queries), depth).astype(str)
    docs = np.concatenate([rng.choice(n_docs, size=depth, replace=False) for _ in range(queries)])
    # distinct scores per query (ranx breaks ties differently from trec_eval; the others agree on ties too)
    score = np.concatenate([np.sort(rng.random(depth))[::-1] + i for i in range(queries)]) - np.repeat(
        np.arange(queries), depth
    )
    run = pd.DataFrame({"qid": qid, "docno": np.char.add("d", docs.astype(str)), "score": score})
    # graded qrels: 20 judged documents per query, half drawn from the run's top 200
    rows = []
    for q in range(queries):
        top = run["docno"].values[q * depth : q * depth + 200]
        judged = np.concatenate(
            [rng.choice(top, 10, replace=False), np.char.add("d", rng.choice(n_docs, 10).astype(str))]
        )
        for d in np.unique(judged):
            rows.append((str(q), d, int(rng.integers(0, 4))))
    qrels = pd.DataFrame(rows, columns=["qid", "docno", "label"])
    return run, qrels


def inhouse(run, qrels):
    import pyterrier_sparse_eval as pse

    return pse.evaluate(run, qrels, MEASURES, warn=False).aggregate


def pytrec(run, qrels):
    import pytrec_eval

    qrels_d: dict = {}
    for q, d, r in zip(qrels.qid.values, qrels.docno.values, qrels.label.values):
        qrels_d.setdefault(q, {})[d] = int(r)
    run_d: dict = {}
    for q, d, s in zip(run.qid.values, run.docno.values, run.score.values):
        run_d.setdefault(q, {})[d] = float(s)
    res = pytrec_eval.RelevanceEvaluator(qrels_d, set(PYTREC.values())).evaluate(run_d)
    return {m: float(np.mean([v[PYTREC[m]] for v in res.values()])) for m in MEASURES}


def ranx_eval(run, qrels):
    from ranx import Qrels, Run, evaluate

    # ranx insists on object-dtype id columns (pandas 3 defaults to its own str dtype)
    qrels = qrels.astype({"qid": object, "docno": object})
    run = run.astype({"qid": object, "docno": object})
    q = Qrels.from_df(
        qrels.rename(columns={"qid": "q_id", "docno": "doc_id", "label": "score"}),
        q_id_col="q_id",
        doc_id_col="doc_id",
        score_col="score",
    )
    r = Run.from_df(
        run.rename(columns={"qid": "q_id", "docno": "doc_id"}),
        q_id_col="q_id",
        doc_id_col="doc_id",
        score_col="score",
    )
    res = evaluate(q, r, list(RANX.values()))
    return {m: float(res[RANX[m]]) for m in MEASURES}


def in_experiment(run, qrels, family: str, *, joined_once: bool = True):
    """pt.Experiment's table row (the means) for MEASURES as ``family`` computes them: "in-house"
    (pse.measures.nDCG@10 ..., ir_measures' runtime provider) or "standard" (ir_measures' pytrec_eval provider).
    ``joined_once=False`` is the in-house provider before 2026-12-02, each measure joining the run again."""
    import ir_measures
    import pyterrier as pt

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval.measures import _inhouse

    parse = pse.measures.parse_measure if family == "in-house" else ir_measures.parse_measure
    measures = [parse(("pse." if family == "in-house" else "") + m) for m in MEASURES]
    topics = pd.DataFrame({"qid": pd.unique(run["qid"]), "query": "x"})
    saved = _inhouse._prepared
    if not joined_once:
        _inhouse._prepared = lambda r, q, rel: _inhouse.prepare(r, q, rel=rel, once=True)
    try:
        row = pt.Experiment([run], topics, qrels, measures).iloc[0]
    finally:
        _inhouse._prepared = saved
    return {m: float(row[str(x)]) for m, x in zip(MEASURES, measures)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=positive_int, default=5000)
    ap.add_argument("--depth", type=positive_int, default=1000)
    ap.add_argument("--repeats", type=positive_int, default=3)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    run, qrels = make_data(args.queries, args.depth)
    print(f"run: {len(run):,} rows, {args.queries:,} queries; qrels: {len(qrels):,} rows")

    tools = {"in-house (pse.evaluate)": inhouse, "pytrec_eval": pytrec}
    try:
        import ranx  # noqa: F401

        tools["ranx (warm)"] = ranx_eval
    except ImportError:
        print("ranx not installed: pip install ranx")
    values = {name: fn(run, qrels) for name, fn in tools.items()}  # also warms ranx's numba kernels
    ref = values["pytrec_eval"]
    for name, vals in values.items():
        diff = max(abs(vals[m] - ref[m]) for m in MEASURES)
        print(f"{name}: max |mean difference| vs pytrec_eval = {diff:.2e}")
        if name.startswith("in-house"):
            assert diff <= 1e-9, "in-house values must equal pytrec_eval's"
    times = {name: median_time(lambda fn=fn: fn(run, qrels), args.repeats) for name, fn in tools.items()}
    base = times["in-house (pse.evaluate)"]
    lines = [
        f"## Evaluating a large run ({today()})",
        "",
        f"`{command_line()}` on {machine_facts()}.",
        f"{args.queries:,} queries x {args.depth:,} results ({len(run):,} rows), graded qrels ({len(qrels):,} rows);"
        f" measures {', '.join(MEASURES)}; each tool starts from the same DataFrames; median of {args.repeats} runs.",
        "",
        "| tool | seconds | time / in-house |",
        "|---|---:|---:|",
    ]
    for name, t in times.items():
        lines.append(f"| {name} | {t:.2f} | {t / base:.1f}x |")
    lines.append("")
    # the same run with its rows shuffled (queries interleaved): no tool can rely on each query's rows being
    # together, and every lookup misses the cache
    shuffled = run.sample(frac=1, random_state=1).reset_index(drop=True)
    reps = min(args.repeats, 3)
    for name, fn in tools.items():
        vals = fn(shuffled, qrels)
        assert max(abs(vals[m] - values[name][m]) for m in MEASURES) <= 1e-6, (
            f"{name} changed on shuffled rows"
        )
    times_sh = {name: median_time(lambda fn=fn: fn(shuffled, qrels), reps) for name, fn in tools.items()}
    base_sh = times_sh["in-house (pse.evaluate)"]
    lines += [
        f"The same run with its rows shuffled (queries interleaved; median of {reps} runs):",
        "",
        "| tool | seconds | time / in-house |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {t:.2f} | {t / base_sh:.1f}x |" for name, t in times_sh.items()]
    lines.append("")
    lines.append(
        "Means agree with pytrec_eval to "
        + ", ".join(f"{name}: {max(abs(values[name][m] - ref[m]) for m in MEASURES):.0e}" for name in values)
        + "."
    )
    # inside pt.Experiment: ir_measures hands each in-house measure the same run, joined once for all of them
    peers = {
        "in-house in pt.Experiment": lambda: in_experiment(run, qrels, "in-house"),
        "in-house, each measure joining the run (before 2026-12-02)": lambda: in_experiment(
            run, qrels, "in-house", joined_once=False
        ),
        "standard (pytrec_eval) in pt.Experiment": lambda: in_experiment(run, qrels, "standard"),
    }
    for name, fn in peers.items():
        vals = fn()
        assert max(abs(vals[m] - ref[m]) for m in MEASURES) <= 1e-9, f"{name} differs from pytrec_eval"
    times_x = {name: median_time(fn, reps) for name, fn in peers.items()}
    base_x = times_x["in-house in pt.Experiment"]
    lines += [
        "",
        f"Inside `pt.Experiment([run], topics, qrels, measures)` (the same run and measures; median of {reps} runs;"
        " values equal to pytrec_eval's within 1e-9):",
        "",
        "| measures | seconds | time / in-house |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {t:.2f} | {t / base_x:.1f}x |" for name, t in times_x.items()]
    lines.append("")
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        write_section("metrics", report)


if __name__ == "__main__":
    main()
