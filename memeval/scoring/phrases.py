"""A fast "does any of these phrase patterns occur" test, shared by the IDK, denial, disagreement
and correction detectors.

Python's regex engine scans fast only for a pattern that starts with a literal; a leading ``\\b``,
a leading alternation or one huge alternation makes it try every position of the text (~30-80 µs
per KB per pattern). So a ``PhraseSet``:

1. splits each pattern on its top-level ``|`` and expands a leading group ``(?:a|b)`` or optional
   group ``(?:a )?`` into one pattern per branch, so every pattern starts with a literal;
2. takes a leading ``\\b`` off and checks it by hand on the match's first character;
3. reads off each pattern's parsed form the literals every match must hold beyond its prefix
   (``required_literals``): a whole word where word edges surround it ("know" in
   ``i (?:do not|don't) know\\b``), else a substring; a set of them for a group's alternatives.
   The text's words are split out once (``text_words``, one C-level pass) and met with the index
   (a set intersection); a pattern's regex runs only when its indexing word (or substring) is in the
   text and its other required words are too. Patterns for other scripts run only on non-ASCII text.

The answer is the same as ``re.search`` of the original patterns (``PhraseSet._search_reference``
keeps that plain path, for tests).
"""

from __future__ import annotations

import re
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Iterable, Iterator

from ..errors import ArgumentError

__all__ = ["PhraseSet", "split_alternatives", "expand_leading", "literal_prefix", "required_literals", "text_words"]

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
    __slots__ = ("regex", "left_boundary", "needs")

    def __init__(self, pattern: str, left_boundary: bool, needs: tuple[frozenset[str], ...] = ()):
        self.left_boundary = left_boundary
        self.regex = re.compile(pattern)
        self.needs = needs  # word sets each of which the text must meet before the regex runs

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


# ---------------------------------------------------------------------------------------------
# Required literals: what every match of a pattern must hold, read off its parsed form

# Words too common to tell texts apart: a literal made of one of them is a last resort.
_COMMON = frozenset(
    "a an the i you we he she it they me my your our and or but of in on at to for with by from as is was "
    "are were be been am do does did done have has had not no nor n't so that this there what can could "
    "will would any all t s".split()
)
_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", _sre.MAX_REPEAT))
_EDGES = (_sre.AT_BOUNDARY, _sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING, _sre.AT_END, _sre.AT_END_STRING)
_MAX_ALTS = 64
#: a text's words, as the regex engine's ``\b`` sees them (the same Unicode ``\w``)
_WORD = re.compile(r"\w+")
#: the same for ASCII text, as a byte table (non-word bytes become spaces: many times faster)
_ASCII_WORD_BYTES = bytes(b if b < 128 and _WORD.match(chr(b)) else 32 for b in range(256))

#: (whole words?, literals): every match holds one of the literals (as a whole ``\w+`` word of the
#: text when whole words)
_Candidate = tuple[bool, frozenset[str]]


def text_words(text: str) -> set[str]:
    """The ``\\w+`` words of a text (what the word index looks up).

    >>> sorted(text_words("I don't know_it, 5x!"))
    ['5x', 'I', 'don', 'know_it', 't']
    """
    if text.isascii():
        return set(text.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split())
    return set(_WORD.findall(text))


def _weight(literal: str) -> int:
    """How well a literal tells texts apart: its length without edge spaces; a common word counts 1."""
    core = literal.strip()
    return 1 if core in _COMMON else len(core)


def _rank(c: _Candidate) -> tuple[bool, int, int, int]:
    weakest = min(_weight(x) for x in c[1])
    return (c[0], min(weakest, 4 if c[0] else 2), -len(c[1]), weakest)


def _best(cands: list[_Candidate]) -> _Candidate | None:
    """The candidate to index a pattern by: a whole word over a substring (a set look-up costs
    nothing, a substring a search of the text: even a common word is cheaper, as the other words a
    phrase needs are checked before its regex runs), then literals of 4+ characters, then the fewest
    (each substring is one search), then the strongest weakest member."""
    cands = [c for c in cands if c[1] and all(_weight(x) > 0 for x in c[1])]
    return max(cands, key=_rank) if cands else None


