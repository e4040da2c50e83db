"""``memeval judges RUN_A RUN_B``: two gradings of the same answers, verdict by verdict.

Per axis and overall: the records both graded (n), the share with the same verdict (agreement),
Cohen's kappa, and the ungraded counted apart; then the confusion table (A's verdict by row, B's by
column). Runs on different benches, question sets or answers are refused.
"""

from __future__ import annotations

HELP = "judge agreement: agreement, Cohen's kappa and the confusion table of two gradings of the same answers"


def add_arguments(p) -> None:
    p.add_argument("run_a", metavar="RUN_A", help="run folder graded by judge A")
    p.add_argument("run_b", metavar="RUN_B", help="run folder with the same answers graded by judge B")
    p.add_argument("--by-axis", action="store_true", help="also print the confusion table of each axis")


def run(args) -> int:
    from ._tables import console_tables  # polars on use: start-up time of every command

    from ..analysis.judges import agreement_table, confusion_table, load_judge_pair

    pairs, la, lb = load_judge_pair(args.run_a, args.run_b)
    with console_tables(120):
        print(f"A = {la}\nB = {lb}")
        print(
            "n = records both graded; agreement = same verdict (correct/partial/wrong); kappa = Cohen's; "
            "ungraded counted apart\n"
        )
        print(agreement_table(pairs))
        print("\nConfusion, all axes (rows: A, columns: B)")
        print(confusion_table(pairs))
        if args.by_axis:
            for ax in sorted(pairs["axis"].unique().to_list()):
                print(f"\nConfusion, {ax}")
                print(confusion_table(pairs, ax))
    return 0
