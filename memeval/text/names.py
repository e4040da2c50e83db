"""Names made safe for a folder: every character but letters, digits, ``-`` and ``.`` becomes ``_``.

>>> slug("recent:tokens=2000")
'recent_tokens_2000'
>>> slug("../x y")
'.._x_y'
"""

from __future__ import annotations

__all__ = ["slug"]


def slug(text: str) -> str:
    """``text`` with each character other than a letter, a digit, ``-`` or ``.`` replaced by ``_``
    (no separators are left, so the result is one path component unless it is ``.`` or ``..``)."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)
