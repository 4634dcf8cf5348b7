"""Exact top-k retrieval on realistic query loads, side by side with the fastest exact engines installable here.

    python benchmarks/bench_workloads.py                       # 1M and 3M documents (about 2 hours here)
    python benchmarks/bench_workloads.py --docs 1000000        # one size
    python benchmarks/bench_workloads.py --quick                # 100k documents, few queries (minutes)
    python benchmarks/bench_workloads.py --docs 3000000 --no-real --no-learned --no-write   # BM25 workloads only
    python benchmarks/bench_workloads.py --learned-docs 1000000  # the learned workload at 1M only (75 minutes;
                                                                # its three indexes at 3M would add about 40)
    python benchmarks/bench_workloads.py --work W --reuse-learned   # the learned indexes already in W kept

Corpora are bench_retrieval.py's (seeded Zipfian text, vocabulary 200k, Poisson(60) tokens per document;
SPLADE-like vectors, ~120 non-zeros per document over 30,522 terms). Workloads:

- ``light``: 5 distinct terms from frequency ranks 100-10,000 (bench_retrieval.py's queries);
- ``frequent``: 3-7 distinct terms drawn in proportion to their corpus frequency among ranks >= 50 (the top
  50 play the stopwords a real analyzer removes), so queries hold frequent terms as real ones do;
- ``long``: 15-40 distinct terms drawn the same way (verbose topics under BM25);
- ``learned``: 20-40 weighted terms over the SPLADE-like index (bench_retrieval.py's learned-sparse queries);
- ``scifact``, ``vaswani``: the real topics on a BM25 index of their own collection (needs ../shared/data).

Systems, all exact, 1 thread unless said: this project as a PyTerrier transformer (the default kernel, with
its running threshold; 2 threads; prune=False, the exhaustive kernel) and on arrays (``search_matrix``, the
kernel without the result frame); pyterrier-pisa (block-max WAND and MaxScore, as transformers; ``quantized``
over its toks index for learned weights); bm25s (numba backend, arrays); tantivy (Python bindings; its own BM25,
k1=1.2 b=0.75 fixed; hits as document addresses, no docno lookup: its cheapest level); bmp (block-max pruning,
safe setting alpha=beta=1, weights scaled to integers by its PyTerrier indexer; it quantises query weights too,
so its top k is exact for its own integer weights only). Seismic, approximate, is measured by bench_retrieval.py
on the same learned-sparse corpus (a reference point with its recall, not a peer). Each figure is the median of
--runs passes over the query set (more while they add up to under a second), the systems of a cell (workload,
size, k) taking their passes in turn, so that a burst of noise on a shared machine falls on all of them alike;
postings per query are the summed
document frequencies of the query's terms; ns per posting divides a query's time by them, against the floor of
reading 8 bytes per posting at the measured memory bandwidth.

Writes the "workloads" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, today, write_section  # noqa: E402
from bench_retrieval import (  # noqa: E402
    K1,
    LSR_WORDS,
    VOCAB,
    WORDS,
    ZIPF_S,
    B,
    index_in_child,
    iter_lsr_docs,
    lsr_queries,
    memory_bandwidth_gbs,
    overlap,
    query_lists,
    text_chunks,
    text_queries,
    write_text_corpus,
)

STOP_RANKS = 50


def frequency_queries(n: int, lo: int, hi: int, seed: int) -> list[list[int]]:
    """``lo``-``hi`` distinct term ids per query, drawn by corpus frequency among ranks >= STOP_RANKS."""
    rng = np.random.default_rng(seed)
    p = np.arange(1, VOCAB + 1, dtype=np.float64) ** -ZIPF_S
    p[:STOP_RANKS] = 0
    cdf = np.cumsum(p) / p.sum()
    out = []
    for _ in range(n):
        m = int(rng.integers(lo, hi + 1))
        terms: list[int] = []
        while len(terms) < m:
            terms = sorted(set(terms) | set(np.searchsorted(cdf, rng.random(m)).tolist()))[:m]
        out.append(terms)
    return out


def text_workloads(n_queries: int) -> dict[str, list[list[int]]]:
    """The BM25 workloads' queries as word ids (see the module docstring)."""
    return {
        "light": text_queries(n_queries),
        "frequent": frequency_queries(n_queries, 3, 7, seed=11),
        "long": frequency_queries(n_queries, 15, 40, seed=12),
    }


