"""Containment on the normal form (benchmark.md §4): is a gold in an answer?

``contains`` looks for the gold on word boundaries, allowing a trailing ``s/es/d/ed/ing``
(``y`` → ``ies/ied``; ordinals ``st/nd/rd/th`` after a number). A gold edge made of CJK
(Han, kana, Hangul) needs no boundary: those scripts do not separate words with spaces, so such a
gold matches as a substring; for the same reason a CJK neighbour is a boundary for a Latin or
digit gold ("我有5只猫" holds "5"). An Arabic gold may carry a one-letter proclitic (و ف ب ل ك) or the
article ال. Fallback, for golds holding a number only: every number of the gold appears in the
answer (compared as numbers: ``5`` never matches ``15`` or ``5.5``) and every content word of the
gold (3+ letters or am/pm, not a hedge like about/around/nearly; looked for in its singular)
appears too. The fallback is not used for golds without a number (as in glasshouse, it exists
for other ways of writing numbers); there, word order carries meaning the rule cannot check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from .normal_form import normalize

__all__ = [
    "contains",
    "contains_normalized",
    "contains_normal_forms",
    "matches_any",
    "numbers_in",
    "HEDGE_WORDS",
    "clear_caches",
]

# ---------------------------------------------------------------------------------------------
# Matching

_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\u3130-\u318f]")
_ARABIC_LETTER = re.compile(r"[\u0620-\u064a]")
# 9:30 is one token, not 9 and 30; an ordinal keeps its suffix (21st is not the count 21)
_NUMBER = re.compile(r"(?<![\d.,:])\d+(?:[.,:]\d+)*(?:st|nd|rd|th)?(?![\d])")
HEDGE_WORDS = frozenset(
    "about around roughly approximately approx some over under just almost nearly circa "
    "exactly only and per than".split()
)
# Content words of the fallback: 3+ letters, plus am/pm (9:30 am is not 9:30 pm).
_LATIN_WORD = re.compile(r"[^\W\d_]{3,}|\b[ap]m\b")


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _blocks(c: str) -> bool:
    """Does this neighbour glue onto a Latin/digit gold edge? CJK characters do not: "我有5只猫"
    holds "5", "牙医是Lee医生" holds "Lee" (those scripts put no spaces between words)."""
    return (c.isalnum() or c == "_") and not _CJK.match(c)


_ARABIC_PROCLITICS = (
    "\u0648",
    "\u0641",
    "\u0628",
    "\u0644",
    "\u0643",
    "\u0627\u0644",
    "\u0648\u0627\u0644",
    "\u0641\u0627\u0644",
    "\u0628\u0627\u0644",
    "\u0644\u0627\u0644",
    "\u0643\u0627\u0644",
)
_ARABIC_SUFFIXES = ("", "\u0647", "\u0647\u0627", "\u0647\u0645", "\u0643", "\u064a", "\u0627\u062a")
_LATIN_SUFFIXES = ("", "s", "es", "d", "ed", "ing")
_Y_SUFFIXES = ("", "s", "d", "ing")
_ORDINALS = ("", "st", "nd", "rd", "th")


@dataclass(frozen=True)
class _GoldShape:
    """How to match one normalised gold: the literal to find and what may sit on each side."""

    literal: str
    left: str  # "none" | "word" | "digit" | "arabic"
    middles: tuple[str, ...]  # text right after the literal before a suffix ("y"/"ie" for a y-gold)
    suffixes: tuple[str, ...] | None  # None: no right boundary (CJK or punctuation edge)
    number_right: bool  # the gold ends in a digit: not followed by .5 / ,5 / :30


@lru_cache(maxsize=16384)
def _gold_shape(g: str) -> _GoldShape:
    first, last = g[0], g[-1]
    if not _is_word_char(first) or _CJK.match(first):
        left = "none"
    elif _ARABIC_LETTER.match(first):
        left = "arabic"
    else:
        left = "digit" if first.isdigit() else "word"
    literal: str = g
    middles: tuple[str, ...] = ("",)
    suffixes: tuple[str, ...] | None
    if not _is_word_char(last) or _CJK.match(last):
        suffixes = None
    elif last.isdigit():
        # "May 21" is in "May 21st", but a bare count is not an ordinal: "one" is not "first"
        suffixes = _ORDINALS if any(c.isalpha() for c in g) else ("",)
    elif _ARABIC_LETTER.match(last):
        suffixes = _ARABIC_SUFFIXES
    elif last == "y" and len(g) > 2:
        literal, middles, suffixes = g[:-1], ("y", "ie"), _Y_SUFFIXES
    else:
        suffixes = _LATIN_SUFFIXES
    return _GoldShape(literal, left, middles, suffixes, last.isdigit())


def _left_ok(a: str, i: int, left: str) -> bool:
    if left == "none" or i == 0:
        return True
    prev = a[i - 1]
    if left == "arabic":
        if not _is_word_char(prev):
            return True
        return any(
            a.startswith(p, i - len(p)) and (i - len(p) == 0 or not _is_word_char(a[i - len(p) - 1]))
            for p in _ARABIC_PROCLITICS
            if len(p) <= i
        )
    if _blocks(prev):
        return False
    # a number is not the tail of a decimal or a time: "5" is not inside "1.5" or "9:05"
    return not (left == "digit" and prev in ".,:" and i >= 2 and a[i - 2].isdigit())


def _right_ok(a: str, j: int, shape: _GoldShape) -> bool:
    if shape.suffixes is None:
        return any(a.startswith(m, j) for m in shape.middles)
    n = len(a)
    for m in shape.middles:
        if not a.startswith(m, j):
            continue
        k = j + len(m)
        for suf in shape.suffixes:
            if suf and not a.startswith(suf, k):
                continue
            e = k + len(suf)
            if e < n and _blocks(a[e]):
                continue
            if shape.number_right and e + 1 < n and a[e] in ".,:" and a[e + 1].isdigit():
                continue
            return True
    return False


def _find(a: str, g: str) -> bool:
    """Word-boundary search of a normalised gold in a normalised answer, without a regex."""
    shape = _gold_shape(g)
    lit, find, start = shape.literal, a.find, 0
    plain = shape.middles[0] == ""  # the literal is the whole gold (not a y-gold's stem)
    while True:
        i = find(lit, start)
        if i < 0:
            return False
        j = i + len(lit)
        # the common case first: spaces (or the text's ends) on both sides satisfy every shape
        if plain and (i == 0 or a[i - 1] == " ") and (j == len(a) or a[j] == " "):
            return True
        if _left_ok(a, i, shape.left) and _right_ok(a, j, shape):
            return True
        start = i + 1


def _parse_number(s: str) -> float:
    if "," in s and "." not in s:
        s = s.replace(",", ".") if s.count(",") == 1 else s.replace(",", "")
    else:
        s = s.replace(",", "")
    try:
        return float(s)
    except ValueError:  # e.g. "1.2.3" (a version number): compare as text
        return float("nan")


def numbers_in(normalised: str) -> list[str]:
    """The numbers of an already normalised text, as written (``1.5``, ``2026``)."""
    return _NUMBER.findall(normalised)


@lru_cache(maxsize=16384)
def _gold_fallback(g: str) -> tuple[tuple, tuple[str, ...]] | None:
    nums = numbers_in(g)
    if not nums:
        return None
    keys = tuple(_number_key(n) for n in nums)
    words = [_singular(w) for w in _LATIN_WORD.findall(g) if w not in HEDGE_WORDS]
    return keys, tuple(dict.fromkeys(words))


def _singular(w: str) -> str:
    """A fallback content word is looked for in its singular, so "3 hour mark" has "3 hours"
    (the suffix rule then still accepts "hours")."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _number_key(n: str):
    """A number compared as a number; an ordinal ("21st") and a zero-padded part of a code or date
    ("06", "09") compare as text, so "six" never matches "09/06" and "one" never "1st"."""
    if n[-1].isalpha():
        return ("ordinal", _parse_number(n[:-2]))
    if len(n) > 1 and n[0] == "0" and n[1].isdigit():
        return n
    v = _parse_number(n)
    return n if v != v else v  # NaN: keep the text


