"""What identifies a SPLADE model: whether its name is a local path, and the fingerprint of its weights and
files."""

from __future__ import annotations

import os
from pathlib import Path

from ._format import file_crc32

__all__ = ["looks_like_path", "model_fingerprint"]


def looks_like_path(model: str) -> bool:
    """A local path rather than a hub id (``org/name`` or ``name``): absolute, relative with ``.``/``~``, two
    or more separators, or a first component that exists here."""
    if model.startswith(("/", ".", "~")) or model.rstrip("/").count("/") >= 2:
        return True
    return "/" in model and os.path.isdir(model.split("/", 1)[0])


_MODEL_FILES = (".json", ".safetensors", ".bin", ".txt", ".model", ".pt")


def model_fingerprint(model: str) -> str | None:
    """Identifies a model's weights: for a local folder, the CRC-32 and size of every model and tokenizer file
    (so new weights saved to the same folder change it, and the same files elsewhere do not); for a hub id,
    the commit of its copy in the local Hugging Face cache. None when neither is known (an uncached hub id)."""
    path = Path(model).expanduser()
    if path.is_dir():
        import zlib

        digest = zlib.crc32(b"")
        for f in sorted(p for p in path.iterdir() if p.is_file() and p.suffix in _MODEL_FILES):
            digest = zlib.crc32(f"{f.name}:{f.stat().st_size}:{file_crc32(f)};".encode(), digest)
        return f"files:{digest:08x}"
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json")
    except Exception:  # no huggingface_hub, or not a valid repo id
        return None
    if isinstance(cached, str) and "/snapshots/" in cached:
        return f"hub:{model}@{cached.split('/snapshots/')[1].split('/')[0]}"
    return None
