import pytest

from memeval.cli import main
from memeval.run.loadtest import open_loop
from memeval.systems import NoMemory
from memeval.systems.http import HttpSystem
from memeval.systems.server import Faults, ReferenceServer
from minibench import make_minibench


def test_open_loop_keeps_the_schedule_and_measures_the_service_delay():
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=30)) as srv:
        r = open_loop(HttpSystem(srv.url), ["q1", "q2"], rate=40, duration_s=1.5)
    assert r.sent == 60 and r.errors == 0 and r.latency["n"] == 60
    assert abs(r.achieved_rate - 40) < 6  # open loop: the rate is the schedule's, not the server's pace
    assert abs(r.latency_minus_rtt["p50"] - 30) <= 5


def test_open_loop_shows_queueing_when_the_system_falls_behind():
    # 8 requests in flight at most, each takes 50 ms: capacity 160/s; ask 320/s → the backlog grows
    with ReferenceServer(NoMemory(), faults=Faults(delay_ms=50)) as srv:
        r = open_loop(HttpSystem(srv.url), ["q"], rate=320, duration_s=1.0, max_in_flight=8)
    assert r.latency["n"] == 320
    assert r.latency["p99"] > 400  # measured from the scheduled time: waiting counts


def test_loadtest_cli(tmp_path, capsys):
    bench = make_minibench(tmp_path / "b")
    with ReferenceServer(NoMemory()) as srv:
        assert main(["loadtest", srv.url, "--bench", bench, "--tier", "core", "--rate", "50",
                     "--duration", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[0] == "50.0" and out[1].split()[2] == "0"
    with pytest.raises(SystemExit):
        main(["loadtest", "http://x", "--bench", bench, "--tier", "core"])  # --rate is required
