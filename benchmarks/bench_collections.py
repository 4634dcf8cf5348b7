"""Streaming a large local corpus: memory stays bounded while a 10M-line JSONL corpus is read and indexed.

Writes a synthetic BEIR folder (N documents of ~55 Zipfian words, ids "doc-<n>"; gzipped or not), then, each in
its own process so that peak memory (ru_maxrss) is its own:

- ``read``: iterates ``pse.datasets.corpus_iter("beir:...")`` (JSON parsing, the duplicate-id check, the
  progress bar's count), next to a plain ``json.loads`` loop over the same file (the floor);
- ``index``: builds the BM25 index from the same spec (bounded-memory builder; its docno table is the part that
  grows with N).

Prints documents/s and, per step, the growth of the resident set during the step (its peak, sampled every 20 ms,
less the resident set once the modules are imported; anonymous memory, not page cache of mapped files), and the ratio to the plain loop.

    python benchmarks/bench_collections.py --docs 10000000 [--gz]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import positive_int  # the scripts' folder is on sys.path when run


def write_corpus(folder: Path, n: int, gz: bool) -> None:
    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(150_000)])
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    (folder / "qrels").mkdir(parents=True)
    name = folder / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
    opener = (
        gzip.open(name, "wt", encoding="utf-8", compresslevel=1) if gz else open(name, "w", encoding="utf-8")
    )
    with opener as f:
        for start in range(0, n, 100_000):
            m = min(100_000, n - start)
            words = vocab[rng.choice(len(vocab), size=(m, 55), p=p)]
            f.writelines(
                json.dumps({"_id": f"doc-{start + i}", "title": "", "text": " ".join(words[i])}) + "\n"
                for i in range(m)
            )
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "w1 w2"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tdoc-0\t1\n")


def _rss_mib() -> float:
    """Anonymous resident memory (resident less file-backed pages: memory-mapped index files read back are
    page cache the kernel can drop, not memory the build holds)."""
    with open("/proc/self/statm") as f:
        _, resident, shared = (int(v) for v in f.read().split()[:3])
    return (resident - shared) * resource.getpagesize() / 2**20


def step(kind: str, folder: str) -> None:
    import threading

    import pyterrier_sparse_eval as pse

    base, peak, done = _rss_mib(), [0.0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _rss_mib())

    threading.Thread(target=sample, daemon=True).start()
    t = time.perf_counter()
    if kind == "plain":
        path = next(Path(folder).glob("corpus.jsonl*"))
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            n = sum(1 for line in f if json.loads(line)["_id"])
    elif kind == "read":
        n = sum(1 for _ in pse.datasets.corpus_iter(f"beir:{folder}", verbose=False))
    else:
        index = pse.SparseIndex(Path(folder).parent / "index")
        pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(f"beir:{folder}"))
        n = index.num_docs
    seconds = time.perf_counter() - t
    done.set()
    print(
        json.dumps(
            {"kind": kind, "docs": n, "seconds": seconds, "growth_mib": max(peak[0], _rss_mib()) - base}
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--docs", type=positive_int, default=1_000_000)
    ap.add_argument("--gz", action="store_true")
    ap.add_argument("--steps", default="plain,read,index")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        return step(args.step, args.folder)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "beir"
        t = time.perf_counter()
        write_corpus(folder, args.docs, args.gz)
        print(f"wrote {args.docs:,} documents in {time.perf_counter() - t:.0f} s", flush=True)
        results = {}
        for kind in args.steps.split(","):
            out = subprocess.run(
                [sys.executable, __file__, "--step", kind, "--folder", str(folder)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results[kind] = json.loads(out.strip().splitlines()[-1])
            r = results[kind]
            print(
                f"{kind:6s} {r['docs']:>11,} docs  {r['docs'] / r['seconds']:>9,.0f} docs/s  "
                f"resident set +{r['growth_mib']:>7,.0f} MiB",
                flush=True,
            )
        if "plain" in results:
            for kind in set(results) - {"plain"}:
                r, p = results[kind], results["plain"]
                print(
                    f"{kind}: {p['docs'] / p['seconds'] / (r['docs'] / r['seconds']):.2f}x the plain loop's time"
                )


if __name__ == "__main__":
    main()
