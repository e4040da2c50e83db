"""What an ``image`` field of a turn refers to (a file in the bench folder, a URL, inline data), and the
image bytes a system or a reader is handed: a ``data:`` URL read from inside the bench folder only.

An image reference (a turn's ``image``, a returned memory's ``image``) is one string: a path relative
to the bench folder, a ``data:image/...;base64,...`` URL (the bytes themselves) or a remote URL.
memeval fetches nothing: a remote URL is passed on as a reference, never downloaded.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import re
from pathlib import Path

from ..errors import BenchContractError, InputError
from .files import confined, is_file

__all__ = [
    "image_ref_kind",
    "image_mime",
    "ImageError",
    "MAX_IMAGE_BYTES",
    "image_data_url",
    "image_label",
    "inline_session",
]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: the largest image handed on (OpenAI's per-image limit is 20 MB)
MAX_IMAGE_BYTES = 20 * 1024 * 1024
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_DATA_URL = re.compile(r"^data:(image/[a-zA-Z0-9.+-]+);base64,(.*)$", re.S)


class ImageError(BenchContractError):
    """An image reference that cannot be handed on (the message says why, in one line)."""


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


def image_mime(data: bytes) -> str | None:
    """The image type of some bytes by their signature (PNG, JPEG, GIF, WebP), else None.

    >>> image_mime(b"\\x89PNG\\r\\n\\x1a\\n...."), image_mime(b"RIFF\\0\\0\\0\\0WEBPVP8 "), image_mime(b"hello")
    ('image/png', 'image/webp', None)
    """
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_data_url(root, ref: str, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """The ``data:`` URL of an image reference: a file under ``root`` read (never outside it: absolute
    paths, ``..`` and links leading out are refused) or a ``data:`` URL checked; :class:`ImageError`
    for a remote URL (memeval fetches nothing), a path leaving the folder, a missing or oversized
    file, or bytes that are not an image.

    >>> image_data_url("/bench", "https://x/y.png")
    Traceback (most recent call last):
    memeval.bench.images.ImageError: remote image https://x/y.png: memeval fetches nothing
    """
    kind = image_ref_kind(ref)
    if kind == "remote":
        raise ImageError(f"remote image {ref[:80]}: memeval fetches nothing")
    if kind == "data":
        m = _DATA_URL.match(ref)
        if not m and ";sha256=" in ref.partition(",")[0]:
            raise ImageError("inline image kept only as its digest (a record never holds image bytes)")
        if not m:
            raise ImageError("data URL is not data:image/...;base64,...")
        try:
            data = base64.b64decode(m.group(2), validate=True)
        except (binascii.Error, ValueError):
            raise ImageError("data URL holds invalid base64") from None
        if len(data) > max_bytes:
            raise ImageError(f"inline image of {len(data)} bytes is above the {max_bytes}-byte limit")
        if image_mime(data) is None:
            raise ImageError("data URL does not hold a PNG, JPEG, GIF or WebP image")
        return ref
    if root is None:
        raise ImageError(f"image {ref[:80]}: no bench folder to read it from")
    try:
        path = confined(root, ref, "image", None, None)
    except InputError:
        raise ImageError(f"image {ref[:80]} leaves the bench folder") from None
    if not is_file(path):
        raise ImageError(f"image {ref[:80]} is not a file in the bench folder")
    size = path.stat().st_size
    if size > max_bytes:
        raise ImageError(f"image {ref[:80]} has {size} bytes, above the {max_bytes}-byte limit")
    data = path.read_bytes()
    mime = image_mime(data)
    if mime is None:
        raise ImageError(f"image {ref[:80]} is not a PNG, JPEG, GIF or WebP image")
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def image_label(ref: str | None) -> str | None:
    """What a record keeps of an image reference: a path or URL as it is, inline bytes as their digest
    (records never hold image bytes).

    >>> image_label("img/a.png"), image_label("data:image/png;base64,iVBORw0KGgo=")
    ('img/a.png', 'data:image/png;sha256=929e08d597feae56')
    """
    if ref is None or image_ref_kind(ref) != "data":
        return ref
    head, _, body = ref.partition(",")
    mime = head[5:].split(";")[0] or "?"
    return f"data:{mime};sha256=" + hashlib.sha256(body.encode("ascii", "replace")).hexdigest()[:16]


def inline_session(session, root, source="turns"):
    """The session with each turn's image file replaced by a ``data:`` URL of its bytes (for a system
    that takes image bytes rather than paths); remote URLs and ``data:`` URLs are kept as they are.
    A path leaving the bench folder, or a file that is missing or not an image, is an
    :class:`InputError` naming ``source``, the turn and the field."""
    turns = []
    for t in session.turns:
        if t.image and image_ref_kind(t.image) in ("file", "escapes"):
            try:
                t = dataclasses.replace(t, image=image_data_url(Path(root), t.image))
            except ImageError as e:
                raise InputError(source, f"turn_id {t.turn_id}", "image", str(e)) from None
        turns.append(t)
    return dataclasses.replace(session, turns=tuple(turns))
