"""Background families against the truth, tail region by tail region, over several pools.

    python benchmarks/sdm_families.py                                   # the dense model, SciFact 15% and 30%
    python benchmarks/sdm_families.py --systems "BM25 no idf" --families auto skewnorm hg

For each pool (``bench_sdm_scale``'s corpus, pooling run, pools and systems, as in ``sdm_reference``) and
each system, every relevant row of the system's run over the pool gets the true number of unseen documents (outside
the pool) that score at least as high in the full corpus, next to the number each background family expects,
N_unseen * p(s). Rows are grouped by that true count (0, 1-2, 3-9, ... : the region of the background's tail the
row's fate depends on: R@10 and the nDCG@k of the top rows on the first groups, R@100 on 30-299) and the table gives
the ratio of expected to true counts per group, then each family's SDM R@k / nDCG@k error (mean |error| and mean
signed error over the pools, x 1000). ``det`` rows count R@k the way the reference estimator does
(``sdm.threshold_recall``): a relevant row is in the top k when its pooled rank plus its expected unseen count is,
with no binomial spread, which separates the reference's family from its counting rule.

Families: the package's (``sdm.FAMILIES``) and variants tried as replacements for ``auto`` (a Gaussian KDE,
Silverman's bandwidth), built here on the same sample:

- ``hg``: the KDE with a normal parametric start (N. L. Hjort and I. K. Glad, Nonparametric density estimation
  with a parametric start, Annals of Statistics 23(3), 1995): f(x) = f0(x) * mean_i K_h(x - x_i) / f0(x_i), whose
  bias vanishes where the start fits; with a normal f0 each kernel is a normal again (closed form), shrunk toward
  the mean and narrower, weighted up in the tails;
- ``kde*F``: the KDE with its bandwidth times F;
- ``kde-vc``: the variance-corrected KDE (M. C. Jones, On correcting for variance inflation in kernel density
  estimation, Computational Statistics & Data Analysis 11, 1991): the KDE shrunk toward the sample mean by
  c = 1 / sqrt(1 + h^2 / sd^2), centers and bandwidth alike, so that it keeps the sample's variance sd^2 (a
  plain KDE's is sd^2 + h^2). The shrinkage is large for a near-normal sample and small for a heavy-tailed one,
  whose h (from the IQR) is small next to its sd;
- ``F+delta`` (any KDE family F above): F with each row's SDM term corrected for the noise of its survival
  estimate through the term's curvature (``sdm_recall(..., variance=)``: the second-order bias correction of a
  plug-in estimate, the variance of p(s) estimated from the sampled documents' kernel terms,
  ``BackgroundModel.sf_variance``);
- ``kde4``: the KDE with Gaussian's fourth-order kernel (3 - u^2) phi(u) / 2, whose survival
  mean_i [Phi(-u_i) - u_i phi(u_i) / 2] (u_i = (s - x_i) / h) is the KDE's plus h^2 / 2 times its density's
  derivative: the KDE's first-order bias, (h^2 / 2) f'(s) too much mass in a falling tail, removed (clipped to
  [0, 1]; it falls to 0 about 1.4 h above the largest sampled score); ``kde4|kde``: it up to the sample's 4th
  largest score, the KDE's tail above;
- ``kde+exp``: the KDE up to the sample's 11th largest score t, an exponential tail above it (the mean excess of
  the top 10 over t);
- ``skewt``: the Jones-Faddy skew-t (``scipy.stats.jf_skew_t``) by maximum likelihood; ``select`` / ``select-t``:
  per query, the skew-normal / skew-t where its log-likelihood less its parameter count (AIC's penalty) beats the
  KDE's leave-one-out log-likelihood of the same sample, else the KDE (the count of each choice is printed);
- ``mix``: an even mixture, half the KDE's survival and half the skew-normal's (maximum likelihood);
- ``sn-c``: the skew-normal (maximum likelihood) on ``auto``'s observed part, with ``auto``'s censoring;
- ``cv`` (and ``cv10``, ``cv-all``, ``cv-k``, ``cv3``): per query, ``auto`` or ``sn-c`` (``cv3``: or ``kde-vc``),
  whichever has the lower K-fold (K = 5; ``cv10``: 10) cross-validated Brier score at the scores where SDM reads
  the survival: the query's relevant rows' scores in the system's run (``cv-k``: and the run's scores at pooled
  ranks 10, 100 and 1000), sum_t sum_{x held out} (sf(t) - 1{x >= t})^2, the threshold-weighted CRPS restricted to
  those t (T. Gneiting and R. Ranjan, Comparing density forecasts using threshold- and quantile-weighted scoring
  rules, JBES 29(3), 2011). A threshold above every sampled score carries no outcome and is left out (``cv-all``
  keeps it); none left, or a tie: ``auto``. The choices are counted and printed per system;
- ``lcd``: the log-concave maximum-likelihood density (``_logconcave.py``: no bandwidth, 0 outside the sample's
  range) with its last linear log-density piece extended above the largest sampled score (an exponential tail);
  ``lcd-s``: the smoothed one (convolved with the normal that restores the sample's variance);
  ``lcd-s|kdeN``: ``lcd-s`` up to the sample's N-th largest score, the KDE's tail above it, scaled to meet it;
- ``A|kde``: family A (``empirical`` or ``skewnorm``) up to the sample's 4th largest score t, the KDE's tail above
  it, scaled to A's value at t.

Uniform pools by default (the reference's setting); ``--designs stratified`` takes the weighted families
(``sdm.WEIGHTED_FAMILIES``, with or without ``+delta``). A system's censored or zero-inflated background keeps
``auto``'s censoring, the variant replacing the fit of its observed part.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sdm_scale as study  # noqa: E402
from _logconcave import LogConcave, SmoothedLogConcave  # noqa: E402
from sdm_calibration import add_pool_arguments, open_study, pool_designs  # noqa: E402

from pyterrier_sparse_eval.measures import BackgroundModel, fit_background  # noqa: E402

K_VALUES = (10, 100, 1000)
# per-query choice by a K-fold cross-validated Brier score at the thresholds where SDM reads the survival function
# name: (candidates, K, thresholds, drop thresholds above every sampled score)
CV_FAMILIES_SPEC = {
    "cv": (("auto", "sn-c"), 5, "rel", True),
    "cv10": (("auto", "sn-c"), 10, "rel", True),
    "cv-all": (("auto", "sn-c"), 5, "rel", False),
    "cv-k": (("auto", "sn-c"), 5, "rel+k", True),
    "cv3": (("auto", "sn-c", "kde-vc"), 5, "rel", True),
}
CV_FAMILIES = tuple(CV_FAMILIES_SPEC)
GROUPS = [0, 1, 3, 10, 30, 100, 300, 1000]  # true unseen counts, left-closed
VARIANTS = (
    "hg",
    "kde-vc",
    "kde4",
    "kde4|kde",
    "kde*0.7",
    "kde*1.4",
    "kde+exp",
    "empirical|kde",
    "skewnorm|kde",
    "skewt",
    "select",
    "select-t",
    "mix",
    "sn-c",
    "lcd",
    "lcd-s",
    "lcd-s|kde4",
    "lcd-s|kde11",
    *CV_FAMILIES,
)


class Variant:
    """``auto``'s censoring (mass below c) around another fit of the observed part."""

    def __init__(self, base: Any, observed_sf: Any):
        self.params, self._observed_sf = base.params, observed_sf

    def sf(self, s: Any) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        w, c = self.params.get("below_share", 0.0), self.params.get("below", -np.inf)
        return np.where(s < c, 1.0, (1.0 - w) * self._observed_sf(s))


