"""The generator works for every seed: tiny and demo for seeds 0-49, full for several (7 crashed
with PoolExhausted before false-claim values could be reused). Built in memory, not written."""

import random
from collections import Counter

import pytest

from memeval.bench.lifelog.generator import build
from memeval.bench.lifelog.presets import PRESETS
from memeval.bench.lifelog.values import PoolExhausted, Values


def _check(preset: str, seed: int) -> None:
    p = PRESETS[preset]
    b = build(preset, seed)
    sets = Counter(q.qset for q in b.questions)
    assert sets == {"main": p.n_questions, "probes": sum(p.probes)}, (preset, seed)
    axes = Counter(q.axis for q in b.questions if q.qset == "main")
    assert all(axes[a] == n for a, n in p.axes.items()), (preset, seed)


@pytest.mark.parametrize("seeds", [range(i, i + 10) for i in range(0, 50, 10)], ids=lambda r: f"{r.start}-{r.stop - 1}")
@pytest.mark.parametrize("preset", ["tiny", "demo"])
def test_small_presets_build_for_seeds_0_to_49(preset, seeds):
    # seeds 0-49 in five items of ten, which the xdist workers share
    for seed in seeds:
        _check(preset, seed)


@pytest.mark.parametrize("seed", [0, 7, 21, 42])
def test_full_preset_builds(seed):
    _check("full", seed)


def test_false_claims_reuse_false_claim_values_never_planted_ones():
    v = Values(random.Random(1))
    wrong = v.wrong("pet")
    planted = set()
    while v.has("pet"):
        planted.add(v.draw("pet"))
    with pytest.raises(PoolExhausted):
        v.draw("pet")
    assert v.wrong("pet") == wrong and wrong not in planted and len(planted) > 100
