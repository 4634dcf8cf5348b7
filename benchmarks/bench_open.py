"""Opening an index: what the integrity checks cost, against the loader of a revision without them.

    python benchmarks/bench_open.py                      # 1M documents, baseline revision 3c2d975
    python benchmarks/bench_open.py --docs 200000 --runs 3

One BM25 index of the synthetic Zipfian corpus of ``bench_retrieval.py`` (``--docs`` documents) is built
once. Each measurement is a fresh process that opens the index and answers one query with the full
retriever (``num_results=1000``), timed from ``SparseIndex(path)`` to the result frame; that is what a
user's first query costs. Measured for: the baseline revision's code (``git archive`` of ``--baseline``, the
loader before indexes checked themselves: ``np.load`` and ``json.load``, no checks), ``checks="structure"``
and ``checks="full"`` (CRC-32 of every file, doc ids in range and ascending within a term, finite weights).
The page cache is warm (the index was just built or read): the figures are CPU cost, not disk reads.
Medians of ``--runs`` processes each.

Writes the "open" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, today, write_section  # noqa: E402
from bench_retrieval import K1, B, iter_text_docs, text_queries  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time, warnings
warnings.simplefilter("ignore")
import pandas as pd
import pyterrier_sparse_eval as pse
path, checks, query, k1, b = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
frame = pd.DataFrame({"qid": ["1"], "query": [query]})
bm25 = pse.BM25(k1=k1, b=b, stemmer=None, stopwords=None)
t0 = time.perf_counter()
index = pse.SparseIndex(path) if checks == "baseline" else pse.SparseIndex(path, checks=checks)
_ = index.meta, index.postings, index.term_ids, index.docnos, index.docno_rank, index.doclen  # all a query reads
opened = time.perf_counter() - t0
run = bm25.retriever(index, num_results=1000).transform(frame)
elapsed = time.perf_counter() - t0
assert len(run) == 1000, len(run)
print(opened, elapsed)
"""


def measure(path: Path, checks: str, query: str, runs: int, pythonpath: str | None) -> tuple[float, float]:
    import os

    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    opened, first = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), checks, query, str(K1), str(B)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=tempfile.gettempdir(),  # not the repository: the baseline must import its own package
        )
        a, b = out.stdout.strip().splitlines()[-1].split()
        opened.append(float(a))
        first.append(float(b))
    return statistics.median(opened), statistics.median(first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default="3c2d975", help="git revision whose loader has no checks")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()

    import pyterrier_sparse_eval as pse

    work = Path(tempfile.mkdtemp(prefix="bench-open-"))
    index_path = work / "index"
    print(f"building a BM25 index of {args.docs:,} synthetic documents in {index_path}")
    pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None).indexer(
        pse.SparseIndex(index_path), verbose=False
    ).index(iter_text_docs(args.docs))
    baseline_dir = work / "baseline"
    baseline_dir.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", args.baseline, "pyterrier_sparse_eval"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(baseline_dir)], input=archive, check=True)
    query = " ".join(f"w{t}" for t in text_queries(1)[0])
    sizes = sum(p.stat().st_size for p in index_path.iterdir())

    rows = []
    base = measure(index_path, "baseline", query, args.runs, str(baseline_dir))
    rows.append((f"revision {args.baseline} (no checks)", base))
    for checks in ("structure", "full"):
        rows.append((f'checks="{checks}"', measure(index_path, checks, query, args.runs, str(REPO))))
    lines = [
        f"A {args.docs:,}-document BM25 index ({sizes / 2**20:,.0f} MiB on disk), each measurement in a fresh "
        f"process, warm page cache, median of {args.runs}. *Open*: from `SparseIndex(path)` to every file a "
        "query reads loaded (and checked); *first query*: open plus one query (num_results=1000), numba "
        "included.",
        "",
        "| loader | open (s) | vs baseline | open + first query (s) | vs baseline |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {o:.3f} | {o / base[0]:.2f}x | {q:.3f} | {q / base[1]:.2f}x |" for name, (o, q) in rows
    ]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_section(
            "open",
            f"## Opening an index\n\n`{command_line()}` ({today()}; {machine_facts()})\n\n{table}\n",
        )
    import shutil

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