def topics_frame(q_ids: list[list[int]]):
    """A topics frame (qid, query) of queries given as word ids."""
    import pandas as pd

    return pd.DataFrame(
        {"qid": [str(i) for i in range(len(q_ids))], "query": [" ".join(WORDS[q]) for q in q_ids]}
    )


def interleaved_seconds(fns, runs, cap=5.0, least=1.0):
    """Each system's median seconds per pass (``fns``: name -> callable), their passes taken in turn, one each per
    round, after a warm-up pass each (compilation, page cache); a system keeps taking passes until it has ``runs``
    of them adding up to at least ``least`` seconds (at most 1,000), or one pass took longer than ``cap``. Timed
    one after another, a system that ran during a burst of noise on this shared machine lost against the others
    (once, the pruned transformer measured below the exhaustive one); in turn, a burst falls on them all."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    active = list(fns)
    while active:
        for name in list(active):
            gc.collect()
            t = time.perf_counter()
            fns[name]()
            got = times[name]
            got.append(time.perf_counter() - t)
            if got[-1] > cap or len(got) >= 1000 or (len(got) >= runs and sum(got) >= least):
                active.remove(name)
    return {name: statistics.median(got) for name, got in times.items()}


def _time_cell(rows, cell, runs, n, **row):
    """Time a cell's systems in turn (``cell``: name -> (callable, threads, agreement)) and report each."""
    seconds = interleaved_seconds({name: fn for name, (fn, _, _) in cell.items()}, runs)
    for name, (_, threads, agreement) in cell.items():
        _row(rows, **row, system=name, threads=threads, qps=n / seconds[name], agreement=agreement)


def _row(rows, **row):
    rows.append(row)
    name = f"{row['workload']} k={row['k']} {row['system']}"
    extra = f"  agreement {row['agreement']:.3f}" if row.get("agreement", 1.0) < 1.0 else ""
    print(f"  {name:<60} {row['qps']:9.0f} q/s{extra}", flush=True)


def _ours(retr_factory, topics, qmat, k, exhaustive=True, lucene=True):
    """This project's systems on one workload and k (name -> (callable, threads, agreement), for
    :func:`_time_cell`) and the docno lists of their exact run."""
    base = retr_factory(k, 1, True)
    run = base.transform(topics)
    lists = [g.docno.tolist() for _, g in run.groupby("qid", sort=False)]
    if exhaustive:
        check = retr_factory(k, 1, False).transform(topics)
        assert run["docno"].tolist() == check["docno"].tolist(), "pruned and exhaustive runs differ"
        assert (run["score"].to_numpy() == check["score"].to_numpy()).all(), "pruned scores differ"
    systems = {
        "ours (transformer)": (base.transform, topics, 1),
        "ours 2 threads (transformer)": (retr_factory(k, 2, True).transform, topics, 2),
        "ours (arrays)": (base.search_matrix, qmat, 1),
        "ours 2 threads (arrays)": (retr_factory(k, 2, True).search_matrix, qmat, 2),
    }
    if lucene:  # the per-term bounds (Lucene scoring only): the same kernel without them, side by side
        systems["ours bounds=False (arrays)"] = (
            retr_factory(k, 1, True, bounds=False).search_matrix,
            qmat,
            1,
        )
    if exhaustive:
        systems["ours prune=False (transformer)"] = (retr_factory(k, 1, False).transform, topics, 1)
        systems["ours prune=False (arrays)"] = (retr_factory(k, 1, False).search_matrix, qmat, 1)
    # every row run once for correctness (none assumed): each equals the exact run, document for document
    docnos, qids = base.index.docnos, topics["qid"].tolist()
    expected = query_lists(run, qids, docnos)
    for name, (fn, arg, _) in systems.items():
        assert query_lists(fn(arg), qids, docnos) == expected, f"{name} and the exact run differ"
    cell = {
        name: (lambda fn=fn, arg=arg: fn(arg), threads, 1.0) for name, (fn, arg, threads) in systems.items()
    }  # 1.0: each was just checked equal to the exact run
    return cell, lists


