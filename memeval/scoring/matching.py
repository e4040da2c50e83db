"""Answer matching for dry mode (benchmark.md §4): normalise both texts, then look for the gold.

``normalize`` puts an answer and a gold into one comparable form:

* Unicode: NFKC, casefold, Latin/Greek/Cyrillic accents stripped (``José`` = ``Jose``,
  ``ё`` = ``е``), Arabic alef variants unified and harakat/tatweel dropped, Arabic-Indic digits
  made ASCII; curly quotes made straight.
* ``1,000`` → ``1000``; ``1/4`` → ``0.25`` (a proper fraction, not part of a date like 3/4/2026).
* English number words → digits (``twenty-five`` → ``25``, ``a hundred`` → ``100``,
  ``two and a half`` → ``2.5``, ``a quarter`` → ``0.25``, ``half`` → ``0.5``, ``twice`` → ``2``,
  ``a dozen`` → ``12``).
* ``percent``/``per cent`` → ``%`` and ``dollar(s)`` → ``$``, ``euro(s)`` → ``€``; an amount and
  its sign are written one way (``5 %`` → ``5%``, ``150 $`` → ``$150``).
* English articles and personal pronouns dropped (questions are third person, conversations
  first: "her dentist" = "my dentist"); "a" is kept when it is not followed by a word ("plan a").
* Periods, commas and colons not between digits, dashes, quotes, brackets, slashes and sentence
  punctuation (also CJK and Arabic) become spaces; white space collapses to one space, never to
  nothing, so a short gold like ``on`` cannot match inside ``conversation``.

``contains`` then looks for the gold on word boundaries, allowing a trailing ``s/es/d/ed/ing``
(``y`` → ``ies/ied``; ordinals ``st/nd/rd/th`` after a number). A gold edge made of CJK
(Han, kana, Hangul) needs no boundary: those scripts do not separate words with spaces, so such a
gold matches as a substring. An Arabic gold may carry a one-letter proclitic (و ف ب ل ك) or the
article ال. Fallback, for golds holding a number only: every number of the gold appears in the
answer (compared as numbers: ``5`` never matches ``15`` or ``5.5``) and every content word of the
gold (3+ letters, not a hedge like about/around/nearly) appears too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

__all__ = ["normalize", "contains", "matches_any", "numbers_in", "HEDGE_WORDS"]

# ---------------------------------------------------------------------------------------------
# Unicode folding

_PRE_TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u066b": ".", "\u066c": ",",  # Arabic decimal and thousands separators
    **{chr(0x0660 + i): str(i) for i in range(10)},  # Arabic-Indic digits
    **{chr(0x06F0 + i): str(i) for i in range(10)},  # Extended Arabic-Indic (Persian/Urdu)
    "\u0623": "\u0627", "\u0625": "\u0627", "\u0622": "\u0627", "\u0671": "\u0627",  # alef forms
    "\u0640": None,  # tatweel
})
# Combining diacritical marks (Latin, Greek, Cyrillic accents) and Arabic harakat. Japanese
# (han)dakuten (U+3099/309A) are deliberately not here: が must not become か.
_COMBINING = re.compile("[\u0300-\u036f\u064b-\u065f\u0670]")


def _fold_unicode(text: str) -> str:
    text = text.translate(_PRE_TRANSLATE)
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    text = _COMBINING.sub("", text)
    return unicodedata.normalize("NFC", text).casefold()


# ---------------------------------------------------------------------------------------------
# Numbers

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# A proper fraction a/b, not part of a longer slash chain (dates like 3/4/2026 stay as they are).
_FRACTION = re.compile(r"(?<![\d/.])(\d{1,4})\s*/\s*(\d{1,4})(?![\d/])")

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12}
_NUMWORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
# Fraction phrases first (they contain number words), then runs of number words.
_FRACTION_WORDS = {
    "three quarters": "0.75", "three quarter": "0.75", "two thirds": "0.67", "a third": "0.33",
    "one third": "0.33", "a quarter": "0.25", "one quarter": "0.25", "quarter": "0.25",
    "a half": "0.5", "one half": "0.5", "half": "0.5", "once": "1", "twice": "2", "thrice": "3",
}
_NUMBER_WORDS = re.compile(
    r"\b(?:(?P<frac>" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in
                                 sorted(_FRACTION_WORDS, key=len, reverse=True)) + r")"
    r"|(?P<run>(?:an?\s+(?=hundred|thousand|million|billion|dozen))?(?:" + _NUMWORD + r")"
    r"(?:(?:\s+and\s+|\s*-\s*|\s+)(?:" + _NUMWORD + r"))*)(?P<half>\s+and\s+a\s+half)?)\b"
)
_SPLIT_RUN = re.compile(r"\s*-\s*|\s+")


def _run_to_text(words: list[str]) -> str:
    """'twenty five' → '25'; 'one hundred and five' → '105'; 'five twenty' → '5 20'."""
    out: list[str] = []
    total = cur = 0
    last = None  # kind of the previous number word: unit, tens, scale
    pending_and = False

    def flush() -> None:
        nonlocal total, cur, last
        if last is not None:
            out.append(str(total + cur))
        total = cur = 0
        last = None

    for w in words:
        if w in ("a", "an"):
            continue
        if w == "and":
            pending_and = True
            continue
        joined_by_and, pending_and = pending_and, False
        if w in _UNITS:
            u = _UNITS[w]
            ok = last == "scale" or (last == "tens" and u < 10 and not joined_by_and and u != 0)
        elif w in _TENS:
            ok = last == "scale" and cur % 100 == 0
        else:
            ok = last != "scale" or w in ("thousand", "million", "billion")
        if not ok and last is not None:
            flush()
            if joined_by_and:
                out.append("and")
        if w in _UNITS:
            cur += _UNITS[w]
            last = "unit"
        elif w in _TENS:
            cur += _TENS[w]
            last = "tens"
        else:
            scale = _SCALES[w]
            if scale >= 1000:
                total += max(cur, 1) * scale
                cur = 0
            else:
                cur = max(cur, 1) * scale
            last = "scale"
    flush()
    if pending_and:
        out.append("and")
    return " ".join(out)


def _number_word_sub(m: re.Match) -> str:
    if m.group("frac"):
        return " " + _FRACTION_WORDS[" ".join(m.group("frac").split())] + " "
    text = _run_to_text(_SPLIT_RUN.split(m.group("run")))
    if m.group("half"):
        head, _, last = text.rpartition(" ")
        text = (head + " " if head else "") + _fmt(float(last) + 0.5)
    return " " + text + " "


def _fmt(x: float) -> str:
    x = round(x, 2)
    return str(int(x)) if x == int(x) else repr(x)


def _fraction_sub(m: re.Match) -> str:
    a, b = int(m.group(1)), int(m.group(2))
    if 0 < a < b:
        return " " + _fmt(a / b) + " "
    return m.group(0)


# ---------------------------------------------------------------------------------------------
# Units, articles, pronouns, punctuation

_PERCENT_WORD = re.compile(r"\bper\s?cent\b|\bpercentage points?\b")
_CURRENCY_WORD = re.compile(r"\b(?:(?P<usd>dollars?|usd|bucks)|(?P<eur>euros?|eur))\b")
_PERCENT_SPACE = re.compile(r"(\d)\s+%")
_CURRENCY_AFTER = re.compile(r"(\d+(?:[.,]\d+)?)\s*([$€£¥₩₽])")
_CURRENCY_SPACE = re.compile(r"([$€£¥₩₽])\s+(?=\d)")

_PRONOUNS = (
    "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself "
    "it its itself we us our ours ourselves they them their theirs themselves"
).split()
_DROP_WORDS = re.compile(
    r"\b(?:an?\s+(?=\w)|the\b|(?:" + "|".join(_PRONOUNS) + r")(?:'(?:m|re|s|ve|ll|d))?\b)"
)

_PUNCT_TO_SPACE = str.maketrans({c: " " for c in (
    "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212~\"'`()[]{}<>/\\?!;*_#|^"
    "\u2026\u00ab\u00bb\u3002\u3001\u300c\u300d\u300e\u300f\u3010\u3011\u300a\u300b\u3008\u3009"
    "\u30fb\u061f\u060c\u061b\u00bf\u00a1\u00b7"
)})
_SEPARATORS = re.compile(r"(?<!\d)[.,:]|[.,:](?!\d)")


@lru_cache(maxsize=2048)
def normalize(text: str) -> str:
    """The normal form used by ``contains`` (see the module docstring for every step)."""
    if not text:
        return ""
    s = text.lower() if text.isascii() else _fold_unicode(text)
    if "," in s:
        s = _THOUSANDS.sub("", s)
    if "/" in s:
        s = _FRACTION.sub(_fraction_sub, s)
    s = _NUMBER_WORDS.sub(_number_word_sub, s)
    s = _PERCENT_WORD.sub("%", s)
    s = _CURRENCY_WORD.sub(lambda m: " $ " if m.group("usd") else " € ", s)
    if "%" in s:
        s = _PERCENT_SPACE.sub(r"\1%", s)
    s = _CURRENCY_AFTER.sub(r"\2\1", s)
    s = _CURRENCY_SPACE.sub(r"\1", s)
    s = _DROP_WORDS.sub(" ", s)
    s = s.translate(_PUNCT_TO_SPACE)
    s = _SEPARATORS.sub(" ", s)
    return " ".join(s.split())


# ---------------------------------------------------------------------------------------------
# Matching

_CJK = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\u3130-\u318f]")
_ARABIC_LETTER = re.compile(r"[\u0620-\u064a]")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
HEDGE_WORDS = frozenset(
    "about around roughly approximately approx some over under just almost nearly circa "
    "exactly only and per than".split()
)
_LATIN_WORD = re.compile(r"[^\W\d_]{3,}")


def _is_word_char(c: str) -> bool:
    return c.isalnum()


@lru_cache(maxsize=16384)
def _gold_pattern(g: str) -> re.Pattern:
    """Compiled matcher for a normalised gold: word boundaries unless the edge is CJK."""
    first, last = g[0], g[-1]
    body = re.escape(g)
    if _is_word_char(first) and not _CJK.match(first):
        left = r"(?<!\w)"
        if first.isdigit():
            left += r"(?<!\d[.,:])"
        if _ARABIC_LETTER.match(first):
            left += "(?:[\u0648\u0641\u0628\u0644\u0643]?\u0627\u0644|[\u0648\u0641\u0628\u0644\u0643])?"
    else:
        left = ""
    if _is_word_char(last) and not _CJK.match(last):
        if last.isdigit():
            right = r"(?:st|nd|rd|th)?(?![.,:]\d)(?!\w)"
        elif _ARABIC_LETTER.match(last):
            right = "(?:\u0647|\u0647\u0627|\u0647\u0645|\u0643|\u064a|\u0627\u062a)?(?!\\w)"
        elif last == "y" and len(g) > 2:
            body = re.escape(g[:-1]) + r"(?:y|ie)"
            right = r"(?:s|d|ing)?(?!\w)"
        else:
            right = r"(?:s|es|d|ed|ing)?(?!\w)"
    else:
        right = ""
    return re.compile(left + body + right)


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
def _gold_fallback(g: str) -> tuple[tuple, tuple[re.Pattern, ...]] | None:
    nums = numbers_in(g)
    if not nums:
        return None
    keys = tuple(_number_key(n) for n in nums)
    words = [w for w in _LATIN_WORD.findall(g) if w not in HEDGE_WORDS]
    return keys, tuple(_gold_pattern(w) for w in dict.fromkeys(words))


def _number_key(n: str):
    v = _parse_number(n)
    return n if v != v else v  # NaN: keep the text


def contains(answer: str, gold: str) -> bool:
    """True when the (normalised) answer holds the (normalised) gold; see the module docstring."""
    if not answer or not gold:
        return False
    g = normalize(gold)
    if not g:
        return False
    a = normalize(answer)
    if not a:
        return False
    if _gold_pattern(g).search(a):
        return True
    fb = _gold_fallback(g)
    if fb is None:
        return False
    keys, word_patterns = fb
    answer_keys = {_number_key(n) for n in numbers_in(a)}
    return all(k in answer_keys for k in keys) and all(p.search(a) for p in word_patterns)


def matches_any(answer: str, golds: Iterable[str | None]) -> bool:
    """True when the answer contains any of the (non-empty) golds."""
    return any(contains(answer, g) for g in golds if g)
