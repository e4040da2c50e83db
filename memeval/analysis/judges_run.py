"""What the judges notebook runs: two gradings of the same answers (``answer`` mode, one reader, two
judges) and the leniency probe graded by each judge. With no judge given, the notebook uses the
scripted loopback endpoints of ``memeval.testing.judge_stubs.stub_endpoints`` so that it renders
offline (this module does not import them: test stubs stay out of the production path)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Sequence

import polars as pl

from ..llm import ChatClient
from ..run import run_system
from ..scoring.judge import Judge, Reader
from ..scoring.leniency import grade_probes
from ..workspace import anchored

__all__ = ["two_gradings", "grade_leniency"]

#: (base URL, model) of one OpenAI-compatible endpoint
Endpoint = tuple[str, str]


def _client(ep: Endpoint, key_env: str | None, role: str = "judge"):
    return ChatClient(ep[0], ep[1], api_key_env=key_env, role=role)


def two_gradings(
    bench_dir,
    system: str,
    tiers: Sequence[str] | None,
    judges: Sequence[Endpoint],
    reader: Endpoint,
    runs_root: str | Path | None = None,
    key_env: str | None = "OPENAI_API_KEY",
) -> list[Path]:
    """One ``answer``-mode run per judge, each in a new folder under ``runs_root`` (None: a new
    temporary folder, so these scratch runs never land among the user's ``runs/``; relative: under the
    project root), with the same system and reader (deterministic: the same answers, graded by each
    judge)."""
    runs_root = Path(tempfile.mkdtemp(prefix="memeval-judges-")) if runs_root is None else anchored(runs_root)
    runs_root.mkdir(parents=True, exist_ok=True)
    out = []
    for i, ep in enumerate(judges):
        folder = Path(tempfile.mkdtemp(prefix=f"judges-{i}-", dir=runs_root))
        out.append(
            run_system(
                bench_dir,
                system,
                tiers=list(tiers) if tiers else None,
                mode="answer",
                judge=Judge(_client(ep, key_env)),
                reader=Reader(_client(reader, key_env, "reader")),
                out=folder / "run",
                progress=False,
            )
        )
    return out


def grade_leniency(
    probes, judges: Sequence[Endpoint], key_env: str | None = "OPENAI_API_KEY", concurrency: int = 4
) -> pl.DataFrame:
    """One row per (judge, probe): the judge's verdict on the trap answer (``score`` None = ungraded)."""
    rows = []
    for ep in judges:
        rows += grade_probes(probes, Judge(_client(ep, key_env)), ep[1], concurrency)
    return pl.DataFrame(rows, schema_overrides={"score": pl.Float64})
