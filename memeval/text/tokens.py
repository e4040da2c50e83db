"""Tokenisers: words for BM25 and letter words for guards (no memeval imports).

>>> word_tokens("Paid 40 dollars in Tokyo", stopwords={"in"})
['paid', '40', 'dollars', 'tokyo']
>>> bm25_tokens("Where does my cousin Vesna live? In Lyon, 5 km away; it's 東京")
['cousin', 'vesna', 'live', 'lyon', 'km', 'away', '東京']
>>> word_tokens("東京タワー")
['東京', '京タ', 'タワ', 'ワー']
>>> sorted(letter_words("Dr. Ruiz, 2 cats"))
['cats', 'dr', 'ruiz']
"""

from __future__ import annotations

import re
from typing import Collection

__all__ = ["word_tokens", "letter_words", "bm25_tokens", "BM25_STOPWORDS"]

#: BM25's stop words: glasshouse v0.1's BM25 baseline list (articles, pronouns, question words: "what",
#: "my", "you" ...) joined with bm25s's English list. Chosen by measured recall on glasshouse v0.1 core
#: (docs/DECISIONS.md, issue 22): an evidence turn in the top 10 for 52.1% of questions, against 44.6%
#: with bm25s's list alone and 51.9% with glasshouse's alone.
BM25_STOPWORDS = frozenset(
    "the a an of in on at to for is was were are did do does and or that this with it they them their he "
    "his she her i my you your we our be been have has had there from what how when where which who why s t "
    "as but by if into no not such then these will".split()
)

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


#: what bm25_tokens drops: its stop words and every one-character ASCII token (a letter or a digit)
_BM25_DROP = BM25_STOPWORDS | frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
#: ASCII letters kept, every other ASCII character a space: on ASCII text without digits, the runs of
#: letters that ``_WORD`` finds are then the words ``str.split`` finds (~2x faster than the regex)
_ASCII_LETTERS = str.maketrans({chr(i): chr(i) if chr(i).isalpha() else " " for i in range(128)})
_DIGIT = re.compile(r"\d")


def bm25_tokens(text: str) -> list[str]:
    """The words BM25 indexes and asks with (the ``bm25`` system, the audit's BM25 probe and its
    word-overlap figure): :func:`word_tokens` less ``BM25_STOPWORDS``, without one-character ASCII
    tokens ("s", "5"); CJK runs as character bigrams."""
    if text.isascii() and not _DIGIT.search(text):  # most conversational turns: no regex needed
        return [w for w in text.lower().translate(_ASCII_LETTERS).split() if w not in _BM25_DROP]
    return [w for w in word_tokens(text, BM25_STOPWORDS) if len(w) > 1 or not w.isascii()]


def letter_words(text: str) -> set[str]:
    """The set of lower-cased runs of letters (no digits or underscores)."""
    return {w.lower() for w in _LETTERS.findall(text)}
