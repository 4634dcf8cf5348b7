"""Figures for experiments and SDM reports (matplotlib, ``pip install 'pyterrier-sparse-eval[plots]'``).

Every function draws on a given matplotlib ``Axes`` (or a new figure) and returns the figure, so the same
pictures appear in notebooks and, through ``--plots DIR``, from the command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .files import atomic_write, check_destination, slug

__all__ = [
    "INSTALL_HINT",
    "check_folder",
    "background_fit",
    "background_fits",
    "metric_vs_k",
    "per_query_comparison",
    "save_figure",
    "save_per_query_comparisons",
    "save_sdm_figures",
]

INSTALL_HINT = "Plots need matplotlib: pip install 'pyterrier-sparse-eval[plots]'."


def check_folder(folder: str | os.PathLike[str] | None, *, option: str = "folder") -> None:
    """Before any work: a ValueError when figures could not be written to ``folder`` (``option``: the argument
    that gave it), an ImportError (:data:`INSTALL_HINT`) when matplotlib is missing. None: no figures wanted."""
    if not folder:
        return
    check_destination(folder, option=option, folder=True)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(INSTALL_HINT) from None


def _plt() -> Any:
    try:
        import matplotlib

        if not os.environ.get("MPLBACKEND") and "ipykernel" not in sys.modules:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return plt


def _axes(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    return ax.figure, ax


def background_fit(
    sample: Any, model: Any, *, n_unseen: int | None = None, title: str = "", ax: Any = None
) -> Any:
    """Observed vs fitted survival P(S >= s) of one query's background sample, log scale.

    The observed curve counts the whole sample (censored and zero-scored documents included; a stratified
    sample's documents by their weights, as its fit counts them), so the point mass below the run's lowest score
    shows as the drop at the left edge, drawn at the lowest score observed; the fitted curve is the model SDM uses. With ``n_unseen`` the right axis
    reads as expected unseen documents scoring >= s.
    """
    fig, ax = _axes(ax, (5.0, 3.4))
    observed = np.asarray(sample.observed, dtype=float)
    n = len(observed) + sample.n_below
    # each sampled document's weight: the unseen documents it stands for (1 each in a uniform sample; a
    # stratified one's Horvitz-Thompson weights, as its fit uses them)
    weight_by = getattr(sample, "weight_by", None)
    if weight_by is not None and sample.stratum is not None:
        w, below = weight_by[sample.stratum], float(sample.below_by @ weight_by)
    else:
        w, below = np.ones(len(observed)), float(sample.n_below)
    keep = w > 0  # a document of a band sampled whole stands for no unseen one
    order = np.argsort(observed[keep], kind="stable")
    observed, w = observed[keep][order], w[keep][order]
    total = float(w.sum()) + below
    share = below / total if total > 0 else 0.0
    emp = np.cumsum(w[::-1])[::-1] / total if len(observed) and total > 0 else np.zeros(0)
    # the axis floor: below the curve's last step, so that it shows
    floor = min(0.2 / n if n else 1e-6, 0.5 * float(emp.min()) if len(emp) else 1.0)
    if len(emp):
        ax.step(observed, emp, where="post", color="0.35", lw=1.2, label=f"sample (n={n})")
        span = observed[-1] - observed[0] + 1e-9
        grid = np.linspace(observed[0], observed[-1] + 0.3 * span, 400)
        fitted = model.sf(grid)
        ax.plot(
            grid, np.where(fitted >= floor, fitted, np.nan), color="C0", lw=1.6, label=f"fit: {model.family}"
        )
        if share:
            # the point mass: zero-scored (or unretrieved) sampled documents sit below the lowest score
            ax.vlines(
                observed[0], 1 - share, 1, color="C3", lw=3, label=f"mass below lowest score: {share:.0%}"
            )
        ax.set_xlim(min(0.0, observed[0]) if observed[0] >= 0 else observed[0], grid[-1])
    ax.set_yscale("log")
    ax.set_ylim(floor, 1.5)
    ax.set_xlabel("score s")
    ax.set_ylabel("P(background score >= s)")
    ax.set_title(title or "background scores", fontsize=10)
    if n_unseen:
        sec = ax.secondary_yaxis("right", functions=(lambda p: p * n_unseen, lambda c: c / n_unseen))
        sec.set_ylabel("expected unseen docs >= s", fontsize=8)
    ax.legend(fontsize=7, loc="lower left")
    return fig


def background_fits(
    samples: dict[str, Any],
    models: dict[str, Any],
    *,
    qids: Sequence[str] | None = None,
    n_unseen: int | None = None,
    title: str = "",
) -> Any:
    """:func:`background_fit` for a few queries side by side (default: 4 with the most observed scores)."""
    plt = _plt()
    if qids is None:
        qids = sorted(models, key=lambda q: -len(samples[q].observed))[:4]
    qids = list(qids)
    cols = min(len(qids), 2) or 1
    rows = max(1, int(np.ceil(len(qids) / cols)))
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.2 * cols, 3.4 * rows), layout="constrained", squeeze=False
    )
    for ax, q in zip(axes.ravel(), qids):
        background_fit(samples[q], models[q], n_unseen=n_unseen, title=f"query {q}", ax=ax)
    for ax in axes.ravel()[len(qids) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def metric_vs_k(
    curve: dict[str, Sequence[float]], *, metric: str = "R", title: str = "", ax: Any = None
) -> Any:
    """Pooled, SDM-corrected and full-corpus values of a metric across cut-offs k (log x axis), with the SDM
    bootstrap interval as a band when the curve has one."""
    fig, ax = _axes(ax, (5.0, 3.4))
    ks = curve["k"]
    styles = {
        "pooled": ("C1", "--", "pooled corpus"),
        "sdm": ("C0", "-", "SDM-corrected"),
        "full": ("k", ":", "full corpus (truth)"),
    }
    for key, (color, ls, label) in styles.items():
        if key in curve:
            ax.plot(ks, curve[key], color=color, ls=ls, lw=1.8, label=label)
    if "sdm_low" in curve and "sdm_high" in curve:
        ax.fill_between(
            ks,
            curve["sdm_low"],
            curve["sdm_high"],
            color="C0",
            alpha=0.2,
            lw=0,
            label="SDM bootstrap interval",
        )
    ax.set_xscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel(f"{metric}@k")
    ax.set_title(title or f"{metric}@k", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def per_query_comparison(
    per_query: Any, a: str, b: str, measure: Any, *, title: str = "", ax: Any = None
) -> Any:
    """Per-query differences b - a of one measure, sorted, as bars (wins above 0, losses below).

    ``per_query`` is ``pt.Experiment(..., perquery=True)``'s frame (``name``, ``qid``, ``measure``, ``value``);
    ``measure`` its name there, or the measure object given to pt.Experiment.
    """
    measure = str(measure)
    fig, ax = _axes(ax, (6.0, 3.2))
    measures = per_query["measure"].astype(str)
    if measure not in set(measures):
        raise ValueError(f"No measure {measure!r} in the per-query frame; measures: {sorted(set(measures))}.")
    frame = per_query[measures == measure]
    wide = frame.pivot_table(index="qid", columns="name", values="value")
    missing = [n for n in (a, b) if n not in wide.columns]
    if missing:
        raise ValueError(f"No system named {missing} in the per-query frame; names: {list(wide.columns)}.")
    diff = np.sort((wide[b] - wide[a]).dropna().to_numpy())
    colors = np.where(diff > 0, "C2", np.where(diff < 0, "C3", "0.6"))
    ax.bar(np.arange(len(diff)), diff, color=colors, width=1.0)
    ax.axhline(0, color="k", lw=0.8)
    wins, losses = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    ax.set_xlabel(f"queries (sorted); {wins} better, {losses} worse, {len(diff) - wins - losses} tied")
    ax.set_ylabel(f"delta {measure}")
    ax.set_title(title or f"{b} vs {a}", fontsize=10)
    return fig


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save a figure atomically (written to a temporary name, then renamed) and close it."""
    try:
        return atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120))
    finally:
        _plt().close(fig)


