"""The compiled kernels' disk cache follows changes to any kernel module, not only to the kernel's own file."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyterrier_sparse_eval
from pyterrier_sparse_eval._numba import KERNEL_MODULES
from pyterrier_sparse_eval._topk import HAVE_NUMBA

PACKAGE = Path(pyterrier_sparse_eval.__file__).parent

SCRIPT = """
import numpy as np, scipy.sparse as sp
from pyterrier_sparse_eval import _prune
m = sp.csr_matrix(np.array([[1.0, 0.0, 2.0, 0.5], [0.0, 3.0, 1.0, 0.0]], dtype=np.float32))
q = sp.csr_matrix(np.array([[1.0, 1.0]], dtype=np.float32))
docs, scores, n = _prune.top_k_pruned(q.indptr, q.indices, q.data, m.indptr, m.indices, m.data,
                                      np.arange(4, dtype=np.int32), 2, 4)
print(scores[0, : n[0]].tolist(), sum(_prune._chunk_threshold.stats.cache_hits.values()))
"""


def test_every_module_with_kernels_is_stamped():
    # a module that compiles kernels but is missing from KERNEL_MODULES would be cached under its own file again
    compiled = {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if re.search(r"\bnjit\b", p.read_text(encoding="utf-8"))
    }
    assert compiled <= set(KERNEL_MODULES), compiled - set(KERNEL_MODULES)
    assert all((PACKAGE / name).is_file() for name in KERNEL_MODULES)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba's cache")
def test_a_change_to_a_callee_module_recompiles_its_callers(tmp_path):
    # _prune's kernel calls _topk._select (compiled into it). numba alone checks the cache of _prune's kernel against
    # _prune.py only: after an edit of _topk.py alone, the old _select would still run. Here, in a copy of the
    # package with its own in-tree cache: a first run compiles and caches, a second loads the cache, and after an
    # edit of _topk.py alone a third must run the edited code.
    copy = tmp_path / "pkg" / "pyterrier_sparse_eval"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env["PYTHONPATH"] = str(tmp_path / "pkg")

    def run() -> tuple[list[float], int]:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, done.stderr[-3000:]
        scores, hits = done.stdout.strip().rsplit(" ", 1)
        return ast.literal_eval(scores), int(hits)

    first, hits = run()
    assert first == [3.0, 3.0] and hits == 0  # docs 1 and 2 (1 + 2 and 3 + 0), compiled afresh
    assert run() == (first, 1)  # the cache is used when nothing changed
    source = (copy / "_topk.py").read_text(encoding="utf-8")
    edited = source.replace("out_scores[pos] = fbuf[0]", "out_scores[pos] = fbuf[0] + np.float32(0.5)")
    assert edited != source
    (copy / "_topk.py").write_text(edited, encoding="utf-8")
    assert run() == ([3.5, 3.5], 0)  # recompiled with the edited _select