_SN_FITS: dict[bytes, tuple[float, float, float]] = {}
_LCD_FITS: dict[bytes, Any] = {}


def skewnorm_fit(x: np.ndarray) -> tuple[float, float, float]:
    """``stats.skewnorm.fit(x)``, memoized on the sample (``skewnorm|kde``, ``mix``, ``select``, ``sn-c`` and the
    ``cv*`` families fit the same sample)."""
    key = np.asarray(x, dtype=np.float64).tobytes()
    if key not in _SN_FITS:
        _SN_FITS[key] = tuple(float(v) for v in stats.skewnorm.fit(x))
    return _SN_FITS[key]


def skewnorm_refit(x: np.ndarray, start: tuple[float, float, float]) -> tuple[float, float, float]:
    """The skew-normal's maximum likelihood on ``x`` (a training fold), Nelder-Mead on (a, loc, log scale) from
    ``start`` (the whole sample's fit): the same likelihood as ``stats.skewnorm.fit``, a faster start."""

    def nll(v: np.ndarray) -> float:
        a, loc, ls = v
        z = (x - loc) / np.exp(ls)
        return -float(np.sum(-0.5 * z * z + special.log_ndtr(a * z))) + len(x) * ls

    a0, loc0, s0 = start
    r = optimize.minimize(
        nll,
        [a0, loc0, np.log(s0)],
        method="Nelder-Mead",
        options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 4000},
    )
    return float(r.x[0]), float(r.x[1]), float(np.exp(r.x[2]))