def bench_text(n_docs, n_queries, runs, work, ks, rows, info):
    import bm25s
    import numba
    import tantivy
    from pyterrier_pisa import PisaIndex

    import pyterrier_sparse_eval as pse

    corpus = write_text_corpus(n_docs, work / f"corpus-{n_docs}.tsv")
    build = info.setdefault("build", {}).setdefault(n_docs, {})
    print(f"[{n_docs:,}] indexing ours and PISA (child processes)", flush=True)
    build["ours"] = index_in_child("ours-text", n_docs, work / f"ours-{n_docs}", corpus)["seconds"]
    build["PISA"] = index_in_child("pisa-text", n_docs, work / f"pisa-{n_docs}", corpus)["seconds"]

    print(f"[{n_docs:,}] indexing tantivy and bm25s", flush=True)
    schema = tantivy.SchemaBuilder().add_text_field("text", stored=False).build()
    tpath = work / f"tantivy-{n_docs}"
    shutil.rmtree(tpath, ignore_errors=True)
    tpath.mkdir()
    t = time.perf_counter()
    tindex = tantivy.Index(schema, path=str(tpath))
    writer = tindex.writer(heap_size=1 << 30, num_threads=1)
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            writer.add_document(tantivy.Document(text=line.split("\t", 1)[1]))
    writer.commit()
    writer.wait_merging_threads()
    build["tantivy"] = time.perf_counter() - t
    tindex.reload()
    searcher = tindex.searcher()

    corpus_ids = []
    for _, lengths, tokens in text_chunks(n_docs):
        corpus_ids += np.split(tokens, np.cumsum(lengths)[:-1])
    vocab = {f"w{i}": i for i in range(VOCAB)}
    t = time.perf_counter()
    model = bm25s.BM25(k1=K1, b=B, method="lucene", backend="numba")
    model.index(bm25s.tokenization.Tokenized(ids=corpus_ids, vocab=vocab), show_progress=False)
    build["bm25s"] = time.perf_counter() - t
    del corpus_ids
    gc.collect()

    index = pse.SparseIndex(work / f"ours-{n_docs}")
    t = time.perf_counter()
    impacts = index.lucene_impacts  # what the first heavy query on an opened index pays, once
    info.setdefault("impacts", {})[n_docs] = (time.perf_counter() - t, impacts[0].nbytes)
    bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
    pisa = PisaIndex(str(work / f"pisa-{n_docs}"), stemmer="none", stops="none")
    df, tid = index.df, index.term_ids
    for workload, q_ids in text_workloads(n_queries).items():
        topics = topics_frame(q_ids)
        postings = float(np.mean([sum(int(df[tid[f"w{t}"]]) for t in q if f"w{t}" in tid) for q in q_ids]))
        info.setdefault("postings", {})[(n_docs, workload)] = postings
        q_tok = bm25s.tokenization.Tokenized(ids=q_ids, vocab=vocab)
        t_queries = [tindex.parse_query(" ".join(WORDS[q]), ["text"]) for q in q_ids]

        def factory(k, threads, prune, bounds=True):
            return bm25.retriever(
                index, num_results=k, backend="numba", threads=threads, prune=prune, bounds=bounds
            )

        for k in ks:
            qmat = factory(k, 1, True).query_matrix(factory(k, 1, True)._query_weights(topics))
            cell, ref = _ours(factory, topics, qmat, k)
            for name, algo in (("PISA block-max WAND", "block_max_wand"), ("PISA MaxScore", "maxscore")):
                p = pisa.bm25(k1=K1, b=B, num_results=k, threads=1, query_algorithm=algo)
                got = [g.docno.tolist() for _, g in p.transform(topics).groupby("qid", sort=False)]
                cell[name] = (lambda p=p, topics=topics: p.transform(topics), 1, overlap(got, ref))

            def run_bm25s(k=k, q_tok=q_tok):
                numba.set_num_threads(1)
                try:
                    return model.retrieve(
                        q_tok, k=k, show_progress=False, n_threads=1, backend_selection="numba"
                    )
                finally:
                    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

            docs_b, _ = run_bm25s()
            cell["bm25s (numba, arrays)"] = (
                run_bm25s,
                1,
                overlap([[f"d{d}" for d in r] for r in docs_b], ref),
            )
            cell["tantivy (own BM25, addresses)"] = (
                lambda k=k, tq=t_queries: [searcher.search(q, k).hits for q in tq], 1, float("nan"),
            )  # fmt: skip
            _time_cell(rows, cell, runs, len(topics), docs=n_docs, workload=workload, k=k)


