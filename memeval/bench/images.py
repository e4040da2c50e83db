"""What an ``image`` field of a turn refers to (a file in the bench folder, a URL, inline data)."""

from __future__ import annotations

import re

__all__ = ["image_ref_kind"]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def image_ref_kind(ref: str) -> str:
    """What an ``image`` field holds: ``data`` (a ``data:`` URL), ``remote`` (any other URL scheme),
    ``escapes`` (an absolute path or one climbing out of the bench folder) or ``file``.

    >>> [image_ref_kind(x) for x in ("data:image/png;base64,iVBOR", "https://x/y.png", "/etc/p.png",
    ...                              "../p.png", "img/img01.png")]
    ['data', 'remote', 'escapes', 'escapes', 'file']
    """
    if ref[:5].lower() == "data:":
        return "data"
    if _SCHEME.match(ref) and not re.match(r"^[a-zA-Z]:[\\/]", ref):  # not a Windows drive
        return "remote"
    p = ref.replace("\\", "/")
    if p.startswith("/") or re.match(r"^[a-zA-Z]:/", p) or ".." in p.split("/"):
        return "escapes"
    return "file"
