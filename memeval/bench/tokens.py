"""Approximate token counts (documented, dependency-free, deterministic).

``approx-v1``: a run of word characters of length L counts ceil(L/4) tokens (so words up to 4
characters count one), each punctuation mark one, each CJK/kana/hangul character one; recorded in
every manifest as ``tokenizer``. Counting is one ``findall`` of 1-4 character chunks, so it runs in C.

It is memeval's own approximation, not a model's tokenizer, and it counts high on English prose with
long words: glasshouse v0.1's core tier is 108,764 approx-v1 tokens where glasshouse's README gives
78,584 (its own count; its tokenizer is not named). So every token figure memeval shows carries
``TOKENS_LABEL``. A closer count would change the sizes of generated tiers (the generator fills
tiers to token budgets), so it is left for a versioned ``approx-v2``.
"""

from __future__ import annotations

import re
from hashlib import sha256
from typing import Sequence

import numpy as np

__all__ = ["TOKENIZER", "TOKENS_LABEL", "count_tokens", "count_tokens_many", "cut_tokens", "TokenMemo"]

TOKENIZER = "approx-v1"
#: How a token figure is labelled wherever memeval shows one.
TOKENS_LABEL = f"tokens ({TOKENIZER}: memeval's own approximation)"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CHUNK = re.compile(rf"[{_CJK}]|[^\W{_CJK}]{{1,4}}|[^\w\s]", re.UNICODE)


def count_tokens(text: str) -> int:
    """
    >>> count_tokens("My dentist is Dr Okafor.")  # My, dent+ist, is, Dr, Okaf+or, "."
    8
    >>> count_tokens("我的牙医")
    4
    """
    return len(_CHUNK.findall(text))


def cut_tokens(text: str, n: int, keep: str = "head") -> str:
    """The first (``keep="head"``) or last (``keep="tail"``) ``n`` approx-v1 tokens of ``text``, cut at
    token boundaries.

    >>> cut_tokens("My dentist is Dr Okafor.", 3)
    'My dentist'
    >>> cut_tokens("My dentist is Dr Okafor.", 3, keep="tail")
    'Okafor.'
    >>> cut_tokens("short", 0)
    ''
    """
    if n <= 0:
        return ""
    spans = [m.span() for m in _CHUNK.finditer(text)]
    if len(spans) <= n:
        return text
    return text[: spans[n - 1][1]] if keep == "head" else text[spans[-n][0] :]


# ASCII characters by class, as the pattern classes them: 0 space, 1 word (chunked by 4), 2 punctuation
_ASCII_CLASS = np.array(
    [1 if re.fullmatch(r"\w", c) else 0 if re.fullmatch(r"\s", c) else 2 for c in map(chr, range(128))],
    dtype=np.int8,
)
_BULK_CHARS = 1 << 20  # characters counted per numpy pass (~10-20 MiB of temporary arrays)


def count_tokens_many(texts: Sequence[str]) -> list[int]:
    """``[count_tokens(t) for t in texts]``, in bulk with numpy: a run of L word characters is ceil(L/4)
    tokens, each punctuation mark or CJK character one. ASCII texts are classed byte by byte; the
    others by code point (each distinct non-ASCII character classed once, by the pattern itself).

    >>> count_tokens_many(["My dentist is Dr Okafor.", "我的牙医", "", "a_b-c  dddde"])  # ..., a_b - c dddd e
    [8, 4, 0, 5]
    """
    out = [0] * len(texts)
    batches: tuple[list[int], list[int]] = ([], [])  # ASCII, other
    sizes = [0, 0]
    for i, t in enumerate(texts):
        k = 0 if t.isascii() else 1
        batches[k].append(i)
        sizes[k] += len(t) + 1
        if sizes[k] >= _BULK_CHARS:
            _count_batch(texts, batches[k], out, k == 0)
            batches[k].clear()
            sizes[k] = 0
    for k, idx in enumerate(batches):
        if idx:
            _count_batch(texts, idx, out, k == 0)
    return out


