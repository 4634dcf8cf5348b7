"""Where SDM's background tail goes wrong on a real collection, family by family.

    python benchmarks/sdm_tail_diagnostic.py                                  # SciFact, 15% uniform pool
    python benchmarks/sdm_tail_diagnostic.py --budget 0.3 --design stratified --system "BM25 no idf"
    python benchmarks/sdm_tail_diagnostic.py --exp-tail 0.8 0.9               # also the exponential-tail variant

For one pool (bench_sdm_scale.py's construction: relevant documents, the pooling run's top ``depth``, a uniform or
stratified sample) and one system, every relevant document the system retrieves from the pool is compared with the
full corpus: the number of unseen documents (outside the pool) that score at least as high in the full run, against
the number the background model expects, N_unseen * p(s), grouped by the document's rank in the pooled run. Then the
share of the pooled-to-full gap each family closes for R@k and nDCG@k. A family that under-predicts the unseen
documents above the top-ranked relevant ones leaves nDCG too high; one that over-predicts them pushes it too low.

It also prints how many of those unseen documents the pooling run ranks within its top 100 and 1000 for the query:
the part an estimator using the pooling run's full-corpus ranking could account for document by document.

``--covariate`` adds the pooling run as covariate (``sdm.evaluate(..., covariate=)``): for the relevant rows
ranked in the top 10, the discount nDCG@10 gives each (1 / log2(2 + rank + X), 0 when X pushes it out), true
against the estimator's expectation, grouped by the true number X of unseen documents above the row, with the
estimator's mean P(X = 0): where per-row noise in its count (0 or many) meets the discount's convexity.

``--exp-tail Q`` adds a variant tried as a replacement for ``auto``: the KDE below the sample's Q-quantile u and an
exponential tail above it, p(s) = p(u) exp(-(s - u) / beta), beta the (weighted) mean excess over u. It prints
its rows next to the families'. Nothing is written to BENCHMARKS.md; the README's SDM section quotes the outcome.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sdm_scale import Dense, gap_closed, make_pool, pool_plan, systems  # noqa: E402
from semisynthetic import claim_work, iter_corpus, real_docs, use_shared_data, write_corpus  # noqa: E402

K_VALUES = (10, 100, 1000)
FAMILIES = ("auto", "kde", "empirical-gpd", "skewnorm")
CAPTURE_DEPTHS = (100, 1000)
DENSE = "MiniLM-L6 (dense)"


class ExpTail:
    """The KDE fitted by SDM below the sample's ``q``-quantile, an exponential tail above it (see module doc)."""

    def __init__(self, base: Any, q: float):
        self.base = base
        x = np.asarray(base._sample, dtype=np.float64)
        w = np.ones(len(x)) if base._weights is None else np.asarray(base._weights, dtype=np.float64)
        order = np.argsort(x, kind="stable")
        x, w = x[order], w[order]
        cw = np.cumsum(w) / w.sum()
        self.u = float(x[min(len(x) - 1, int(np.searchsorted(cw, q)))])
        above = x > self.u
        self.beta = float(np.average(x[above] - self.u, weights=w[above])) if above.any() else 1e-12
        self.p_u = float(base.sf(np.array([self.u]))[0])

    def sf(self, s: Any) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        return np.where(s > self.u, self.p_u * np.exp(-(s - self.u) / self.beta), self.base.sf(s))


