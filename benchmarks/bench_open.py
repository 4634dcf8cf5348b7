"""Opening an index: what the integrity checks cost, against the loader of a revision without them.

    python benchmarks/bench_open.py                      # 1M documents, baseline revision 3c2d975
    python benchmarks/bench_open.py --docs 200000 --runs 3

A BM25 index of the synthetic Zipfian corpus of ``bench_retrieval.py`` (``--docs`` documents) is built
with this checkout's code, and another of the same documents with the baseline's (whose loader reads only its
own format: its analyzer check refuses an index built since). Each measurement is a fresh process that opens the index and answers one query with the full
retriever (``num_results=1000``), timed from ``SparseIndex(path)`` to the result frame; that is what a
user's first query costs. Measured for: the baseline revision's code (``git archive`` of ``--baseline``, the
loader before indexes checked themselves: ``np.load`` and ``json.load``, no checks), ``checks="structure"``
and ``checks="full"`` (CRC-32 of every file, doc ids in range and ascending within a term, finite weights).
The page cache is warm (the index was just built or read): the figures are CPU cost, not disk reads.
Medians of ``--runs`` processes each, after one not counted (it fills numba's on-disk cache).

Writes the "open" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402
from bench_retrieval import K1, B, iter_text_docs, text_queries  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

BUILD = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_retrieval import K1, B, iter_text_docs
import pyterrier_sparse_eval as pse
pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None).indexer(
    pse.SparseIndex(sys.argv[1]), verbose=False
).index(iter_text_docs(int(sys.argv[2])))
"""

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
assert len(run) > 0, "the query matched no document"  # 1000 at 1M documents; a small corpus may match fewer
print(opened, elapsed)
"""


def child(program: str, args: list[str], pythonpath: str, what: str) -> str:
    """Run ``program`` in a fresh process importing the package from ``pythonpath``; its stdout, or exit with its
    stderr (the reason a revision could not build or open an index)."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    out = subprocess.run(
        [sys.executable, "-c", program, *args],
        env=env,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),  # not the repository: the baseline must import its own package
    )
    if out.returncode != 0:
        raise SystemExit(f"{what} failed (exit {out.returncode}):\n{out.stderr.strip()}")
    return out.stdout


def measure(path: Path, checks: str, query: str, runs: int, pythonpath: str) -> tuple[float, float]:
    opened, first = [], []
    args, what = [str(path), checks, query, str(K1), str(B)], f"opening {path} ({checks})"
    # one run not counted: it fills numba's on-disk cache (a fresh baseline folder has none), so that every
    # loader's figure is what a user's process pays with the cache in place
    child(CHILD, args, pythonpath, what)
    for _ in range(runs):
        a, b = child(CHILD, args, pythonpath, what).strip().splitlines()[-1].split()
        opened.append(float(a))
        first.append(float(b))
    return statistics.median(opened), statistics.median(first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--runs", type=positive_int, default=5)
    parser.add_argument("--baseline", default="3c2d975", help="git revision whose loader has no checks")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()

    import pyterrier_sparse_eval as pse

    work = Path(tempfile.mkdtemp(prefix="bench-open-"))
    try:
        run(args, pse, work)
    finally:  # an index of 1M documents is hundreds of MiB: never left in /tmp, whatever stopped the run
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, pse, work: Path) -> None:
    baseline_dir = work / "baseline"
    baseline_dir.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", args.baseline, "pyterrier_sparse_eval"], capture_output=True
    )
    if archive.returncode != 0:
        raise SystemExit(
            f"git archive {args.baseline} failed: {archive.stderr.decode().strip()}\n"
            "Run the script from a git clone of the repository that holds the --baseline revision."
        )
    subprocess.run(["tar", "-x", "-C", str(baseline_dir)], input=archive.stdout, check=True)
    index_path, baseline_index = work / "index", work / "baseline-index"
    print(f"building a BM25 index of {args.docs:,} synthetic documents in {index_path}")
    pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None).indexer(
        pse.SparseIndex(index_path), verbose=False
    ).index(iter_text_docs(args.docs))
    print(f"building the same index with revision {args.baseline}'s code in {baseline_index}")
    here = str(Path(__file__).resolve().parent)
    child(
        BUILD,
        [str(baseline_index), str(args.docs), here],
        str(baseline_dir),
        f"revision {args.baseline}'s build",
    )
    query = " ".join(f"w{t}" for t in text_queries(1)[0])
    sizes = sum(p.stat().st_size for p in index_path.iterdir())

    rows = []
    base = measure(baseline_index, "baseline", query, args.runs, str(baseline_dir))
    rows.append((f"revision {args.baseline} (no checks)", base))
    for checks in ("structure", "full"):
        rows.append((f'checks="{checks}"', measure(index_path, checks, query, args.runs, str(REPO))))
    lines = [
        f"A {args.docs:,}-document BM25 index ({sizes / 2**20:,.0f} MiB on disk; the baseline opens the same "
        "documents indexed by its own code), each measurement in a fresh "
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


if __name__ == "__main__":
    main()