_CLASS_OF: dict[int, int] = {}  # non-ASCII code point -> class (0 space, 1 word, 2 punctuation, 3 CJK)
_CLASS_RE: list[re.Pattern] = []  # compiled on first use (start-up time)


def _class_of(cp: int) -> int:
    c = _CLASS_OF.get(cp)
    if c is None:
        if not _CLASS_RE:
            _CLASS_RE[:] = [re.compile(rf"[{_CJK}]"), re.compile(rf"[^\W{_CJK}]"), re.compile(r"[^\w\s]")]
        cjk, word, punct = _CLASS_RE
        ch = chr(cp)
        c = 3 if cjk.match(ch) else 1 if word.match(ch) else 2 if punct.match(ch) else 0
        if len(_CLASS_OF) < 1 << 16:
            _CLASS_OF[cp] = c
    return c


_WORD01 = bytes(int(c == 1) for c in _ASCII_CLASS.tolist()) + bytes(128)  # byte -> 1 for a word character
_SINGLE01 = bytes(int(c == 2) for c in _ASCII_CLASS.tolist()) + bytes(128)  # byte -> 1 for punctuation


def _count_batch(texts: Sequence[str], idx: list[int], out: list[int], ascii: bool) -> None:
    sub = [texts[i] for i in idx]
    joined = " ".join(["", *sub, ""])  # text k is joined[bounds[k]:bounds[k + 1]] after the space before it
    if ascii:
        raw = joined.encode("ascii")
        word = np.frombuffer(raw.translate(_WORD01), dtype=np.bool_)
        single = np.frombuffer(raw.translate(_SINGLE01), dtype=np.bool_)
    else:
        cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        cls = np.empty(len(cps), dtype=np.int8)
        low = cps < 128
        cls[low] = _ASCII_CLASS[cps[low]]
        high = ~low
        uniq, inv = np.unique(cps[high], return_inverse=True)
        cls[high] = np.array([_class_of(int(c)) for c in uniq.tolist()], dtype=np.int8)[inv]
        word = cls == 1
        single = cls >= 2  # punctuation and CJK characters: one token each
    edges = np.flatnonzero(np.diff(word))  # (bools: where word[p] != word[p+1]) a run at [s, e) gives s - 1, e - 1
    starts = edges[0::2]
    run_tokens = np.zeros(len(starts) + 1, dtype=np.int64)  # ceil(L/4) per run, summed
    np.cumsum((edges[1::2] - starts + 3) >> 2, out=run_tokens[1:])
    bounds = np.zeros(len(sub) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in sub], out=bounds[1:])
    runs_at, single_at = np.searchsorted(starts, bounds), np.searchsorted(np.flatnonzero(single), bounds)
    counts = run_tokens[runs_at[1:]] - run_tokens[runs_at[:-1]] + np.diff(single_at)
    for i, c in zip(idx, counts.tolist()):
        out[i] = c


class TokenMemo:
    """Token counts of texts seen before, by a 128-bit digest of the text (a long import repeats
    sessions: LongMemEval's haystacks share them), at most ``limit`` of them (then forgotten).
    The digest is sha256's (hardware-assisted on most CPUs: ~3x blake2b's speed)."""

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self._seen: dict[bytes, int] = {}

    def counts(self, texts: Sequence[str]) -> list[int]:
        """``[count_tokens(t) for t in texts]``: known texts looked up, the others counted in bulk.

        >>> m = TokenMemo()
        >>> m.counts(["a cat", "a cat", "我的"]), m.counts(["a cat"])
        ([2, 2, 2], [2])
        """
        keys = [sha256(t.encode("utf-8", "surrogatepass")).digest()[:16] for t in texts]
        seen = self._seen
        out = [seen.get(k, -1) for k in keys]
        todo = {keys[i]: i for i, c in enumerate(out) if c < 0}  # each new text once
        if todo:
            if len(seen) + len(todo) > self.limit:
                seen.clear()
            for k, c in zip(todo, count_tokens_many([texts[i] for i in todo.values()])):
                seen[k] = c
            out = [seen[k] if c < 0 else c for k, c in zip(keys, out)]
        return out