def kernels(base: Any, centers: np.ndarray, width: float, weights: np.ndarray | None = None) -> Any:
    """The package's KDE (``BackgroundModel`` "kde": weighted normal kernels) on other centers, width and weights,
    with ``base``'s censoring."""
    return BackgroundModel("kde", {**base.params, "bandwidth": width}, {}, centers, weights)


def spliced(body: Any, tail: Any, t: float) -> Any:
    """``body`` up to t, ``tail`` above it scaled to meet ``body`` at t."""
    scale = float(body(np.array([t]))[0]) / max(float(tail(np.array([t]))[0]), 1e-300)
    return lambda s: np.where(np.asarray(s) <= t, body(s), scale * tail(s))


def fit_variant(
    sample: Any, family: str, thresholds: dict[str, np.ndarray] | None = None, start: Any = None
) -> Any:
    """One query's background under ``family`` (a package family or one of :data:`VARIANTS`); a ``cv*`` family
    needs ``thresholds`` ({"rel": the query's relevant rows' scores, "k": the run's scores at pooled ranks k})."""
    if family not in VARIANTS:
        return sample.fit(family)
    base = sample.fit("auto")
    if base.family != "kde":  # too few observed scores for a KDE: auto's parametric fit
        if family in CV_FAMILIES:
            CHOICES[(SYSTEM[0], family, "auto (no kde)")] += 1
        return base
    if family in CV_FAMILIES:
        return cv_choose(sample, base, family, thresholds or {})
    x, h, kde = base._sample, base.params["bandwidth"], base._sf_observed
    if family == "hg":
        mu, sd = x.mean(), x.std(ddof=1)
        v = sd**2 + h**2
        logw = 0.5 * (x - mu) ** 2 * (1 / sd**2 - 1 / v)
        return kernels(base, (x * sd**2 + mu * h**2) / v, h * sd / np.sqrt(v), np.exp(logw - logw.max()))
    if family == "kde-vc":
        mu, sd = x.mean(), x.std(ddof=1)
        c = 1 / np.sqrt(1 + h**2 / sd**2)
        return kernels(base, mu + c * (x - mu), c * h)
    if family.startswith("kde4"):
        shares = np.full(len(x), 1.0 / len(x))

        def fourth(s: Any) -> np.ndarray:
            u = (np.asarray(s, dtype=np.float64)[..., None] - x) / h
            return np.clip((stats.norm.sf(u) - u * stats.norm.pdf(u) / 2) @ shares, 0.0, 1.0)

        t = x[-4] if len(x) > 3 else x[0]
        return Variant(base, fourth if family == "kde4" else spliced(fourth, kde, t))
    if family.startswith("kde*"):
        return kernels(base, x, h * float(family[4:]))
    if family == "kde+exp":
        t = x[-11] if len(x) > 10 else x[0]
        beta = max(float(np.mean(x[-10:] - t)), 1e-12)
        return Variant(base, spliced(kde, lambda s: np.exp(-(np.asarray(s) - t) / beta), t))
    if family == "sn-c":  # the skew-normal on auto's observed part, auto's censoring (as `select` fits it)
        a, loc, scale = skewnorm_fit(x) if start is None else skewnorm_refit(x, start)
        return Variant(base, lambda s: stats.skewnorm.sf(s, a, loc, scale))
    if family == "mix":
        a, loc, scale = stats.skewnorm.fit(x)
        return Variant(base, lambda s: 0.5 * kde(s) + 0.5 * stats.skewnorm.sf(s, a, loc, scale))
    if family.startswith("lcd"):
        if family == "lcd":
            return Variant(base, LogConcave(x).sf)
        key = x.tobytes()
        # one fit serves lcd-s and its splices (cleared per pool and system)
        if key not in _LCD_FITS:
            _LCD_FITS[key] = SmoothedLogConcave(x).sf
        smooth = _LCD_FITS[key]
        if family == "lcd-s":
            return Variant(base, smooth)
        n = int(family.rsplit("kde", 1)[1])
        return Variant(base, spliced(smooth, kde, x[-n] if len(x) >= n else x[0]))
    if family in ("skewt", "select", "select-t"):
        return Variant(base, selected(x, h, kde, family))
    t = x[-4] if len(x) > 3 else x[0]
    if family == "empirical|kde":
        body = fit_background(x, "empirical")._sf_observed
    else:
        a, loc, scale = stats.skewnorm.fit(x)
        body = lambda s: stats.skewnorm.sf(s, a, loc, scale)  # noqa: E731
    return Variant(base, spliced(body, kde, t))


