"""SDM and the SDM paper's reference estimator over many corpora like one real corpus, not only the one corpus.

``sdm_reference`` compares the two on pools of one fixed corpus: their errors against its full-corpus R@k, averaged
over pools. Whatever the one corpus happens to hold near a relevant document's score is then common to every pool,
and SDM's own model says how large that part is: under it each relevant document's full-corpus rank is random
(the unseen documents are draws from the background), so the full-corpus R@k of a query lies around SDM's
expectation with variance sum_r P_r (1 - P_r) / R^2. On SciFact the standard deviation this gives the mean over
the queries (the *realization SD*, ``sdm_realization_sd.py``) is 0.002-0.004 for the dense model's R@100, about
the size of the differences between the two estimators there. More pools cannot average it away; more corpora
can.

Here each *realization* is a corpus drawn from the real one: every judged document once, and the others resampled
with replacement to the same number (a document drawn twice is two documents with the same scores: the
nonparametric bootstrap of the corpus, whose unseen documents are exactly draws from the corpus's own score
distribution). Each realization has its own full-corpus R@k (every system's run over the whole realization), its
own pools (``bench_sdm_scale``'s plan: pooling run BM25 k1=0.9 b=0.4, the same depth and sample size) and the
estimates of SDM (``sdm.evaluate``), SDM with the pooling run as covariate and the reference
(``sdm.threshold_recall``, skew-normal). Every system's run over a pool is its full-corpus run restricted to the
pool (the pooled index keeps the corpus's statistics, so its scores are the full corpus's: ``Pool.index``).
Compared per realization as in ``sdm_reference``: d = |reference - full| - |method - full|, mean and SE over the
realizations; also each method's mean signed error (its bias over corpora like this one).

    python benchmarks/sdm_realizations.py                                  # SciFact, 15% and 30%, 30 corpora
    python benchmarks/sdm_realizations.py --systems "MiniLM-L6 (dense)" --realizations 60
    python benchmarks/sdm_realizations.py --ndcg --family skewnorm --systems "MiniLM-L6 (dense)"  # + nDCG@k
    python benchmarks/sdm_realizations.py --from-csv /tmp/sdm-calibration/realizations-auto.csv

Rows are appended to ``--output`` (default WORK/realizations-FAMILY.csv) realization by realization; realization
0 is the real corpus itself (its pools are ``sdm_reference``'s seed-0 pools: the check that the two agree).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from _report import positive_int  # noqa: E402
from sdm_calibration import open_study  # noqa: E402
from sdm_reference import add_csv_arguments, summarize  # noqa: E402

K_VALUES = (10, 100, 1000)
POOLING = "BM25 (pooling)"


def _repeated(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each item i repeated ``counts[i]`` times: (the item, the copy's number 0, 1, ... within it)."""
    starts = np.cumsum(counts) - counts
    item = np.repeat(np.arange(len(counts)), counts)
    return item, np.arange(len(item)) - starts[item]


class Corpus:
    """One realization: ``counts[d]`` copies of real document d, named ``docnos`` (a copy's docno is the
    original's plus ``~c``), real document d's first copy at position ``first[d]``."""

    def __init__(self, real: np.ndarray, judged: np.ndarray, rng: np.random.Generator | None):
        if rng is None:
            counts = np.ones(len(real), dtype=np.int64)
        else:
            others = np.flatnonzero(~judged)
            counts = judged.astype(np.int64)
            counts += np.bincount(rng.choice(others, size=len(others)), minlength=len(real))
        self.counts = counts
        self.first = np.cumsum(counts) - counts
        orig, copy = _repeated(counts)
        suffix = np.where(copy == 0, "", np.char.add("~", copy.astype(str)))
        self.docnos = np.char.add(real[orig].astype(str), suffix).astype(object)

    def expand(self, run: pd.DataFrame, doc: np.ndarray) -> pd.DataFrame:
        """A run over the real corpus (``doc``: each row's real document index) as a run over the realization."""
        rows, copy = _repeated(self.counts[doc])
        pos = self.first[doc[rows]] + copy
        return pd.DataFrame(
            {
                "qid": run["qid"].to_numpy()[rows],
                "docno": self.docnos[pos],
                "score": run["score"].to_numpy()[rows],
            }
        )


