"""Approximate token counts (documented, dependency-free, deterministic).

``approx-v1``: a run of word characters of length L counts ceil(L/4) tokens (so words up to 4
characters count one), each punctuation mark one, each CJK/kana/hangul character one. Within ~15% of
BPE tokenizers on English chat text; recorded in every manifest as ``tokenizer``. Counting is one
``findall`` of 1-4 character chunks, so it runs in C.
"""

from __future__ import annotations

import re

__all__ = ["TOKENIZER", "count_tokens"]

TOKENIZER = "approx-v1"
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