def ranked(run: pd.DataFrame) -> pd.DataFrame:
    """The run with a 0-based ``rank`` per query in trec_eval's order (score descending, then docno descending)."""
    run = run.sort_values(["qid", "score", "docno"], ascending=[True, False, False], ignore_index=True)
    return run.assign(rank=run.groupby("qid").cumcount())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="irds:beir/scifact/test")
    parser.add_argument("--budget", type=float, default=0.15, help="pool size as a share of the corpus")
    parser.add_argument("--design", choices=("uniform", "stratified"), default="uniform")
    parser.add_argument(
        "--system", default="BM25 (pooling)", help="one of bench_sdm_scale.py's systems, or dense"
    )
    parser.add_argument(
        "--exp-tail", type=float, nargs="*", default=[], help="quantiles for the exp-tail variant"
    )
    parser.add_argument("--covariate", action="store_true", help="also the covariate's top-10 rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-scale"))
    args = parser.parse_args()
    claim_work(args.work, args.dataset, args.seed)  # its corpora and indexes are named by size alone
    use_shared_data(args.work)

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm
    from pyterrier_sparse_eval.measures import _sdm as msdm
    from pyterrier_sparse_eval.measures._prepare import prepare

    ds = pse.datasets.load_dataset(args.dataset)
    qrels = pse.datasets.get_qrels(ds)
    topics = pse.datasets.align_topics_qrels(pse.datasets.get_topics(ds, verbose=False), qrels)
    corpus = write_corpus(real_docs(args.dataset), 0, args.work / "corpus-0.tsv", seed=args.seed)
    sparse = systems(with_splade=args.system == "SPLADE-tiny")
    if args.system not in sparse and args.system != DENSE:
        raise SystemExit(f"--system must be one of {', '.join([*sparse, 'SPLADE-tiny', DENSE])}")
    wanted = ["BM25 (pooling)"] + ([args.system] if args.system in sparse else [])
    indexes = {}
    for name in wanted:
        index = pse.SparseIndex(args.work / f"index-0-{pse.files.slug(name)}")
        if not index.built():
            sparse[name][0].indexer(index, verbose=False).index(iter_corpus(corpus))
        indexes[name] = index
    n_docs = indexes["BM25 (pooling)"].num_docs
    pool_run = sparse["BM25 (pooling)"][1](indexes["BM25 (pooling)"], 1000).transform(topics)
    all_docnos = indexes["BM25 (pooling)"].docnos
    depth, _, designs = pool_plan(args.budget, n_docs, qrels, pool_run, all_docnos, len(topics))
    pool = make_pool(qrels, pool_run, all_docnos, depth, args.seed, designs[args.design])
    if args.system in sparse:
        sub = args.work / f"pool-0-{pool.fingerprint}-{pse.files.slug(args.system)}"
        pooled = pse.SparseIndex(sub)
        if not pooled.built():
            pool.index(indexes[args.system], sub)
        run = sparse[args.system][1](pooled, pool.size).transform(topics)
        full = sparse[args.system][1](indexes[args.system], n_docs).transform(topics)
    else:
        dense = Dense(corpus, args.work / "dense-0.npz")
        run = dense.run(topics, pool.size, pool.docnos)
        full = dense.run(topics, n_docs)
    run, full = ranked(run), ranked(full)
    n_unseen = n_docs - pool.size
    print(
        f"{args.system}, {args.design} pool of {pool.size} / {n_docs} documents (depth {depth}); {n_unseen} unseen"
    )

    # the truth: per relevant row of the pooled run, unseen documents scoring at least as high in the full run
    full["unseen"] = ~full["docno"].isin(set(pool.docnos))
    by_query = {q: (g["score"].to_numpy(), g["unseen"].to_numpy()) for q, g in full.groupby("qid")}
    rel = run.merge(qrels[qrels["label"] > 0][["qid", "docno"]], on=["qid", "docno"])
    rel["true"] = [
        int(((by_query[q][0] >= s) & by_query[q][1]).sum()) for q, s in zip(rel["qid"], rel["score"])
    ]
    rel["rank band"] = pd.cut(
        rel["rank"], [-1, 0, 2, 9, 99, 10**9], labels=["0", "1-2", "3-9", "10-99", "100+"]
    )
    # where those unseen documents are: the share the pooling run itself ranks within its top D for the query
    # (what an estimator using the pooling run's full-corpus ranking could account for document by document)
    top = {q: g.sort_values("score", ascending=False)["docno"].tolist() for q, g in pool_run.groupby("qid")}
    unseen_docnos = {q: g["docno"].to_numpy() for q, g in full.groupby("qid")}  # by_query's rows, same order
    above = {
        (q, s): set(unseen_docnos[q][(by_query[q][0] >= s) & by_query[q][1]])
        for q, s in zip(rel["qid"], rel["score"])
    }
    for d in CAPTURE_DEPTHS:
        rel[f"in pooling top {d}"] = [
            len(above[(q, s)] & set(top.get(q, [])[:d])) for q, s in zip(rel["qid"], rel["score"])
        ]
    capture = rel.groupby("rank band", observed=True)[
        ["true"] + [f"in pooling top {d}" for d in CAPTURE_DEPTHS]
    ]
    print(
        "\nunseen documents above a relevant document, and how many of them the pooling run ranks in its top D"
    )
    print(capture.mean().round(3).to_string())
    measures = [f"{m}@{k}" for k in K_VALUES for m in ("R", "nDCG")]
    full_vals = pse.measures.evaluate(full[full["rank"] < 1000], qrels, measures, warn=False).aggregate

    judged = prepare(run, qrels)
    base = sdm.evaluate(run, qrels, pool, K_VALUES, family="kde")
    variants: dict[str, dict[str, Any]] = {
        f: sdm.evaluate(run, qrels, pool, K_VALUES, family=f)["models"] for f in FAMILIES
    }
    for q in args.exp_tail:
        variants[f"kde + exp tail above q={q}"] = {k: ExpTail(m, q) for k, m in base["models"].items()}
    closed_rows = []
    for name, models in variants.items():
        rel["expected"] = [
            float(models[q].sf(np.array([s]))[0]) * n_unseen for q, s in zip(rel["qid"], rel["score"])
        ]
        table = rel.groupby("rank band", observed=True).agg(
            relevant=("true", "size"), true=("true", "mean"), expected=("expected", "mean")
        )
        print(f"\n{name}: unseen documents above a relevant document, mean by its pooled rank")
        print(table.round(3).to_string())
        p = msdm.survival_of_rows(judged, models)
        row = {"background": name}
        for k in K_VALUES:
            est = {
                "R": float(msdm.sdm_recall(judged, k, p, n_unseen).mean()),
                "nDCG": float(msdm.sdm_ndcg(judged, k, p, n_unseen).mean()),
            }
            for m, value in est.items():
                pooled_value = base["aggregate"][f"{m}@{k}"]["pooled"]
                row[f"{m}@{k}"] = gap_closed(pooled_value, value, full_vals[f"{m}@{k}"])
        closed_rows.append(row)
    print(
        "\nShare of the pooled-to-full gap closed (1 = exact; below 0: further from the truth than the pooled value):"
    )
    print(pd.DataFrame(closed_rows).set_index("background").round(2).to_string())
    if args.covariate:
        covariate_rows(run, qrels, pool, pool_run, rel)