def full_depth_runs(st, names: list[str], n_docs: int) -> dict[str, pd.DataFrame]:
    """Each system's run over the whole real corpus: every document a sparse system matches, every document for
    the dense model (so that any pool's run is a restriction of it)."""
    runs = {}
    for name in names:
        if name in st.sparse:
            runs[name] = st.sparse[name][1](st.index[name], n_docs).transform(st.topics)
        else:
            runs[name] = st.dense.run(st.topics, n_docs)
        runs[name] = runs[name][["qid", "docno", "score"]].astype({"qid": str, "docno": str})
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="irds:beir/scifact/test")
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.15, 0.3])
    parser.add_argument(
        "--realizations", type=positive_int, default=30, help="bootstrap corpora (after the real one)"
    )
    parser.add_argument("--family", default="auto", help="SDM's background family (sdm.FAMILIES)")
    parser.add_argument("--systems", nargs="+", help="only these systems (names as printed; default: all)")
    parser.add_argument(
        "--ndcg", action="store_true", help="also SDM's and the covariate's nDCG@k (the reference has none)"
    )
    add_csv_arguments(parser, "realizations-FAMILY.csv")
    args = parser.parse_args()
    if args.from_csv is not None:
        report(pd.concat([pd.read_csv(f) for f in args.from_csv]))
        return
    if args.realizations < 2:
        parser.error("--realizations must be at least 2: the comparison needs a standard error")
    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import sdm

    if args.family not in sdm.FAMILIES:
        parser.error(f"--family must be one of {', '.join(sdm.FAMILIES)}")
    st = open_study(parser, args, size=0)  # the real corpus alone: every system ranks all of it
    names = [n for n in (args.systems or list(st.full_run)) if n != POOLING]
    real = np.asarray(st.index[POOLING].docnos, dtype=object)
    position = {d: i for i, d in enumerate(real.tolist())}
    judged = np.isin(real, st.qrels["docno"].astype(str).unique())
    runs = full_depth_runs(st, [POOLING, *names], len(real))
    doc = {name: run["docno"].map(position).to_numpy() for name, run in runs.items()}
    recall = [f"R@{k}" for k in K_VALUES]
    metrics = recall + ([f"nDCG@{k}" for k in K_VALUES] if args.ndcg else [])
    out = args.output or args.work / f"realizations-{args.family}.csv"
    out.unlink(missing_ok=True)
    for r in range(args.realizations + 1):
        corpus = Corpus(real, judged, None if r == 0 else np.random.default_rng(1000 + r))
        expanded = {name: corpus.expand(run, doc[name]) for name, run in runs.items()}
        ranked = expanded[POOLING].sort_values("score", ascending=False, kind="stable")
        pool_run = ranked.groupby("qid", sort=False).head(1000)  # the pooling run, 1000 deep
        rows = []
        full = {}
        for name in names:
            values = pse.measures.evaluate(expanded[name], st.qrels, metrics, warn=False)
            full[name] = {
                m: float(np.mean([values.per_query[m].get(q, 0.0) for q in st.qids])) for m in metrics
            }
        for budget in args.budgets:
            depth, room, designs = study.pool_plan(
                budget, len(corpus.docnos), st.qrels, pool_run, corpus.docnos, len(st.topics)
            )
            if room < study.MIN_SAMPLE:
                raise SystemExit(
                    f"A pool of {budget:.0%} leaves {room} documents for the background sample after the relevant "
                    f"documents and the top {depth} per query: give a larger --budgets value."
                )
            pool = study.make_pool(st.qrels, pool_run, corpus.docnos, depth, r, designs["uniform"])
            covariate = sdm.Covariate.from_run(pool_run, pool)
            for name in names:
                run = expanded[name][expanded[name]["docno"].isin(pool.docno_set)]
                for method, cov in (("SDM", None), ("covariate", covariate)):
                    est = sdm.evaluate(run, st.qrels, pool, K_VALUES, covariate=cov, family=args.family)
                    rows += [(budget, r, name, m, method, est["aggregate"][m]["sdm"]) for m in metrics]
                models = sdm.fit_run_backgrounds(run, pool, "skewnorm")  # the reference's family, fitted once
                for k in K_VALUES:
                    ref = sdm.threshold_recall(run, st.qrels, pool, k, models=models)  # R@k only
                    rows.append(
                        (budget, r, name, f"R@{k}", "reference", np.mean([ref.get(q, 0.0) for q in st.qids]))
                    )
        frame = pd.DataFrame(rows, columns=["budget", "seed", "system", "measure", "method", "est"])
        frame["design"] = "uniform"
        frame["full"] = [full[s][m] for s, m in zip(frame["system"], frame["measure"])]
        frame.to_csv(out, mode="a", header=not out.exists(), index=False)
        print(
            f"realization {r} ({len(corpus.docnos)} documents, {int((corpus.counts == 0).sum())} left out) done",
            flush=True,
        )
    report(pd.read_csv(out))


def report(table: pd.DataFrame) -> None:
    """The real corpus (realization 0) alone, then the bootstrap corpora: ``sdm_reference``'s paired summary of R@k
    (seed = realization), each method's mean signed error x 1000 (with its SE) over the bootstrap corpora, and
    with ``--ndcg`` SDM's and the covariate's mean |error| and signed error on nDCG@k."""
    ndcg = table[table["measure"].str.startswith("nDCG")]
    table = table[table["measure"].str.startswith("R@")]
    real, boot = table[table["seed"] == 0], table[table["seed"] > 0]
    if len(real):
        print("The real corpus (one pool per budget):")
        print(
            real.assign(err=(real["est"] - real["full"]) * 1000)
            .pivot_table(index=["budget", "system", "measure"], columns="method", values="err")
            .round(2)
            .to_string()
        )
    if boot["seed"].nunique() < 2:
        return
    print(f"\n{boot['seed'].nunique()} bootstrap corpora, one pool each per budget:")
    summarize(boot)
    signed = boot.assign(err=(boot["est"] - boot["full"]) * 1000).groupby(
        ["budget", "system", "measure", "method"]
    )["err"]
    bias = signed.mean().round(2).astype(str) + " (" + signed.sem().round(2).astype(str) + ")"
    print("\nMean signed error x 1000 (SE) over the bootstrap corpora:")
    print(bias.unstack("method").to_string())
    boot = ndcg[ndcg["seed"] > 0]
    if len(boot):
        err = boot.assign(err=(boot["est"] - boot["full"]) * 1000).groupby(
            ["budget", "system", "measure", "method"]
        )
        both = (
            err["err"].apply(lambda e: e.abs().mean()).round(2).astype(str)
            + " ("
            + err["err"].mean().round(2).map("{:+}".format)
            + ")"
        )
        print("\nnDCG@k, mean |error| x 1000 (mean signed error) over the bootstrap corpora:")
        print(both.unstack("method").to_string())


if __name__ == "__main__":
    main()
