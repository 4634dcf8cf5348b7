"""Compiled text indexing: tokens found, interned and counted in one pass over the bytes of a batch.

The analyzer's regex path (:meth:`Analyzer.tokenize_batch`) defines the tokens; this module produces exactly
the same tokens, faster, when numba is available:

* ASCII documents are scanned byte by byte with the analyzer's rule, lowercased in place when the analyzer
  lowercases every token: UAX #29 restricted to ASCII (Lucene's StandardTokenizer: letters, digits and ``_``
  join; ``:`` ``.`` ``'`` join two letters, ``,`` ``;`` ``.`` ``'`` two digits; tokens cut at 255 characters,
  before a joiner), or the "word" tokenizer's ``\\w+(?:[.']\\w+)*``;
* any other document is tokenised by the analyzer itself and its tokens, joined by spaces, are split by the
  same kernel, so both kinds share one token table.

Every distinct raw token gets an id in a hash table of its bytes (FNV-1a, open addressing, collisions resolved
by comparing the bytes, so the mapping is exact). Tokens seen for the first time are handed back to Python
once, where the analyzer turns them into terms (stopwords, stemming); from then on a token costs a table probe.
Per-document term frequencies are counted with a last-seen mark per term, in linear time.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _tokenize
from ._numba import have_numba

HAVE_NUMBA = have_numba()
_NO_CLASSES = np.zeros(128, dtype=np.uint8)

__all__ = ["TokenTable", "TokenIds", "HAVE_NUMBA"]

if HAVE_NUMBA:
    from numba import njit

    @njit(cache=True, nogil=True)
    def _is_word(c):
        return (97 <= c <= 122) or (65 <= c <= 90) or (48 <= c <= 57) or c == 95

    @njit(cache=True, nogil=True)
    def _is_alpha(c):
        return (97 <= c <= 122) or (65 <= c <= 90)

    @njit(cache=True, nogil=True)
    def _is_digit(c):
        return 48 <= c <= 57

    @njit(cache=True, nogil=True)
    def _intern(buf, s, e, tab_hash, tab_id, pool, pool_ends, n_known):
        h = np.uint64(14695981039346656037)
        for i in range(s, e):
            h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
        mask = len(tab_id) - 1
        slot = np.int64(h & np.uint64(mask))
        n = e - s
        while True:
            t = tab_id[slot]
            if t < 0:
                break
            if tab_hash[slot] == h:
                a = pool_ends[t - 1] if t > 0 else 0
                if pool_ends[t] - a == n:
                    same = True
                    for j in range(n):
                        if pool[a + j] != buf[s + j]:
                            same = False
                            break
                    if same:
                        return t, n_known
            slot = (slot + 1) & mask
        a = pool_ends[n_known - 1] if n_known > 0 else 0
        for j in range(n):
            pool[a + j] = buf[s + j]
        pool_ends[n_known] = a + n
        tab_id[slot] = n_known
        tab_hash[slot] = h
        return n_known, n_known + 1

    @njit(cache=True, nogil=True)
    def _char(buf, i, e, classes):
        """(word-break class, byte length) of the UTF-8 character at ``buf[i]`` (BMP only: the caller's texts
        hold no other characters)."""
        c = np.int64(buf[i])
        if c < 0x80:
            return classes[c], 1
        if c < 0xE0:
            if i + 1 >= e:
                return 0, 1
            return classes[((c & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F)], 2
        if i + 2 >= e:
            return 0, 1
        return classes[
            ((c & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F)
        ], 3

    @njit(cache=True, nogil=True)
    def _scan_uax29(
        buf, s0, e0, d, classes, n_tok, tab_hash, tab_id, pool, pool_ends, n_known, out_doc, out_tok
    ):
        """UAX #29 on a text without special characters (see ``analysis._standard.simple_classes``): runs of
        letters (1), digits (2) and connectors (3), one MidLetter (4) or MidNumLet (6) joining two letters, one
        MidNum (5) or MidNumLet (6) joining two digits; connector-only runs dropped; tokens cut at 255 characters."""
        i = s0
        while i < e0:
            k, nb = _char(buf, i, e0, classes)
            if k != 1 and k != 2 and k != 3:
                i += nb
                continue
            s = i
            n_chars = 0
            last = 0
            only_join = True
            cut = -1  # byte offset after the 255th character
            while True:
                while i < e0:
                    k, nb = _char(buf, i, e0, classes)
                    if k != 1 and k != 2 and k != 3:
                        break
                    if k != 3:
                        only_join = False
                    last = k
                    i += nb
                    n_chars += 1
                    if n_chars == 255:
                        cut = i
                if i < e0 and (last == 1 or last == 2):
                    k, nb = _char(buf, i, e0, classes)
                    if (last == 1 and (k == 4 or k == 6)) or (last == 2 and (k == 5 or k == 6)):
                        if i + nb < e0:
                            k2, nb2 = _char(buf, i + nb, e0, classes)
                            if k2 == last:
                                i += nb
                                n_chars += 1
                                if n_chars == 255:  # no token ends with a joiner: cut before it
                                    cut = i - nb
                                continue
                break
            if only_join:  # "___" is no token
                continue
            if n_chars > 255:  # Lucene's maxTokenLength: cut, then scan again after the cut
                i = cut
            tok, n_known = _intern(buf, s, i, tab_hash, tab_id, pool, pool_ends, n_known)
            out_doc[n_tok] = d
            out_tok[n_tok] = tok
            n_tok += 1
        return n_tok, n_known

    @njit(cache=True, nogil=True)
    def _scan(
        buf,
        doc_ends,
        presplit,
        lowercase,
        rule,
        classes,
        first_doc,
        n_tok,
        tab_hash,
        tab_id,
        pool,
        pool_ends,
        n_known,
        max_known,
        out_doc,
        out_tok,
    ):
        """Tokenise documents from ``first_doc``; stop early (returning the next doc) when the table may fill."""
        d = first_doc
        n_docs = len(doc_ends)
        pool_cap = len(pool)
        while d < n_docs:
            s0 = doc_ends[d - 1] if d > 0 else 0
            e0 = doc_ends[d]
            used = pool_ends[n_known - 1] if n_known > 0 else 0
            if n_known + (e0 - s0) // 2 + 1 > max_known or used + (e0 - s0) > pool_cap:
                break
            i = s0
            if presplit[d] == 2:  # tokens already found by the regex, separated by single spaces
                while i < e0:
                    while i < e0 and buf[i] == 32:
                        i += 1
                    s = i
                    while i < e0 and buf[i] != 32:
                        i += 1
                    if i > s:
                        tok, n_known = _intern(buf, s, i, tab_hash, tab_id, pool, pool_ends, n_known)
                        out_doc[n_tok] = d
                        out_tok[n_tok] = tok
                        n_tok += 1
            else:
                if lowercase:
                    for j in range(s0, e0):
                        c = buf[j]
                        if 65 <= c <= 90:
                            buf[j] = c + 32
                if rule == 0:
                    while i < e0:
                        if not _is_word(buf[i]):
                            i += 1
                            continue
                        s = i
                        while i < e0 and _is_word(buf[i]):
                            i += 1
                        # inner joiners: "don't", "3.14", "u.s"
                        while i + 1 < e0 and (buf[i] == 46 or buf[i] == 39) and _is_word(buf[i + 1]):
                            i += 1
                            while i < e0 and _is_word(buf[i]):
                                i += 1
                        tok, n_known = _intern(buf, s, i, tab_hash, tab_id, pool, pool_ends, n_known)
                        out_doc[n_tok] = d
                        out_tok[n_tok] = tok
                        n_tok += 1
                elif presplit[d] == 1:  # not ASCII, but without special characters
                    n_tok, n_known = _scan_uax29(
                        buf,
                        s0,
                        e0,
                        d,
                        classes,
                        n_tok,
                        tab_hash,
                        tab_id,
                        pool,
                        pool_ends,
                        n_known,
                        out_doc,
                        out_tok,
                    )
                else:
                    # UAX #29 on ASCII: letters, digits and '_' join (WB5, WB8-WB10, WB13a/b); one of : . ' joins
                    # two letters (WB6/7), one of , ; . ' two digits (WB11/12)
                    while i < e0:
                        if not _is_word(buf[i]):
                            i += 1
                            continue
                        s = i
                        while True:
                            while i < e0 and _is_word(buf[i]):
                                i += 1
                            if i + 1 < e0 and _is_alpha(buf[i - 1]) and _is_alpha(buf[i + 1]):
                                c = buf[i]
                                if c == 58 or c == 46 or c == 39:
                                    i += 1
                                    continue
                            if i + 1 < e0 and _is_digit(buf[i - 1]) and _is_digit(buf[i + 1]):
                                c = buf[i]
                                if c == 44 or c == 59 or c == 46 or c == 39:
                                    i += 1
                                    continue
                            break
                        only_underscores = True
                        for j in range(s, i):
                            if buf[j] != 95:
                                only_underscores = False
                                break
                        if only_underscores:  # "___" is no token
                            continue
                        if i - s > 255:  # Lucene's maxTokenLength: cut, then scan again after the cut
                            c = buf[s + 254]  # no token ends with a joiner (: . ' , ;): cut before it
                            i = s + 254 if c == 58 or c == 46 or c == 39 or c == 44 or c == 59 else s + 255
                        tok, n_known = _intern(buf, s, i, tab_hash, tab_id, pool, pool_ends, n_known)
                        out_doc[n_tok] = d
                        out_tok[n_tok] = tok
                        n_tok += 1
            d += 1
        return d, n_tok, n_known

    @njit(cache=True, nogil=True)
    def _rehash(tab_hash, tab_id, new_hash, new_id):
        mask = len(new_id) - 1
        for i in range(len(tab_id)):
            t = tab_id[i]
            if t >= 0:
                slot = np.int64(tab_hash[i] & np.uint64(mask))
                while new_id[slot] >= 0:
                    slot = (slot + 1) & mask
                new_id[slot] = t
                new_hash[slot] = tab_hash[i]

    @njit(cache=True, nogil=True)
    def _count(out_doc, out_term, n_docs, mark, where):
        """Per-document term frequencies (terms in first-occurrence order); negative terms are skipped."""
        n = len(out_doc)
        terms = np.empty(n, dtype=np.int32)
        tf = np.empty(n, dtype=np.float32)
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        lengths = np.zeros(n_docs, dtype=np.int64)
        m = 0
        for i in range(n):
            t = out_term[i]
            if t < 0:
                continue
            d = out_doc[i]
            lengths[d] += 1
            if mark[t] != d:
                mark[t] = d
                where[t] = m
                terms[m] = t
                tf[m] = 1.0
                offsets[d + 1] += 1
                m += 1
            else:
                tf[where[t]] += 1.0
        for d in range(n_docs):
            offsets[d + 1] += offsets[d]
        return terms[:m], tf[:m], offsets, lengths


class TokenTable:
    """Raw token -> id, for the compiled indexing path (requires numba; see :data:`HAVE_NUMBA`)."""

    def __init__(self, capacity: int = 1 << 16):
        if not HAVE_NUMBA:
            raise RuntimeError("TokenTable needs numba; install pyterrier-sparse-eval[fast].")
        self._hash = np.zeros(capacity, dtype=np.uint64)
        self._id = np.full(capacity, -1, dtype=np.int32)
        self._pool = np.zeros(1 << 20, dtype=np.uint8)
        self._ends = np.zeros(capacity // 2 + 1, dtype=np.int64)
        self.size = 0
        self._classes: np.ndarray | None = None
        self._special: Any = None

    def __len__(self) -> int:
        return self.size

    def _grow(self, need_tokens: int, need_bytes: int) -> None:
        cap = len(self._id)
        while cap // 2 < need_tokens:
            cap *= 2
        if cap != len(self._id):
            new_hash = np.zeros(cap, dtype=np.uint64)
            new_id = np.full(cap, -1, dtype=np.int32)
            _rehash(self._hash, self._id, new_hash, new_id)
            self._hash, self._id = new_hash, new_id
            ends = np.zeros(cap // 2 + 1, dtype=np.int64)
            ends[: self.size] = self._ends[: self.size]
            self._ends = ends
        if need_bytes > len(self._pool):
            pool = np.zeros(max(need_bytes, 2 * len(self._pool)), dtype=np.uint8)
            pool[: len(self._pool)] = self._pool
            self._pool = pool

    def token(self, i: int) -> str:
        a = int(self._ends[i - 1]) if i > 0 else 0
        return self._pool[a : int(self._ends[i])].tobytes().decode("utf-8")

    def tokens(self, start: int, stop: int) -> list[str]:
        """Tokens ``start`` to ``stop - 1``, decoded at once (a call of :meth:`token` each costs ~1 us)."""
        if stop <= start:
            return []
        a = int(self._ends[start - 1]) if start > 0 else 0
        raw = self._pool[a : int(self._ends[stop - 1])]
        ends = self._ends[start:stop] - a
        if not (raw >= 0x80).any():  # ASCII: byte offsets are character offsets
            text = raw.tobytes().decode("ascii")
        else:  # a character's offset: the bytes before it that start a character (not 10xxxxxx)
            starts = np.concatenate([[0], np.cumsum((raw & 0xC0) != 0x80)])
            ends = starts[ends]
            text = raw.tobytes().decode("utf-8")
        bounds = ends.tolist()
        return [text[i:j] for i, j in zip([0, *bounds[:-1]], bounds)]

    def scan(
        self, texts: Sequence[str], lowercase: bool, regex_tokenize, rule: int = 1
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Tokenise ``texts``: (document index per token, token id per token, table size before the batch).

        ``rule`` is 1 for UAX #29 (Lucene's StandardTokenizer) and 0 for the "word" tokenizer;
        ``regex_tokenize(list_of_texts)`` is the analyzer's own tokenizer, used for non-ASCII documents.
        Ids at or above the returned size are tokens seen for the first time (see :meth:`token`)."""
        before = self.size
        # how each document is scanned: 0 ASCII bytes, 1 UTF-8 with word-break classes (UAX #29 only: texts
        # without special characters), 2 tokens found by the analyzer itself
        ascii_docs = [t.isascii() for t in texts]
        if all(ascii_docs):
            buf = np.frombuffer(bytearray("".join(texts).encode("ascii")), dtype=np.uint8)
            lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
            presplit = np.zeros(len(texts), dtype=np.int8)
        else:
            kind = [0 if ok else 2 for ok in ascii_docs]
            if rule == 1:
                if self._classes is None:
                    from .analysis._standard import simple_classes

                    self._classes, self._special = simple_classes()
                special = self._special.search
                kind = [k if k == 0 or special(t) is not None else 1 for k, t in zip(kind, texts)]
            other = [i for i, k in enumerate(kind) if k == 2]
            pieces = [t.encode("utf-8") if k != 2 else b"" for t, k in zip(texts, kind)]
            for i, toks in zip(other, regex_tokenize([texts[i] for i in other])):
                pieces[i] = " ".join(toks).encode("utf-8")
            buf = np.frombuffer(bytearray(b"".join(pieces)), dtype=np.uint8)
            lens = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
            presplit = np.array(kind, dtype=np.int8)
        doc_ends = np.cumsum(lens)
        bound = len(buf) // 2 + len(texts) + 1
        out_doc = np.empty(bound, dtype=np.int32)
        out_tok = np.empty(bound, dtype=np.int32)
        d, n_tok = 0, 0
        while d < len(texts):
            # room for this many new tokens (at most one per two bytes) and their bytes: grow, then resume
            doc_bytes = int(doc_ends[d] - (doc_ends[d - 1] if d > 0 else 0))
            used = int(self._ends[self.size - 1]) if self.size else 0
            self._grow(self.size + doc_bytes // 2 + 2, used + doc_bytes + 1)
            d, n_tok, self.size = _scan(
                buf,
                doc_ends,
                presplit,
                lowercase,
                rule,
                self._classes if self._classes is not None else _NO_CLASSES,
                d,
                n_tok,
                self._hash,
                self._id,
                self._pool,
                self._ends,
                self.size,
                len(self._id) // 2,
                out_doc,
                out_tok,
            )
        return out_doc[:n_tok], out_tok[:n_tok], before


def count_terms(
    doc: np.ndarray, term: np.ndarray, n_docs: int, n_terms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(terms, tf, offsets, lengths) of each document from per-token (doc, term); term -1 = dropped token."""
    mark = np.full(n_terms, -1, dtype=np.int32)
    where = np.empty(n_terms, dtype=np.int64)
    return _count(doc, term, n_docs, mark, where)


class TokenIds:
    """Texts -> (text index, id) of each raw token, every distinct raw token remembered with its id (in numba's
    token table when ``compiled`` and the analyzer has a compiled rule, else in a dict; past ``MAX_CACHE`` tokens
    afresh). New tokens are analysed together (:meth:`Analyzer.terms`) and their terms given to ``lookup(terms)
    -> ids`` (-1: none): a vocabulary's lookup for queries (:meth:`of_vocabulary`), a writer's growing
    ``term_ids`` when indexing (per call). -1 where the analyzer drops the token. One analyzer and vocabulary."""

    def __init__(self, analyzer: Any, lookup: Any = None, compiled: bool = True):
        self.analyzer, self.lookup = analyzer, lookup
        self.compiled = compiled and analyzer.compiled_rule is not None
        self._lock = threading.Lock()  # the table is grown in place: one batch at a time
        self._reset()

    @classmethod
    def of_vocabulary(cls, analyzer: Any, vocabulary: dict[str, int], compiled: bool = True) -> TokenIds:
        """Ids from a fixed ``vocabulary`` (term -> id): a search's query terms (``analyzer.empty_term``: -1)."""
        return cls(analyzer, functools.partial(_look_up, vocabulary, analyzer.empty_term), compiled)

    def _reset(self) -> None:
        self.memo: dict[str, int] = {}
        self.table: Any = TokenTable(1 << 12) if self.compiled and HAVE_NUMBA else None
        self.ids = np.zeros(0, dtype=np.int64)  # the table's token id -> id

    def __reduce__(self) -> tuple[Any, ...]:  # the memo is rebuilt where it is unpickled
        return TokenIds, (self.analyzer, self.lookup, self.compiled)

    def _new_ids(self, tokens: list[str], lookup: Any) -> np.ndarray:
        terms = self.analyzer.terms(tokens)
        ids, kept = np.full(len(tokens), -1, dtype=np.int64), [i for i, term in enumerate(terms) if term]
        if kept:
            ids[kept] = lookup(terms if len(kept) == len(terms) else [terms[i] for i in kept])
        return ids

    def __call__(self, texts: list[str], lookup: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(text index (int32 or int64), id (int64)) of each raw token of ``texts``; ``lookup``: else __init__'s."""
        analyzer, lookup = self.analyzer, lookup or self.lookup
        with self._lock:
            if self.table is None:
                raw, memo = analyzer.tokenize_batch(texts), self.memo
                new = _tokenize._new_tokens(raw, memo)  # cleared first past MAX_CACHE
                if new:
                    tokens = sorted(new)
                    memo.update(zip(tokens, self._new_ids(tokens, lookup).tolist()))
                lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
                flat = itertools.chain.from_iterable(raw)
                ids = np.fromiter(map(memo.__getitem__, flat), dtype=np.int64, count=int(lengths.sum()))
                return np.repeat(np.arange(len(raw), dtype=np.int64), lengths), ids
            if len(self.table) > _tokenize.MAX_CACHE:
                self._reset()
            table = self.table
            doc, tok, before = table.scan(
                texts, analyzer.lowercases, analyzer.tokenize_batch, rule=analyzer.compiled_rule or 0
            )
            if len(table) > before:
                self.ids = np.concatenate([self.ids, self._new_ids(table.tokens(before, len(table)), lookup)])
            return doc, self.ids[tok]


def _look_up(vocabulary: dict[str, int], excluded: str | None, terms: list[str]) -> np.ndarray:
    ids = np.fromiter(map(vocabulary.get, terms, itertools.repeat(-1)), dtype=np.int64, count=len(terms))
    ids[[i for i, t in enumerate(terms) if t == excluded] if excluded in terms else []] = -1
    return ids
