"""A real collection made large: its documents, queries and qrels, plus N synthetic non-relevant distractors.

Each distractor is written from the collection's own text, so that it competes for every query as real
unjudged documents do: its length is a real document's (drawn from the length distribution), and its words are
spans of 5-25 consecutive words taken from 2-4 real documents, mixed with Dirichlet(1) weights, with a 10%
chance per span of a span from any document of the collection instead (smoothing). The spans keep the local
word order and vocabulary of real text (so every analyzer, SPLADE and dense encoders read it as text), the
mixture keeps a distractor close to a few topics at once (as most real non-relevant documents are close to a
few queries and far from the rest), and nothing is invented. Distractors are never judged: they are
non-relevant by construction, like the unjudged documents of a real collection, and the exact full-corpus
values stay cheap to compute. ``python benchmarks/bench_sdm_scale.py`` reports how BM25 scores the distractors
next to the real non-relevant documents.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


def use_shared_data(work: Path) -> None:
    """Point ir_datasets at a writable copy of ../shared/data/irds-cache (it writes beside its archives)."""
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "irds-cache"
    if "IR_DATASETS_HOME" not in os.environ and shared.is_dir():
        shutil.copytree(shared, work / "irds", dirs_exist_ok=True)
        os.environ["IR_DATASETS_HOME"] = str(work / "irds")


def real_docs(dataset: str) -> list[dict[str, str]]:
    """The collection's documents as docno + text (title and text joined)."""
    import pyterrier_sparse_eval as pse

    out = []
    for d in pse.datasets.corpus_iter(dataset):
        text = " ".join(str(d.get(f) or "") for f in ("title", "text")).strip()
        out.append({"docno": str(d["docno"]), "text": text})
    return out


def distractors(docs: list[dict[str, str]], n: int, seed: int = 0) -> Iterator[dict[str, str]]:
    """``n`` distractor documents (docnos ``syn0000000``, ...) from ``docs`` (see the module docstring)."""
    words = [d["text"].split() for d in docs]
    lengths = np.array([len(w) for w in words])
    rng = np.random.default_rng(seed)
    block = 4096
    for first in range(0, n, block):
        m = min(block, n - first)
        # per distractor: its length, its sources and their weights; per span: random draws, used in order
        target = np.maximum(lengths[rng.integers(0, len(docs), m)], 5)
        counts = rng.integers(2, 5, m)
        draws = rng.random((m, 64, 4))
        for i in range(m):
            c = int(counts[i])
            sources = rng.choice(len(docs), c, replace=False)
            weights = np.cumsum(rng.dirichlet(np.ones(c)))
            out: list[str] = []
            span = 0
            while len(out) < target[i]:
                u = draws[i, span % 64]
                span += 1
                if u[0] < 0.1:
                    src = int(u[1] * len(docs))
                else:
                    src = int(sources[min(int(np.searchsorted(weights, u[1])), c - 1)])
                w = words[src]
                size = 5 + int(u[2] * 21)
                start = int(u[3] * max(1, len(w) - size + 1))
                piece = w[start : start + size]
                if not piece:
                    piece = w or ["empty"]
                out.extend(piece)
            yield {"docno": f"syn{first + i:07d}", "text": " ".join(out[: int(target[i])])}


def claim_work(work: Path, dataset: str, seed: int = 0) -> None:
    """Refuse a work folder holding another study: its cached corpora and indexes are named by size alone, so a
    folder serves one dataset and one distractor seed (``dataset.txt`` says which)."""
    want = dataset if seed == 0 else f"{dataset} (distractor seed {seed})"
    marker = work / "dataset.txt"
    if marker.exists() and (have := marker.read_text().strip()) != want:
        raise SystemExit(f"{work} holds the study of {have}, not {want}: give another --work folder.")
    work.mkdir(parents=True, exist_ok=True)
    marker.write_text(want + "\n")


def write_corpus(docs: list[dict[str, str]], n: int, path: Path, seed: int = 0) -> Path:
    """The real documents and ``n`` distractors as a TSV (docno, text), written once (atomically)."""
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(f"{d['docno']}\t{_clean(d['text'])}\n")
        for d in distractors(docs, n, seed):
            f.write(f"{d['docno']}\t{_clean(d['text'])}\n")
    tmp.rename(path)
    return path


def _clean(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def iter_corpus(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            docno, _, text = line.rstrip("\n").partition("\t")
            yield {"docno": docno, "text": text}
