"""SPLADE: learned sparse vectors from any Hugging Face masked-LM checkpoint. torch and transformers are imported
only when a model is first used (``pip install pyterrier-sparse-eval[splade]``); importing this module costs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyterrier as pt

from ._build import SparseIndexer, batch_docnos, check_engine
from ._fields import doc_texts, resolve_fields, warn_empty
from ._format import refuse_path
from ._index import SparseIndex, refuse_ray_options
from ._model_files import looks_like_path, model_fingerprint
from ._ray import Encoded
from ._records import FieldError, _as_text, column_texts, validate_queries
from ._retriever import SparseRetriever
from ._sharded import ShardedIndex
from ._splade_parts import (
    _lazy_torch,
    check_encode,
    check_model,
    check_options,
    check_vocabulary,
    position_offset,
    splade_max,
    term_names,
)
from ._toks import flatten_toks

__all__ = ["Splade", "SpladeEncoder", "SpladeIndexer", "splade_max", "model_fingerprint", "looks_like_path"]


def _same_model(built: dict[str, Any], splade: Splade) -> bool:
    """Whether an index's SPLADE vectors came from this model: same weights when both fingerprints are known,
    else the same name."""
    if built.get("fingerprint") and splade.fingerprint:
        return bool(built["fingerprint"] == splade.fingerprint)
    return str(built.get("model", "")).rstrip("/") == splade.model.rstrip("/")


class Splade:
    """A SPLADE model: encoders for documents (``toks``) and queries (``query_toks``), and index shortcuts.

    Args:
        model: a Hugging Face hub id (e.g. ``naver/splade-cocondenser-ensembledistil``) or a local folder
            holding a masked-LM checkpoint and its tokenizer.
        device: ``"cuda"``, ``"cpu"``... Default: CUDA when available (in half precision), else CPU.
        batch_size: texts per forward pass.
        query_max_length, doc_max_length: token limits (longer texts are truncated).
        doc_top_k: keep only each document's k largest weights (None: all).
        doc_threshold: drop document weights <= this value (0 keeps every non-zero weight).
        fp16: half precision; default: on for CUDA, off on CPU.
        verbose: progress bars while encoding.

    Example::

        splade = pse.Splade("naver/splade-cocondenser-ensembledistil")
        index = pse.SparseIndex("indexes/scifact-splade")
        splade.indexer(index).index(pse.datasets.corpus_iter("irds:beir/scifact/test"))
        pt.Experiment([splade.retriever(index)], topics, qrels, [nDCG@10])
    """

    def __init__(
        self,
        model: str | os.PathLike = "naver/splade-cocondenser-ensembledistil",
        *,
        device: str | None = None,
        batch_size: int = 32,
        query_max_length: int = 64,
        doc_max_length: int = 256,
        doc_top_k: int | None = None,
        doc_threshold: float = 0.0,
        fp16: bool | None = None,
        verbose: bool = True,
    ):
        batch_size, query_max_length, doc_max_length, doc_top_k, doc_threshold, fp16 = check_options(
            batch_size, query_max_length, doc_max_length, doc_top_k, doc_threshold, fp16
        )
        self.model, self.device, self.batch_size = check_model(model), device, batch_size
        self.query_max_length, self.doc_max_length = query_max_length, doc_max_length
        self.doc_top_k, self.doc_threshold, self.fp16, self.verbose = doc_top_k, doc_threshold, fp16, verbose
        self._loaded: tuple[Any, Any, Any, list[str]] | None = None

    def __repr__(self) -> str:
        return f"Splade({self.model!r})"

    def __getstate__(self) -> dict[str, Any]:
        # to Ray workers without the model (each loads it), a local folder absolute (a worker's cwd is not ours)
        folder = os.path.expanduser(self.model)
        model = os.path.abspath(folder) if os.path.isdir(folder) else self.model
        return {**self.__dict__, "_loaded": None, "model": model}

    @property
    def name(self) -> str:
        return os.path.basename(self.model.rstrip("/")) or self.model

    def encoder_config(self) -> dict[str, Any]:
        """What determines the document vectors, recorded in the index (the model's fingerprint included)."""
        return {
            "type": "splade",
            "model": self.model,
            "fingerprint": self.fingerprint,
            "doc_max_length": self.doc_max_length,
            "doc_top_k": self.doc_top_k,
            "doc_threshold": self.doc_threshold,
            # half precision moves weights (by up to 4e-3 here) and adds or drops terms: its indexes are others
            **({"fp16": True} if self.half_precision() else {}),
        }

    def half_precision(self) -> bool:
        """Whether the model runs in half precision: ``fp16``, by default on CUDA (the ``device``, else when torch
        has a GPU)."""
        if self.fp16 is not None:
            return bool(self.fp16)
        if self.device is not None:
            return self.device.startswith("cuda")
        torch, _ = _lazy_torch()
        return bool(torch.cuda.is_available())

    def check_model_path(self) -> None:
        """Fail at once, naming the fix, when ``model`` looks like a local path that holds no folder (rather
        than after the hub lookups that a hub id gets)."""
        if looks_like_path(self.model) and not Path(self.model).expanduser().is_dir():
            raise FileNotFoundError(
                f"No model folder at {self.model}: give the folder that holds config.json, the weights and "
                "the tokenizer files (or a Hugging Face hub id such as naver/splade-cocondenser-ensembledistil)."
            )

    @property
    def fingerprint(self) -> str | None:
        """Identifies the model's weights (see :func:`model_fingerprint`); computed once per object."""
        if "_fingerprint" not in self.__dict__:
            self.__dict__["_fingerprint"] = model_fingerprint(self.model)
        return self.__dict__["_fingerprint"]

    # --- model -------------------------------------------------------------------------------------------
    def load(self) -> tuple[Any, Any, Any, list[str]]:
        """Load the tokenizer and the model (once; downloaded first when a hub id is not cached). Returns
        ``(tokenizer, model, device, token names)``."""
        if self._loaded is None:
            torch, transformers = _lazy_torch()
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            fp16 = self.half_precision()
            self.check_model_path()
            if not self.verbose:
                transformers.utils.logging.disable_progress_bar()
            try:
                if (
                    Path(self.model).expanduser().is_dir()
                    and not (Path(self.model).expanduser() / "config.json").is_file()
                ):
                    raise OSError("the folder has no config.json")
                tokenizer = transformers.AutoTokenizer.from_pretrained(self.model)
                load_mlm = transformers.AutoModelForMaskedLM.from_pretrained
                mlm, info = load_mlm(self.model, output_loading_info=True)
            except (OSError, ValueError) as e:
                raise OSError(
                    f"Cannot load a masked-LM checkpoint from {self.model!r}: give a local folder with config.json, "
                    f"the weights and the tokenizer files, or a hub id reachable from this machine. ({e})"
                ) from None
            if missing := sorted(info["missing_keys"]):  # transformers fills them at random (with a log line)
                raise ValueError(
                    f"{self.model!r} is not a masked LM: it lacks {len(missing)} weights (e.g. {missing[:2]}), its MLM "
                    "head, filled at random (random term weights). Give a SPLADE or other masked-LM checkpoint."
                )
            try:
                torch.device(device)
            except RuntimeError as e:  # torch's own list of device types
                raise ValueError(
                    f"device={device!r} is not a torch device: give 'cpu' or 'cuda'. ({e})"
                ) from None
            if device.startswith("cuda") and not torch.cuda.is_available():
                raise ValueError(f"device={device!r}, but torch has no CUDA GPU: give device='cpu' or none.")
            # RoBERTa's config says 514, its tokenizer 512: its positions start after the padding id's
            positions = getattr(mlm.config, "max_position_embeddings", 0) or 10**9
            positions -= position_offset(getattr(mlm.base_model, "embeddings", None))
            limit = min(positions, tokenizer.model_max_length)
            if max(self.doc_max_length, self.query_max_length) > limit:
                raise ValueError(f"max lengths beyond the model's {limit} positions: give at most {limit}.")
            self.positions = limit
            tokenizer.padding_side = "right"  # left padding would shift every token's (absolute) position
            size = mlm.get_output_embeddings().weight.shape[0]
            check_vocabulary(self.model, len(tokenizer), size, mlm.get_input_embeddings().weight.shape[0])
            mlm = mlm.to(device).eval()
            if fp16:
                mlm = mlm.half()
            names = term_names(tokenizer.convert_ids_to_tokens(list(range(size))))
            self._loaded = (tokenizer, mlm, device, names)
            if self.__dict__.get("_fingerprint", "") is None:
                del self.__dict__["_fingerprint"]  # downloaded just now: the hub commit is known from here on
        return self._loaded

    def encode(
        self,
        texts: Sequence[str],
        *,
        max_length: int,
        top_k: int | None = None,
        threshold: float = 0.0,
        desc: str = "encoding",
        progress: Any = None,
    ) -> list[dict[str, float]]:
        """SPLADE-max vectors ({token: weight}) of ``texts``, in input order.

        A text with no token but the tokenizer's special ones (empty, blank, None or NaN) gets the empty vector
        ``{}``, as BM25 gives it no terms: such a document is indexed empty and never retrieved, such a query
        retrieves nothing (the model's vector of a bare ``[CLS] [SEP]`` would match any query).

        Texts are batched by length, for less padding. A text's vector depends on its batch only through float32
        rounding (other padding and matrix shapes sum in another order): weights differ by a few 1e-6 at most
        (3.7e-6 measured between batch_size 1 and 32), so indexes built with another ``batch_size`` score alike
        but are not byte-identical. ``progress``: a progress bar to advance instead of showing one.
        """
        torch, _ = _lazy_torch()
        from tqdm.auto import tqdm

        tokenizer, mlm, device, names = self.load()
        check_encode(texts, max_length, top_k, self.positions)
        # literal special tokens in a text ("[SEP]") are not its content; an unknown character's [UNK] is
        special = torch.tensor(
            sorted(set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}), device=device
        )
        names_arr = np.array(names, dtype=object)
        # a lone surrogate (valid JSON, not UTF-8) would stop the tokenizer: replaced, as BM25's analyzer skips it
        texts = [_as_text(t).encode("utf-8", "replace").decode() for t in texts]  # as the encoders read them
        out: list[dict[str, float]] = [{} for _ in texts]
        order = np.argsort([-len(t) for t in texts], kind="stable")
        bar = (
            progress
            if progress is not None
            else tqdm(total=len(texts), desc=desc, unit="text", disable=None if self.verbose else True)
        )
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                if not any(texts[i].strip() for i in idx):  # nothing to encode (empties sort last): {} each
                    bar.update(len(idx))
                    continue
                enc = tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                    return_special_tokens_mask=True,
                ).to(device)
                # batches as ever (a non-empty text's vector is unchanged); texts without content get {}
                content = (enc.pop("special_tokens_mask") == 0) & (enc["attention_mask"] == 1)
                content = (content & ~torch.isin(enc["input_ids"], special)).any(dim=1)
                # a blank text is no content, though a byte-level BPE makes tokens of its spaces ("Ġ", "Ċ")
                keep = [c and bool(texts[i].strip()) for c, i in zip(content.tolist(), idx)]
                logits = mlm(**enc).logits
                weights = splade_max(logits, enc["attention_mask"])  # float32 (batch x vocab)
                del logits  # free the (batch x length x vocab) tensor before the next forward pass
                if top_k is not None and top_k < weights.shape[1]:  # exactly k, ties at the k-th too (fp16)
                    top = torch.topk(weights, top_k, dim=1)
                    weights = torch.zeros_like(weights).scatter_(1, top.indices, top.values)
                rows, cols = torch.nonzero(weights > threshold, as_tuple=True)
                vals = weights[rows, cols].cpu().numpy().astype(np.float64)
                rows, cols = rows.cpu().numpy(), cols.cpu().numpy()
                bounds = np.searchsorted(rows, np.arange(len(idx) + 1))
                for r, i in enumerate(idx):
                    a, b = (bounds[r], bounds[r + 1]) if keep[r] else (0, 0)
                    out[i] = dict(zip(names_arr[cols[a:b]].tolist(), vals[a:b].tolist()))
                bar.update(len(idx))
        if progress is None:
            bar.close()
        return out

    # --- transformers ----------------------------------------------------------------------------------------
    def doc_encoder(self, fields: Sequence[str] | None = None) -> SpladeEncoder:
        """Adds ``toks`` to documents (``title`` + ``text`` when both exist, else ``text``; or ``fields``)."""
        return SpladeEncoder(self, "doc", fields=fields)

    def query_encoder(self) -> SpladeEncoder:
        """Adds ``query_toks`` to queries."""
        return SpladeEncoder(self, "query")

    def indexer(
        self,
        index: SparseIndex | ShardedIndex,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool | None = None,
        engine: str = "local",
        ray_address: str | None = None,
        num_workers: int | None = None,
        num_gpus: float = 0,
        fields: Sequence[str] | None = None,
    ) -> Any:
        """Encode documents and index them, batch by batch (the corpus's vectors are never all in memory),
        with one progress bar for the whole build (a total when the documents know their number). ``fields``: the
        text fields encoded (default: an ``irds:`` dataset's own from ``pse.datasets.corpus_iter``, else ``title`` +
        ``text``, those the first batch has).

        ``engine="ray"``: the documents are encoded by Ray tasks, one per ``batch_size`` documents (a corpus of
        fewer is one task: give a smaller ``batch_size`` to spread it), up to ``num_workers`` at once (default: the
        cluster's CPUs, or its GPUs / ``num_gpus``), the model loaded once per worker process (on its GPU when
        given ``num_gpus``); the index equals the local build's with the same ``batch_size``."""
        return SpladeIndexer(
            self,
            index,
            mode=mode,
            batch_size=batch_size,
            verbose=verbose,
            engine=engine,
            ray_address=ray_address,
            num_workers=num_workers,
            num_gpus=num_gpus,
            fields=fields,
        )

    def retriever(
        self, index: SparseIndex | ShardedIndex, *, num_results: int = 1000, idf: bool = False, **kwargs: Any
    ) -> pt.Transformer:
        """Queries -> ``query_toks`` -> top ``num_results`` by sum_t q_t * d_t (times idf_t with ``idf=True``).

        ``idf=False`` (the default) is the plain dot product that SPLADE papers report.
        """
        refuse_path(index)
        built = index.encoder
        if built.get("type") == "bm25":
            raise ValueError(f"{index} holds BM25 weights; build a SPLADE index with splade.indexer(index).")
        if built.get("type") == "splade" and not _same_model(built, self):
            which = (
                f"{self.model!r} as its files were then (they have changed since)"
                if built.get("model") == self.model
                else f"SPLADE model {built.get('model')!r}, not {self.model!r}"
            )
            raise ValueError(
                f"{index} was built with {which}; rebuild it with "
                'splade.indexer(index, mode="overwrite") or load the same model.'
            )
        if isinstance(index, ShardedIndex):
            return self.query_encoder() >> index.retriever(num_results=num_results, idf=idf, **kwargs)
        refuse_ray_options(kwargs)
        return self.query_encoder() >> SparseRetriever(index, num_results=num_results, idf=idf, **kwargs)