def save_per_query_comparisons(
    per_query: Any, names: Sequence[str], reference: str, measure: str, folder: str | os.PathLike[str]
) -> list[Path]:
    """One :func:`per_query_comparison` PNG per system against ``reference``, saved into ``folder``
    (``per-query-<system>-vs-<reference>.png``)."""
    written = []
    for name in names:
        if name != reference:
            fig = per_query_comparison(per_query, reference, name, measure)
            written.append(
                save_figure(fig, Path(folder) / f"per-query-{slug(name)}-vs-{slug(reference)}.png")
            )
    return written


def save_sdm_figures(report: Any, folder: str | os.PathLike[str]) -> list[Path]:
    """For each system of an SDM report (``pse.sdm.three_way``): background fits of four queries
    (``<system>-background.png``) and pooled / SDM / full metric-vs-k curves (``<system>-metric-vs-k.png``)."""
    plt = _plt()
    written = []
    for system, curves in report.curves.items():
        name = slug(system)
        fig = background_fits(
            report.samples[system],
            report.models[system],
            n_unseen=report.pool.n_unseen,
            title=f"{system}: background score fits",
        )
        written.append(save_figure(fig, Path(folder) / f"{name}-background.png"))
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
        for ax, metric in zip(axes, ("R", "nDCG")):
            metric_vs_k(curves[metric], metric=metric, title=f"{system}", ax=ax)
        written.append(save_figure(fig, Path(folder) / f"{name}-metric-vs-k.png"))
    return written
