"""Tokenisers: words for BM25 and letter words for guards (no memeval imports).

>>> word_tokens("Paid 40 dollars in Tokyo", stopwords={"in"})
['paid', '40', 'dollars', 'tokyo']
>>> word_tokens("東京タワー")
['東京', '京タ', 'タワ', 'ワー']
>>> sorted(letter_words("Dr. Ruiz, 2 cats"))
['cats', 'dr', 'ruiz']
"""

from __future__ import annotations

import re
from typing import Collection

__all__ = ["word_tokens", "letter_words"]

_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)


def word_tokens(text: str, stopwords: Collection[str] = frozenset()) -> list[str]:
    """Lower-cased words and numbers less ``stopwords``; CJK runs become character bigrams (no spaces
    to split on; a lone CJK character stays itself)."""
    low = text.lower()
    if not _CJK.search(low):  # the common case: no bigrams to make
        return [w for w in _WORD.findall(low) if w not in stopwords]
    out: list[str] = []
    for w in _WORD.findall(low):
        if _CJK.search(w):
            chars = _CJK.findall(w)
            out.extend(a + b for a, b in zip(chars, chars[1:]))
            out.extend(chars if len(chars) == 1 else ())
        elif w not in stopwords:
            out.append(w)
    return out


def letter_words(text: str) -> set[str]:
    """The set of lower-cased runs of letters (no digits or underscores)."""
    return {w.lower() for w in _LETTERS.findall(text)}