def build_learned(n_docs, work, build, reuse=False):
    """This project's, PISA's and bmp's indexes of the learned-sparse corpus in ``work`` (their paths returned, their
    build seconds put into ``build``); with ``reuse``, those already built there are kept (builds not timed)."""
    from bmp.pyterrier import BmpIndex
    from pyterrier_pisa import PisaIndex

    import pyterrier_sparse_eval as pse

    ours, pisa, bpath = work / f"ours-lsr-{n_docs}", work / f"pisa-lsr-{n_docs}", work / f"bmp-{n_docs}"
    if (
        reuse
        and pse.SparseIndex(ours).built()
        and PisaIndex(str(pisa)).built()
        and (bpath / "index.bmp").exists()
    ):
        print(f"[{n_docs:,}] learned sparse: reusing the indexes in {work} (builds not timed)", flush=True)
        return ours, pisa, bpath
    print(f"[{n_docs:,}] learned sparse: indexing ours, PISA and bmp", flush=True)
    build["ours (toks)"] = index_in_child("ours-toks", n_docs, ours)["seconds"]
    build["PISA (toks)"] = index_in_child("pisa-toks", n_docs, pisa)["seconds"]
    shutil.rmtree(bpath, ignore_errors=True)
    t = time.perf_counter()
    BmpIndex(bpath).indexer().index(iter_lsr_docs(n_docs))
    build["bmp (toks)"] = time.perf_counter() - t
    return ours, pisa, bpath


def bench_learned(n_docs, n_queries, runs, work, ks, rows, info, reuse=False):
    import pandas as pd
    from bmp.pyterrier import BmpIndex
    from pyterrier_pisa import PisaIndex

    import pyterrier_sparse_eval as pse

    build = info.setdefault("build", {}).setdefault(n_docs, {})
    ours, pisa_path, bpath = build_learned(n_docs, work, build, reuse)
    bmp = BmpIndex(bpath)

    queries = lsr_queries(n_queries)
    topics = pd.DataFrame(
        {
            "qid": [str(i) for i in range(n_queries)],
            "query_toks": [dict(zip(LSR_WORDS[t].tolist(), w.tolist())) for t, w in queries],
        }
    )
    index = pse.SparseIndex(ours)
    pisa = PisaIndex(str(pisa_path), stemmer="none")
    df, tid = index.df, index.term_ids
    info.setdefault("postings", {})[(n_docs, "learned")] = float(
        np.mean([sum(int(df[tid[t]]) for t in q if t in tid) for q in topics["query_toks"]])
    )

    def factory(k, threads, prune):
        return index.retriever(num_results=k, idf=False, backend="numba", threads=threads, prune=prune)

    for k in ks:
        qmat = factory(k, 1, True).query_matrix(topics["query_toks"].tolist())
        cell, ref = _ours(factory, topics, qmat, k, lucene=False)
        for name, retr in (
            (
                "PISA MaxScore (quantized)",
                pisa.quantized(num_results=k, threads=1, query_algorithm="maxscore"),
            ),
            ("PISA block-max WAND (quantized)", pisa.quantized(num_results=k, threads=1)),
            ("bmp (alpha=beta=1)", bmp.retriever(num_results=k)),
        ):
            got = [g.docno.tolist() for _, g in retr.transform(topics).groupby("qid", sort=False)]
            cell[name] = (lambda r=retr: r.transform(topics), 1, overlap(got, ref))
        _time_cell(rows, cell, runs, len(topics), docs=n_docs, workload="learned", k=k)


REAL = (("scifact", "irds:beir/scifact/test"), ("vaswani", "irds:vaswani"))


def shared_irds(work: Path) -> bool:
    """Point ir_datasets at a copy of ../shared/data's cache in ``work`` (it writes beside its archives) unless
    IR_DATASETS_HOME is set; whether the real collections are reachable."""
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "irds-cache"
    if "IR_DATASETS_HOME" not in os.environ and shared.is_dir():
        shutil.copytree(shared, work / "irds", dirs_exist_ok=True)
        os.environ["IR_DATASETS_HOME"] = str(work / "irds")
    return "IR_DATASETS_HOME" in os.environ


