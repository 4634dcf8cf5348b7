"""The covariate's calibration per query (the package's) against calibrations pooled over queries, and where its
error comes from.

``sdm.evaluate(..., covariate=pooling_run)`` calibrates each query's count of unseen top documents scoring >= s on
its own sample (GREG: the line's count M(s) plus the Horvitz-Thompson estimate E(s) of its error; see
``_covariate``). At the scores of a query's top relevant documents E(s) rests on the rare sampled document above
s, so one query's count is noisy, and nDCG@k, convex in the count, is overstated by the noise alone. This study
measures two ways of pooling the calibration over the evaluated queries, each row's count becoming
M(s) * sum(M + E) / sum(M) (the ratio at most 10):

- *banded*: the sums over the rows in the same band of the line's tail share M(s) / U_T ([0, 0.001), [0.001,
  0.01), [0.01, 0.1), [0.1, 1]);
- *single*: the sums over all rows;
- *ranked*: the sums over the rows whose relevant document the pooling run ranks in the same band of its full
  ranking ([0, 3), [3, 10), [10, 100), 100 or lower or unranked).

*banded* chooses the band from M(s), which the sample also sets, so a band's total is no longer design-unbiased
(a query whose sample holds no document near s gets a small M(s) and no error to add); *single* and *ranked*
have no such selection (the pooling run's ranking does not depend on the sample), *single* one ratio for every
depth. Corpus: ``bench_sdm_scale``'s (SciFact alone, or plus synthetic
distractors), pooling run BM25 k1=0.9 b=0.4, the same pools, designs and systems; *closed* = 1 - mean |estimate
- full| / mean |pooled - full| over the pools (seeds); printed, minimum and median over systems and R@k / nDCG@k.

    python benchmarks/sdm_calibration.py                       # SciFact alone, 15% and 30% pools, 5 seeds
    python benchmarks/sdm_calibration.py --size 100000 --budgets 0.01 0.02 0.05 --seeds 1
    python benchmarks/sdm_calibration.py --modes per-query --top-share 0.5     # the line on another share of the top

``--top-share`` sets the share of each query's sampled top-D documents (those of highest pooling score) its line
is fitted on (``_covariate.TOP_SHARE``; 1: all of them, as before the line moved to the top).

Where the error comes from: the *oracle* modes (a corpus of at most 10,000 documents: every system also ranks the
whole corpus for the truth) replace a part of the package's model by the truth, the number of unseen documents
that score >= each relevant row's score in the system's full-corpus ranking:

- *oracle-top*: the unseen documents of the pooling run's top D counted exactly, the rest modelled;
- *oracle-rest*: the rest counted exactly (a query with no line: every unseen document), the top modelled;
- *exact-count*: the top's count exact, but spread over its documents by the line's probabilities as the model
  spreads it (Poisson-binomial): the error of the spread alone;
- *oracle-both*: everything exact, which must give the full-corpus values (up to ties in score): the check.

    python benchmarks/sdm_calibration.py --modes per-query oracle-top oracle-rest exact-count oracle-both

``--modes sdm`` adds SDM alone (no covariate) on the same pools, e.g. over several pools of the 1M corpus:

    python benchmarks/sdm_calibration.py --size 1000000 --budgets 0.005 0.01 0.02 --seeds 3 --modes sdm per-query

``--modes features`` adds the covariate with a feature: the pooling run through ``sdm.MatchedTerms`` (each
document's count of the query's terms, beside its pooling score; ``_covariate``'s docstring, step 1):

    python benchmarks/sdm_calibration.py --modes per-query features --budgets 0.15 0.3
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from _report import positive_int  # noqa: E402
from semisynthetic import claim_work, iter_corpus, real_docs, use_shared_data, write_corpus  # noqa: E402

K_VALUES = (10, 100, 1000)
BANDS = np.array([1e-3, 1e-2, 1e-1])
RANK_BANDS = np.array([3, 10, 100])
MODES = ("per-query", "banded", "single", "ranked")
ORACLES = ("oracle-top", "oracle-rest", "oracle-both", "exact-count")
MAX_RATIO = 10.0


def pooling_ranks(run: pd.DataFrame, qrels: pd.DataFrame, pool_run: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per query, the pooling run's rank (1000: unranked) of each relevant document the system retrieved, in the
    system's order (trec_eval's: score as ranked, in single precision, descending, then docno descending)."""
    rank_of = {
        str(q): dict(zip(g.sort_values("score", ascending=False)["docno"].astype(str), range(len(g))))
        for q, g in pool_run.groupby("qid")
    }
    relevant = set(
        zip(
            qrels.loc[qrels["label"] > 0, "qid"].astype(str),
            qrels.loc[qrels["label"] > 0, "docno"].astype(str),
        )
    )
    frame = pd.DataFrame({"qid": run["qid"].astype(str), "docno": run["docno"].astype(str)})
    frame["score"] = run["score"].to_numpy().astype(np.float32)
    frame = frame[[key in relevant for key in zip(frame["qid"], frame["docno"])]]
    frame = frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
    return {
        q: np.array([rank_of.get(q, {}).get(d, 1000) for d in g["docno"]])
        for q, g in frame.groupby("qid", sort=False)
    }


