"""Speed points and latency statistics (benchmark.md §5); expected values computed by hand."""

import math

import pytest

from memeval.scoring.speed import latency_minus_rtt, mean_speed_points, percentiles, speed_points, speed_status


@pytest.mark.parametrize(
    "latency, network, expected",
    [
        (250.0, 40.0, 210.0),
        (30.0, 40.0, 1.0),  # never below 1 ms
        (40.0, 40.0, 1.0),
        (120.0, None, 120.0),  # no network floor: nothing subtracted
    ],
)
def test_latency_minus_rtt(latency, network, expected):
    assert latency_minus_rtt(latency, network) == expected


@pytest.mark.parametrize(
    "latency, expected",
    [
        (1.0, 1.0),
        (125.0, 1.0),  # r = 0.25
        (250.0, 1.0),  # r = 0.5 → +1 exactly
        (375.0, 0.415037),  # r = 0.75 → -log2(0.75), fast side not halved
        (500.0, 0.0),  # r = 1
        (1000.0, -0.5),  # r = 2 → -log2(2)/2
        (1500.0, -0.792481),  # r = 3 → -log2(3)/2
        (2000.0, -1.0),  # r = 4
        (60000.0, -1.0),  # clamped
    ],
)
def test_speed_points_default_target(latency, expected):
    assert speed_points(latency) == pytest.approx(expected, abs=1e-6)


def test_speed_points_r_equal_one_is_plain_zero():
    assert math.copysign(1.0, speed_points(500.0)) == 1.0  # 0.0, not -0.0


def test_speed_points_target_is_a_parameter():
    assert speed_points(300.0, target_ms=200.0) == pytest.approx(-0.292481, abs=1e-6)  # r = 1.5
    assert speed_points(100.0, target_ms=200.0) == 1.0


@pytest.mark.parametrize(
    "bad", [dict(latency_ms=-1.0), dict(latency_ms=float("nan")), dict(latency_ms=100.0, target_ms=0.0)]
)
def test_speed_points_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        speed_points(**bad)


@pytest.mark.parametrize(
    "latency, network, status",
    [
        (100.0, 89.0, "measured"),
        (100.0, 90.0, "unmeasurable"),  # round trip ≥ 90% of the total
        (100.0, 150.0, "unmeasurable"),
        (None, 10.0, "unmeasurable"),
        (100.0, None, "unmeasurable"),
    ],
)
def test_speed_status(latency, network, status):
    got, reason = speed_status(latency, network)
    assert got == status
    assert (reason is None) == (status == "measured")


def test_speed_status_reason_names_the_share():
    assert speed_status(100.0, 95.0)[1] == "round trip 95.0 ms is 95% of the total 100.0 ms (>= 90%)"


def test_percentiles_linear_interpolation():
    got = percentiles(range(1, 101))
    assert got == {
        "p50": pytest.approx(50.5),
        "p90": pytest.approx(90.1),
        "p95": pytest.approx(95.05),
        "p99": pytest.approx(99.01),
        "max": 100.0,
        "n": 100,
    }


def test_percentiles_small_and_empty():
    assert percentiles([7.0]) == {"p50": 7.0, "p90": 7.0, "p95": 7.0, "p99": 7.0, "max": 7.0, "n": 1}
    assert percentiles([3.0, None, 1.0]) == {
        "p50": 2.0,
        "p90": pytest.approx(2.8),
        "p95": pytest.approx(2.9),
        "p99": pytest.approx(2.98),
        "max": 3.0,
        "n": 2,
    }
    assert percentiles([]) == {"p50": None, "p90": None, "p95": None, "p99": None, "max": None, "n": 0}


def test_mean_speed_points_averages_never_sums():
    assert mean_speed_points([1.0, -1.0, 0.5, None]) == pytest.approx(0.5 / 3)
    assert mean_speed_points([None]) is None
