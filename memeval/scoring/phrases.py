"""A fast "does any of these phrase patterns occur" test, shared by the IDK, denial, disagreement
and correction detectors.

Python's regex engine scans fast only for a pattern that starts with a literal; a leading ``\\b``,
a leading alternation or one huge alternation makes it try every position of the text (~30-80 µs
per KB per pattern). So a ``PhraseSet``:

1. splits each pattern on its top-level ``|`` and expands a leading group ``(?:a|b)`` or optional
   group ``(?:a )?`` into one pattern per branch, so every pattern starts with a literal;
2. takes a leading ``\\b`` off and checks it by hand on the match's first character;
3. groups the patterns by their literal prefix and runs a group only when ``prefix in text``
   (a C substring search); patterns for other scripts run only on non-ASCII text.

The answer is the same as ``re.search`` of the original patterns.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator
from ..errors import ArgumentError

__all__ = ["PhraseSet", "split_alternatives", "expand_leading", "literal_prefix"]

_MAX_VARIANTS = 256


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _outside_classes(pattern: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` for each character of ``pattern`` from ``start`` that is not escaped
    and not inside a character class; ``depth`` counts the groups open before it (a ``(`` counts
    after itself, a ``)`` before)."""
    depth, in_class, i = 0, False, start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":  # "[]...]": a leading "]" is a literal
                i += 1
        else:
            if c == ")":
                depth -= 1
            yield i, c, depth
            if c == "(":
                depth += 1
        i += 1


def split_alternatives(pattern: str) -> list[str]:
    """Split a pattern on its top-level ``|`` (outside groups, classes and escapes).

    >>> split_alternatives(r"a(b|c)|[|]d|e\\|f")
    ['a(b|c)', '[|]d', 'e\\\\|f']
    """
    parts, start = [], 0
    for i, c, depth in _outside_classes(pattern):
        if c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    parts.append(pattern[start:])
    return parts


def _group_end(pattern: str, open_at: int) -> int:
    """Index of the ``)`` closing the group opened at ``open_at``."""
    for i, c, depth in _outside_classes(pattern, open_at):
        if c == ")" and depth == 0:
            return i
    raise ArgumentError(f"unbalanced group in {pattern!r}")


def expand_leading(pattern: str) -> list[str]:
    """Expand a leading non-capturing group (optionally ``?``) into one pattern per branch."""
    if not pattern.startswith("(?:"):
        return [pattern]
    end = _group_end(pattern, 0)
    inner, rest = pattern[3:end], pattern[end + 1 :]
    optional = rest.startswith("?") and not rest.startswith("??")
    if optional:
        rest = rest[1:]
    elif rest[:1] in ("*", "+", "{"):
        return [pattern]  # a repeated group: leave it as it is
    branches = split_alternatives(inner) + ([""] if optional else [])
    out: list[str] = []
    for b in branches:
        out.extend(expand_leading(b + rest))
        if len(out) > _MAX_VARIANTS:
            return [pattern]
    return out


def literal_prefix(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts with ('' when there is none)."""
    out: list[str] = []
    for c in pattern:
        if c in "*?{":
            return "".join(out[:-1])
        if c in ".^$+}[]\\|()":
            break
        out.append(c)
    return "".join(out)


class _Phrase:
    __slots__ = ("regex", "left_boundary")

    def __init__(self, pattern: str, left_boundary: bool):
        self.left_boundary = left_boundary
        self.regex = re.compile(pattern)

    def search(self, text: str) -> bool:
        if not self.left_boundary:
            return self.regex.search(text) is not None
        pos = 0
        search = self.regex.search
        while True:
            m = search(text, pos)
            if m is None:
                return False
            s = m.start()
            before = s > 0 and _word_char(text[s - 1])
            after = s < len(text) and _word_char(text[s])
            if before != after:  # what \b tests
                return True
            pos = s + 1


def _compile(patterns: Iterable[str]) -> tuple[tuple[str, tuple[_Phrase, ...]], ...]:
    groups: dict[str, list[_Phrase]] = {}
    for p in patterns:
        for alt in split_alternatives(p):
            boundary = alt.startswith(r"\b")
            for variant in expand_leading(alt[2:] if boundary else alt):
                groups.setdefault(literal_prefix(variant), []).append(_Phrase(variant, boundary))
    return tuple((prefix, tuple(ps)) for prefix, ps in groups.items())


class PhraseSet:
    """Patterns for any text (``common``) and patterns that need non-ASCII text (``non_ascii``)."""

    def __init__(self, common: Iterable[str], non_ascii: Iterable[str] = ()):
        self.common = _compile(common)
        self.non_ascii = _compile(non_ascii)

    @staticmethod
    def _any(groups, text: str) -> bool:
        for prefix, phrases in groups:
            if prefix in text:
                for p in phrases:
                    if p.search(text):
                        return True
        return False

    def search(self, text: str) -> bool:
        if self._any(self.common, text):
            return True
        return not text.isascii() and self._any(self.non_ascii, text)

    def __len__(self) -> int:
        return sum(len(ps) for _, ps in self.common + self.non_ascii)