def pooled_above(kind: str, ranks: dict[str, np.ndarray]):
    """A replacement for ``_covariate._above`` whose calibration is pooled over queries (``kind``: the bands)."""
    from pyterrier_sparse_eval import _covariate as cov

    def above(j, parts, family, width):
        rows_all, groups = cov.relevant_groups(j, width)
        line = {q: fit.terms(s) for q, _, s in groups if (fit := parts[q].top) is not None}
        band = {}
        for q, at, _ in groups:
            if q not in line:
                continue
            p = line[q][0]
            if kind == "banded":
                band[q] = np.searchsorted(BANDS, p.sum(1) / p.shape[1], side="right")
            elif kind == "ranked":  # the relevant rows (rank < width) come first, in the system's order
                band[q] = np.searchsorted(RANK_BANDS, ranks[q][: len(at)], side="right")
            else:
                band[q] = np.zeros(len(p), dtype=int)
        total, model = np.zeros(len(BANDS) + 1), np.zeros(len(BANDS) + 1)
        for q, (p, e) in line.items():
            np.add.at(total, band[q], p.sum(1) + e)
            np.add.at(model, band[q], p.sum(1))
        ratio = np.clip(np.divide(total, model, out=np.ones_like(total), where=model > 0), 0.0, MAX_RATIO)
        pmf = np.zeros((len(rows_all), width))
        for q, at, s in groups:
            rest = cov.rest_pmf(parts[q], family, s, width)
            if q not in line:
                pmf[at] = rest
                continue
            p = line[q][0]
            count = np.clip(p.sum(1) * ratio[band[q]], 0.0, p.shape[1])
            pmf[at] = cov.added(cov.poisson_binomial(cov.scaled_to(p, count), width), rest)
        return cov.UnseenAbove(rows_all, pmf)

    return above


def oracle_above(kind: str, truth: dict[str, tuple[np.ndarray, np.ndarray]]):
    """A replacement for ``_covariate._above`` with a part of the model replaced by the truth, to tell where the
    covariate's error comes from. ``truth[qid]``: the system's full-corpus scores of the query's unseen top-D
    documents (in the covariate's order) and of its other unseen documents. ``kind``: *oracle-top* (the unseen
    top-D documents above each relevant row counted exactly), *oracle-rest* (the rest counted exactly; a query
    without a line: every unseen document), *oracle-both* (the full-corpus value, up to ties: a check),
    *exact-count* (the top's count exact, spread over the documents by the line's probabilities as the model does:
    the error of the spread alone)."""
    from pyterrier_sparse_eval import _covariate as cov

    def point(counts: np.ndarray, width: int) -> np.ndarray:
        out = np.zeros((len(counts), width))
        inside = counts < width
        out[np.flatnonzero(inside), counts[inside]] = 1.0
        return out

    def count(y: np.ndarray, s: np.ndarray) -> np.ndarray:
        return (y[None, :] >= s[:, None]).sum(axis=1)

    def above(j, parts, family, width):
        rows_all, groups = cov.relevant_groups(j, width)
        pmf = np.zeros((len(rows_all), width))
        for q, at, s in groups:
            part, (top_y, rest_y) = parts[q], truth[q]
            if kind in ("oracle-rest", "oracle-both"):
                rest_all = rest_y if part.top is not None else np.concatenate([top_y, rest_y])
                rest = point(count(rest_all, s), width)
            else:
                rest = cov.rest_pmf(part, family, s, width)
            if part.top is None:
                pmf[at] = rest
                continue
            if kind in ("oracle-top", "oracle-both"):
                top = point(count(top_y, s), width)
            elif kind == "exact-count":
                top = cov.poisson_binomial(
                    cov.scaled_to(part.top.terms(s)[0], count(top_y, s).astype(np.float64)), width
                )
            else:
                top = cov.poisson_binomial(part.top.probs(s), width)
            pmf[at] = cov.added(top, rest)
        return cov.UnseenAbove(rows_all, pmf)

    return above