def contains(answer: str, gold: str) -> bool:
    """True when the (normalised) answer holds the (normalised) gold; see the module docstring.

    >>> contains("We moved on in March", "on"), contains("a long conversation", "on")
    (True, False)
    >>> contains("It costs five dollars a month", "$5"), contains("about 15 people", "5")
    (True, False)
    >>> contains("She adopted two cats", "2 cat")
    True
    """
    if not answer or not gold:
        return False
    return contains_normalized(normalize(answer), gold)


def contains_normalized(a: str, gold: str | None) -> bool:
    """``contains`` for an answer already passed through ``normalize`` (normalise a long text once)."""
    if not a or not gold:
        return False
    return contains_normal_forms(a, normalize(gold))


def contains_normal_forms(a: str, g: str) -> bool:
    """``contains`` for an answer and a gold both already passed through ``normalize`` (a grader
    that meets one gold many times normalises it once).

    >>> contains_normal_forms(normalize("She adopted two cats"), normalize("2 cat"))
    True
    """
    if not a or not g:
        return False
    if _find(a, g):
        return True
    fb = _gold_fallback(g)
    if fb is None:
        return False
    keys, words = fb
    answer_keys = {_number_key(n) for n in numbers_in(a)}
    return all(k in answer_keys for k in keys) and all(_find(a, w) for w in words)


def matches_any(answer: str, golds: Iterable[str | None]) -> bool:
    """True when the answer contains any of the (non-empty) golds."""
    if not answer:
        return False
    a = normalize(answer)
    return any(contains_normalized(a, g) for g in golds if g)


def clear_caches() -> None:
    """Forget memoised gold shapes and fallbacks (for benchmarks)."""
    for f in (_gold_shape, _gold_fallback):
        f.cache_clear()
