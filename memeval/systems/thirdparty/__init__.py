"""Third-party memory systems (issue 27): one module each, built by name on the command line
(``letta:url=...``, ``graphiti:llm_url=...``, ``langmem:llm_url=...``).

They are listed with the hosted APIs in ``registry.THIRD_PARTY``. A module never imports its SDK at
import time, only when its system is built, so ``memeval`` starts without any of them; a system whose
SDK is missing is one line naming the extra (:func:`needs_extra`; Letta needs none: plain httpx).

The shared helpers here turn a bench date into the ISO 8601 timestamp an API takes
(:func:`iso_datetime`) and bound what a reply may be.
"""

from __future__ import annotations

from ...bench.loaders import locomo
from ...errors import MemevalError
from ...text.when import parse_when

__all__ = ["needs_extra", "iso_datetime"]


def needs_extra(system: str, extra: str, error: BaseException) -> MemevalError:
    """The one line for a system whose SDK is not installed.

    >>> print(needs_extra("graphiti", "graphiti", ImportError("No module named 'graphiti_core'")))
    system 'graphiti' needs its SDK: install memeval[graphiti] (pip install 'memeval[graphiti]'; No module named 'graphiti_core')
    """
    return MemevalError(
        f"system {system!r} needs its SDK: install memeval[{extra}] (pip install 'memeval[{extra}]'; {error})"
    )


def iso_datetime(text: str | None) -> str | None:
    """A bench date as an ISO 8601 timestamp (``YYYY-MM-DDTHH:MM:SS``, naive UTC, as
    :func:`~memeval.text.when.parse_when` reads it; LoCoMo's dates as its loader reads them), or None
    when it reads as none of them.

    >>> iso_datetime("2023-05-20"), iso_datetime("2023/05/20 (Sat) 02:21")
    ('2023-05-20T00:00:00', '2023-05-20T02:21:00')
    >>> iso_datetime("1:56 pm on 8 May, 2023"), iso_datetime("last spring")
    ('2023-05-08T13:56:00', None)
    """
    if not text:
        return None
    s = " ".join(str(text).split())
    parsed = parse_when(s)  # ISO and LongMemEval's form (the one reader of a timestamp)
    if parsed is not None:
        return parsed[0].isoformat()
    try:
        return locomo.parse_date(s).isoformat()  # LoCoMo's "1:56 pm on 8 May, 2023"
    except ValueError:
        return None