def truths(covariate, pool_run: pd.DataFrame, deep: pd.DataFrame, pool) -> dict:
    """Per query, the system's full-corpus scores (``deep``: its run over every document, single precision as
    ranked; not retrieved: -inf) of the unseen top-D documents, in the covariate's order, and of the other
    unseen documents."""
    from pyterrier_sparse_eval.measures._prepare import to_run_frame

    frame = to_run_frame(pool_run).reset_index(drop=True)
    pooled = pool.docno_set
    in_pool = frame["docno"].isin(pooled).to_numpy()
    docnos, x = frame["docno"].to_numpy(dtype=object), frame["score"].to_numpy(dtype=np.float64)
    rows_of = frame.groupby("qid", sort=False).indices  # as Covariate.from_run reads the run
    out = {}
    for q, g in deep.groupby("qid"):
        score = dict(zip(g["docno"].astype(str), g["score"].to_numpy().astype(np.float32).astype(np.float64)))
        rows = rows_of.get(q, np.zeros(0, dtype=int))
        top = rows[~in_pool[rows]]
        if not np.array_equal(x[top], covariate.unseen.get(str(q), np.zeros(0))):
            raise RuntimeError(f"query {q}: the pooling run's unseen documents differ from the covariate's")
        top_docs = set(docnos[top].tolist())
        out[str(q)] = (
            np.array([score.get(d, -np.inf) for d in docnos[top]]),
            np.array([v for d, v in score.items() if d not in pooled and d not in top_docs]),
        )
    return out


@contextlib.contextmanager
def calibration(mode: str, ranks: dict[str, np.ndarray], truth: dict | None = None):
    from pyterrier_sparse_eval import _covariate

    keep = _covariate._above
    if mode in ORACLES:
        _covariate._above = oracle_above(mode, truth or {})
    elif mode not in ("per-query", "sdm", "features"):
        _covariate._above = pooled_above(mode, ranks)
    try:
        yield
    finally:
        _covariate._above = keep


@dataclasses.dataclass
class Study:
    """``bench_sdm_scale``'s corpus (a real collection plus ``size`` synthetic distractors), its systems' full
    indexes and runs (1000 per query), and their exact full-corpus R@k and nDCG@k (mean over ``qids``)."""

    qrels: pd.DataFrame
    topics: pd.DataFrame
    qids: list[str]
    n_total: int
    sparse: dict
    index: dict
    full_run: dict
    dense: object
    full: dict


