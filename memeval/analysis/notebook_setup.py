"""What a notebook's kernel sets up before its first figure (kept apart from ``analysis.report``,
which drives papermill and nbconvert from outside the kernel: importing nbformat there costs a
kernel seconds through jsonschema's format checkers)."""

from __future__ import annotations

from typing import Any

from .lazy_iri import defer_iri_grammar

__all__ = ["PLOTLY_RENDERER", "setup_notebook"]

PLOTLY_RENDERER = "plotly_mimetype+memeval_offline"


def _offline_renderer() -> Any:
    """plotly's ``notebook`` renderer without its per-figure MathJax ``<script src>`` from a CDN."""
    from plotly.io import to_html
    from plotly.io._base_renderers import NotebookRenderer

    class OfflineNotebookRenderer(NotebookRenderer):
        def to_mimebundle(self, fig_dict):
            return {
                "text/html": to_html(
                    fig_dict,
                    config=self.config,
                    include_plotlyjs=False,
                    include_mathjax=False,
                    full_html=False,
                    default_width="100%",
                    default_height=525,
                    validate=False,
                )
            }

    return OfflineNotebookRenderer(connected=False)


def setup_notebook() -> None:
    """Call in a notebook's first cell: plotly figures then render in JupyterLab and in offline HTML
    (plotly.js embedded once, nothing fetched from the network)."""
    import plotly.io as pio

    defer_iri_grammar()  # plotly's renderers import nbformat: without this, ~3 s of the kernel's start-up
    if "memeval_offline" not in pio.renderers:
        pio.renderers["memeval_offline"] = _offline_renderer()
    pio.renderers.default = PLOTLY_RENDERER
