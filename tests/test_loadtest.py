import pytest

from memeval.cli import main
from memeval.run.loadtest import open_loop
from memeval.systems import NoMemory
from memeval.systems.http import HttpSystem
from memeval.systems.server import Faults, ReferenceServer
from minibench import make_minibench


@pytest.fixture(scope="module")
def idle_server():
    """One fault-free NoMemory server for the tests whose subject is the client's schedule, not the server
    (it keeps no memory and none of them reads its counters): ~0.2 s of start and stop saved per test."""
    with ReferenceServer(NoMemory()) as srv:
        yield srv


def test_open_loop_keeps_the_schedule_and_measures_the_service_delay(idle_server):
    """A 30 ms delay reads as ~30 ms over a 0 ms baseline taken in the same test (generous band: exact
    figures are in benchmarks/). 60 requests each at 80/s (0.75 s a schedule; ~2.4 in flight at once)."""
    base = open_loop(HttpSystem(idle_server.url), ["q1", "q2"], rate=80, duration_s=0.75)
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=30)) as srv:
        r = open_loop(HttpSystem(srv.url), ["q1", "q2"], rate=80, duration_s=0.75)
    assert r.sent == 60 and r.errors == 0 and r.latency["n"] == 60
    assert abs(r.achieved_rate - 80) < 20  # open loop: the rate is the schedule's, not the server's pace
    p50, b50 = r.latency_minus_rtt["p50"], base.latency_minus_rtt["p50"]
    assert p50 >= 27 and 20 <= p50 - b50 <= 50, (p50, b50)


def test_open_loop_shows_queueing_when_the_system_falls_behind():
    # 8 requests in flight at most, each takes 50 ms: capacity 160/s; ask 320/s → the backlog grows.
    # 0.5 s of schedule (160 requests): request i waits ~i/320 s for a slot, so the last ones ~0.5 s and
    # the p99 ~0.55 s from its scheduled time; load only makes it later (the bounds below are lower ones).
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=50)) as srv:
        r = open_loop(HttpSystem(srv.url), ["q"], rate=320, duration_s=0.5, max_in_flight=8)
    assert r.latency["n"] == 160
    assert r.latency["p99"] > 400  # measured from the scheduled time: waiting counts
    assert r.slot_wait["max"] > 200 and r.slot_wait["n"] == 160  # the wait for a slot is told apart from lag


def test_loadtest_cli(tmp_path, capsys, idle_server):
    bench = make_minibench(tmp_path / "b")
    srv = idle_server
    assert main(["loadtest", srv.url, "--bench", bench, "--tier", "core", "--rate", "50", "--duration", "0.25"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[0] == "50.0" and out[1].split()[2] == "0"
    with pytest.raises(SystemExit):
        main(["loadtest", "http://x", "--bench", bench, "--tier", "core"])  # --rate is required


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "url,tier,expect",
    [
        (None, "core", "gave up after"),  # nothing listens there
        ("http://[::1", "core", "malformed system URL"),
        ("ftp://127.0.0.1:9", "core", "malformed system URL"),
        ("127.0.0.1:9", "core", "malformed system URL"),
        ("http://user:pw@127.0.0.1:{port}", "core", "gave up after"),  # credentials never echoed
        ("http://127.0.0.1:{port}", "no-such-tier", "has no tier 'no-such-tier'"),
    ],
)
def test_loadtest_bad_target_is_one_line_and_exit_2(tmp_path, url, tier, expect, capsys):
    """The first case runs ``python -m memeval`` as a child (a real exit status and stderr); the others call
    ``memeval.cli.main`` in process (tests/incli.py: the same path, without ~1.5 s of imports each)."""
    import subprocess
    import sys

    from incli import memeval_cli

    bench = make_minibench(tmp_path / "b")
    port = _free_port()
    args = ["loadtest", (url or "http://127.0.0.1:{port}").format(port=port), "--bench", str(bench), "--tier", tier]
    args += ["--rate", "5", "--duration", "0.2", "--http-timeout", "2"]
    if url is None:
        p = subprocess.run([sys.executable, "-m", "memeval", *args], capture_output=True, text=True, timeout=120)
    else:
        p = memeval_cli(capsys, *args)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert expect in p.stderr and "pw@" not in p.stderr


def test_loadtest_ctrl_c_ends_the_run_without_the_rest_of_its_schedule(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    bench = make_minibench(tmp_path / "b")
    with ReferenceServer(NoMemory()) as srv:  # the warm-up query is answered at once, then every query takes 3 s
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memeval",
                "loadtest",
                srv.url,
                "--bench",
                bench,
                "--tier",
                "core",
                "--rate",
                "20",
                "--duration",
                "20",
                "--http-timeout",
                "60",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        t0 = time.monotonic()
        while srv.stats()["query"] < 1 and time.monotonic() - t0 < 60:  # the warm-up query
            time.sleep(0.005)
        srv.state.faults = Faults(delay_ms=3000)  # from here every query takes 3 s (the warm-up need not)
        while srv.stats()["query"] < 10 and time.monotonic() - t0 < 60:  # the schedule
            time.sleep(0.05)
        t1 = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        took = time.monotonic() - t1
    assert p.returncode == 130 and "interrupted" in err, err
    # ~19 s of the 20 s schedule were still to send: ending well before shows it was dropped. (Whether the
    # 3 s replies in flight were aborted or awaited is not told apart by a time band this wide.)
    assert took < 8.0, took


def test_loadtest_keeps_results_and_warns_on_client_lag(tmp_path, capsys, idle_server):
    import json

    bench = make_minibench(tmp_path / "b")
    out = tmp_path / "load.jsonl"
    srv = idle_server
    assert (
        main(
            [
                "loadtest",
                srv.url,
                "--bench",
                bench,
                "--tier",
                "core",
                "--rate",
                "40",
                "60",
                "--duration",
                "0.25",
                "--out",
                str(out),
                "--max-lag-ms",
                "100000",
            ]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "warning" not in cap.err and f"wrote 2 rate steps to {out}" in cap.out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["rate"] for r in rows] == [40, 60] and all(r["sent"] == r["rate"] / 4 for r in rows)
    assert rows[0]["latency_minus_rtt"]["n"] == 10 and rows[0]["lag_warning"] is False
    assert rows[0]["url"] == srv.url and rows[0]["tier"] == "core"
    assert (
        main(
            [
                "loadtest",
                srv.url,
                "--bench",
                bench,
                "--tier",
                "core",
                "--rate",
                "40",
                "--duration",
                "0.25",
                "--max-lag-ms",
                "0",
                "--no-ingest",
                "--out",
                str(out),
            ]
        )
        == 0
    )  # any lag at all is over 0
    assert "client itself fell" in capsys.readouterr().err
    assert json.loads(out.read_text())["lag_warning"] is True


def test_open_loop_reports_the_clients_own_lag_for_every_request(idle_server):
    r = open_loop(HttpSystem(idle_server.url), ["q1", "q2"], rate=200, duration_s=0.5)
    assert r.sent == 100 and r.lag["n"] == 100 and r.latency["n"] == 100 and r.slot_wait["n"] == 100
    assert 0 <= r.lag["p50"] <= r.lag["p99"] <= r.max_lag_ms  # never early: a request leaves at or after its time
