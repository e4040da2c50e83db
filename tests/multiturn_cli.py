"""The command line the multi-turn tests run: ``memeval multiturn run`` with the chat agent against a
loopback model server (model ``m``), one run per sample."""

from __future__ import annotations


def chat_run_argv(suite, out, base_url: str, key_env: str, *extra: str) -> list[str]:
    """argv for ``memeval multiturn run SUITE -o OUT --agent chat`` (the key is read from ``key_env``)."""
    return [
        "multiturn",
        "run",
        str(suite),
        "-o",
        str(out),
        "--agent",
        "chat",
        "--base-url",
        base_url,
        "--model",
        "m",
        "--api-key-env",
        key_env,
        "--runs",
        "1",
        *extra,
    ]
