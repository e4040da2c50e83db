"""A bad SWEEP.yaml is one line naming the file and the field, exit 2, and nothing is written."""

import pytest

from memeval.cli import main
from sweep_helpers import tiny_benches


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return tiny_benches(tmp_path_factory.mktemp("spec"), seeds=(1,))[1]


CASES = [
    ("systems: [bm25]\nbenches: [BENCH]\ncolour: blue\n", "colour", "unknown field"),
    ("benches: [BENCH]\n", "systems", "missing"),
    ("systems: []\nbenches: [BENCH]\n", "systems", "empty"),
    ("systems: [bm25, nosuch]\nbenches: [BENCH]\n", "systems[1]", "unknown system 'nosuch'"),
    ("systems: ['bm25:k']\nbenches: [BENCH]\n", "systems[0]", "not key=value"),
    ("systems: [bm25]\n", "benches", "no benches"),
    ("systems: ['http://me:s3cret@127.0.0.1:9']\nbenches: [BENCH]\n", "systems[0]", "credentials in a URL"),
    (
        "systems: [bm25]\nbenches: [BENCH]\nmodes: [memory]\njudge: {url: 'http://k:s3cret@127.0.0.1:9/v1', model: m}\n",
        "judge.url",
        "credentials in a URL",
    ),
    ("systems: [bm25]\npresets: [huge]\n", "presets[0]", "unknown preset 'huge'"),
    ("systems: [bm25]\npresets: [tiny]\nseeds: [1, one]\n", "seeds", "whole numbers"),
    ("systems: [bm25]\npresets: [tiny]\nseeds: [1, 1]\n", "seeds", "distinct"),
    ("systems: [bm25]\nbenches: [BENCH]\nepochs: 0\n", "epochs", "1 to 1000"),
    ("systems: [bm25]\nbenches: [BENCH]\nmodes: [dry, wet]\n", "modes[1]", "unknown mode 'wet'"),
    ("systems: [bm25]\nbenches: [BENCH]\nmodes: [memory]\n", "judge", "need a judge"),
    (
        "systems: [bm25]\nbenches: [BENCH]\nmodes: [answer]\njudge: {url: http://127.0.0.1:9/v1, model: m}\n",
        "reader",
        "needs a reader",
    ),
    ("systems: [bm25]\nbenches: [BENCH]\njudge: {url: http://x/v1}\n", "judge.model", "missing"),
    ("systems: [bm25]\nbenches: [BENCH]\njudge: {url: u, model: m, key_env: 'A B'}\n", "judge.key_env", "variable"),
    ("systems: [bm25]\nbenches: [BENCH]\ntiers: [core, huge]\n", "tiers", "no tier 'huge'"),
    ("systems: [bm25]\nbenches: [BENCH, BENCH]\n", "benches", "twice"),
    ("systems: [bm25]\nbenches: [BENCH/nope]\n", "benches[0]", "no bench.yaml"),
    ("systems: [bm25]\nbenches: [BENCH]\nname: ../up\n", "name", "plain folder name"),
    ("- just\n- a list\n", None, "expected a mapping"),
    ("systems: [bm25\n", None, "not valid YAML"),
]


@pytest.mark.parametrize("text, field, message", CASES)
def test_bad_sweep_file_is_one_line_and_exit_2(text, field, message, bench, tmp_path, capsys):
    spec = tmp_path / "SWEEP.yaml"
    spec.write_text(text.replace("BENCH", str(bench)))
    out = tmp_path / "sw"
    rc = main(["sweep", str(spec), "--out", str(out), "--dashboard-address", "none", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"memeval sweep: error: {spec}")
    if field is not None:
        assert f"field '{field}'" in err
    assert message in err and "s3cret" not in err
    assert not out.exists()  # nothing half-written


def test_missing_sweep_file(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "absent.yaml")]) == 2
    assert "absent.yaml: no sweep file here" in capsys.readouterr().err


def test_unreachable_scheduler_is_one_line(bench, tmp_path, capsys):
    spec = tmp_path / "SWEEP.yaml"
    spec.write_text(f"systems: [bm25]\nbenches: [{bench}]\ntiers: [core]\n")
    rc = main(["sweep", str(spec), "--out", str(tmp_path / "sw"), "--scheduler", "127.0.0.1:1"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "tcp://HOST:PORT" in err


def test_refused_scheduler_is_one_line_and_writes_nothing(bench, tmp_path, capsys, monkeypatch):
    # dask retries a refused connection until its timeout (15 s in production): 0.3 s says the same here
    monkeypatch.setattr("memeval.run.sweep.execute.SCHEDULER_CONNECT_TIMEOUT", "0.3s")
    spec = tmp_path / "SWEEP.yaml"
    spec.write_text(f"systems: [bm25]\nbenches: [{bench}]\ntiers: [core]\n")
    out = tmp_path / "sw"
    rc = main(["sweep", str(spec), "--out", str(out), "--scheduler", "tcp://127.0.0.1:9"])  # discard port: refused
    err = capsys.readouterr().err.strip()
    assert rc == 1 and len(err.splitlines()) == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert not out.exists()