def load_study(dataset: str, size: int, work: Path) -> Study:
    """The study's corpus, indexes (built once in ``work``) and full runs; SPLADE-tiny and the dense model on
    corpora of at most 10,000 documents, as in ``bench_sdm_scale``."""
    import pyterrier_sparse_eval as pse

    claim_work(work, dataset)  # the cached corpus and indexes are named by size alone
    ds = pse.datasets.load_dataset(dataset)
    qrels = pse.datasets.get_qrels(ds)
    topics = pse.datasets.align_topics_qrels(pse.datasets.get_topics(ds, verbose=False), qrels)
    qids = [str(q) for q in topics["qid"]]
    docs = real_docs(dataset)
    n_total = len(docs) + size
    corpus = write_corpus(docs, size, work / f"corpus-{size}.tsv", seed=0)
    sparse = study.systems(with_splade=n_total <= 10_000)
    index, full_run = {}, {}
    for name, (enc, retr) in sparse.items():
        index[name] = pse.SparseIndex(work / f"index-{size}-{pse.files.slug(name)}")
        if not index[name].built():
            enc.indexer(index[name], verbose=False).index(iter_corpus(corpus))
        full_run[name] = retr(index[name], 1000).transform(topics)
    dense = study.Dense(corpus, work / f"dense-{size}.npz") if n_total <= 10_000 else None
    if dense:
        full_run["MiniLM-L6 (dense)"] = dense.run(topics, 1000)
    full = {}
    for name, run in full_run.items():
        values = pse.measures.evaluate(
            run, qrels, [f"{m}@{k}" for k in K_VALUES for m in ("R", "nDCG")], warn=False
        )
        full[name] = {
            key: float(np.mean([values.per_query[key].get(q, 0.0) for q in qids])) for key in values.per_query
        }
    return Study(qrels, topics, qids, n_total, sparse, index, full_run, dense, full)


def open_study(parser: argparse.ArgumentParser, args: argparse.Namespace, size: int | None = None) -> Study:
    """:func:`load_study` of a script's ``--dataset``, ``--size`` (or ``size``) and ``--work`` (created, the shared
    data linked into it), refusing ``--systems`` the study does not have with the choices."""
    args.work.mkdir(parents=True, exist_ok=True)
    use_shared_data(args.work)
    st = load_study(args.dataset, args.size if size is None else size, args.work)
    unknown = set(getattr(args, "systems", None) or ()) - set(st.full_run)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; choose from {list(st.full_run)}")
    return st


def pool_designs(budget: float, st: Study, pool_run: pd.DataFrame, all_docnos) -> tuple[int, dict]:
    """``bench_sdm_scale.pool_plan`` for the study ``st``: the depth and each design's ``make_pool`` arguments,
    refusing a budget that leaves less than the study's smallest sample."""
    depth, room, designs = study.pool_plan(budget, st.n_total, st.qrels, pool_run, all_docnos, len(st.topics))
    if room < study.MIN_SAMPLE:
        raise SystemExit(
            f"A pool of {budget:.0%} leaves {room} documents for the background sample after the relevant "
            f"documents and the top {depth} per query: give a larger --budgets value."
        )
    return depth, designs


