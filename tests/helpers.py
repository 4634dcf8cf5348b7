"""Independent reference computations used by several tests (dense numpy, no project code)."""

from __future__ import annotations

import math

import numpy as np


def random_toks_corpus(
    rng: np.random.Generator, num_docs: int, vocab: int, dups: int = 0, integer: bool = True
):
    """Documents with {term: weight} dicts; ``dups`` exact copies of earlier documents create score ties."""
    docs = []
    for i in range(num_docs):
        n = int(rng.integers(1, 8))
        terms = rng.choice(vocab, size=n, replace=False)
        w = rng.integers(1, 4, size=n).astype(float) if integer else rng.random(n) + 0.01
        docs.append({"docno": f"d{i:04d}", "toks": {f"t{t}": float(x) for t, x in zip(terms, w)}})
    for j in range(dups):
        src = docs[int(rng.integers(0, num_docs))]
        docs.append({"docno": f"x{j:03d}", "toks": dict(src["toks"])})
    return docs


def brute_force_run(docs, queries, *, idf: bool, k: int):
    """Dense scoring of every document, ranked by score desc then docno desc (trec_eval's order)."""
    terms = sorted({t for d in docs for t in d["toks"]})
    tid = {t: i for i, t in enumerate(terms)}
    mat = np.zeros((len(docs), len(terms)))
    for i, d in enumerate(docs):
        for t, w in d["toks"].items():
            mat[i, tid[t]] = w
    n = len(docs)
    df = (mat != 0).sum(axis=0)
    idf_vec = np.array([math.log(1 + (n - x + 0.5) / (x + 0.5)) for x in df])
    out = {}
    for qid, qt in queries.items():
        q = np.zeros(len(terms))
        for t, w in qt.items():
            if t in tid:
                q[tid[t]] = w * (idf_vec[tid[t]] if idf else 1.0)
        scores = mat @ q
        touched = [(float(s), d["docno"]) for s, d, row in zip(scores, docs, mat) if (row[q != 0] != 0).any()]
        touched.sort(key=lambda x: (-x[0], tuple(-ord(c) for c in x[1])))
        out[qid] = touched[:k]
    return out
