"""The normal form of the dry rules (benchmark.md §4): one comparable form for an answer and a gold.

``normalize`` (no memeval imports; ``containment`` then looks for a gold in it):
``normalize`` puts an answer and a gold into one comparable form:

* Unicode: NFKC, casefold, Latin/Greek/Cyrillic accents stripped (``José`` = ``Jose``,
  ``ё`` = ``е``), Arabic alef variants, alef maqsura/yeh and teh marbuta/heh unified and
  harakat/tatweel dropped, Arabic-Indic digits made ASCII; curly quotes made straight.
* ``1,000`` → ``1000``; ``1/4`` → ``0.25`` (a proper fraction, not part of a date like 3/4/2026).
* English number words → digits (``twenty-five`` → ``25``, ``a hundred`` → ``100``,
  ``two and a half`` → ``2.5``, ``a quarter`` → ``0.25``, ``half`` → ``0.5``, ``twice`` → ``2``,
  ``a dozen`` → ``12``); ordinals ``first`` → ``1st``, ``twenty-first`` → ``21st`` (not
  ``second``, also a unit of time); the unambiguous number words 2-12 and 20 of es fr de pt it ru
  (``cinco``, ``fünf``, ``пять`` → ``5``); Chinese/Japanese numerals before a counter or unit
  (``三只`` → ``3只``, ``二十五岁`` → ``25岁``).
* Clock times one way: ``7pm``, ``7:00 p.m.`` → ``7 pm``. An ISO date stays one token
  (``2026-09-06`` → ``2026.09.06``): no number gold matches a part of it. A day of a named month
  one way, month first and without its ordinal suffix: ``12th of April``, ``12 April``,
  ``the twelfth of April`` and ``April 12th`` → ``april 12``.
* British spellings folded to American: ``neighbour`` → ``neighbor``, ``organise`` → ``organize``,
  ``analyse`` → ``analyze``, ``centre`` → ``center``, ``grey`` → ``gray``.
* ``percent``/``per cent`` → ``%`` and ``dollar(s)`` → ``$``, ``euro(s)`` → ``€``; an amount and
  its sign are written one way (``5 %`` → ``5%``, ``150 $`` → ``$150``).
* English articles and personal pronouns dropped (questions are third person, conversations
  first: "her dentist" = "my dentist"); a reflexive becomes ``self`` ("myself" = "himself");
  "a" is kept when no word follows or a conjunction/verb
  follows ("plan a", "vitamin a and c").
* Periods, commas and colons not between digits, dashes, quotes, brackets, slashes and sentence
  punctuation (also CJK and Arabic) become spaces; white space collapses to one space, never to
  nothing, so a short gold like ``on`` cannot match inside ``conversation``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Sequence

from .number_words import (
    FOREIGN_NUMBERS,
    FRACTION_PAIRS,
    FRACTION_SINGLE,
    NUMWORDS,
    ORDINALS_WORDS,
    SCALES,
    TENS,
    ordinal,
    run_to_text,
)

__all__ = ["normalize", "normalize_each", "CACHE_MAX_CHARS", "clear_caches"]

# ---------------------------------------------------------------------------------------------
# Unicode folding

_PRE_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u066b": ".",
        "\u066c": ",",  # Arabic decimal and thousands separators
        **{chr(0x0660 + i): str(i) for i in range(10)},  # Arabic-Indic digits
        **{chr(0x06F0 + i): str(i) for i in range(10)},  # Extended Arabic-Indic (Persian/Urdu)
        "\u0623": "\u0627",
        "\u0625": "\u0627",
        "\u0622": "\u0627",
        "\u0671": "\u0627",  # alef forms
        "\u0640": None,  # tatweel
        "\u0649": "\u064a",
        "\u0629": "\u0647",  # alef maqsura → yeh, teh marbuta → heh (spelt both ways)
    }
)
# Combining diacritical marks (Latin, Greek, Cyrillic accents) and Arabic harakat. Japanese
# (han)dakuten (U+3099/309A) are deliberately not here: が must not become か.
_COMBINING = re.compile("[\u0300-\u036f\u064b-\u065f\u0670]")


def _fold_unicode(text: str) -> str:
    text = text.translate(_PRE_TRANSLATE)
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    text = _COMBINING.sub("", text)
    return unicodedata.normalize("NFC", text).casefold()


# ---------------------------------------------------------------------------------------------
# Character-level steps (each runs only when its trigger character is present)

_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# A proper fraction a/b (or a mixed number "2 1/2"), not part of a longer slash chain (dates like
# 3/4/2026 stay as they are).
_FRACTION = re.compile(r"(?<![\d/.,])(?:(\d{1,3})\s+)?(\d{1,4})\s*/\s*(\d{1,4})(?![\d/])")
_AM_PM = re.compile(r"([ap])(?<!\w[ap])\.\s?m\b\.?")  # a.m. → am, p.m. → pm (at a word start)
_AM_PM_HINT = re.compile(r"\.\s?m\b")  # what every a.m./p.m. holds (found by a fast scan for ".")
_CLOCK = re.compile(r"(\d)(?::00)?\s*([ap]m)\b")  # 7pm, 7:00 pm → 7 pm
# Chinese/Japanese numerals before a counter or unit (三只 → 3只, 二十五岁 → 25岁, 三月 → 3月); a
# numeral elsewhere (一起 "together", 星期三) is a word and stays.
_CJK_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "兩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000}
_CJK_NUMERAL = re.compile(
    "([零〇一二两兩三四五六七八九十百千]+)(?=[个個只隻本次年月日天岁歲点點分元块塊位件条條张張名小时時周週人回歳つ階号號杯])"
)


def _cjk_numeral_sub(m: re.Match) -> str:
    total = cur = 0
    for ch in m.group(1):
        if ch in _CJK_DIGITS:
            cur = _CJK_DIGITS[ch]
        else:
            total += (cur or 1) * _CJK_UNITS[ch]
            cur = 0
    return str(total + cur)


# British spellings folded to American ones (both sides get the same form, so only the pairing
# matters): neighbour/neighbor, organise/organize, centre/center, grey/gray.
_UK_OUR = re.compile(r"our(?=s?\b)(?<=[a-z]{3}our)")
_UK_ISE = re.compile(r"is(?=e\b|ed\b|es\b|ing\b|ation\b|ations\b)(?<=[a-z]{3}is)")
_UK_YSE = re.compile(r"ys(?=e\b|ed\b|es\b|ing\b)(?<=[a-z]{3}ys)")
_UK_TRE = re.compile(r"tre(?=s?\b)(?<=[a-z]{2}tre)")
_UK_WORDS = re.compile(r"\bgrey(?=s?\b)")


def _fold_british(s: str) -> str:
    if "our" in s:
        s = _UK_OUR.sub("or", s)
    if "is" in s:
        s = _UK_ISE.sub("iz", s)
    if "yse" in s or "ysing" in s:
        s = _UK_YSE.sub("yz", s)
    if "tre" in s:
        s = _UK_TRE.sub("ter", s)
    if "grey" in s:
        s = _UK_WORDS.sub("gray", s)
    return s


# An ISO date (2026-09-06) is kept as one token, 2026.09.06: no plain number ("six", "2026", "15")
# matches a part of it, and a gold written as the same date still does.
# (the look-behind sits after the first digit, so the scan skips to digits: same matches, ~10x faster)
_ISO_DATE = re.compile(r"(\d(?<![\d.,:/-]\d)\d{3})-(\d{2})-(\d{2})(?![\d-])")
_SEPARATORS = re.compile(r"[.,:](?:(?<!\d[.,:])|(?!\d))")  # . , : not between two digits
_PUNCT_TO_SPACE = str.maketrans(
    {
        c: " "
        for c in (
            '-\u2010\u2011\u2012\u2013\u2014\u2015\u2212~"`()[]{}<>/\\?!;*_#|^=+'
            "\u2026\u00ab\u00bb\u3002\u3001\u300c\u300d\u300e\u300f\u3010\u3011\u300a\u300b\u3008\u3009"
            "\u30fb\u061f\u060c\u061b\u00bf\u00a1\u00b7"
        )
    }
)
#: ``_PUNCT_TO_SPACE`` for ASCII text, as bytes (``bytes.translate`` is many times faster)
_PUNCT_BYTES = bytes(32 if b < 128 and b in _PUNCT_TO_SPACE else b for b in range(256))
_CURRENCY_SIGNS = frozenset("$€£¥₩₽")


def _fmt(x: float) -> str:
    x = round(x, 2)
    return str(int(x)) if x == int(x) else repr(x)


def _fraction_sub(m: re.Match) -> str:
    whole, a, b = m.group(1), int(m.group(2)), int(m.group(3))
    if not 0 < a < b:
        return m.group(0)
    return " " + _fmt((int(whole) if whole else 0) + a / b) + " "


# ---------------------------------------------------------------------------------------------
# Word-level steps, on tokens (one pass, dictionary look-ups: fast)


_PRONOUNS = frozenset(
    ("i me my mine you your yours he him his she her hers it its we us our ours they them their theirs").split()
)
# A reflexive is kept as one person-free word: "I counted them myself" = "he counted them himself",
# but it does not vanish ("counted them myself" is not just "counted").
_REFLEXIVES = frozenset("myself yourself yourselves himself herself itself ourselves themselves".split())
_CONTRACTIONS = frozenset(("m", "re", "s", "ve", "ll", "d"))
# "a" before one of these is a letter, not an article ("vitamin a and c", "plan a is better").
_NOT_AFTER_ARTICLE = frozenset("and or but nor to is was are were has had will would can could & +".split())
_USD_WORDS = frozenset(("dollar", "dollars", "usd", "bucks"))
_EUR_WORDS = frozenset(("euro", "euros", "eur"))


_SPECIAL_WORDS = frozenset(
    [
        *FOREIGN_NUMBERS,
        *ORDINALS_WORDS,
        *NUMWORDS,
        *FRACTION_SINGLE,
        *(a for a, _ in FRACTION_PAIRS),
        *_PRONOUNS,
        *_REFLEXIVES,
        *_USD_WORDS,
        *_EUR_WORDS,
        *_CURRENCY_SIGNS,
        "a",
        "an",
        "the",
        "per",
        "percent",
        "percentage",
        "%",
    ]
)


def _is_number(t: str) -> bool:
    return t[0].isdigit() and t[-1].isdigit()


def _tokens(s: str) -> list[str]:
    """Split on white space; a pronoun contraction (it's, I'm, they'll) goes; other apostrophes split."""
    toks = s.split()
    if "'" not in s:
        return toks
    out: list[str] = []
    pos = 0
    for i in [i for i, t in enumerate(toks) if "'" in t]:  # the few tokens with an apostrophe
        out.extend(toks[pos:i])
        pos = i + 1
        t = toks[i]
        base, _, suffix = t.partition("'")
        if base in _PRONOUNS and suffix in _CONTRACTIONS:
            continue
        out.extend(p for p in t.split("'") if p)
    out.extend(toks[pos:])
    return out


#: "the" and the personal pronouns: dropped, and no other word rule starts with them or takes them as
#: its next word (tests/test_normal_form_speed.py checks that they stay apart from every rule's words)
_DROPPED = _PRONOUNS | {"the"}


def _words_pass(toks: list[str], signs_possible: bool = True) -> list[str]:
    """Number words, articles, pronouns, percent and currency, on tokens. Only the few special
    tokens go through Python-level handling; the stretches between them are copied as they are.
    ``signs_possible`` false: no token holds a currency sign (no token ends in one)."""
    special, signs = _SPECIAL_WORDS, _CURRENCY_SIGNS
    if signs_possible:
        marks = [i for i, t in enumerate(toks) if t in special or t[-1] in signs]
    else:
        marks = [i for i, t in enumerate(toks) if t in special]
    if not marks:
        return toks
    out: list[str] = []
    n, pos = len(toks), 0
    for i in marks:
        if i < pos:  # consumed with an earlier special token ("a quarter", "twenty five")
            continue
        out.extend(toks[pos:i])
        if toks[i] in _DROPPED:  # most special tokens: no other rule applies to them
            pos = i + 1
        else:
            pos = _special_token(toks, i, n, out)
    out.extend(toks[pos:])
    return out


def _special_token(toks: list[str], i: int, n: int, out: list[str]) -> int:
    """Handle the special token ``toks[i]``, appending to ``out``; return the next index."""
    t = toks[i]
    nxt = toks[i + 1] if i + 1 < n else ""
    # fractions and number words
    pair = FRACTION_PAIRS.get((t, nxt))
    if pair is not None:
        out.append(pair)
        i += 2
        return i
    if t in TENS and (nxt in ORDINALS_WORDS and ORDINALS_WORDS[nxt] < 10 or nxt == "second"):
        out.append(ordinal(TENS[t] + (ORDINALS_WORDS.get(nxt) or 2)))  # twenty-first → 21st
        i += 2
        return i
    if t in ORDINALS_WORDS:
        out.append(ordinal(ORDINALS_WORDS[t]))
        i += 1
        return i
    if t in FOREIGN_NUMBERS:
        out.append(FOREIGN_NUMBERS[t])
        i += 1
        return i
    if t in FRACTION_SINGLE:
        out.append(FRACTION_SINGLE[t])
        i += 1
        return i
    if t in NUMWORDS or (t in ("a", "an") and nxt in SCALES):
        j = i + 1
        while j < n and (toks[j] in NUMWORDS or (toks[j] == "and" and j + 1 < n and toks[j + 1] in NUMWORDS)):
            j += 1
        nums = run_to_text(toks[i:j])
        if toks[j : j + 3] == ["and", "a", "half"] and nums and nums[-1] != "and":
            nums[-1] = _fmt(float(nums[-1]) + 0.5)
            j += 3
        out.extend(nums)
        i = j
        return i
    if t in _REFLEXIVES:
        out.append("self")
        return i + 1
    # articles and personal pronouns
    if t == "the" or t in _PRONOUNS or (t in ("a", "an") and nxt and nxt not in _NOT_AFTER_ARTICLE):
        i += 1
        return i
    # percent and currency words / signs, written one way: 5%, $150, €20
    if t == "percent" or t == "%" or (t == "per" and nxt == "cent") or (t == "percentage" and nxt.startswith("point")):
        if t in ("per", "percentage"):
            i += 1
        if out and _is_number(out[-1]):
            out[-1] += "%"
        else:
            out.append("%")
        i += 1
        return i
    sign = "$" if t in _USD_WORDS else "€" if t in _EUR_WORDS else t if t in _CURRENCY_SIGNS else None
    if sign is None and len(t) > 1 and t[-1] in _CURRENCY_SIGNS and _is_number(t[:-1]):
        out.append(t[-1] + t[:-1])  # 150$ → $150
        i += 1
        return i
    if sign is not None:
        if out and _is_number(out[-1]):
            out[-1] = sign + out[-1]
        elif nxt and _is_number(nxt):
            out.append(sign + nxt)
            i += 1
        else:
            out.append(sign)
        i += 1
        return i
    out.append(t)
    i += 1
    return i


#: Texts longer than this are not memoised (a "full context" system may return megabytes).
CACHE_MAX_CHARS = 8192


def normalize(text: str) -> str:
    """The normal form used by ``contains`` (see the module docstring for every step)."""
    if not text:
        return ""
    if not isinstance(text, str):
        text = str(text)  # a number read from JSON
    return _normalize_cached(text) if len(text) <= CACHE_MAX_CHARS else _normalize(text)


def _normalize(text: str) -> str:
    if not text:
        return ""
    s = _char_steps(_fold(text))
    return _dates(" ".join(_words_pass(_tokens(s), "$" in s or not s.isascii())))  # "$": the one ASCII sign


_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DAY = r"0?[1-9]|[12]\d|3[01]"
# on the words pass's output: "12th of april" / "12 april" (a day first) or "april 12th" (an ordinal)
_DAY_OF_MONTH = re.compile(
    rf"(?<![\w.,:])(?:({_DAY})(?:st|nd|rd|th)? (?:of )?({_MONTHS})|({_MONTHS}) ({_DAY})(?:st|nd|rd|th))(?!\w)"
)
_MONTH_HINTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _day_of_month_sub(m: re.Match) -> str:
    if m.group(1):
        return f"{m.group(2)} {int(m.group(1))}"
    return f"{m.group(3)} {int(m.group(4))}"


def _dates(form: str) -> str:
    """A day of a named month written one way: ``april 12`` (month first, no ordinal suffix).

    >>> _dates("on 12th of april 2026"), _dates("april 12th"), _dates("12 may be late")
    ('on april 12 2026', 'april 12', 'may 12 be late')
    """
    if any(h in form for h in _MONTH_HINTS) and any(c.isdigit() for c in form):
        return _DAY_OF_MONTH.sub(_day_of_month_sub, form)
    return form


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else _fold_unicode(text)


def _char_steps(s: str) -> str:
    """Every character-level step after the folding, in order."""
    if "," in s:
        s = _THOUSANDS.sub("", s)
    if "/" in s:
        s = _FRACTION.sub(_fraction_sub, s)
    if "-" in s:
        s = _ISO_DATE.sub(r"\1.\2.\3", s)
    s = s.encode().translate(_PUNCT_BYTES).decode() if s.isascii() else s.translate(_PUNCT_TO_SPACE)
    if "." in s and _AM_PM_HINT.search(s):  # each step runs only where it can match
        s = _AM_PM.sub(r"\1m", s)
    if "am" in s or "pm" in s:
        s = _CLOCK.sub(r"\1 \2", s)
    if "." in s or "," in s or ":" in s:
        s = _SEPARATORS.sub(" ", s)
    if not s.isascii():
        s = _CJK_NUMERAL.sub(_cjk_numeral_sub, s)
    return _fold_british(s)


_normalize_cached = lru_cache(maxsize=4096)(_normalize)


# ---------------------------------------------------------------------------------------------
# Memories normalised one by one

#: Longer memories are not memoised one by one
LINE_MAX_CHARS = 2048
_line_form = lru_cache(maxsize=32768)(_normalize)


def normalize_each(lines: Sequence[str]) -> list[str]:
    """Each text's own normal form, in order (memoised per text: a system returns the same memories
    question after question). Dry rules read a memory-only response memory by memory, so that a
    value is found in one memory, never assembled across two.

    >>> normalize_each(["I have two cats.", "My car is blue"])
    ['have 2 cats', 'car is blue']
    """
    return [_line_form(t) if len(t) <= LINE_MAX_CHARS else normalize(t) for t in lines]


def clear_caches() -> None:
    """Forget memoised normal forms (for benchmarks)."""
    _normalize_cached.cache_clear()
    _line_form.cache_clear()
