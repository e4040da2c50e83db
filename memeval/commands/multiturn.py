"""``memeval multiturn generate|run|summary|extractor``: the multi-turn task evaluation.

generate  write the built-in suite (seeded) into a folder
run       replay agents over a suite (3 runs per sample), append one record per sample to a JSONL file
summary   pass rates from records: per stratum with the weighted total, shares, breakdowns
extractor key-level accuracy of a state extractor against the suite's hand labels
import    chat transcripts (OpenAI messages JSONL) -> samples with recorded fixtures
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
    g.add_argument(
        "--session-units",
        action="store_true",
        help="also a session unit (open to close) per session holding several goals",
    )

    r = sub.add_parser("run", help="replay agents over a suite and write records")
    r.add_argument("suite", help="suite folder")
    r.add_argument("-o", "--out", required=True, help="records JSONL (appended)")
    r.add_argument(
        "--agent",
        action="append",
        default=[],
        help="scripted agent name (repeatable; default: correct); or 'chat' with --base-url/--model",
    )
    r.add_argument("--base-url", help="OpenAI-compatible endpoint for --agent chat")
    r.add_argument("--model", help="model name for --agent chat")
    r.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    from .run import add_cache_arguments, add_limits

    add_limits(r, "agent")
    add_cache_arguments(r)
    r.add_argument(
        "--extractor",
        choices=["rules", "chat"],
        default="rules",
        help="state extractor, used only for replies that report no state (report_state / state block)",
    )
    r.add_argument(
        "--trust-threshold",
        type=float,
        default=None,
        help="key accuracy the extractor needs on the hand labels to be trusted (default: the config's 0.9)",
    )
    r.add_argument(
        "--memory",
        default=None,
        help="memory system for user x topic units (bm25, bm25:k=1, http://..., python:mod:factory): the "
        "earlier session is ingested and the later one gets what it returns (default: replay the "
        "earlier session into the same conversation)",
    )
    r.add_argument("--judge", action="store_true", help="ask the endpoint's model the three judge questions")
    r.add_argument("--live-tools", action="store_true", help="call the live tools (health check; env_drift)")
    r.add_argument(
        "--tool-runner",
        metavar="MODULE:FUNC",
        help="your own live tools: a function (name, args) -> result, or a factory returning one "
        "(implies --live-tools)",
    )
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--grader-version", default=None, help="default: the suite's")
    r.add_argument("--run-id", default="")

    s = sub.add_parser("summary", help="pass rates from records")
    s.add_argument("records", help="records JSONL")
    s.add_argument("--grader-version", help="required when the records hold several versions")
    s.add_argument("--agent", help="one agent (default: each agent in turn)")

    im = sub.add_parser("import", help="OpenAI-messages transcripts (JSONL) -> a suite with recorded fixtures")
    im.add_argument("transcripts", help="JSONL: one {id, messages} object per line (OpenAI chat messages)")
    im.add_argument("-o", "--out", required=True, help="suite folder to write")
    im.add_argument("--grader-version", default="r5")

    e = sub.add_parser("extractor", help="extractor accuracy against the suite's hand labels")
    e.add_argument("suite")
    e.add_argument("--extractor", choices=["rules", "chat"], default="rules")
    e.add_argument("--base-url")
    e.add_argument("--model")
    e.add_argument("--api-key-env", default="OPENAI_API_KEY")
    e.add_argument("--threshold", type=float, default=None)
    add_cache_arguments(e)


def _client(args, role: str):
    from ..llm import ChatClient
    from .run import limits, model_cache

    if not args.base_url or not args.model:
        raise InputError("<command line>", None, "--base-url/--model", "needed for a chat agent, extractor or judge")
    return ChatClient(
        args.base_url, args.model, api_key_env=args.api_key_env, cache=model_cache(args), **limits(args, role)
    )


def _extractor(args):
    from ..multiturn.extractor import ChatExtractor, RuleExtractor

    return ChatExtractor(_client(args, "extractor")) if args.extractor == "chat" else RuleExtractor()


def _generate(args) -> int:
    from ..multiturn.suite import generate_suite, save_suite

    suite = generate_suite(
        args.seed, args.sessions, args.cross_session, args.grader_version, session_units=args.session_units
    )
    save_suite(suite, args.out)
    print(f"{args.out}: {len(suite.sessions)} sessions, {len(suite.samples)} samples")
    return 0


def _for_suite(agent, suite):
    """A chat agent is offered the suite's own tool registry and state schema."""
    from ..multiturn.domain import STATE_SCHEMA, TOOLS
    from ..multiturn.llm_agent import ChatAgent, openai_tools

    if not isinstance(agent, ChatAgent):
        return agent
    registry = {}
    for cfg in suite.configs.values():
        registry.update(cfg.get("tools") or {})
    schema = {k: v for s in suite.samples for k, v in s.state_schema.items()} or STATE_SCHEMA
    return ChatAgent(agent.client, name=agent.name, tools=openai_tools(registry or TOOLS), state_schema=schema)


