"""One HTML table: plain ``<table>`` markup (it survives nbconvert and needs no script), every
header and cell escaped (bench text is data).

>>> table_html(["q", "answer"], [["q1", "<b>5</b>"]], caption="A & B", css_class="t")
'<table class="t"><caption>A &amp; B</caption><thead><tr><th>q</th><th>answer</th></tr></thead><tbody><tr><td>q1</td><td>&lt;b&gt;5&lt;/b&gt;</td></tr></tbody></table>'
"""

from __future__ import annotations

import html
from typing import Iterable

__all__ = ["table_html"]


def table_html(
    columns: Iterable[str], rows: Iterable[Iterable[str]], *, caption: str | None = None, css_class: str | None = None
) -> str:
    """``rows`` (each a sequence of cell texts, in ``columns`` order) as an escaped HTML table."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    cls = f' class="{html.escape(css_class)}"' if css_class else ""
    return f"<table{cls}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