def _edge_item(item) -> bool:
    """Is there a word edge at this item (a non-word literal character, ``\\b`` or an anchor)?"""
    op, av = item
    if op is _sre.AT:
        return av in _EDGES
    return op is _sre.LITERAL and _WORD.match(chr(av)) is None


def _plain(item) -> bool:
    """A group without flags (a flag such as ``(?i:...)`` changes what its literals match)."""
    return item[0] is _sre.SUBPATTERN and not item[1][1] and not item[1][2]


def _edge_at_end(items) -> bool:
    """Every match of the parsed sequence ends in a non-word character or at a ``\\b``/anchor."""
    if not items:
        return False
    op, av = items[-1]
    if op is _sre.LITERAL or op is _sre.AT:
        return _edge_item(items[-1])
    if _plain(items[-1]):
        return _edge_at_end(av[-1])
    if op is _sre.BRANCH:
        return all(_edge_at_end(alt) for alt in av[1])
    return False


def _edge_at_start(items) -> bool:
    """Every match of the parsed sequence starts with a non-word character or at a ``\\b``/anchor."""
    if not items:
        return False
    op, av = items[0]
    if op is _sre.LITERAL or op is _sre.AT:
        return _edge_item(items[0])
    if _plain(items[0]):
        return _edge_at_start(av[-1])
    if op is _sre.BRANCH:
        return all(_edge_at_start(alt) for alt in av[1])
    return False


def _is_optional(item) -> bool:
    return item[0] in _REPEATS and item[1][0] == 0


def _edge_before(items, i: int, left: bool) -> bool:
    """A word edge lies just before ``items[i]`` in every match (an optional item before it is
    skipped when, if present, it ends in one)."""
    k = i - 1
    while k >= 0 and _is_optional(items[k]):
        if not _edge_at_end(items[k][1][2]):
            return False
        k -= 1
    return left if k < 0 else _edge_at_end([items[k]])


def _edge_after(items, j: int, right: bool) -> bool:
    """A word edge lies just before ``items[j]`` (after ``items[j - 1]``) in every match."""
    k = j
    while k < len(items) and _is_optional(items[k]):
        if not _edge_at_start(items[k][1][2]):
            return False
        k += 1
    return right if k == len(items) else _edge_at_start([items[k]])


def _literal_texts(item) -> list[str] | None:
    """Every text a pure-literal item can match (a literal, a class of literals, a group or an
    alternation of such); None when it is something else or has too many."""
    op, av = item
    if op is _sre.LITERAL:
        return [chr(av)]
    if op is _sre.IN:
        return [chr(c) for o, c in av] if all(o is _sre.LITERAL for o, _ in av) else None
    if _plain(item):
        return _sequence_texts(av[-1])
    if op is _sre.BRANCH:
        out: list[str] = []
        for alt in av[1]:
            texts = _sequence_texts(alt)
            if texts is None:
                return None
            out.extend(texts)
        return out if len(out) <= _MAX_ALTS else None
    if op in _REPEATS and av[:2] == (0, 1):  # an optional pure-literal part: with and without it
        texts = _sequence_texts(av[2])
        return None if texts is None or len(texts) >= _MAX_ALTS else [*texts, ""]
    return None


def _sequence_texts(items) -> list[str] | None:
    texts = [""]
    for item in items:
        more = _literal_texts(item)
        if more is None or len(texts) * len(more) > _MAX_ALTS:
            return None
        texts = [t + m for t in texts for m in more]
    return texts


def _has_edge(texts: list[str]) -> bool:
    return any(_WORD.fullmatch(t) is None for t in texts if t)


