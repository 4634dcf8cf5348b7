"""The parts of SPLADE that need no model: torch imported when first used, SPLADE-max pooling, and a model's
arguments and an encoding's, checked where they are given (not mid-build, not inside torch) and refused naming
the fix."""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._build import check_integer, python_number

__all__ = ["INSTALL_HINT", "check_encode", "check_model", "check_options", "splade_max"]

INSTALL_HINT = (
    "SPLADE needs torch and transformers: pip install 'pyterrier-sparse-eval[splade]' "
    "(install the torch build for your machine first, e.g. pip install torch)."
)


def _lazy_torch() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError(f"{INSTALL_HINT} ({e})") from None
    return torch, transformers


def splade_max(logits: Any, attention_mask: Any) -> Any:
    """SPLADE-max pooling: w_j = max over non-padding positions i of log(1 + relu(logit_ij)).

    As the reference SPLADE implementation (Formal et al., "SPLADE v2", 2021), where padding positions are
    masked out and special tokens ([CLS], [SEP]) take part. Since log(1 + relu(x)) is non-decreasing, the max is
    taken over the raw logits first (padding set to -inf, in place) and the activation applied to the pooled (batch
    x vocab) matrix only, in float32 (half-precision logits are not copied whole): the same values, at a fraction
    of the memory traffic. Left padding overwrites ``logits``.
    """
    torch, _ = _lazy_torch()
    lengths = attention_mask.sum(dim=1)
    positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    if bool(((positions[None, :] < lengths[:, None]) == attention_mask.bool()).all()):
        # right padding (BERT-style tokenizers): each text's real positions are a prefix, so the max can read
        # them in place, with no extra pass over the (batch x length x vocab) logits
        pooled = torch.stack([logits[i, : int(n)].amax(dim=0) for i, n in enumerate(lengths.tolist())])
    else:
        logits.masked_fill_(attention_mask.unsqueeze(-1) == 0, float("-inf"))
        pooled = torch.amax(logits, dim=1)
    return torch.log1p(torch.relu(pooled.float()))  # the activation in float32, on the pooled matrix only


def check_model(model: Any) -> str:
    """The model's hub id or folder as a str; anything else (None had been read as the hub id 'None', a minute of
    hub retries before an error) refused."""
    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise TypeError(
            f"model must be a Hugging Face hub id or a local folder (a str or a path), got {model!r}: e.g. "
            "pse.Splade('naver/splade-cocondenser-ensembledistil') or pse.Splade('/models/splade')."
        )
    return os.fspath(model)


def check_options(
    batch_size: Any,
    query_max_length: Any,
    doc_max_length: Any,
    doc_top_k: Any,
    doc_threshold: Any,
    fp16: Any,
) -> tuple[Any, ...]:
    """The options of :class:`~pyterrier_sparse_eval.Splade`, checked and as Python numbers."""
    check_integer("batch_size", batch_size)
    for name, length in (("query_max_length", query_max_length), ("doc_max_length", doc_max_length)):
        check_integer(name, length, 3, " ([CLS], a token and [SEP])")
    if doc_top_k is not None:
        check_integer("doc_top_k", doc_top_k, why=" (or None: every weight)")
    # a str from a config file, a bool...: refused here, not mid-build
    if not isinstance(doc_threshold, numbers.Real) or isinstance(doc_threshold, bool):
        raise TypeError(f"doc_threshold must be a number (0 keeps every non-zero weight): {doc_threshold!r}.")
    if not isinstance(fp16, (bool, np.bool_, type(None))):  # "no" would be true
        raise TypeError(f"fp16 must be True, False or None (on for CUDA only): {fp16!r}.")
    if not float(doc_threshold) >= 0:  # below 0, every vocabulary entry (weight 0) would be a term
        raise ValueError(f"doc_threshold must be >= 0 (0 keeps every non-zero weight): {doc_threshold}.")
    return tuple(
        map(python_number, (batch_size, query_max_length, doc_max_length, doc_top_k, doc_threshold, fp16))
    )


def check_encode(texts: Sequence[Any], max_length: Any, top_k: Any, limit: int) -> None:
    """:meth:`Splade.encode`'s arguments: a sequence of texts (a str had been encoded one character a text), a
    ``max_length`` within the model's ``limit`` positions (beyond, torch's own shape error), an integer ``top_k``."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts must be a list of texts, not one {type(texts).__name__}: give [text].")
    check_integer("max_length", max_length, 3, " ([CLS], a token and [SEP])")
    if max_length > limit:
        raise ValueError(
            f"max_length={max_length} is beyond the model's {limit} positions: give at most {limit}."
        )
    if top_k is not None:
        check_integer("top_k", top_k, why=" (or None: every weight)")


def check_vocabulary(model: str, tokens: int, rows: int, inputs: int) -> None:
    """Refuse a tokenizer that is not the model's: far fewer tokens than the model's output rows (transformers
    builds one of the special tokens alone for a folder without one; or another model's), or more tokens than
    its input embeddings (tokens added without ``resize_token_embeddings``: a text holding one stops the encoding)."""
    # transformers' stand-in for a missing tokenizer holds its special tokens alone
    if tokens < rows // 2 and tokens <= 16:
        raise ValueError(
            f"{model!r} has no tokenizer of its own: {tokens} tokens for the model's {rows} (every "
            "word would be unknown). Save the tokenizer beside the weights, tokenizer.save_pretrained(folder)."
        )
    if tokens < rows // 2:
        raise ValueError(
            f"{model!r}'s tokenizer has {tokens} tokens for the model's {rows} output rows: it is not the "
            "model's (every word it lacks would be unknown). Save the tokenizer the model was trained with."
        )
    if tokens > min(rows, inputs):
        raise ValueError(
            f"{model!r}'s tokenizer has {tokens} tokens, the model {min(rows, inputs)} embeddings: the tokens beyond "
            "(added to the tokenizer, not the model) have no weights. Resize the model, "
            "model.resize_token_embeddings(len(tokenizer)), and save both."
        )


def term_names(tokens: list[str | None]) -> list[str]:
    """The term of each output row: its token, or ``[idN]`` for a row without one (a model's padded vocabulary, an
    id a tokenizer's vocabulary skips) or whose token an earlier row already names."""
    seen: set[str] = set()
    names = []
    for i, token in enumerate(tokens):
        name = token if isinstance(token, str) and token not in seen else f"[id{i}]"
        seen.add(name)
        names.append(name)
    return names


def position_offset(embeddings: Any) -> int:
    """The positions a model's embeddings skip: RoBERTa's family (XLM-R, MPNet, Longformer, ...) numbers positions
    from its padding id + 1, so 514 position embeddings hold 512 tokens; 0 for the others (BERT's)."""
    import sys

    module = sys.modules.get(type(embeddings).__module__)
    counts_from_padding = hasattr(embeddings, "create_position_ids_from_input_ids") or hasattr(
        module, "create_position_ids_from_input_ids"
    )
    padding = getattr(embeddings, "padding_idx", None)
    return padding + 1 if counts_from_padding and isinstance(padding, int) else 0
