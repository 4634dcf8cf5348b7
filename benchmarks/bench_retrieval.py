"""Exact sparse retrieval and indexing, side by side with the peers, on synthetic corpora of 100k-3M documents.

    python benchmarks/bench_retrieval.py            # full: 100k, 1M, 3M documents (about 40 minutes here)
    python benchmarks/bench_retrieval.py --quick    # 100k documents only (under 5 minutes)

Peers, measured in the same run on the same machine: pyterrier-pisa (BM25 with 1 and 2 threads; its `toks`
indexer and quantized dot product for learned sparse), bm25s (numpy and numba backends), pyseismic-lsr
(learned sparse; approximate by design: its default setting and a near-exhaustive one, each with its recall
against the exact ranking). Every figure is the median of --runs runs; ratios compare medians of the same run.

Corpora: seeded Zipfian text (vocabulary 200k, exponent 1.07, Poisson(60) tokens per document, queries of 5
distinct terms drawn from frequency ranks 100-10,000) and SPLADE-like vectors (Poisson(120) non-zeros per
document over a 30,522-term vocabulary with Zipfian term choice, log-normal weights; 20-40 terms per query).
Indexing is measured in a child process each (time and peak RSS of that process); text indexers read the same
TSV file of the corpus, written once beforehand, as they would read an ir_datasets corpus.

Writes the "retrieval" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import command_line, machine_facts, positive_int, size_list, today, write_section  # noqa: E402

VOCAB, ZIPF_S, MEAN_LEN = 200_000, 1.07, 60
LSR_VOCAB, LSR_DOC_NNZ = 30_522, 120
K1, B = 0.9, 0.4
QUERY_RANKS = (100, 10_000)  # mid-frequency terms: neither stopword-like nor hapax


# --------------------------------------------------------------------------------------------------------------
# Corpora
# --------------------------------------------------------------------------------------------------------------


def zipf_cdf(vocab: int, s: float) -> np.ndarray:
    p = np.arange(1, vocab + 1, dtype=np.float64) ** -s
    return np.cumsum(p) / p.sum()


CHUNK = 20_000


def text_chunks(n_docs: int, seed: int = 0):
    """Token ids (frequency rank - 1) and lengths, chunk by chunk (seeded per chunk: bounded memory)."""
    cdf = zipf_cdf(VOCAB, ZIPF_S)
    for c, start in enumerate(range(0, n_docs, CHUNK)):
        rng = np.random.default_rng([seed, c])
        lengths = np.maximum(1, rng.poisson(MEAN_LEN, min(CHUNK, n_docs - start)))
        yield start, lengths, np.searchsorted(cdf, rng.random(int(lengths.sum()))).astype(np.int32)


def text_queries(n: int, seed: int = 1) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [
        sorted(rng.choice(np.arange(QUERY_RANKS[0], QUERY_RANKS[1]), 5, replace=False).tolist())
        for _ in range(n)
    ]


WORDS = np.array([f"w{i}" for i in range(VOCAB)], dtype=object)


def iter_text_docs(n_docs: int):
    for start, lengths, tokens in text_chunks(n_docs):
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        for i in range(len(lengths)):
            yield {"docno": f"d{start + i}", "text": " ".join(WORDS[tokens[offsets[i] : offsets[i + 1]]])}


def write_text_corpus(n_docs: int, path: Path) -> Path:
    """The text corpus as a TSV file (docno, text), written once and read by every indexer: generating the
    text costs more than reading it, and the generator's cost is no part of any system's indexing."""
    if not path.exists():
        tmp = path.with_suffix(".partial")
        with open(tmp, "w", encoding="utf-8") as f:
            for d in iter_text_docs(n_docs):
                f.write(f"{d['docno']}\t{d['text']}\n")
        tmp.rename(path)
    return path


def iter_tsv(path: Path):
    """Documents as an ir_datasets corpus iterator gives them: one dict per line of the corpus file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            docno, text = line.rstrip("\n").split("\t", 1)
            yield {"docno": docno, "text": text}