def _stretch_candidates(texts: list[str], before: bool, after: bool) -> list[_Candidate]:
    """Candidates of a stretch that matches one of ``texts``, with or without word edges around it."""
    if "" in texts:
        return []
    out: list[_Candidate] = [(False, frozenset(texts))]
    per_text = [
        [m.group() for m in _WORD.finditer(t) if (m.start() > 0 or before) and (m.end() < len(t) or after)]
        for t in texts
    ]
    if all(per_text):
        out.extend((True, frozenset({w})) for w in set(per_text[0]).intersection(*per_text[1:]))
        # each text's rarest word, then each text's next rarest, ...: each such union is required
        ranked = [sorted(set(ws), key=lambda w: (-_weight(w), w)) for ws in per_text]
        for k in range(min(3, min(len(ws) for ws in ranked))):
            out.append((True, frozenset(ws[k] for ws in ranked)))
    return out


def _candidates(items, left: bool, right: bool) -> list[_Candidate]:
    """Candidates of the parsed sequence ``items``, each required of every match; ``left``/``right``:
    a word edge lies just before / just after the sequence in every match."""
    out: list[_Candidate] = []
    n, i = len(items), 0
    while i < n:
        texts = _literal_texts(items[i])
        if texts is not None and not ("" in texts and _has_edge(texts)):  # a stretch of pure-literal
            # items, as the texts it can match (not from an optional word: it requires nothing)
            parts = [texts]
            j = i + 1
            while j < n:
                more = _literal_texts(items[j])
                # (an optional word such as "(?:ever )?" ends the stretch: it would blur which words
                # each text of the stretch needs)
                if more is None or len(texts) * len(more) > _MAX_ALTS or ("" in more and _has_edge(more)):
                    break
                texts = [t + m for t in texts for m in more]
                parts.append(more)
                j += 1
            out.extend(_stretch_candidates(texts, _edge_before(items, i, left), _edge_after(items, j, right)))
            # each part of the stretch is required on its own too (a short one is a cheap search)
            out.extend((False, frozenset(part)) for part in parts if len(parts) > 1 and "" not in part)
            i = j
            continue
        op, av = items[i]
        before, after = _edge_before(items, i, left), _edge_after(items, i + 1, right)
        if _plain(items[i]):
            out.extend(_candidates(av[-1], before, after))
        elif op is _sre.BRANCH:  # one literal of each alternative: the set of them is required
            per_alt = [_candidates(alt, before, after) for alt in av[1]]
            for words_only in (True, False):  # a union of whole words where each has one
                picks = [_best([c for c in cs if c[0] or not words_only]) for cs in per_alt]
                if all(p is not None for p in picks):
                    union = frozenset().union(*(p[1] for p in picks if p is not None))
                    out.append((all(p is not None and p[0] for p in picks), union))
        elif op in _REPEATS and av[0] >= 1:
            out.extend(_candidates(av[2], False, False))
        # anything else (a class, an assertion, an optional part, an anchor) requires no literal
        i += 1
    return out


def _parsed_candidates(pattern: str, left_boundary: bool) -> list[_Candidate]:
    """The candidates of a whole pattern; none (the pattern always runs) if the regex parser's
    private form is not what this module reads (another Python version): slower, never wrong."""
    try:
        return _candidates(_sre_parse.parse(pattern), left_boundary, False)
    except (AttributeError, IndexError, TypeError, ValueError):
        return []


def required_literals(pattern: str, left_boundary: bool = False) -> _Candidate | None:
    """``(whole_words, literals)``: every match of ``pattern`` holds one of ``literals`` (as a whole
    word of the text when ``whole_words``); None when none was found (the pattern always runs).
    ``left_boundary``: a ``\\b`` taken off the front is checked before the pattern.

    >>> required_literals(r"i (?:do not|don't) know\\b")
    (True, frozenset({'know'}))
    >>> required_literals(r"never (?:mentioned|said)\\b", left_boundary=True)
    (True, frozenset({'never'}))
    >>> whole, literals = required_literals(r"(?:was|had)n't (?:ever )?(?:mentioned|said)\\b")
    >>> whole, sorted(literals)
    (True, ['mentioned', 'said'])
    >>> required_literals(r"contradic", left_boundary=True)
    (False, frozenset({'contradic'}))
    >>> required_literals(r"[^.]{0,9}x?") is None
    True
    """
    return _best(_parsed_candidates(pattern, left_boundary))