def real_indexes(work: Path, name: str, irds: str):
    """This project's BM25 index and PISA's of a real collection (built in ``work`` unless already there) and
    its topics."""
    import pyterrier as pt
    from pyterrier_pisa import PisaIndex

    import pyterrier_sparse_eval as pse

    ds = pt.get_dataset(irds)
    index = pse.SparseIndex(work / f"real-{name}")
    if not index.built():
        pse.BM25().indexer(index, verbose=False).index(pse.datasets.corpus_iter(ds))
    pisa = PisaIndex(str(work / f"real-pisa-{name}"), threads=1)
    if not pisa.built():
        pisa.index(pse.datasets.corpus_iter(ds))
    return index, pisa, ds.get_topics()


def bench_real(runs, work, ks, rows, info):
    import pyterrier_sparse_eval as pse

    for name, irds in REAL:
        index, pisa, topics = real_indexes(work, name, irds)
        bm25 = pse.BM25()
        df = index.df
        qm = bm25.retriever(index).query_matrix(bm25.retriever(index)._query_weights(topics))
        info.setdefault("postings", {})[(index.num_docs, name)] = float(
            np.add.reduceat(df[qm.indices], qm.indptr[:-1])[np.diff(qm.indptr) > 0].mean()
        )

        def factory(k, threads, prune, bounds=True, index=index, bm25=bm25):
            return bm25.retriever(
                index, num_results=k, backend="numba", threads=threads, prune=prune, bounds=bounds
            )

        for k in ks:
            qmat = factory(k, 1, True).query_matrix(factory(k, 1, True)._query_weights(topics))
            cell, ref = _ours(factory, topics, qmat, k)
            for label, algo in (("PISA block-max WAND", "block_max_wand"), ("PISA MaxScore", "maxscore")):
                p = pisa.bm25(num_results=k, threads=1, query_algorithm=algo)
                got = [g.docno.tolist() for _, g in p.transform(topics).groupby("qid", sort=False)]
                cell[f"{label} (own analyzer)"] = (
                    lambda p=p, topics=topics: p.transform(topics),
                    1,
                    overlap(got, ref),
                )
            _time_cell(rows, cell, runs, len(topics), docs=index.num_docs, workload=name, k=k)


PEERS = ("PISA", "bm25s", "tantivy", "bmp")


