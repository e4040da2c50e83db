"""Dates as bench files and hosted APIs write them, compared: the one reader of a timestamp's day and
time (the causal guard, the time-to-searchable probe and the hosted adapters use it).

>>> parse_when("2026-05-20")
(datetime.datetime(2026, 5, 20, 0, 0), False)
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

__all__ = ["parse_when", "is_after"]

_DATE = re.compile(
    r"^\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:(?:[T ]|\s*\(\w+\)\s*)(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?"
)


def parse_when(text: Any) -> tuple[dt.datetime, bool] | None:
    """A timestamp as (UTC-naive datetime, whether it had a time of day), or None if it is not an ISO
    date (``2026-05-20``, ``2026/05/20 (Wed) 14:02``, ``2026-05-20T14:02:00Z``, ``...+02:00``).

    >>> parse_when("2026-05-20T14:02:00+02:00")
    (datetime.datetime(2026, 5, 20, 12, 2), True)
    >>> parse_when("8 May, 2023") is None
    True
    """
    if not isinstance(text, str):
        return None
    m = _DATE.match(text)
    if m is None:
        return None
    y, mo, d, hh, mm, ss, tz = m.groups()
    try:
        when = dt.datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0), int(ss or 0))
    except ValueError:
        return None
    if tz and hh is not None and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        when -= sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return when, hh is not None


def is_after(timestamp: Any, asked_at: str | None) -> bool | None:
    """Whether ``timestamp`` is after ``asked_at``: by time of day where both have one, else by day
    (a memory from the question's own day is not after it); None where either is not a date.

    >>> is_after("2026-06-01T10:00", "2026-06-01T09:00"), is_after("2026-06-01T23:00", "2026-06-01")
    (True, False)
    """
    a, b = parse_when(timestamp), parse_when(asked_at)
    if a is None or b is None:
        return None
    if a[1] and b[1]:
        return a[0] > b[0]
    return a[0].date() > b[0].date()