def add_pool_arguments(parser: argparse.ArgumentParser, seeds: int, designs: list[str]) -> None:
    """The corpus and pool options ``load_study`` and ``pool_designs`` take: --dataset, --size, --budgets, --seeds,
    --first-seed, --designs."""
    parser.add_argument("--dataset", default="irds:beir/scifact/test")
    parser.add_argument(
        "--size", type=int, default=0, help="synthetic distractors (0: the real corpus alone)"
    )
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.15, 0.3])
    parser.add_argument("--seeds", type=positive_int, default=seeds, help="pools per budget and design")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="the first pool's seed (then the next ones)"
    )
    parser.add_argument("--designs", nargs="+", choices=("uniform", "stratified"), default=designs)


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    add_pool_arguments(parser, seeds=5, designs=["uniform", "stratified"])
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-calibration"))
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=("sdm", "features") + MODES + ORACLES,
        default=list(MODES),
        help="calibrations to compare (sdm: SDM alone, no covariate); the oracles (corpora of at most 10,000 "
        "documents) replace a part of the package's model by the truth",
    )
    parser.add_argument(
        "--top-share",
        type=float,
        help="share of a query's sampled top-D documents, those of highest pooling score, its line is fitted on "
        "(default: the package's _covariate.TOP_SHARE; 1: all of them)",
    )
    parser.add_argument(
        "--from-csv", type=Path, help="only print the summary of an earlier run's calibration-SIZE.csv"
    )
    args = parser.parse_args()
    if args.from_csv is not None:
        summarize(pd.read_csv(args.from_csv))
        return
    if args.top_share is not None:
        if not 0 < args.top_share <= 1:
            parser.error("--top-share must be in (0, 1]")
        from pyterrier_sparse_eval import _covariate

        _covariate.TOP_SHARE = args.top_share
    oracles = [m for m in args.modes if m in ORACLES]
    args.work.mkdir(parents=True, exist_ok=True)
    use_shared_data(args.work)

    from pyterrier_sparse_eval import sdm

    if oracles and len(real_docs(args.dataset)) + args.size > 10_000:
        parser.error(f"--modes {' '.join(oracles)} needs a corpus of at most 10,000 documents (--size 0)")
    st = load_study(args.dataset, args.size, args.work)
    qrels, topics, n_total = st.qrels, st.topics, st.n_total
    sparse, index, full_run, dense, full = st.sparse, st.index, st.full_run, st.dense, st.full
    pool_run, all_docnos = full_run["BM25 (pooling)"], index["BM25 (pooling)"].docnos
    # --modes features: the covariate with each document's count of the query's terms beside its pooling score
    matched = (
        sdm.MatchedTerms(index["BM25 (pooling)"], sparse["BM25 (pooling)"][0]).transform(pool_run)
        if "features" in args.modes
        else None
    )
    deep = {}  # every system's run over the whole corpus: the oracles' truth
    if oracles:
        deep = {name: retr(index[name], n_total).transform(topics) for name, (_, retr) in sparse.items()}
        if dense:
            deep["MiniLM-L6 (dense)"] = dense.run(topics, n_total)
    rows = []
    for budget in args.budgets:
        depth, designs = pool_designs(budget, st, pool_run, all_docnos)
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        for design, seed in itertools.product(args.designs, seeds):
            pool = study.make_pool(qrels, pool_run, all_docnos, depth, seed, designs[design])
            covariate = sdm.Covariate.from_run(pool_run, pool)
            featured = sdm.Covariate.from_run(matched, pool) if matched is not None else None
            for name in full_run:
                run = study.run_over_pool(
                    pool, name, sparse, index, dense, topics, args.work / f"pool-{args.size}"
                )
                ranks = pooling_ranks(run, qrels, pool_run)
                truth = truths(covariate, pool_run, deep[name], pool) if oracles else None
                for mode in args.modes:
                    with calibration(mode, ranks, truth):
                        with_covariate = {"sdm": None, "features": featured}.get(mode, covariate)
                        est = sdm.evaluate(run, qrels, pool, K_VALUES, covariate=with_covariate)["aggregate"]
                    for key, v in est.items():
                        rows.append(
                            (budget, design, seed, name, key, mode, v["pooled"], v["sdm"], full[name][key])
                        )
            print(f"pool {pool.fraction:.2%} {design} seed {seed} done", flush=True)
    table = pd.DataFrame(
        rows, columns=["budget", "design", "seed", "system", "measure", "mode", "pooled", "est", "full"]
    )
    table.to_csv(args.work / f"calibration-{args.size}.csv", index=False)
    print(f"{args.dataset} + {args.size} distractors, {args.seeds} pools per budget and design")
    summarize(table)


def summarize(table: pd.DataFrame) -> None:
    """Share of the gap closed (%), minimum and median over systems and R@k / nDCG@k, per budget, design, mode
    and k = 10 / k >= 100; then each one's worst cell."""

    def closed(x: pd.DataFrame) -> float:
        gap = (x["pooled"] - x["full"]).abs().mean()
        return 1 - (x["est"] - x["full"]).abs().mean() / gap if gap >= 0.01 else float("nan")

    cells = (
        table.groupby(["budget", "design", "mode", "system", "measure"])
        .apply(closed, include_groups=False)
        .rename("closed")
        .reset_index()
        .dropna()
    )
    cells["closed"] *= 100
    cells["k"] = np.where(cells["measure"].str.endswith("@10"), "k = 10", "k >= 100")
    summary = cells.groupby(["budget", "design", "mode", "k"])["closed"].agg(["min", "median"]).unstack("k")
    print("share of the gap closed (%; gaps under 0.01 not counted)")
    print(summary.round(1).to_string())
    worst = cells.sort_values("closed").groupby(["budget", "design", "mode", "k"]).head(1)
    for row in worst.sort_values(["budget", "design", "mode", "k"]).itertuples():
        print(
            f"  worst {row.budget} {row.design} {row.mode} {row.k}: {row.system} {row.measure} {row.closed:.1f}"
        )


if __name__ == "__main__":
    main()
