"""``memeval multiturn generate|run|summary|extractor``: the multi-turn task evaluation.

generate  write the built-in suite (seeded) into a folder
run       replay agents over a suite (3 runs per sample), append one record per sample to a JSONL file
summary   pass rates from records: per stratum with the weighted total, shares, breakdowns
extractor key-level accuracy of a state extractor against the suite's hand labels
"""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError

__all__ = ["HELP", "add_arguments", "run"]

HELP = "multi-turn task evaluation: generate a suite, replay agents, summarise pass rates"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="mt_command", metavar="ACTION", required=True)
    g = sub.add_parser("generate", help="write the built-in multi-turn suite")
    g.add_argument("-o", "--out", required=True, help="suite folder to write")
    g.add_argument("--seed", type=int, default=20261018)
    g.add_argument("--sessions", type=int, default=24, help="task sessions (default 24)")
    g.add_argument("--cross-session", type=int, default=2, help="user x topic units (default 2)")
    g.add_argument("--grader-version", default="r5")

    r = sub.add_parser("run", help="replay agents over a suite and write records")
    r.add_argument("suite", help="suite folder")
    r.add_argument("-o", "--out", required=True, help="records JSONL (appended)")
    r.add_argument("--agent", action="append", default=[],
                   help="scripted agent name (repeatable; default: correct); or 'chat' with --base-url/--model")
    r.add_argument("--base-url", help="OpenAI-compatible endpoint for --agent chat")
    r.add_argument("--model", help="model name for --agent chat")
    r.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    r.add_argument("--extractor", choices=["rules", "chat"], default="rules",
                   help="state extractor for agents that report no state")
    r.add_argument("--judge", action="store_true", help="ask the endpoint's model the three judge questions")
    r.add_argument("--live-tools", action="store_true", help="call the live tools (health check; env_drift)")
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--grader-version", default=None, help="default: the suite's")
    r.add_argument("--run-id", default="")

    s = sub.add_parser("summary", help="pass rates from records")
    s.add_argument("records", help="records JSONL")
    s.add_argument("--grader-version", help="required when the records hold several versions")
    s.add_argument("--agent", help="one agent (default: each agent in turn)")

    e = sub.add_parser("extractor", help="extractor accuracy against the suite's hand labels")
    e.add_argument("suite")
    e.add_argument("--extractor", choices=["rules", "chat"], default="rules")
    e.add_argument("--base-url")
    e.add_argument("--model")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY")
    e.add_argument("--threshold", type=float, default=None)


def _client(args):
    from ..llm import ChatClient
    if not args.base_url or not args.model:
        raise InputError("<command line>", None, "--base-url/--model", "needed for a chat agent, extractor or judge")
    return ChatClient(args.base_url, args.model, api_key_env=args.api_key_env)


def _extractor(args):
    from ..multiturn.extractor import ChatExtractor, RuleExtractor
    return ChatExtractor(_client(args)) if args.extractor == "chat" else RuleExtractor()


def _generate(args) -> int:
    from ..multiturn.suite import generate_suite, save_suite
    suite = generate_suite(args.seed, args.sessions, args.cross_session, args.grader_version)
    save_suite(suite, args.out)
    print(f"{args.out}: {len(suite.sessions)} sessions, {len(suite.samples)} samples")
    return 0


def _run(args) -> int:
    from ..multiturn.agents import SCRIPTED_AGENTS, make_agent
    from ..multiturn.config import DEFAULT_CONFIG
    from ..multiturn.extractor import extractor_accuracy
    from ..multiturn.judge import ChatJudge
    from ..multiturn.llm_agent import ChatAgent
    from ..multiturn.runner import fixture_tools, live_tools, run_suite
    from ..multiturn.suite import load_suite

    agents = []                              # every name checked before anything runs or is written
    for name in args.agent or ["correct"]:
        if name == "chat":
            agents.append(ChatAgent(_client(args), name=f"chat:{args.model}"))
        elif name in SCRIPTED_AGENTS:
            agents.append(make_agent(name))
        else:
            raise InputError("<command line>", None, "--agent", f"unknown agent '{name}' (scripted: "
                             f"{', '.join(sorted(SCRIPTED_AGENTS))}; or chat)")
    suite = load_suite(args.suite)
    gv = args.grader_version or (suite.samples[0].replay.grader_version if suite.samples else "r5")
    cfg = DEFAULT_CONFIG.with_(grader_version=gv, runs=args.runs, pass_runs=min(2, args.runs))
    extractor = _extractor(args)
    judge = ChatJudge(_client(args)) if args.judge else None
    score = extractor_accuracy(extractor, suite.labels)
    trusted = score.trusted(cfg.extractor_threshold)
    print(f"extractor {extractor.name}: key accuracy {score.accuracy:.3f} over {score.units} "
          f"({'trusted' if trusted else 'NOT trusted: its samples are undetermined'})")
    tools = live_tools(suite) if args.live_tools else fixture_tools(suite)
    failed = []
    for agent in agents:
        recs = run_suite(suite, agent, args.out, cfg, tools_factory=tools, run_id=args.run_id, judge=judge,
                         extractor=extractor, extractor_trusted=trusted)
        counts = {}
        for r in recs:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        print(f"{agent.name}: {len(recs)} samples " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        if not any(r["verdict"] != "incomplete" for r in recs):
            failed.append(agent.name)
    if failed:  # nothing completed: the records say why, the exit status must not say success
        print(f"memeval multiturn run: no sample completed for {', '.join(failed)} "
              f"(every record is 'incomplete'; see their reasons in {args.out})", file=sys.stderr)
        return 1
    return 0


def _summary(args) -> int:
    from ..multiturn.rates import MixedVersionsError, format_pass_rates, pass_rates, results_frame
    from ..multiturn.records import read_records
    df = results_frame(read_records(args.records))
    agents = [args.agent] if args.agent else sorted(df["agent"].unique().to_list())
    for a in agents:
        try:
            print(format_pass_rates(pass_rates(df, args.grader_version, a)))
        except MixedVersionsError as e:
            raise InputError(args.records, None, "grader_version", str(e)) from None
        print()
    return 0


def _extractor_cmd(args) -> int:
    from ..multiturn.config import DEFAULT_CONFIG
    from ..multiturn.extractor import extractor_accuracy
    from ..multiturn.suite import load_suite
    suite = load_suite(args.suite)
    ex = _extractor(args)
    sc = extractor_accuracy(ex, suite.labels)
    thr = args.threshold if args.threshold is not None else DEFAULT_CONFIG.extractor_threshold
    print(f"{ex.name}: key-level accuracy {sc.accuracy:.3f} over {sc.units} labelled keys "
          f"(threshold {thr}: {'trusted' if sc.trusted(thr) else 'not trusted'})")
    for k, (ok, n) in sorted(sc.per_key.items()):
        print(f"  {k:18} {ok}/{n}")
    return 0 if sc.trusted(thr) else 1


def run(args) -> int:
    return {"generate": _generate, "run": _run, "summary": _summary, "extractor": _extractor_cmd}[args.mt_command](args)
