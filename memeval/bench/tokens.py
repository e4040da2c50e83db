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

__all__ = ["TOKENIZER", "TOKENS_LABEL", "count_tokens", "cut_tokens"]

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
