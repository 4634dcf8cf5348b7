"""Results as strict JSON: what ``json.dumps(..., allow_nan=False)`` and every JSON reader accept."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["json_ready"]


def json_ready(obj: Any) -> Any:
    """``obj`` with every NaN or infinite number as ``None`` (JSON's ``null``), numpy numbers and arrays as Python
    ones, tuples as lists; dicts and lists are copied, nothing else is touched.

    A mean over no query is NaN, and Python's ``json`` writes it as ``NaN``, which is not JSON: a strict reader
    (JavaScript, ``jq``) refuses the whole file.
    """
    if isinstance(obj, np.ndarray):
        obj = obj.tolist()
    elif isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return obj
