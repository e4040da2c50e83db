"""The README's short tour, run in order on the ``tiny`` preset: the paths it names are the paths the
commands write (the generated bench, the run folders), and each command exits 0."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def tour_commands() -> list[str]:
    """The tour's first commands (generate ... summary), as the README prints them, comments dropped."""
    text = (REPO / "README.md").read_text()
    block = text.split("## A short tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]
    end = next(i for i, line in enumerate(lines) if line.startswith("memeval summary"))
    return lines[: end + 1]


def _memeval(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(re.sub(r"\s*\[[^\]]*\]", "", cmd))  # optional [--flags] left out
    assert argv[0] == "memeval"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "memeval", *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_tour_runs_in_order_on_tiny(tmp_path):
    cmds = tour_commands()
    assert [c.split()[1] for c in cmds][:3] == ["generate", "audit", "run"]
    run_dirs = []
    for cmd in cmds:
        cmd = cmd.replace("--preset demo", "--preset tiny").replace("lifelog-demo-s1", "lifelog-tiny-s1")
        if "<id>" in cmd:
            cmd = cmd.replace("runs/<id>", str(run_dirs[0]))
        p = _memeval(cmd, tmp_path)
        assert p.returncode == 0, f"{cmd}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
        if cmd.startswith("memeval generate"):
            assert (tmp_path / "data" / "lifelog-tiny-s1" / "bench.yaml").is_file()  # where the next line looks
        if cmd.startswith("memeval run"):
            folder = tmp_path / p.stdout.strip()  # stdout is the folder alone, relative to the tour's folder
            assert folder.parent == tmp_path / "runs" and (folder / "manifest.json").is_file()
            assert "weighted" in p.stderr and "retries=" in p.stderr  # the headline, on stderr
            run_dirs.append(folder)
        if cmd.startswith("memeval summary"):
            assert "no_memory" in p.stdout  # the floor run of the tour, found beside
    assert len(run_dirs) >= 2