class SpladeEncoder(pt.Transformer):
    """Adds SPLADE vectors to a frame: ``toks`` for documents, ``query_toks`` for queries."""

    def __init__(self, splade: Splade, kind: str, fields: Sequence[str] | None = None):
        if kind not in ("doc", "query"):
            raise ValueError("kind must be 'doc' or 'query'.")
        self.splade = splade
        self.kind = kind
        self.fields = fields
        self.batch_size = splade.batch_size * 8  # rows per pipeline batch when indexing

    def __repr__(self) -> str:
        return f"SpladeEncoder({self.splade!r}, {self.kind!r})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        s = self.splade
        if self.kind == "query":
            validate_queries(inp, self, columns=("query",))
            texts = column_texts(inp, "query")  # None, NaN: "" (no results), not "nan"
            out_col, max_length, top_k, threshold = "query_toks", s.query_max_length, None, 0.0
        else:
            pt.validate.document_frame(inp, extra_columns=[])
            rows = inp.to_dict("records")
            hint = "splade.doc_encoder(fields=[...])"
            fields = resolve_fields(rows, self.fields, hint) if rows else tuple(self.fields or ("text",))
            texts, _ = doc_texts(rows, fields)
            out_col, max_length, top_k, threshold = "toks", s.doc_max_length, s.doc_top_k, s.doc_threshold
        out = inp.copy()
        vecs = (
            s.encode(
                texts, max_length=max_length, top_k=top_k, threshold=threshold, desc=f"SPLADE {self.kind}s"
            )
            if texts
            else []
        )
        out[out_col] = pd.Series(vecs, index=inp.index, dtype=object)
        return out


