"""Where a build on Ray spends the driver's time: the driver's own CPU seconds per million documents.

On Ray the documents are analysed (BM25) or flattened/encoded (``toks``, SPLADE) by Ray tasks, but one driver
process still reads them, ships the batches, gives new terms their ids and spills the postings; then each shard
is finished by a Ray task. The driver's CPU time bounds the build's pace however many workers the cluster has:
documents / driver CPU-seconds is the most a build can reach. Measured here for two corpora, each built as
2 shards locally and on a local Ray instance (started before the clock), with the driver's CPU time
(``time.process_time``, Ray's in-process threads included) split into the encoding phase and the shard
finishing:

- BM25 over bench_retrieval.py's synthetic text corpus (``--docs`` documents);
- SPLADE-like ``toks`` documents (``--toks-docs``; 120 terms each from a 30,522-term vocabulary, Zipfian).

Beside the times, the disk a build needs at its peak: the size of the folder holding the index (its spilled
chunks, the shards being written), sampled every 0.01 s, against the finished index.

Writes the "build-driver" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import atexit
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, publish, today  # noqa: E402
from bench_retrieval import K1, B, iter_tsv, write_text_corpus  # noqa: E402


def toks_corpus(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    vocab = 30_522
    probs = 1 / np.arange(1, vocab + 1) ** 0.8
    probs /= probs.sum()
    names = [f"tok{i}" for i in range(vocab)]
    docs = []
    for i in range(n):
        terms = np.unique(rng.choice(vocab, 130, p=probs))[:120]
        weights = rng.gamma(1.0, 0.5, len(terms)) + 0.01
        docs.append({"docno": f"d{i}", "toks": dict(zip([names[t] for t in terms], weights.tolist()))})
    return docs


def folder_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` (files vanishing while it is walked are skipped)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _sample(folder: Path, every: float, stop: Any, peak: Any) -> None:
    while not stop.wait(every):
        peak.value = max(peak.value, folder_bytes(folder))


class DiskPeak:
    """The largest size of ``folder`` seen between start and :meth:`stop`, sampled every ``every`` seconds by a
    process of its own (a thread would take the GIL from the build's driver, whose CPU time is measured)."""

    def __init__(self, folder: Path, every: float = 0.01):
        context = multiprocessing.get_context("fork")
        self.folder, self.done, self.peak = folder, context.Event(), context.Value("q", 0)
        self.process = context.Process(
            target=_sample, args=(folder, every, self.done, self.peak), daemon=True
        )
        self.process.start()

    def stop(self) -> int:
        self.done.set()
        self.process.join()
        return max(int(self.peak.value), folder_bytes(self.folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=positive_int, default=1_000_000)
    parser.add_argument("--toks-docs", type=positive_int, default=200_000)
    parser.add_argument("--shards", type=positive_int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="folder for the corpus and indexes")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()

    import ray

    import pyterrier_sparse_eval as pse
    from pyterrier_sparse_eval import _shard_writer

    work = args.work or Path(tempfile.mkdtemp(prefix="bench-driver-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.work is None:  # a temporary corpus goes when the script ends, however it ends
        atexit.register(shutil.rmtree, work, True)
    corpus = write_text_corpus(args.docs, work / f"corpus-{args.docs}.tsv")
    toks = toks_corpus(args.toks_docs)
    ray.init(log_to_driver=False, include_dashboard=False)

    finish = {}
    original = _shard_writer.ShardedWriter.finish

    def timed_finish(self, *a, **kw):
        wall, cpu = time.perf_counter(), time.process_time()
        original(self, *a, **kw)
        finish["wall"], finish["cpu"] = time.perf_counter() - wall, time.process_time() - cpu

    _shard_writer.ShardedWriter.finish = timed_finish
    bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
    builds = {
        f"BM25, {args.docs:,} text documents": (
            args.docs,
            lambda index, engine: bm25.indexer(index, verbose=False, engine=engine).index(iter_tsv(corpus)),
        ),
        f"toks, {args.toks_docs:,} documents x 120 terms": (
            args.toks_docs,
            lambda index, engine: index.indexer(verbose=False, engine=engine).index(toks),
        ),
    }
    rows = []
    for name, (n, build) in builds.items():
        for engine in ("local", "ray"):
            where = work / "build"  # the index and whatever its build writes beside it
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            path = where / "index"
            disk = DiskPeak(where)
            wall, cpu = time.perf_counter(), time.process_time()
            build(pse.ShardedIndex(path, num_shards=args.shards), engine)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            peak, size = disk.stop(), folder_bytes(path)
            encode_cpu = cpu - finish["cpu"]
            rows.append(
                (
                    name,
                    engine,
                    wall,
                    cpu,
                    encode_cpu,
                    finish["wall"],
                    finish["cpu"],
                    n / encode_cpu,
                    peak,
                    size,
                )
            )
            print(rows[-1])
            shutil.rmtree(where)
    lines = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. {args.shards} shards; Ray: a local "
        "instance (2 CPUs: the analysis tasks and the driver share the two cores). *driver-bound*: documents per "
        "second of the driver's CPU time in the encoding phase, the most any number of workers can give. *peak "
        "disk*: the most the index's folder held during the build (spilled chunks and shards being written), "
        "against the finished index.\n",
        "| corpus | engine | wall (s) | driver CPU (s) | of which encoding phase | finishing wall (s) | finishing "
        "driver CPU (s) | driver-bound docs/s | peak disk (MB) | index (MB) | peak / index |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, engine, wall, cpu, enc, fwall, fcpu, bound, peak, size in rows:
        lines.append(
            f"| {name} | {engine} | {wall:.1f} | {cpu:.1f} | {enc:.1f} | {fwall:.1f} | {fcpu:.1f} | {bound:,.0f} | "
            f"{peak / 1e6:,.0f} | {size / 1e6:,.0f} | {peak / size:.2f}x |"
        )
    publish(lines, "build-driver", "A build's driver on Ray", not args.no_write)


if __name__ == "__main__":
    main()
