"""Bootstrap intervals, paired differences and McNemar's exact test, on cases worked out by hand."""

import math

import polars as pl
import pytest

from memeval.analysis.intervals import bootstrap_means, mcnemar_exact, paired_differences


def _df(scores, system="a", tier="core", haystacks=None, weights=None):
    n = len(scores)
    return pl.DataFrame(
        {
            "system": [system] * n,
            "tier": [tier] * n,
            "qid": [f"q{i}" for i in range(n)],
            "epoch": [0] * n,
            "score": scores,
            "haystack": haystacks or [None] * n,
            "weight": weights or [1] * n,
        },
        schema_overrides={"score": pl.Float64, "haystack": pl.Utf8},
    )


def test_two_questions_one_right_give_the_whole_unit_interval():
    # Resampling {0, 1} twice: mean 0 (p 1/4), 1/2 (p 1/2), 1 (p 1/4). The 2.5% and 97.5% quantiles
    # of that distribution are 0 and 1, so the 95% interval is [0, 1] around the mean 0.5.
    row = bootstrap_means(_df([0.0, 1.0]), ["system"], n_resamples=4000).row(0, named=True)
    assert (row["mean"], row["lo"], row["hi"], row["n"], row["clusters"]) == (0.5, 0.0, 1.0, 2, 2)


def test_a_single_question_has_no_spread_and_nulls_are_left_out():
    row = bootstrap_means(_df([0.5, None]), ["system"]).row(0, named=True)
    assert (row["mean"], row["lo"], row["hi"], row["n"]) == (0.5, 0.5, 0.5, 1)


def test_intervals_shrink_as_n_grows_and_cover_the_mean():
    widths = []
    for n in (20, 80, 320, 1280):
        row = bootstrap_means(_df([float(i % 2) for i in range(n)]), ["system"]).row(0, named=True)
        assert row["lo"] <= row["mean"] == 0.5 <= row["hi"]
        widths.append(row["hi"] - row["lo"])
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0] / 4
    # the normal approximation for p = 0.5, n = 1280: 2 * 1.96 * sqrt(0.25 / 1280) = 0.0548 (a 90% interval
    # would be 2 * 1.645 * ... = 0.0460: outside the band, which allows for 1000 resamples' noise)
    assert widths[-1] == pytest.approx(0.0548, abs=0.007)


# The bootstrap distribution of the mean of 100 questions, half right, is exactly Binomial(100, 1/2) / 100
# (each resample draws every question with probability 1/2 of being a right one). Its quantiles, from the
# binomial CDF: P(X <= 39) = 0.0176 < 0.025 < P(X <= 40) = 0.0284, so the 2.5% quantile is 40 and by
# symmetry the 97.5% is 60; P(X <= 41) = 0.0443 < 0.05 < P(X <= 42) = 0.0666 gives 42 / 58 at 90%;
# P(X <= 36) = 0.0033 < 0.005 < P(X <= 37) = 0.0060 gives 37 / 63 at 99%. 20,000 resamples put the
# empirical quantiles on those values (the nearest other value is ~20 standard errors of the count away).
_HALF_RIGHT = [float(i % 2) for i in range(100)]


@pytest.mark.parametrize(
    ("level", "lo", "hi"), [(None, 0.40, 0.60), (0.95, 0.40, 0.60), (0.90, 0.42, 0.58), (0.99, 0.37, 0.63)]
)
def test_interval_level_gives_the_binomial_quantiles_and_defaults_to_95(level, lo, hi):
    kw = {} if level is None else {"level": level}
    row = bootstrap_means(_df(_HALF_RIGHT), ["system"], n_resamples=20_000, **kw).row(0, named=True)
    assert (row["lo"], row["hi"]) == (pytest.approx(lo), pytest.approx(hi))


def test_paired_difference_interval_defaults_to_95():
    # A right on every other question, B on none: the per-question difference is the half-right vector above
    a, b = _df(_HALF_RIGHT), _df([0.0] * 100, system="b")
    row = paired_differences(a, b, ["tier"], n_resamples=20_000).row(0, named=True)
    assert (row["diff"], row["lo"], row["hi"]) == (0.5, pytest.approx(0.40), pytest.approx(0.60))


def test_fixed_seed_gives_the_same_interval_whatever_the_row_order():
    df = _df([float(i % 3 == 0) for i in range(50)])
    a = bootstrap_means(df, ["system"], seed=1).row(0)
    assert bootstrap_means(df.reverse(), ["system"], seed=1).row(0) == a


def test_whole_haystacks_are_resampled_together():
    # Two conversations of 50 questions each, one all right and one all wrong: only 2 clusters, so the
    # interval is the unit interval, where question-level resampling would give a narrow one.
    scores = [1.0] * 50 + [0.0] * 50
    clustered = bootstrap_means(_df(scores, haystacks=["h1"] * 50 + ["h2"] * 50), ["system"], n_resamples=2000)
    loose = bootstrap_means(_df(scores), ["system"])
    assert clustered.row(0, named=True)["clusters"] == 2 and loose.row(0, named=True)["clusters"] == 100
    assert (clustered["lo"][0], clustered["hi"][0]) == (0.0, 1.0)
    assert loose["hi"][0] - loose["lo"][0] < 0.25


def test_weighted_mean_uses_the_weights():
    row = bootstrap_means(_df([1.0, 0.0], weights=[3, 1]), ["system"], weight="weight").row(0, named=True)
    assert row["mean"] == 0.75 and row["lo"] == 0.0 and row["hi"] == 1.0


def test_groups_do_not_change_each_other():
    both = pl.concat(
        [_df([float(i % 2) for i in range(30)], tier="core"), _df([float(i % 5 == 0) for i in range(30)], tier="full")]
    )
    alone = bootstrap_means(both.filter(pl.col("tier") == "full"), ["tier"])
    together = bootstrap_means(both, ["tier"]).filter(pl.col("tier") == "full")
    assert alone.row(0) == together.row(0)


def test_mcnemar_exact_matches_hand_computed_binomial_tails():
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(2, 8) == pytest.approx(2 * (1 + 10 + 45) / 1024)  # 0.109375
    assert mcnemar_exact(8, 2) == mcnemar_exact(2, 8)
    assert mcnemar_exact(0, 1) == 1.0


def test_paired_differences_count_flips_and_test_them():
    a = _df([1.0] * 10 + [0.0] * 2 + [1.0] * 8)
    b = _df([0.0] * 10 + [1.0] * 2 + [1.0] * 8, system="b")
    row = paired_differences(a, b, ["tier"]).row(0, named=True)
    assert (row["n"], row["a_only"], row["b_only"]) == (20, 10, 2)
    assert row["diff"] == pytest.approx((10 - 2) / 20)
    assert row["p"] == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert row["lo"] < row["diff"] < row["hi"]


def test_paired_differences_use_only_questions_both_runs_graded():
    a = _df([1.0, 1.0, None, 0.0])
    b = _df([0.0, 1.0, 1.0], system="b")
    row = paired_differences(a, b, ["tier"]).row(0, named=True)
    assert row["n"] == 2 and row["mean_a"] == 1.0 and row["mean_b"] == 0.5
    assert not math.isnan(row["lo"])
