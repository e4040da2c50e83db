"""Finding, across a whole haystack, the turns that may contain a value, without running the
scorer's ``contains`` on every turn (the audit's reconcile and contradict checks).

``Haystack.candidates(value, start)`` returns a superset of the positions of the turns where
``memeval.text.containment.contains(turn_text, value)`` holds, usually a small one:

- a value with a 3+ letter word (after the scorer's normalisation): the turns holding a word that
  starts with that word (less a trailing s/es/d/ed/ing/y), from an index word -> turns; non-ASCII
  words (CJK, Arabic with proclitics) by a substring scan of the folded text;
- a value made of digits only: the turns whose folded text holds its longest digit run, plus the
  turns holding number words or fractions whose normal form (computed once per turn) holds it;
- otherwise every turn.

The folding (casefold, NFKD, every combining mark dropped, thousands commas removed) is coarser
than the scorer's, which is what keeps the look-up a superset; ``tests/test_audit.py`` checks it
against ``contains`` on tricky texts.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterable

from ..bench.model import Turn
from ..text.fold import fold_marks
from ..text.normal_form import normalize

__all__ = ["Haystack", "turn_text", "fold", "probe"]


def turn_text(t: Turn) -> str:
    """The text a turn is graded on: what systems receive, its text. A caption kept apart in
    ``caption`` is not sent to systems, so it is not counted (LoCoMo's captions are in the text:
    the loader appends them as LoCoMo's own evaluation does)."""
    return t.text


_LETTERS = re.compile(r"[^\W\d_]+")
_INDEX_WORD = re.compile(r"[^\W\d_]{3,}")  # probes are 3+ letters: shorter words need no index
_DIGIT_RUN = re.compile(r"\d+")
_NUMBER_WORDS = (
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty "
    "forty fifty sixty seventy eighty ninety hundred thousand million billion dozen once twice "
    "thrice half halves quarter quarters third thirds"
).split()
_NUMBER_WORDS += (
    "first third fourth fourths fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth thirtieth"
).split()
# number words of the bench languages that the scorer writes as digits (as they read folded)
_NUMBER_WORDS += (
    "dos tres cuatro cinco seis siete ocho nueve diez doce veinte deux trois quatre cinq huit dix "
    "douze vingt zwei drei vier funf sechs sieben acht neun zehn zwolf zwanzig dois duas quatro "
    "sete oito nove dez vinte tre quattro cinque sette dieci dodici venti один одна два две три "
    "четыре пять шесть семь восемь девять десять двенадцать двадцать"
).split()
_UNIT_WORDS = "zero one two three four five six seven eight nine".split()
_FRACTION_ISH = re.compile(r"\d\s*/\s*\d")
# Words the scorer may rewrite or drop, so they cannot serve as a probe.
_UNSAFE_PROBES = frozenset(
    """
a an the and or of to in on at for with by from as is are was were be been it its this that these those
i me my mine we us our ours you your yours he him his she her hers they them their theirs
per cent percent percentage dollar dollars usd bucks euro euros eur about around nearly roughly
approximately almost some
""".split()
    + _NUMBER_WORDS
    + _UNIT_WORDS
)


#: The audit's coarse fold (``memeval.text.fold.fold_marks``).
fold = fold_marks


def probe(value: str) -> tuple[str, str] | None:
    """``("word", w)``: a folded substring every turn that ``contains`` the value holds; or
    ``("digits", d)``: a digit run it holds once its number words are written as digits; or None."""
    folded = fold(normalize(value))  # the scorer matches the value's normal form
    words = [w for w in _LETTERS.findall(folded) if len(w) >= 3 and w not in _UNSAFE_PROBES]
    if words:
        w = max(words, key=len)
        for suffix in ("ing", "ed", "es", "s", "d", "y"):  # the scorer allows city -> cities
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                return "word", w[: -len(suffix)]
        return "word", w
    digits = _DIGIT_RUN.findall(folded)
    if digits:
        return "digits", max(digits, key=len)
    return None


class Haystack:
    """One haystack of a tier: its turns in file order and the look-ups the checks need."""

    __slots__ = (
        "hid",
        "turns",
        "pos",
        "sessions",
        "_folded",
        "_starts",
        "_words",
        "_vocab",
        "_wordy",
        "_normalized",
        "_built",
    )

    def __init__(self, hid):
        self.hid = hid
        self.turns: list[Turn] = []
        self.pos: dict[int, int] = {}
        self.sessions: set[str] = set()
        self._folded = ""  # built on first look-up (see ``_built``)
        self._starts: list[int] = []
        self._words: dict[str, list[int]] = {}
        self._built = False
        self._vocab: list[str] = []
        self._wordy: dict[bool, list[int]] = {}
        self._normalized: dict[int, str] = {}

    def evidence(self, ids: Iterable[int]) -> list[Turn] | None:
        """The turns with these ids, or None if any is missing."""
        out = []
        for i in ids:
            p = self.pos.get(i)
            if p is None:
                return None
            out.append(self.turns[p])
        return out

    def _build(self) -> None:
        """The folded text of every turn, joined, and an index word -> turn positions."""
        parts, starts, off = [], [], 0
        words: dict[str, list[int]] = {}
        for p, t in enumerate(self.turns):
            s = fold(turn_text(t))
            starts.append(off)
            parts.append(s)
            off += len(s) + 1
            for w in set(_INDEX_WORD.findall(s)):
                lst = words.get(w)
                if lst is None:
                    words[w] = [p]
                else:
                    lst.append(p)
        self._folded, self._starts, self._words = "\x00".join(parts), starts, words
        self._built = True
        self._vocab = sorted(words)

    def _scan(self, needle: str, start: int) -> list[int]:
        """Positions >= start of turns whose folded text holds ``needle`` anywhere."""
        text, starts, out = self._folded, self._starts, []
        i = text.find(needle, starts[start] if start < len(starts) else len(text))
        while i >= 0:
            p = bisect.bisect_right(starts, i)
            out.append(p - 1)
            i = text.find(needle, starts[p] if p < len(starts) else len(text))
        return out

    def _prefixed(self, prefix: str, start: int) -> list[int]:
        """Positions >= start of turns holding a word that starts with ``prefix``."""
        vocab, words = self._vocab, self._words
        i = bisect.bisect_left(vocab, prefix)
        lists = []
        while i < len(vocab) and vocab[i].startswith(prefix):
            lists.append(words[vocab[i]])
            i += 1
        if len(lists) == 1:
            lst = lists[0]
            return lst[bisect.bisect_left(lst, start) :]
        return sorted({p for lst in lists for p in lst[bisect.bisect_left(lst, start) :]})

    def _wordy_turns(self, units: bool) -> list[int]:
        """Turns where number words or fractions may turn into digits in the scorer's normal form."""
        if units not in self._wordy:
            found = set(self._scan("/", 0))
            found = {
                p
                for p in found
                if _FRACTION_ISH.search(
                    self._folded,
                    self._starts[p],
                    self._starts[p + 1] if p + 1 < len(self._starts) else len(self._folded),
                )
            }
            for w in _NUMBER_WORDS + (_UNIT_WORDS if units else []):
                found.update(self._words.get(w, ()))
            self._wordy[units] = sorted(found)
        return self._wordy[units]

    def candidates(self, value: str, start: int = 0) -> list[int] | range:
        """Positions >= start of turns that may contain ``value``: a superset of the turns the
        scorer's ``contains`` accepts, found without running it on every turn."""
        how = probe(value)
        if how is None:
            return range(start, len(self.turns))
        if not self._built:
            self._build()
        kind, needle = how
        if kind == "word":
            # an ASCII word of the value starts a word wherever the scorer finds the value;
            # other scripts (CJK, Arabic proclitics) may not separate words: plain substring scan
            return self._prefixed(needle, start) if needle.isascii() else self._scan(needle, start)
        found = self._scan(needle, start)
        # number words and fractions become digits only in the scorer's normal form
        wordy = self._wordy_turns(len(needle) == 1)
        extra = []
        for p in wordy[bisect.bisect_left(wordy, start) :]:
            norm = self._normalized.get(p)
            if norm is None:
                norm = self._normalized[p] = normalize(turn_text(self.turns[p]))
            if needle in norm:
                extra.append(p)
        return sorted(set(found).union(extra)) if extra else found