def kde_loo_loglik(x: np.ndarray, h: float) -> float:
    """The KDE's leave-one-out log-likelihood of its own sample (each score under the other scores' kernels)."""
    d = stats.norm.pdf((x[:, None] - x[None, :]) / h) / h
    np.fill_diagonal(d, 0.0)
    return float(np.sum(np.log(np.maximum(d.sum(axis=1) / (len(x) - 1), 1e-300))))


def selected(x: np.ndarray, h: float, kde: Any, family: str) -> Any:
    """``skewt``: the Jones-Faddy skew-t by maximum likelihood; ``select`` / ``select-t``: the skew-normal /
    skew-t where its log-likelihood less its parameter count (AIC's penalty) beats the KDE's leave-one-out
    log-likelihood, else the KDE."""
    if family == "select":
        a, loc, scale = skewnorm_fit(x)
        ll, k = float(np.sum(stats.skewnorm.logpdf(x, a, loc, scale))), 3
        para = lambda s: stats.skewnorm.sf(s, a, loc, scale)  # noqa: E731
    else:
        with warnings.catch_warnings():  # scipy's optimizer tries shapes whose normalizing constant overflows
            warnings.simplefilter("ignore", RuntimeWarning)
            a, b, loc, scale = stats.jf_skew_t.fit(x)
            ll, k = float(np.sum(stats.jf_skew_t.logpdf(x, a, b, loc, scale))), 4
        para = lambda s: stats.jf_skew_t.sf(s, a, b, loc, scale)  # noqa: E731
    if family == "skewt" or ll - k > kde_loo_loglik(x, h):
        CHOICES[family] += 1
        return para
    CHOICES[family + " kde"] += 1
    return kde


CHOICES: Counter[Any] = Counter()  # fits chosen, printed at the end
SYSTEM = [""]  # the system being fitted (for the choice counts)
FOLD_FITS: dict[Any, Any] = {}  # (id(sample), K, fold, candidate) -> model, cleared per pool and system