def covariate_rows(
    run: pd.DataFrame, qrels: pd.DataFrame, pool: Any, pool_run: pd.DataFrame, rel: pd.DataFrame
) -> None:
    """The covariate's top-10 relevant rows: true against expected discount, by the true unseen count above."""
    from pyterrier_sparse_eval import sdm
    from pyterrier_sparse_eval._covariate import covariate_above

    k = 10
    j, above, _ = covariate_above(run, qrels, pool, sdm.Covariate.from_run(pool_run, pool), k)
    qids = j.qids.tolist()
    at = {(qids[j.group[r]], int(j.rank[r])): i for i, r in enumerate(above.rows.tolist())}
    m = np.arange(above.pmf.shape[1])
    rows = []
    for q, rank, true in zip(rel["qid"], rel["rank"], rel["true"]):
        if rank >= k or (str(q), int(rank)) not in at:
            continue
        pmf = above.pmf[at[(str(q), int(rank))]]
        disc = np.where(rank + m < k, 1.0 / np.log2(2 + rank + m), 0.0)
        truth = 1.0 / np.log2(2 + rank + true) if rank + true < k else 0.0
        rows.append((true, truth, float(pmf @ disc), float(pmf[0])))
    table = pd.DataFrame(rows, columns=["true X", "true discount", "expected discount", "P(X=0)"])
    table["unseen above (true)"] = pd.cut(
        table["true X"], [-1, 0, 2, 5, 10, 10**9], labels=["0", "1-2", "3-5", "6-10", "11+"]
    )
    print("\nwith the covariate: relevant rows in the top 10, by the true number X of unseen documents above")
    print(
        table.groupby("unseen above (true)", observed=True)
        .agg(
            rows=("true X", "size"),
            true=("true discount", "sum"),
            expected=("expected discount", "sum"),
            p0=("P(X=0)", "mean"),
        )
        .round(2)
        .to_string()
    )


if __name__ == "__main__":
    main()