def _phrase(variant: str, left_boundary: bool) -> tuple[_Phrase, _Candidate | None]:
    """A phrase with the words it needs, and the candidate to index it by."""
    cands = _parsed_candidates(variant, left_boundary)
    best = _best(cands)
    needs = {c[1] for c in cands if c[0] and c[1] and c != best}
    return _Phrase(variant, left_boundary, tuple(sorted(needs, key=sorted))), best


# ---------------------------------------------------------------------------------------------
# The index


class _Index:
    """Phrases by a required whole word, by a required substring, and those always run."""

    __slots__ = ("by_word", "words", "by_substring", "always")

    def __init__(self, patterns: Iterable[str]):
        by_word: dict[str, list[_Phrase]] = {}
        by_sub: dict[str, list[_Phrase]] = {}
        always: list[_Phrase] = []
        for p in patterns:
            for alt in split_alternatives(p):
                boundary = alt.startswith(r"\b")
                for variant in expand_leading(alt[2:] if boundary else alt):
                    phrase, best = _phrase(variant, boundary)
                    if best is None:
                        always.append(phrase)
                        continue
                    for lit in sorted(best[1]):
                        (by_word if best[0] else by_sub).setdefault(lit, []).append(phrase)
        self.by_word = {w: tuple(ps) for w, ps in by_word.items()}
        self.words = frozenset(by_word)
        self.by_substring = tuple((lit, tuple(ps)) for lit, ps in by_sub.items())
        self.always = tuple(always)

    @staticmethod
    def _run(phrases: tuple[_Phrase, ...], text: str, words: set[str]) -> bool:
        for p in phrases:
            for need in p.needs:
                if words.isdisjoint(need):
                    break
            else:
                if p.search(text):
                    return True
        return False

    def any(self, text: str, words: set[str]) -> bool:
        run = self._run
        if self.always and run(self.always, text, words):
            return True
        by_word = self.by_word
        for w in self.words.intersection(words):
            if run(by_word[w], text, words):
                return True
        for lit, phrases in self.by_substring:
            if lit in text and run(phrases, text, words):
                return True
        return False

    def phrases(self) -> set[_Phrase]:
        out = set(self.always)
        out.update(p for ps in self.by_word.values() for p in ps)
        out.update(p for _, ps in self.by_substring for p in ps)
        return out


class PhraseSet:
    """Patterns for any text (``common``) and patterns that need non-ASCII text (``non_ascii``)."""

    def __init__(self, common: Iterable[str], non_ascii: Iterable[str] = ()):
        self._patterns = (tuple(common), tuple(non_ascii))
        self.common = _Index(self._patterns[0])
        self.non_ascii = _Index(self._patterns[1])
        self._reference: tuple[list[re.Pattern], list[re.Pattern]] | None = None

    def search(self, text: str, words: set[str] | None = None) -> bool:
        """Does any pattern occur in ``text``? (``words``: its ``text_words``, when already known.)"""
        if words is None:
            words = text_words(text)
        if self.common.any(text, words):
            return True
        return not text.isascii() and self.non_ascii.any(text, words)

    def _search_reference(self, text: str) -> bool:
        """The plain path: ``re.search`` of every original pattern (what ``search`` must equal)."""
        if self._reference is None:
            self._reference = ([re.compile(p) for p in self._patterns[0]], [re.compile(p) for p in self._patterns[1]])
        common, non_ascii = self._reference
        if any(r.search(text) for r in common):
            return True
        return not text.isascii() and any(r.search(text) for r in non_ascii)

    def __len__(self) -> int:
        return len(self.common.phrases() | self.non_ascii.phrases())
