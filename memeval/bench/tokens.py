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
from hashlib import blake2b
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
_CLASS_TABLE = bytes(_ASCII_CLASS.tolist()) + bytes(128)  # byte -> class, for bytes.translate
_BULK_CHARS = 1 << 20  # ASCII characters counted per numpy pass (~10 MiB of temporary arrays)


def count_tokens_many(texts: Sequence[str]) -> list[int]:
    """``[count_tokens(t) for t in texts]``, in bulk: ASCII texts are counted together with numpy
    (a run of L word characters is ceil(L/4) tokens, each punctuation mark one), others one by one.

    >>> count_tokens_many(["My dentist is Dr Okafor.", "我的牙医", "", "a_b-c  dddde"])  # ..., a_b - c dddd e
    [8, 4, 0, 5]
    """
    out = [0] * len(texts)
    batch: list[int] = []
    size = 0
    for i, t in enumerate(texts):
        if t.isascii():
            batch.append(i)
            size += len(t) + 1
            if size >= _BULK_CHARS:
                _count_ascii(texts, batch, out)
                batch, size = [], 0
        else:
            out[i] = count_tokens(t)
    if batch:
        _count_ascii(texts, batch, out)
    return out


def _count_ascii(texts: Sequence[str], idx: list[int], out: list[int]) -> None:
    joined = "".join(texts[i] + " " for i in idx).encode("ascii")  # a space after each text ends its last run
    cls = np.frombuffer(b"\0" + joined.translate(_CLASS_TABLE), dtype=np.int8)  # a leading space: runs start
    edge = np.diff((cls == 1).view(np.int8))  # +1 where a run of word characters starts, -1 just past its end
    starts = np.flatnonzero(edge == 1)
    run_tokens = np.zeros(len(starts) + 1, dtype=np.int64)  # ceil(L/4) per run, summed
    np.cumsum((np.flatnonzero(edge == -1) - starts + 3) // 4, out=run_tokens[1:])
    punct = np.flatnonzero(cls[1:] == 2)
    bounds = np.zeros(len(idx) + 1, dtype=np.int64)  # text k is joined[bounds[k]:bounds[k + 1]]
    np.cumsum([len(texts[i]) + 1 for i in idx], out=bounds[1:])
    runs_at, punct_at = np.searchsorted(starts, bounds), np.searchsorted(punct, bounds)
    counts = run_tokens[runs_at[1:]] - run_tokens[runs_at[:-1]] + np.diff(punct_at)
    for i, c in zip(idx, counts.tolist()):
        out[i] = c


class TokenMemo:
    """Token counts of texts seen before, by a 128-bit digest of the text (a long import repeats
    sessions: LongMemEval's haystacks share them), at most ``limit`` of them (then forgotten)."""

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self._seen: dict[bytes, int] = {}

    def counts(self, texts: Sequence[str]) -> list[int]:
        """``[count_tokens(t) for t in texts]``: known texts looked up, the others counted in bulk.

        >>> m = TokenMemo()
        >>> m.counts(["a cat", "a cat", "我的"]), m.counts(["a cat"])
        ([2, 2, 2], [2])
        """
        keys = [blake2b(t.encode("utf-8", "surrogatepass"), digest_size=16).digest() for t in texts]
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