def lsr_chunks(n_docs: int, seed: int = 2):
    """SPLADE-like vectors chunk by chunk: (start, term ids, weights, offsets), unique terms per document."""
    cdf = zipf_cdf(LSR_VOCAB, 0.9)
    for c, start in enumerate(range(0, n_docs, CHUNK)):
        rng = np.random.default_rng([seed, c])
        m = min(CHUNK, n_docs - start)
        nnz = np.maximum(5, rng.poisson(LSR_DOC_NNZ, m))
        raw = np.searchsorted(cdf, rng.random(int(nnz.sum()) * 2)).astype(np.int64)
        doc_of = np.repeat(np.arange(m), nnz * 2)
        uniq = np.unique(doc_of * LSR_VOCAB + raw)
        docs_u, terms_u = uniq // LSR_VOCAB, (uniq % LSR_VOCAB).astype(np.int32)
        first = np.concatenate([[0], np.cumsum(np.bincount(docs_u, minlength=m))])
        keep = np.arange(len(uniq)) - first[docs_u] < nnz[docs_u]
        terms, docs_k = terms_u[keep], docs_u[keep]
        weights = rng.lognormal(-0.5, 0.6, len(terms)).astype(np.float32)
        yield start, terms, weights, np.concatenate([[0], np.cumsum(np.bincount(docs_k, minlength=m))])


def lsr_queries(n: int, seed: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    cdf = zipf_cdf(LSR_VOCAB, 0.9)
    out = []
    for _ in range(n):
        m = int(rng.integers(20, 41))
        terms = np.unique(np.searchsorted(cdf, rng.random(m * 3)).astype(np.int32))[:m]
        out.append((terms, rng.lognormal(0.0, 0.6, len(terms)).astype(np.float32)))
    return out


LSR_WORDS = np.array([f"t{i}" for i in range(LSR_VOCAB)], dtype=object)


def iter_lsr_docs(n_docs: int):
    for start, terms, weights, offsets in lsr_chunks(n_docs):
        for i in range(len(offsets) - 1):
            a, b = offsets[i], offsets[i + 1]
            yield {
                "docno": f"d{start + i}",
                "toks": dict(zip(LSR_WORDS[terms[a:b]].tolist(), weights[a:b].tolist())),
            }


# --------------------------------------------------------------------------------------------------------------
# Indexing, each in a child process: python bench_retrieval.py _index SYSTEM N PATH CORPUS
# --------------------------------------------------------------------------------------------------------------


def _child_index(system: str, n_docs: int, path: str, corpus: str) -> dict:
    # imports and the corpus reader are set up before the clock starts (the first read is inside it)
    from pyterrier_pisa import PisaIndex

    import pyterrier_sparse_eval as pse

    docs = iter_tsv(Path(corpus)) if system in ("ours-text", "pisa-text") else iter_lsr_docs(n_docs)
    base = _vm_hwm_mb()
    t = time.perf_counter()
    if system == "ours-text":
        pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None).indexer(
            pse.SparseIndex(path), verbose=False
        ).index(docs)
    elif system == "ours-toks":
        pse.SparseIndex(path).indexer(verbose=False).index(docs)
    elif system == "pisa-text":
        PisaIndex(path, stemmer="none", stops="none", threads=1).indexer().index(docs)
    elif system == "pisa-toks":
        PisaIndex(path, stemmer="none", threads=1).toks_indexer().index(docs)
    seconds = time.perf_counter() - t
    peak = _vm_hwm_mb()
    size = sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
    return {"seconds": seconds, "peak_rss_mb": peak, "corpus_rss_mb": base, "disk_mb": size / 2**20}