def report(rows, info, bandwidth, args) -> str:
    out = [
        f"Measured {today()} on {machine_facts()}; command: `{command_line()}`. q/s over the whole query set "
        f"(median of {args.runs} passes, more while they add up to under a second; the systems of a cell take their passes in turn); memory bandwidth (copy) {bandwidth:.1f} GB/s, so reading a posting "
        f"(8 bytes) costs at least {8 / bandwidth:.2f} ns. *peer* is the fastest peer (PISA, bm25s, tantivy, bmp) "
        "on that line, exact or not (each one's agreement is in the table below; tantivy's is not measured, its BM25 "
        "differs): a slower exact peer would only raise the ratio; ratios above 1 mean this project is faster. Agreement: share of this project's "
        "top k the peer also returns (PISA and bm25s use their own float arithmetic; PISA's analyzer differs "
        "on the real topics; bmp scores integer-scaled weights; tantivy's BM25 has other parameters).\n",
    ]
    keys = sorted({(r["docs"], r["workload"], r["k"]) for r in rows}, key=lambda x: (x[1], x[0], x[2]))
    out.append(
        "| workload | docs | k | postings/query | ours q/s | 2 threads | 2t/1t | arrays q/s | "
        "prune=False q/s | bounds on/off (arrays) | ns/posting (prune=False arrays) | fastest peer | peer q/s | "
        "ours/peer | arrays/peer |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for docs, workload, k in keys:
        here = {r["system"]: r for r in rows if (r["docs"], r["workload"], r["k"]) == (docs, workload, k)}

        def q(name, here=here):
            return here[name]["qps"] if name in here else float("nan")

        peers = [r for n, r in here.items() if n.split()[0] in PEERS]
        best = max(peers, key=lambda r: r["qps"]) if peers else None
        posting = info["postings"].get((docs, workload), float("nan"))
        ns = 1e9 / q("ours prune=False (arrays)") / posting if posting else float("nan")
        out.append(
            f"| {workload} | {docs:,} | {k} | {posting:,.0f}"
            + f" | {q('ours (transformer)'):,.0f} | {q('ours 2 threads (transformer)'):,.0f} | "
            f"{q('ours 2 threads (transformer)') / q('ours (transformer)'):.2f} | {q('ours (arrays)'):,.0f} | "
            f"{q('ours prune=False (transformer)'):,.0f} | "
            f"{q('ours (arrays)') / q('ours bounds=False (arrays)'):.2f} | {ns:.2f} | "
            + (
                f"{best['system']} | {best['qps']:,.0f} | {q('ours (transformer)') / best['qps']:.2f} | "
                f"{q('ours (arrays)') / best['qps']:.2f} |"
                if best
                else "– | – | – | – |"
            )
        )
    out.append("\nEvery system, q/s (agreement with this project's top k in brackets where below 1):\n")
    systems = sorted({r["system"] for r in rows})
    out.append("| workload | docs | k | " + " | ".join(systems) + " |")
    out.append("|---|---|---|" + "---|" * len(systems))
    for docs, workload, k in keys:
        here = {r["system"]: r for r in rows if (r["docs"], r["workload"], r["k"]) == (docs, workload, k)}
        cells = []
        for s in systems:
            r = here.get(s)
            if r is None:
                cells.append("–")
            else:
                a = r.get("agreement", 1.0)
                cells.append(f"{r['qps']:,.0f}" + (f" ({a:.3f})" if a == a and a < 0.9995 else ""))
        out.append(f"| {workload} | {docs:,} | {k} | " + " | ".join(cells) + " |")
    out.append("\nIndex build, seconds (1 thread):\n")
    for docs, b in sorted(info.get("build", {}).items()):
        out.append(f"- {docs:,} documents: " + ", ".join(f"{n} {s:.1f}" for n, s in b.items()))
    for docs, (seconds, nbytes) in sorted(info.get("impacts", {}).items()):
        out.append(
            f"- {docs:,} documents: precomputed Lucene contributions (computed once per opened index, on its first "
            f"heavy query) {seconds:.2f} s, {nbytes / 2**20:,.0f} MiB"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--docs",
        type=positive_int,
        nargs="*",
        default=[1_000_000, 3_000_000],
        help="none: the real topics only",
    )
    parser.add_argument("--queries", type=positive_int, default=300)
    parser.add_argument(
        "--learned-queries", type=positive_int, default=100, help="learned-sparse queries are 30x heavier"
    )
    parser.add_argument(
        "--learned-docs",
        type=positive_int,
        nargs="*",
        default=None,
        help="sizes for the learned-sparse workload (default: those of --docs; none: skip it)",
    )
    parser.add_argument(
        "--reuse-learned",
        action="store_true",
        help="keep the learned-sparse indexes already built in --work (their builds are then not timed)",
    )
    parser.add_argument("--runs", type=positive_int, default=3)
    parser.add_argument("--ks", type=positive_int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--quick", action="store_true", help="100k documents, 100 queries, 1 pass")
    parser.add_argument("--no-real", action="store_true", help="skip the SciFact and Vaswani topics")
    parser.add_argument(
        "--no-learned",
        action="store_true",
        help="skip the learned-sparse workload (its indexing is the longest)",
    )
    parser.add_argument("--work", type=Path, default=None, help="folder for corpora and indexes (kept)")
    parser.add_argument("--no-write", action="store_true", help="print the report, leave BENCHMARKS.md")
    args = parser.parse_args()
    if args.quick:
        args.docs, args.queries, args.runs = [100_000], 100, 1
    learned = set() if args.no_learned else set(args.docs if args.learned_docs is None else args.learned_docs)
    if not learned <= set(args.docs):
        parser.error("--learned-docs must be among the --docs sizes (the learned workload runs beside them)")
    if args.reuse_learned and args.work is None:
        parser.error("--reuse-learned keeps the indexes already in --work: pass --work FOLDER")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    work = args.work or Path(tempfile.mkdtemp(prefix="pse-workloads-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    info: dict = {}
    bandwidth = memory_bandwidth_gbs()
    if not args.no_real and shared_irds(work):
        bench_real(args.runs, work, args.ks, rows, info)
    for n in args.docs:
        bench_text(n, args.queries, args.runs, work, args.ks, rows, info)
        if n in learned:
            bench_learned(
                n,
                min(args.queries, args.learned_queries),
                args.runs,
                work,
                args.ks,
                rows,
                info,
                args.reuse_learned,
            )
    text = report(rows, info, bandwidth, args)
    print(text)
    if not args.no_write:
        write_section("workloads", text)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
