"""Number words as digits, for the normal form (``normal_form``): English cardinals, ordinals and
fractions, and the unambiguous small numbers of es fr de pt it ru (no memeval imports).

>>> run_to_text(["twenty", "five"]), run_to_text(["one", "hundred", "and", "five"])
(['25'], ['105'])
>>> ordinal(21), FOREIGN_NUMBERS["funf"]  # looked up after accents are folded
('21st', '5')
"""

from __future__ import annotations

__all__ = [
    "FOREIGN_NUMBERS",
    "FRACTION_PAIRS",
    "FRACTION_SINGLE",
    "NUMWORDS",
    "ORDINALS_WORDS",
    "SCALES",
    "TENS",
    "UNITS",
    "ordinal",
    "run_to_text",
]


UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}


TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}


SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12}


NUMWORDS = frozenset([*UNITS, *TENS, *SCALES])


FRACTION_PAIRS = {
    ("three", "quarters"): "0.75",
    ("three", "quarter"): "0.75",
    ("two", "thirds"): "0.67",
    ("a", "third"): "0.33",
    ("one", "third"): "0.33",
    ("a", "quarter"): "0.25",
    ("one", "quarter"): "0.25",
    ("a", "half"): "0.5",
    ("one", "half"): "0.5",
    ("a", "fourth"): "0.25",
    ("one", "fourth"): "0.25",
    ("three", "fourths"): "0.75",
}


ORDINALS_WORDS = {
    w: i
    for i, w in [
        (1, "first"),
        (3, "third"),
        (4, "fourth"),
        (5, "fifth"),
        (6, "sixth"),
        (7, "seventh"),
        (8, "eighth"),
        (9, "ninth"),
        (10, "tenth"),
        (11, "eleventh"),
        (12, "twelfth"),
        (13, "thirteenth"),
        (14, "fourteenth"),
        (15, "fifteenth"),
        (16, "sixteenth"),
        (17, "seventeenth"),
        (18, "eighteenth"),
        (19, "nineteenth"),
        (20, "twentieth"),
        (30, "thirtieth"),
    ]
}  # not "second": it is also a unit of time


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


FRACTION_SINGLE = {"quarter": "0.25", "half": "0.5", "once": "1", "twice": "2", "thrice": "3"}


# Number words of the bench languages, 2-12 and 20, as they read after accent folding. Left out on
# purpose: words that are also common words or names elsewhere (es "once", fr "sept"/"neuf",
# de "elf"/"ein", it "due"/"sei"/"otto", articles like "un"/"una"/"um").
FOREIGN_NUMBERS = {
    **dict.fromkeys(["dos"], "2"),
    **dict.fromkeys(["tres"], "3"),
    "cuatro": "4",
    "cinco": "5",
    "seis": "6",
    "siete": "7",
    "ocho": "8",
    "nueve": "9",
    "diez": "10",
    "doce": "12",
    "veinte": "20",
    "deux": "2",
    "trois": "3",
    "quatre": "4",
    "cinq": "5",
    "huit": "8",
    "dix": "10",
    "douze": "12",
    "vingt": "20",
    "zwei": "2",
    "drei": "3",
    "vier": "4",
    "funf": "5",
    "sechs": "6",
    "sieben": "7",
    "acht": "8",
    "neun": "9",
    "zehn": "10",
    "zwolf": "12",
    "zwanzig": "20",
    "dois": "2",
    "duas": "2",
    "quatro": "4",
    "sete": "7",
    "oito": "8",
    "nove": "9",
    "dez": "10",
    "vinte": "20",
    "tre": "3",
    "quattro": "4",
    "cinque": "5",
    "sette": "7",
    "dieci": "10",
    "dodici": "12",
    "venti": "20",
    "один": "1",
    "одна": "1",
    "два": "2",
    "две": "2",
    "три": "3",
    "четыре": "4",
    "пять": "5",
    "шесть": "6",
    "семь": "7",
    "восемь": "8",
    "девять": "9",
    "десять": "10",
    "двенадцать": "12",
    "двадцать": "20",
}


def run_to_text(words: list[str]) -> list[str]:
    """['twenty','five'] → ['25']; one hundred and five → ['105']; five twenty → ['5','20']."""
    out: list[str] = []
    total = cur = 0
    last = None  # kind of the previous number word: unit, tens, scale
    pending_and = False
    for w in words:
        if w in ("a", "an"):
            continue
        if w == "and":
            pending_and = True
            continue
        joined_by_and, pending_and = pending_and, False
        if w in UNITS:
            u = UNITS[w]
            ok = last == "scale" or (last == "tens" and 0 < u < 10 and not joined_by_and)
        elif w in TENS:
            ok = last == "scale" and cur % 100 == 0
        else:
            ok = last != "scale" or w in ("thousand", "million", "billion")
        if not ok and last is not None:
            out.append(str(total + cur))
            total = cur = 0
            if joined_by_and:
                out.append("and")
        if w in UNITS:
            cur += UNITS[w]
            last = "unit"
        elif w in TENS:
            cur += TENS[w]
            last = "tens"
        else:
            scale = SCALES[w]
            if scale >= 1000:
                total += max(cur, 1) * scale
                cur = 0
            else:
                cur = max(cur, 1) * scale
            last = "scale"
    if last is not None:
        out.append(str(total + cur))
    if pending_and:
        out.append("and")
    return out
