"""Light folds: each rule named for what it does, none the dry rules' ``normalize`` (``normal_form``).

>>> fold_case_space("  Account  4429 ")
'account 4429'
>>> casefold_space("Straße  X")
'strasse x'
>>> drop_punct_articles("The cat, and a Dog!")
'cat dog'
>>> fold_for_phrases("I don\u2019t  KNOW")
"i don't know"
>>> fold_marks("Jos\u00e9 paid 1,000")
'jose paid 1000'
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

__all__ = ["fold_case_space", "casefold_space", "drop_punct_articles", "fold_for_phrases", "fold_marks"]

_WS = re.compile(r"\s+")


def fold_case_space(text: str) -> str:
    """Lower-case, collapse runs of white space to one space, strip (the book suite's keyword recall)."""
    return _WS.sub(" ", text.lower()).strip()


def casefold_space(text: str) -> str:
    """Collapse white space, then casefold (``ß`` = ``ss``): quoted evidence against a transcript."""
    return " ".join(text.split()).casefold()


_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def drop_punct_articles(text: str) -> str:
    """LoCoMo's normalisation before stemming: commas removed, lower case, ASCII punctuation removed,
    the words a/an/the/and removed, white space collapsed."""
    s = text.replace(",", "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


_PHRASE_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u2032": "'",
        "\u00b4": "'",
        "`": "'",
        "\u0623": "\u0627",
        "\u0625": "\u0627",
        "\u0622": "\u0627",
        "\u0640": None,
        "\u0649": "\u064a",  # alef maqsura → yeh ("على" and "علي" are written both ways)
    }
)
_ARABIC_MARKS = re.compile("[\u064b-\u065f\u0670]")


def fold_for_phrases(text: str) -> str:
    """Lower-case (casefold), NFKC, straight apostrophes, Arabic hamza/harakat folded; accents kept."""
    if text.isascii():
        return " ".join(text.lower().replace("`", "'").split())
    t = unicodedata.normalize("NFKC", text).translate(_PHRASE_FOLD).casefold()
    t = _ARABIC_MARKS.sub("", t)
    return " ".join(t.split())


@lru_cache(maxsize=1)
def _marks() -> re.Pattern:
    """A regex class of every non-spacing mark (accents, harakat, dakuten, ...), built on first use."""
    ranges: list[tuple[int, int]] = []
    start = prev = -1
    for cp in range(0x30000):
        if unicodedata.category(chr(cp)) == "Mn":
            if start < 0:
                start = cp
            elif cp != prev + 1:
                ranges.append((start, prev))
                start = cp
            prev = cp
    ranges.append((start, prev))
    return re.compile(
        "[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges) + "]"
    )


_MARKS_EXTRA = str.maketrans(
    {
        "\u0671": "\u0627",
        "\u0640": None,
        **{chr(0x0660 + i): str(i) for i in range(10)},
        **{chr(0x06F0 + i): str(i) for i in range(10)},
    }
)
_THOUSANDS_COMMA = re.compile(r"(?<=\d)[,\u066c](?=\d)")


def fold_marks(s: str) -> str:
    """Casefold, NFKD, every combining mark dropped, Arabic-Indic digits made ASCII, thousands commas
    removed: coarser than ``normal_form.normalize``, so a piece of a folded normal form is found in the
    folded text of any text whose normal form holds it (the audit's haystack look-up)."""
    if s.isascii():
        s = s.lower()
    else:
        s = _marks().sub("", unicodedata.normalize("NFKD", s.casefold())).translate(_MARKS_EXTRA)
    return _THOUSANDS_COMMA.sub("", s) if "," in s or "\u066c" in s else s