def _run(args) -> int:
    from ..multiturn.agents import SCRIPTED_AGENTS, Agent, make_agent
    from ..multiturn.config import DEFAULT_CONFIG
    from ..multiturn.extractor import extractor_accuracy
    from ..multiturn.grade import UNTRUSTED_REASON
    from ..multiturn.judge import ChatJudge
    from ..multiturn.llm_agent import ChatAgent
    from ..multiturn.runner import run_suite
    from ..multiturn.toolsets import fixture_tools, live_tools
    from ..multiturn.suite import load_suite

    agents: list[Agent] = []  # every name checked before anything runs or is written
    for name in args.agent or ["correct"]:
        if name == "chat":
            agents.append(ChatAgent(_client(args, "agent"), name=f"chat:{args.model}"))
        elif name in SCRIPTED_AGENTS:
            agents.append(make_agent(name))
        else:
            raise InputError(
                "<command line>",
                None,
                "--agent",
                f"unknown agent '{name}' (scripted: {', '.join(sorted(SCRIPTED_AGENTS))}; or chat)",
            )
    suite = load_suite(args.suite)
    agents = [_for_suite(a, suite) for a in agents]
    gv = args.grader_version or (suite.samples[0].replay.grader_version if suite.samples else "r5")
    cfg = DEFAULT_CONFIG.with_(grader_version=gv, runs=args.runs, pass_runs=min(2, args.runs))
    if args.trust_threshold is not None:
        if not 0.0 <= args.trust_threshold <= 1.0:
            raise InputError("<command line>", None, "--trust-threshold", "must be between 0 and 1")
        cfg = cfg.with_(extractor_threshold=args.trust_threshold)
    extractor = _extractor(args)
    judge = ChatJudge(_client(args, "judge")) if args.judge else None
    score = extractor_accuracy(extractor, suite.labels)
    trusted = score.trusted(cfg.extractor_threshold)
    print(
        f"extractor {extractor.name} (fallback for replies without a reported state): key accuracy "
        f"{score.accuracy:.3f} over {score.units} labelled keys, threshold {cfg.extractor_threshold}"
    )
    if args.tool_runner:
        from ..multiturn.toolsets import load_tool_runner

        tools = live_tools(suite, call=load_tool_runner(args.tool_runner))
    else:
        tools = live_tools(suite) if args.live_tools else fixture_tools(suite)
    memory = None
    if args.memory:
        from ..systems.registry import make_system

        memory = make_system(args.memory)
    failed = []
    for agent in agents:
        recs = run_suite(
            suite,
            agent,
            args.out,
            cfg,
            tools_factory=tools,
            run_id=args.run_id,
            judge=judge,
            extractor=extractor,
            extractor_trusted=trusted,
            memory=memory,
        )
        counts: dict[str, int] = {}
        for r in recs:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        print(f"{agent.name}: {len(recs)} samples " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        untrusted = sum(1 for r in recs if any(g["reason"] == UNTRUSTED_REASON for g in r["runs"]))
        if untrusted:
            print(
                f"{agent.name}: {untrusted} samples undetermined because extractor {extractor.name} is NOT "
                f"trusted (accuracy {score.accuracy:.3f} < {cfg.extractor_threshold})"
            )
        if not any(r["verdict"] != "incomplete" for r in recs):
            failed.append(agent.name)
    if failed:  # nothing completed: the records say why, the exit status must not say success
        print(
            f"memeval multiturn run: no sample completed for {', '.join(failed)} "
            f"(every record is 'incomplete'; see their reasons in {args.out})",
            file=sys.stderr,
        )
        return 1
    return 0


def _summary(args) -> int:
    from ..multiturn.rates import MixedVersionsError, format_pass_rates, pass_rates, results_frame
    from ..multiturn.records import read_sample_records
    from ..multiturn.breakdown import format_breakdown, latest

    records = read_sample_records(args.records)
    df = results_frame(records)
    agents = [args.agent] if args.agent else sorted(df["agent"].unique().to_list())
    for a in agents:
        try:
            pr = pass_rates(df, args.grader_version, a)
        except MixedVersionsError as e:
            raise InputError(args.records, None, "grader_version", str(e)) from None
        print(format_pass_rates(pr))
        print(format_breakdown(latest(records, pr.grader_version, a)))
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
    print(
        f"{ex.name}: key-level accuracy {sc.accuracy:.3f} over {sc.units} labelled keys "
        f"(threshold {thr}: {'trusted' if sc.trusted(thr) else 'not trusted'})"
    )
    for k, (ok, n) in sorted(sc.per_key.items()):
        print(f"  {k:18} {ok}/{n}")
    return 0 if sc.trusted(thr) else 1


def _import(args) -> int:
    from ..multiturn.suite import save_suite
    from ..multiturn.transcripts import import_transcripts, replay_check

    suite = import_transcripts(args.transcripts, args.grader_version)
    save_suite(suite, args.out)
    bad = [(sid, reason) for sid, status, reason in replay_check(suite) if status != "done"]
    n_calls = sum(len(f.calls) for f in suite.fixtures.values())
    print(
        f"{args.out}: {len(suite.samples)} samples, {n_calls} recorded tool returns; fill in state_expect "
        f"(samples.jsonl) and the state labels (state_labels.jsonl)"
    )
    for sid, reason in bad:
        print(f"  {sid}: does not replay from its own recording: {reason}")
    print("replay check: " + ("every sample replays with no missing fixture" if not bad else f"{len(bad)} do not"))
    return 1 if bad else 0


def run(args) -> int:
    return {"generate": _generate, "run": _run, "summary": _summary, "extractor": _extractor_cmd, "import": _import}[
        args.mt_command
    ](args)