def cv_choose(sample: Any, base: Any, family: str, thresholds: dict[str, np.ndarray]) -> Any:
    """Per query: the candidate family with the lowest K-fold cross-validated Brier score summed over the
    thresholds t (each relevant row's score; with "rel+k" also the run's scores at pooled ranks k), i.e. the
    threshold-weighted CRPS restricted to those t (Gneiting and Ranjan 2011): for each fold, each candidate is
    fitted on the other folds (censored members included, as the sample is) and scored by
    sum_t sum_{x held out} (sf(t) - 1{x >= t})^2. A threshold above every sampled score carries no outcome
    (only sf(t)^2, which rewards the lightest tail) and is left out unless the spec says otherwise; no
    threshold left, or equal scores: auto."""
    cands, K, which, drop = CV_FAMILIES_SPEC[family]
    t = np.asarray(thresholds.get("rel", ()), dtype=np.float64)
    if which == "rel+k":
        t = np.concatenate([t, np.asarray(thresholds.get("k", ()), dtype=np.float64)])
    obs = np.asarray(sample.observed, dtype=np.float64)
    if drop and len(t):
        t = t[t <= obs.max()]
    if len(t) == 0:
        CHOICES[(SYSTEM[0], family, "auto (no threshold)")] += 1
        return base
    n = len(obs) + sample.n_below
    folds = np.random.default_rng(0).permutation(n) % K  # member i < len(obs): observed, else censored
    total = dict.fromkeys(cands, 0.0)
    for f in range(K):
        held, train = folds == f, folds != f
        h_obs = obs[held[: len(obs)]]
        n_cens_held = int(held[len(obs) :].sum())
        ind = (h_obs[None, :] >= t[:, None]).astype(np.float64)  # thresholds x held-out observed
        cens_ind = (t < sample.below).astype(np.float64)  # a censored member is below `below`
        for c in cands:
            key = (id(sample), K, f, c)
            if key not in FOLD_FITS:
                tr = type(sample)(obs[train[: len(obs)]], int(train[len(obs) :].sum()), sample.below)
                start = skewnorm_fit(base._sample) if c == "sn-c" else None
                FOLD_FITS[key] = (
                    fit_variant(tr, c, start=start) if len(tr.observed) + tr.n_below >= 2 else None
                )
            m = FOLD_FITS[key]
            if m is None:
                continue
            sf = np.clip(m.sf(t), 0.0, 1.0)
            total[c] += float(np.sum((sf[:, None] - ind) ** 2) + n_cens_held * np.sum((sf - cens_ind) ** 2))
    best = min(cands, key=lambda c: (total[c], c != "auto"))
    if np.isclose(total[best], total["auto"], rtol=1e-12, atol=0.0):
        best = "auto"
    CHOICES[(SYSTEM[0], family, best)] += 1
    return base if best == "auto" else fit_variant(sample, best)


def full_scores(st: Any, name: str) -> dict[str, pd.Series]:
    """Every document's score for the dense model; the full run's top 1000 for a sparse system."""
    run = st.full_run[name] if name in st.index else st.dense.run(st.topics, len(st.dense.docnos))
    return {
        str(q): pd.Series(g["score"].to_numpy(), index=g["docno"].astype(str)) for q, g in run.groupby("qid")
    }


