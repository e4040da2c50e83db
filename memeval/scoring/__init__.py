"""memeval.scoring: dry-mode rules, IDK detection, speed points and retrieval hits (benchmark.md §4-5)."""

from memeval.scoring.dry import GRADER_VERSION, DryScore, score_answer, score_many
from memeval.scoring.idk import denies_premise, gold_is_idk, is_idk
from memeval.scoring.matching import contains, matches_any, normalize
from memeval.scoring.retrieval import retrieval_hit
from memeval.scoring.speed import latency_minus_rtt, percentiles, speed_points, speed_status

__all__ = [
    "GRADER_VERSION",
    "DryScore",
    "score_answer",
    "score_many",
    "is_idk",
    "denies_premise",
    "gold_is_idk",
    "normalize",
    "contains",
    "matches_any",
    "retrieval_hit",
    "latency_minus_rtt",
    "speed_points",
    "speed_status",
    "percentiles",
]