class SpladeIndexer(SparseIndexer):
    """Encodes documents with a :class:`Splade` model and indexes their vectors, batch by batch.

    Text fields are chosen from the first batch (see :func:`pse.datasets.resolve_fields`); documents without
    text are encoded empty, counted, and reported once at the end.
    """

    updates_progress = True

    def __init__(
        self,
        splade: Splade,
        index: Any,
        *,
        mode: str = "create",
        batch_size: int = 10_000,
        verbose: bool | None = None,
        fields: Sequence[str] | None = None,
        engine: str = "local",
        ray_address: str | None = None,
        num_workers: int | None = None,
        num_gpus: float = 0,
    ):
        super().__init__(
            index,
            mode=mode,
            batch_size=batch_size,
            verbose=splade.verbose if verbose is None else verbose,
            encoder=splade.encoder_config(),
            engine=engine,
            ray_address=ray_address,
            num_workers=num_workers,
        )
        check_engine(engine, num_gpus=num_gpus or None)  # the GPUs of Ray's workers; device= here
        self.splade = splade
        self.fields = fields
        self.num_gpus = num_gpus

    def __repr__(self) -> str:
        return f"SpladeIndexer({self.splade!r}, {self.index_ref!r}, mode={self.mode!r})"

    def index(self, docs: Any) -> Any:  # type: ignore[override]
        self.fields_: tuple[str, ...] | None = None
        self.default_fields_ = getattr(docs, "default_fields", None)  # pse.datasets.corpus_iter's
        self.late_fields_: dict[str, int] = {}  # see _fields.watch_fields
        self.empty_, self.total_ = 0, 0
        return super().index(docs)

    def _fields(self, batch: list[dict[str, Any]]) -> tuple[str, ...]:
        if "docno" not in batch[0]:
            raise FieldError(f"Documents need a 'docno' field (got {sorted(batch[0])}).")
        if self.fields_ is None:
            hint = "splade.indexer(index, fields=[...])"
            self.fields_ = resolve_fields(batch, self.fields, hint, self.default_fields_)
        return self.fields_

    def batches(self, first: list[dict[str, Any]]) -> SpladeBatches:
        return SpladeBatches(self.splade, self._fields(first))

    def encode(self, batch: list[dict[str, Any]], bar: Any) -> tuple[list[str], list[dict[str, float]]]:
        # docnos checked before the model's encoding, which a refusal would throw away
        docnos = batch_docnos(batch)
        texts, _ = doc_texts(batch, self._fields(batch))
        s = self.splade
        toks = s.encode(
            texts, max_length=s.doc_max_length, top_k=s.doc_top_k, threshold=s.doc_threshold, progress=bar
        )
        self.empty_, self.total_ = self.empty_ + sum(not t for t in toks), self.total_ + len(batch)  # no term
        return docnos, toks

    def finished(self) -> None:
        s, pruned = self.splade, ""
        if s.doc_threshold > 0:  # a text whose every weight is at most the threshold is left no term
            pruned = f", or no weight above doc_threshold={s.doc_threshold}"
        warn_empty(
            self.empty_, self.total_, self.fields_ or (), self.late_fields_, self.fields is not None, pruned
        )


class SpladeBatches:
    """Encodes batches of documents where it runs (a Ray worker, for ``engine="ray"``; the model is loaded there
    once) into :data:`~pyterrier_sparse_eval._ray.Encoded` batches: the local indexer's vectors."""

    def __init__(self, splade: Splade, fields: tuple[str, ...]):
        self.splade, self.fields = splade, fields

    def __call__(self, batch: list[dict[str, Any]]) -> Encoded:
        docnos = batch_docnos(batch)
        texts, _ = doc_texts(batch, self.fields)
        s = self.splade
        toks = s.encode(
            texts,
            max_length=s.doc_max_length,
            top_k=s.doc_top_k,
            threshold=s.doc_threshold,
            progress=_NoBar(),
        )
        return flatten_toks(docnos, toks, sum(not t for t in toks))  # documents without a term


class _NoBar:
    def update(self, n: int) -> None:
        pass