def main() -> None:
    from pyterrier_sparse_eval import sdm
    from pyterrier_sparse_eval._pool import judged_with_backgrounds
    from pyterrier_sparse_eval.measures._sdm import sdm_ndcg, sdm_recall, survival_of_rows, variance_of_rows

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_pool_arguments(parser, seeds=5, designs=["uniform"])
    parser.add_argument("--systems", nargs="+", default=["MiniLM-L6 (dense)"])
    parser.add_argument(
        "--families",
        nargs="+",
        default=["auto", "skewnorm", "empirical", "empirical-gpd", *VARIANTS],
        help=f"sdm.FAMILIES and {', '.join(VARIANTS)}",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/sdm-calibration"))
    parser.add_argument("--output", type=Path, help="also write each pool's SDM errors to this CSV")
    args = parser.parse_args()
    unknown = {f.removesuffix("+delta") for f in args.families} - set(sdm.FAMILIES) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}; choose from {list(sdm.FAMILIES) + list(VARIANTS)}")
    bases = {f.removesuffix("+delta") for f in args.families}
    if "stratified" in args.designs and not bases <= set(sdm.WEIGHTED_FAMILIES):
        parser.error(
            f"a stratified pool is fitted with {', '.join(sdm.WEIGHTED_FAMILIES)} (and +delta), "
            f"not {sorted(bases - set(sdm.WEIGHTED_FAMILIES))}"
        )
    st = open_study(parser, args)
    pool_run, all_docnos = st.full_run["BM25 (pooling)"], st.index["BM25 (pooling)"].docnos
    truth = {name: full_scores(st, name) for name in args.systems}
    counts, errors = [], []
    for budget in args.budgets:
        depth, designs = pool_designs(budget, st, pool_run, all_docnos)
        for design, seed in itertools.product(
            args.designs, range(args.first_seed, args.first_seed + args.seeds)
        ):
            pool = study.make_pool(st.qrels, pool_run, all_docnos, depth, seed, designs[design])
            label = f"{budget:g} {design}"
            n_unseen = pool.n_unseen
            for name in args.systems:
                run = study.run_over_pool(
                    pool, name, st.sparse, st.index, st.dense, st.topics, args.work / f"pool-{args.size}"
                )
                j, samples = judged_with_backgrounds(run, st.qrels, pool)
                qids = j.qids.tolist()
                rel = np.flatnonzero(j.label > 0)
                true = np.full(len(j.rank), np.nan)
                unseen: dict[str, np.ndarray] = {}  # per query: the sorted full scores outside the pool
                for i in rel:
                    q = qids[j.group[i]]
                    full = truth[name].get(q)
                    if full is None or (name in st.index and len(full) >= 1000 and j.score[i] < full.min()):
                        continue  # below a sparse full run's top 1000: the count is not known
                    if q not in unseen:
                        unseen[q] = np.sort(full[~full.index.isin(pool.docno_set)].to_numpy())
                    true[i] = len(unseen[q]) - np.searchsorted(unseen[q], j.score[i], side="left")
                known = rel[~np.isnan(true[rel])]
                SYSTEM[0] = name
                FOLD_FITS.clear()
                _LCD_FITS.clear()
                rel_scores = {q: j.score[rel[j.group[rel] == g]] for g, q in enumerate(qids)}
                at_k = {
                    str(q): g.sort_values("score", ascending=False)["score"].to_numpy()[
                        [k - 1 for k in K_VALUES if k <= len(g)]
                    ]
                    for q, g in run.groupby("qid")
                }
                for family in args.families:
                    delta = family.endswith("+delta")
                    models = [
                        fit_variant(
                            samples[q],
                            family.removesuffix("+delta"),
                            {"rel": rel_scores[q], "k": at_k.get(q, np.zeros(0))},
                        )
                        for q in qids
                    ]
                    p = survival_of_rows(j, models)
                    counts += [(label, name, family, true[i], p[i] * n_unseen) for i in known]
                    v = variance_of_rows(j, models) if delta else None
                    for k in K_VALUES:
                        for measure, value in (
                            (f"R@{k}", sdm_recall(j, k, p, n_unseen, variance=v)),
                            (f"nDCG@{k}", sdm_ndcg(j, k, p, n_unseen, variance=v)),
                        ):
                            est = value.sum() / len(st.qids)  # a query the run lacks counts 0
                            errors.append((label, seed, name, family, measure, est - st.full[name][measure]))
                    # the reference's counting rule, the same family
                    if family in ("auto", "skewnorm") or family.startswith("lcd"):
                        for k in K_VALUES:
                            inside = (j.label > 0) & (j.rank + 1 + p * n_unseen <= k)
                            hits = np.bincount(j.group[inside], minlength=len(qids)) / np.maximum(
                                j.num_rel, 1
                            )
                            est = np.sum(hits) / len(st.qids)
                            errors.append(
                                (label, seed, name, f"{family} det", f"R@{k}", est - st.full[name][f"R@{k}"])
                            )
            print(f"pool {pool.fraction:.2%} {design} seed {seed} done", flush=True)
    print("fits chosen:")
    for key, n in sorted(CHOICES.items(), key=lambda kv: tuple(map(str, kv[0]))):
        print("  ", key, n)
    e = pd.DataFrame(errors, columns=["pool", "seed", "system", "family", "measure", "error"])
    if args.output:
        e.to_csv(args.output, index=False)
    report(pd.DataFrame(counts, columns=["pool", "system", "family", "true", "expected"]), e)


def report(counts: pd.DataFrame, e: pd.DataFrame) -> None:
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 50)
    counts["group"] = pd.cut(counts["true"], GROUPS + [np.inf], right=False)
    ratio = counts.groupby(["pool", "system", "group", "family"], observed=True).agg(
        rows=("true", "size"), true=("true", "mean"), expected=("expected", "mean")
    )
    ratio["ratio"] = ratio["expected"] / ratio["true"]
    shown = ratio["ratio"].where(ratio["true"] > 0, ratio["expected"]).unstack("family").round(2)
    print("expected / true unseen count per group (group [0, 1): the expected count itself)")
    print(shown.to_string())
    e = e.assign(error=e["error"] * 1000)
    table = e.groupby(["pool", "system", "measure", "family"]).agg(
        mae=("error", lambda x: x.abs().mean()), bias=("error", "mean")
    )
    print("\nSDM error x 1000 over the pools: mean |error| (mean signed error)")
    cell = table["mae"].round(1).astype(str) + " (" + table["bias"].round(1).map("{:+}".format) + ")"
    print(cell.unstack("family").fillna("").to_string())


if __name__ == "__main__":
    main()