def _vm_hwm_mb() -> float:
    """Peak resident memory of this process (VmHWM; unlike ru_maxrss it is not inherited from the parent)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def index_in_child(system: str, n_docs: int, path: Path, corpus: Path | None = None) -> dict:
    shutil.rmtree(path, ignore_errors=True)
    done = subprocess.run(
        [sys.executable, __file__, "_index", system, str(n_docs), str(path), str(corpus or "")],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"indexing {system} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------------------------------
# Timing helpers
# --------------------------------------------------------------------------------------------------------------


def median_seconds(fn, runs: int, cap: float = 5.0, least: float = 1.0) -> float:
    """Median over ``runs`` runs, and more while they add up to less than ``least`` seconds (passes of a few
    milliseconds, such as the real topics', are otherwise at the mercy of one interruption; at most 1,000 runs); a
    system slower than ``cap`` seconds per run is run once."""
    times: list[float] = []
    while len(times) < runs or (sum(times) < least and len(times) < 1000):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if times[-1] > cap:
            break
    return statistics.median(times)


def latencies(fn_one, items) -> tuple[float, float]:
    out = []
    for item in items:
        t = time.perf_counter()
        fn_one(item)
        out.append(time.perf_counter() - t)
    return float(np.percentile(out, 50) * 1e3), float(np.percentile(out, 99) * 1e3)


def memory_bandwidth_gbs() -> float:
    a = np.ones(2**27, dtype=np.float32)  # 512 MB
    b = np.empty_like(a)
    t = median_seconds(lambda: np.copyto(b, a), 5)
    return 2 * a.nbytes / t / 1e9  # read + write


def query_lists(out, qids: list[str], docnos) -> list[list[str]]:
    """Each query's docnos, best first, in the order of ``qids``: from a run frame, or from ``search_matrix``'s
    flat arrays (query row, doc id, score, rank; row i is ``qids[i]``)."""
    if isinstance(out, tuple):
        lists: list[list[str]] = [[] for _ in qids]
        for row, doc in zip(out[0].tolist(), out[1].tolist()):
            lists[row].append(str(docnos[doc]))
        return lists
    by_qid = {qid: group.docno.tolist() for qid, group in out.groupby("qid", sort=False)}
    return [by_qid.get(qid, []) for qid in qids]


def overlap(found: list[list], reference: list[list]) -> float:
    """Mean share of the reference top k that ``found`` also returns (recall against the exact ranking)."""
    return float(np.mean([len(set(x) & set(y)) / max(1, len(y)) for x, y in zip(found, reference)]))


# --------------------------------------------------------------------------------------------------------------
# BM25 over text
# --------------------------------------------------------------------------------------------------------------


def bench_bm25(n_docs: int, n_queries: int, runs: int, work: Path, ks: list[int]) -> tuple[list[dict], dict]:
    import pandas as pd

    import pyterrier_sparse_eval as pse

    rows: list[dict] = []
    idx_rows = {}
    ours_path, pisa_path = work / f"ours-{n_docs}", work / f"pisa-{n_docs}"
    corpus = write_text_corpus(n_docs, work / f"corpus-{n_docs}.tsv")
    print(f"[{n_docs:,} docs] indexing ours from text", flush=True)
    idx_rows["ours"] = index_in_child("ours-text", n_docs, ours_path, corpus)
    print(f"[{n_docs:,} docs] indexing PISA from text", flush=True)
    idx_rows["pisa"] = index_in_child("pisa-text", n_docs, pisa_path, corpus)

    q_ids = text_queries(n_queries)
    q_text = [" ".join(WORDS[q]) for q in q_ids]
    topics = pd.DataFrame({"qid": [str(i) for i in range(n_queries)], "query": q_text})

    print(f"[{n_docs:,} docs] indexing bm25s", flush=True)
    import bm25s

    corpus_ids = []
    for _, lengths, tokens in text_chunks(n_docs):
        # arrays: same index as lists, far less memory
        corpus_ids += np.split(tokens, np.cumsum(lengths)[:-1])
    vocab = {f"w{i}": i for i in range(VOCAB)}
    t = time.perf_counter()
    bm25s_models = {}
    for backend in ("numpy", "numba") if n_docs <= 100_000 else ("numba",):
        model = bm25s.BM25(k1=K1, b=B, method="lucene", backend=backend)
        model.index(bm25s.tokenization.Tokenized(ids=corpus_ids, vocab=vocab), show_progress=False)
        bm25s_models[backend] = model
    idx_rows["bm25s"] = {"seconds": (time.perf_counter() - t) / len(bm25s_models)}
    del corpus_ids
    gc.collect()

    index = pse.SparseIndex(ours_path)
    bm25 = pse.BM25(k1=K1, b=B, stemmer=None, stopwords=None)
    from pyterrier_pisa import PisaIndex

    pisa = PisaIndex(str(pisa_path), stemmer="none", stops="none")
    q_tok = bm25s.tokenization.Tokenized(ids=q_ids, vocab=vocab)
    import numba

    df = index.df
    tid = index.term_ids
    touched = np.array([sum(int(df[tid[f"w{t}"]]) for t in q if f"w{t}" in tid) for q in q_ids])

    reference: dict[int, list[list[str]]] = {}
    for k in ks:
        systems = {}
        for threads in (1, 2):
            retr = bm25.retriever(index, num_results=k, backend="numba", threads=threads)
            retr.transform(topics.head(5))  # compile / warm
            systems[f"ours numba {threads}t"] = (lambda r=retr: r.transform(topics), threads)
        qmat = bm25.retriever(index, num_results=k).query_matrix(
            bm25.retriever(index, num_results=k)._query_weights(topics)
        )
        for threads in (1, 2):
            retr = bm25.retriever(index, num_results=k, backend="numba", threads=threads)
            systems[f"ours numba {threads}t (arrays)"] = (
                lambda r=retr, qm=qmat: r.search_matrix(qm),
                threads,
            )
        retr_scipy = bm25.retriever(index, num_results=k, backend="scipy")
        systems["ours scipy 1t"] = (lambda r=retr_scipy: r.transform(topics), 1)
        for threads in (1, 2):
            p = pisa.bm25(k1=K1, b=B, num_results=k, threads=threads)
            p.transform(topics.head(5))
            systems[f"PISA {threads}t"] = (lambda p=p: p.transform(topics), threads)
        for backend in ("numpy", "numba") if n_docs <= 100_000 else ("numba",):  # numpy: ~70x slower
            model = bm25s_models[backend]

            def run_bm25s(model=model, backend=backend, k=k):
                numba.set_num_threads(1)
                try:
                    return model.retrieve(
                        q_tok, k=k, show_progress=False, n_threads=1, backend_selection=backend
                    )
                finally:
                    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

            run_bm25s()
            systems[f"bm25s {backend} 1t"] = (run_bm25s, 1)
        # correctness, every row measured (none assumed): each of ours equals ours numba 1t exactly, run for run;
        # a peer's agreement is the overlap of its top k with ours
        docnos, qids = index.docnos, topics["qid"].tolist()
        ours_lists = query_lists(systems["ours numba 1t"][0](), qids, docnos)
        agreement = {}
        for name, (fn, _) in systems.items():
            out = fn()
            if name.startswith("bm25s"):
                lists = [[f"d{d}" for d in row] for row in out[0]]
            else:
                lists = query_lists(out, qids, docnos)
            agreement[name] = overlap(lists, ours_lists)
            if name.startswith("ours"):
                assert lists == ours_lists, f"{name} and ours numba 1t disagree"
            del out, lists
        reference[k] = ours_lists
        for name, (fn, threads) in systems.items():
            seconds = median_seconds(fn, runs)
            rows.append(
                {
                    "docs": n_docs,
                    "k": k,
                    "system": name,
                    "threads": threads,
                    "qps": n_queries / seconds,
                    "ms_per_query": seconds / n_queries * 1e3,
                    "agreement": agreement[name],
                }
            )
            print(f"  k={k:<5} {name:<26} {n_queries / seconds:9.0f} q/s", flush=True)
        if k == max(ks):
            lat = {}
            single = [qmat[i : i + 1] for i in range(min(100, n_queries))]
            r1 = bm25.retriever(index, num_results=k, backend="numba")
            lat["ours numba 1t (arrays)"] = latencies(r1.search_matrix, single)
            p1 = pisa.bm25(k1=K1, b=B, num_results=k, threads=1)
            lat["PISA 1t"] = latencies(
                lambda i, p1=p1: p1.transform(topics.iloc[i : i + 1]), range(len(single))
            )
            m = bm25s_models["numba"]
            lat["bm25s numba 1t"] = latencies(
                lambda i, m=m, k=k: m.retrieve(
                    bm25s.tokenization.Tokenized(ids=[q_ids[i]], vocab=vocab),
                    k=k,
                    show_progress=False,
                    n_threads=1,
                    backend_selection="numba",
                ),
                range(len(single)),
            )
            for row in rows:
                if row["docs"] == n_docs and row["k"] == k and row["system"] in lat:
                    row["p50_ms"], row["p99_ms"] = lat[row["system"]]
    info = {"index": idx_rows, "postings_per_query": float(touched.mean())}
    return rows, info


# --------------------------------------------------------------------------------------------------------------
# Learned sparse
# --------------------------------------------------------------------------------------------------------------


def bench_lsr(
    n_docs: int, n_queries: int, runs: int, work: Path, k: int, quick: bool
) -> tuple[list[dict], dict]:
    import pandas as pd
    import seismic

    import pyterrier_sparse_eval as pse

    rows = []
    ours_path, pisa_path = work / f"ours-lsr-{n_docs}", work / f"pisa-lsr-{n_docs}"
    print(f"[{n_docs:,} docs] learned sparse: indexing ours and PISA from toks", flush=True)
    idx = {
        "ours": index_in_child("ours-toks", n_docs, ours_path),
        "pisa": index_in_child("pisa-toks", n_docs, pisa_path),
    }
    queries = lsr_queries(n_queries)
    topics = pd.DataFrame(
        {
            "qid": [str(i) for i in range(n_queries)],
            "query_toks": [dict(zip(LSR_WORDS[t].tolist(), w.tolist())) for t, w in queries],
        }
    )
    index = pse.SparseIndex(ours_path)
    from pyterrier_pisa import PisaIndex

    pisa = PisaIndex(str(pisa_path), stemmer="none")
    systems = {}
    for threads in (1, 2):
        r = index.retriever(num_results=k, idf=False, backend="numba", threads=threads)
        r.transform(topics.head(3))
        systems[f"ours numba {threads}t"] = (lambda r=r: r.transform(topics), threads)
    p = pisa.quantized(num_results=k, threads=1)
    p.transform(topics.head(3))
    systems["PISA quantized 1t"] = (lambda: p.transform(topics), 1)

    print(f"[{n_docs:,} docs] learned sparse: building seismic", flush=True)
    string_type = seismic.get_seismic_string()
    dataset = seismic.SeismicDataset()
    words = LSR_WORDS.astype(string_type)
    for start, terms, weights, offsets in lsr_chunks(n_docs):
        for i in range(len(offsets) - 1):
            a, b = offsets[i], offsets[i + 1]
            dataset.add_document(f"d{start + i}", words[terms[a:b]], weights[a:b])
    t = time.perf_counter()
    seis_default = seismic.SeismicIndex.build_from_dataset(dataset, num_threads=1)  # build time: 1 thread
    idx["seismic"] = {"seconds": time.perf_counter() - t}
    # the near-exhaustive setting (no pruning, full summaries) is only built where it takes minutes, not hours
    seis_exhaustive = (
        None
        if quick or n_docs > 200_000
        else seismic.SeismicIndex.build_from_dataset(
            dataset, n_postings=n_docs, summary_energy=1.0, num_threads=2
        )
    )
    del dataset
    q_ids = np.array([str(i) for i in range(n_queries)], dtype=string_type)
    q_comp = [words[t] for t, _ in queries]
    q_vals = [w for _, w in queries]
    seismic_settings = [("seismic default 1t", seis_default, 10, 0.7)]
    if seis_exhaustive is not None:
        seismic_settings.append(("seismic near-exhaustive 1t", seis_exhaustive, 64, 1.0))
    for name, sidx, cut, heap in seismic_settings:
        systems[name] = (
            lambda s=sidx, c=cut, h=heap: s.batch_search(
                q_ids, q_comp, q_vals, k=k, query_cut=c, heap_factor=h, num_threads=1
            ),
            1,
        )
    # every row measured against the exact ranking (ours numba 1t), ours with 2 threads too
    qids = topics["qid"].tolist()
    exact_lists = query_lists(systems["ours numba 1t"][0](), qids, index.docnos)
    recall = {}
    for name, (fn, _) in systems.items():
        if name.startswith("seismic"):
            by_qid = {r[0][0]: [d for _, _, d in r] for r in fn() if r}
            lists = [by_qid.get(qid, []) for qid in qids]
        else:
            lists = query_lists(fn(), qids, index.docnos)
        recall[name] = overlap(lists, exact_lists)
        if name.startswith("ours"):
            assert lists == exact_lists, f"{name} and ours numba 1t disagree"
    for name, (fn, threads) in systems.items():
        seconds = median_seconds(fn, runs)
        rows.append(
            {
                "docs": n_docs,
                "k": k,
                "system": name,
                "threads": threads,
                "qps": n_queries / seconds,
                "ms_per_query": seconds / n_queries * 1e3,
                "agreement": recall[name],
            }
        )
        print(
            f"  k={k:<5} {name:<28} {n_queries / seconds:9.0f} q/s  recall vs exact {recall[name]:.3f}",
            flush=True,
        )
    return rows, {"index": idx}


# --------------------------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------------------------


def report(bm25_rows, bm25_info, lsr_rows, lsr_info, bandwidth, args) -> str:
    lines = [
        f"## Exact sparse retrieval and indexing against the peers ({today()})",
        "",
        f"Command: `{command_line()}` ({today()}; {machine_facts()}; memory bandwidth "
        f"{bandwidth:.1f} GB/s by a 512 MB copy). Medians of {args.runs} runs; q/s over {args.queries} queries "
        "in one batch; agreement = mean overlap of a peer's top k with ours (1.000 for exact peers that score "
        "the same way; PISA's BM25 differs slightly in its formula).",
        "",
    ]
    lines += [
        "### BM25 retrieval (synthetic Zipf corpus)",
        "",
        "| docs | k | system | q/s | ms/query | p50 / p99 ms (one query at a time) | agreement |",
        "|---:|---:|---|---:|---:|---|---:|",
    ]
    for r in bm25_rows:
        lat = f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f}" if "p50_ms" in r else ""
        lines.append(
            f"| {r['docs']:,} | {r['k']} | {r['system']} | {r['qps']:,.0f} | {r['ms_per_query']:.3f} | {lat} | "
            f"{r['agreement']:.3f} |"
        )
    lines += [
        "",
        "Ratios, like for like (same k, corpus and queries): ours as a PyTerrier transformer (DataFrame in "
        "and out) against PISA's transformer; ours on arrays (`retriever.search_matrix(query_matrix)`) against "
        "bm25s' `retrieve` on token ids (its faster backend). ns/posting and 2t/1t from the array path.",
        "",
        "| docs | k | ours / PISA (1t) | ours / bm25s (1t) | ours 2t / 1t | postings/query | ns/posting "
        "| bandwidth floor ns/posting |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n_docs, info in bm25_info.items():
        for k in sorted({r["k"] for r in bm25_rows if r["docs"] == n_docs}):
            sel = {r["system"]: r for r in bm25_rows if r["docs"] == n_docs and r["k"] == k}
            arrays = sel["ours numba 1t (arrays)"]
            bm25s_best = max(sel[n]["qps"] for n in ("bm25s numpy 1t", "bm25s numba 1t") if n in sel)
            ppq = info["postings_per_query"]
            ns = arrays["ms_per_query"] * 1e6 / ppq
            floor = 8 / bandwidth  # 8 bytes per posting (doc id + weight) streamed once
            lines.append(
                f"| {n_docs:,} | {k} | {sel['ours numba 1t']['qps'] / sel['PISA 1t']['qps']:.2f}x | "
                f"{arrays['qps'] / bm25s_best:.2f}x | "
                f"{sel['ours numba 2t (arrays)']['qps'] / arrays['qps']:.2f}x | {ppq:,.0f} | {ns:.2f} | "
                f"{floor:.2f} |"
            )
    lines += [
        "",
        "### Indexing from text (child process each: peak RSS of that process, and its RSS before indexing started)",
        "",
        "| docs | system | seconds | docs/s | peak RSS MB | RSS before indexing MB | disk MB |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for n_docs, info in bm25_info.items():
        for name, r in info["index"].items():
            if "peak_rss_mb" in r:
                lines.append(
                    f"| {n_docs:,} | {name} | {r['seconds']:.1f} | {n_docs / r['seconds']:,.0f} | "
                    f"{r['peak_rss_mb']:.0f} | {r['corpus_rss_mb']:.0f} | {r['disk_mb']:.0f} |"
                )
            else:
                lines.append(
                    f"| {n_docs:,} | {name} (in memory, token ids given) | {r['seconds']:.1f} | "
                    f"{n_docs / r['seconds']:,.0f} | | | |"
                )
    for n_docs, info in bm25_info.items():
        ours, pisa = info["index"]["ours"], info["index"]["pisa"]
        lines.append("")
        lines.append(
            f"{n_docs:,} docs from text: ours / PISA (1 thread) throughput "
            f"{pisa['seconds'] / ours['seconds']:.2f}x; peak RSS ours / PISA "
            f"{ours['peak_rss_mb'] / pisa['peak_rss_mb']:.2f}."
        )
    if lsr_rows:
        lines += [
            "",
            "### Learned sparse (SPLADE-like vectors), k = 1000 (at most 200 queries)",
            "",
            "| docs | system | q/s | ms/query | recall vs exact |",
            "|---:|---|---:|---:|---:|",
        ]
        for r in lsr_rows:
            lines.append(
                f"| {r['docs']:,} | {r['system']} | {r['qps']:,.0f} | {r['ms_per_query']:.3f} | "
                f"{r['agreement']:.3f} |"
            )
        for n_docs, info in lsr_info.items():
            sel = {r["system"]: r for r in lsr_rows if r["docs"] == n_docs}
            lines.append("")
            lines.append(
                f"{n_docs:,} docs: ours 1t / PISA quantized 1t = "
                f"{sel['ours numba 1t']['qps'] / sel['PISA quantized 1t']['qps']:.2f}x; indexing from toks: "
                + "; ".join(
                    f"{n} {r['seconds']:.1f} s"
                    + (f", peak RSS {r['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in r else "")
                    for n, r in info["index"].items()
                )
            )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_index":
        print(json.dumps(_child_index(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="100k documents, fewer queries and runs (< 5 min)"
    )
    parser.add_argument(
        "--sizes",
        type=size_list,
        default=None,
        help="comma-separated corpus sizes (default 100000,1000000,3000000)",
    )
    parser.add_argument("--queries", type=positive_int, default=None)
    parser.add_argument("--runs", type=positive_int, default=None)
    parser.add_argument(
        "--lsr-size",
        type=positive_int,
        default=None,
        help="learned-sparse corpus size (default 1M; quick 50k)",
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print the report instead of writing BENCHMARKS.md"
    )
    parser.add_argument("--no-lsr", action="store_true", help="skip the learned-sparse rows")
    parser.add_argument(
        "--section", default="retrieval", help="BENCHMARKS.md section to write (default retrieval)"
    )
    args = parser.parse_args()
    sizes = args.sizes or ([100_000] if args.quick else [100_000, 1_000_000, 3_000_000])
    args.queries = args.queries or (200 if args.quick else 1000)
    args.runs = args.runs or (3 if args.quick else 5)
    lsr_size = args.lsr_size or (50_000 if args.quick else 1_000_000)
    work = Path(tempfile.mkdtemp(prefix="pse-bench-"))
    try:
        bandwidth = memory_bandwidth_gbs()
        bm25_rows, bm25_info = [], {}
        for n in sizes:
            rows, info = bench_bm25(n, args.queries, args.runs, work, [10, 100, 1000])
            bm25_rows += rows
            bm25_info[n] = info
            for p in work.iterdir():
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink()
        lsr_rows, lsr_info = [], {}
        # PISA's quantized retrieval takes ~0.5 s per query at 1M: at most 200 queries here
        if not args.no_lsr:
            lsr_rows, info = bench_lsr(lsr_size, min(args.queries, 200), args.runs, work, 1000, args.quick)
            lsr_info = {lsr_size: info}
        text = report(bm25_rows, bm25_info, lsr_rows, lsr_info, bandwidth, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(text)
    if not args.no_write:
        write_section(args.section, text)
        print(f"Wrote the {args.section} section of BENCHMARKS.md")


if __name__ == "__main__":
    main()
