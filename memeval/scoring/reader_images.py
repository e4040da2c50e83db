"""The images an answer-mode reader is handed: the images of the returned memories, read as ``data:``
URLs from inside the bench folder (``bench.images``), when the reader model is marked as accepting
images; otherwise a plain statement of what was not shown.

>>> from memeval.systems.base import Memory
>>> ri = reader_images([Memory("a photo", image="img/x.png"), "plain"], None, accepts=False)
>>> ri.sent, ri.note
(0, '1 image returned, not sent: the reader is not marked as accepting images (--reader-images)')
>>> reader_images(["plain"], None, accepts=True).note is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bench.images import ImageError, image_data_url
from ..systems.base import memory_image

__all__ = ["ReaderImages", "reader_images", "MAX_READER_IMAGES"]

#: images handed to the reader for one question at most (the rest are counted as not sent)
MAX_READER_IMAGES = 16


@dataclass(frozen=True)
class ReaderImages:
    """``urls``: the ``data:`` URLs sent, in order; ``marks``: per memory, ``"[image N]"`` or None;
    ``sent``: how many were sent (None when no memory carried an image); ``note``: what happened, plainly."""

    urls: tuple[str, ...] = ()
    marks: tuple[str | None, ...] = ()
    sent: int | None = None
    note: str | None = None


def _n(k: int) -> str:
    return f"{k} image" + ("" if k == 1 else "s")


def reader_images(memories, root, accepts: bool, max_images: int = MAX_READER_IMAGES) -> ReaderImages:
    """The images of ``memories`` for the reader (each distinct image once, in memory order)."""
    refs = [memory_image(m) for m in memories]
    distinct = list(dict.fromkeys(r for r in refs if r))
    if not distinct:
        return ReaderImages(marks=(None,) * len(refs))
    if not accepts:
        return ReaderImages(
            marks=(None,) * len(refs),
            sent=0,
            note=f"{_n(len(distinct))} returned, not sent: the reader is not marked as accepting images "
            "(--reader-images)",
        )
    number: dict[str, int] = {}
    urls: list[str] = []
    problems: list[str] = []
    for ref in distinct:
        if len(urls) >= max_images:
            problems.append(f"above the limit of {max_images} per question")
            continue
        try:
            urls.append(image_data_url(root, ref))
        except ImageError as e:
            problems.append(str(e))
            continue
        number[ref] = len(urls)
    marks = tuple(f"[image {number[r]}]" if r in number else None for r in refs)
    note = f"{_n(len(urls))} sent to the reader"
    if problems:
        note += f"; {len(problems)} not sent ({problems[0]})"
    return ReaderImages(tuple(urls), marks, len(urls), note)
