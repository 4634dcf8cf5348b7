"""Names close to a mistyped measure name, for error messages: another case, trec_eval's spelling, a cut-off
without its @, or a near miss (difflib)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

import ir_measures

__all__ = ["did_you_mean", "known_name"]


def did_you_mean(spec: str, names: Iterable[str]) -> str:
    """`` (did you mean 'nDCG@10'?)`` when the measure name that ``spec`` starts with is not one of ``names``
    (the first of a name's spellings wins) but one in another case, or else close to one (difflib); else ``""``.
    The rest of ``spec`` (parameters, cut-off) is kept as written; a cut-off without its @ is put after them."""
    text = spec.strip()
    try:  # trec_eval's name (recall_100, ndcg_cut_10, P_10, map): ir_measures' for it
        trec = ir_measures.parse_trec_measure(text)
    except Exception:
        trec = []
    if len(trec) == 1 and str(trec[0]) != text:
        return f" (did you mean {str(trec[0])!r}?)"
    name = re.split(r"[(@\s]", text, maxsplit=1)[0]
    known: dict[str, str] = {}
    for n in names:
        known.setdefault(n.lower(), n)
    if not name or name in known.values():
        return ""
    rest = text[len(name) :]
    # a cut-off written without its @ (ndcg10, recall_100, P10(rel=2)): a known name in another case before it,
    # then the parameters, then @ and the cut-off
    glued = re.fullmatch(r"(.*?[A-Za-z])[_-]?(\d+)", name)
    if glued and "@" not in text and name.lower() not in known and glued[1].lower() in known:
        name, rest = glued[1], f"{rest}@{glued[2]}"
    match = known_name(name, known)
    return f" (did you mean {match + rest!r}?)" if match else ""


def known_name(name: str, known: dict[str, str]) -> str | None:
    """The measure name of ``known`` (lower case: spelling) that ``name`` is in another case, or else close to."""
    close = difflib.get_close_matches(name.lower(), known, n=1)
    return known.get(name.lower()) or (known[close[0]] if close else None)
