"""Plotly figures over run records (one row per record, columns of ``aggregate.load_records``).

Every function is pure: a polars DataFrame in, a ``plotly.graph_objects.Figure`` out. Scores that
are null (ungraded, or an error) are left out of means and counted in the hover text, never as 0.

This module gathers the figures under one name; each lives in its own module: ``plot_curves``
(degradation, retrieval and seed-spread curves), ``plot_heatmap`` (axis × tier), ``plot_latency``,
``plot_failures``, and ``plot_base`` (template, the palette keyed by system label, ``mean_scores``).

>>> from memeval.workbench import load_runs
>>> fig = degradation_curve(load_runs([tiny_run]))
>>> type(fig).__name__, fig.layout.yaxis.title.text is not None
('Figure', True)
"""

from __future__ import annotations

from .aggregate import CEILING as CEILING_SYSTEM
from .aggregate import FLOOR as FLOOR_SYSTEM
from .aggregate import question_set
from .frontier import frontier_plot
from .plot_base import CEILING_COLOUR, FLOOR_COLOUR, PALETTE, TEMPLATE, mean_scores, system_colour
from .plot_curves import degradation_curve, retrieval_curve, seed_spread_curve
from .plot_failures import FAILURE_CLASSES, failure_class, failure_split
from .plot_heatmap import WIDE_INTERVAL, axis_tier_heatmap
from .plot_latency import latency_histogram, percentile, write_path_figure

__all__ = [
    "FLOOR_SYSTEM",
    "CEILING_SYSTEM",
    "question_set",
    "mean_scores",
    "percentile",
    "degradation_curve",
    "axis_tier_heatmap",
    "latency_histogram",
    "write_path_figure",
    "failure_split",
    "failure_class",
    "FAILURE_CLASSES",
    "retrieval_curve",
    "seed_spread_curve",
    "WIDE_INTERVAL",
    "TEMPLATE",
    "PALETTE",
    "FLOOR_COLOUR",
    "CEILING_COLOUR",
    "system_colour",
    "frontier_plot",
]
