"""The README's short tour, run in order on the ``tiny`` preset: the paths it names are the paths the
commands write (the generated bench, the run folders), and each command exits 0. The commands run in
this process (``memeval.cli.main``, what ``memeval`` runs: tests/incli.py) from the tour's folder."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from incli import Result, memeval_cli

REPO = Path(__file__).resolve().parents[1]


def tour_commands() -> list[str]:
    """The tour's first commands (generate ... summary), as the README prints them, comments dropped."""
    text = (REPO / "README.md").read_text()
    block = text.split("## A short tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]
    end = next(i for i, line in enumerate(lines) if line.startswith("memeval summary"))
    return lines[: end + 1]


def _memeval(capsys, cmd: str) -> Result:
    argv = shlex.split(re.sub(r"\s*\[[^\]]*\]", "", cmd))  # optional [--flags] left out
    assert argv[0] == "memeval"
    return memeval_cli(capsys, *argv[1:])


def test_the_tour_runs_in_order_on_tiny(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # relative paths as a user in the tour's folder types them
    cmds = tour_commands()
    assert [c.split()[1] for c in cmds][:3] == ["generate", "audit", "run"]
    run_dirs = []
    for cmd in cmds:
        cmd = cmd.replace("--preset demo", "--preset tiny").replace("lifelog-demo-s1", "lifelog-tiny-s1")
        if "<id>" in cmd:
            cmd = cmd.replace("runs/<id>", str(run_dirs[0]))
        p = _memeval(capsys, cmd)
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
