"""all-MiniLM-L6-v2 (int8 ONNX) in process: WordPiece tokens (the vendored ``tokenizer.json``), the
ONNX graph on onnxruntime, mean pooling over the attention mask and L2 normalisation (what
sentence-transformers does for this model), at most 256 tokens per text. Texts run in batches of
similar length (sorted, :func:`length_batches`): a batch is padded to its longest text, so mixing a
10-token and a 140-token turn would compute 130 padding positions (2.3x the tokens on a lifelog tier).

``OnnxEmbedder(threads=1).encode(["a", "b"])`` → float32 array (2, 384), rows of unit length.

The ONNX session (and tokenizer) is built once per process and thread count (:func:`_runtime`) and shared
by every ``OnnxEmbedder``: building one costs ~0.2-0.3 CPU-s (onnxruntime optimises the int8 graph), and
each ``vector:``/``hybrid:`` system over the local model and each LangMem store built its own.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from .catalog import EMBEDDER, model_file, tokenizer_file

__all__ = ["OnnxEmbedder", "MAX_TOKENS", "DIM", "length_batches"]

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
DIM = 384


def length_batches(lengths: Sequence[int], batch: int, ratio: float = 1.25, slack: int = 8) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``batch``, shortest first; a batch closes before a
    text longer than ``ratio`` x its first text's length + ``slack`` (bounding the padding).

    >>> length_batches([40, 9, 10, 100, 12], batch=2)
    [[1, 2], [4], [0], [3]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out: list[list[int]] = []
    for i in order:
        cur = out[-1] if out else None
        if cur is None or len(cur) >= batch or lengths[i] > lengths[cur[0]] * ratio + slack:
            out.append([i])
        else:
            cur.append(i)
    return out


@lru_cache(maxsize=None)
def _runtime(threads: int) -> tuple[Any, Any, threading.Lock]:
    """The process's ONNX session with ``threads`` intra-op threads, the tokenizer, and the session's
    lock (one run at a time: the session's threads are the bound, whichever embedder asks)."""
    import onnxruntime as ort  # on use: the optional extra (the base install never imports it)
    from tokenizers import Tokenizer  # on use: the optional extra

    path = model_file(EMBEDDER)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(tokenizer_file()))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.no_padding()  # each batch pads itself (tokenizer.json asks for padding)
    return session, tok, threading.Lock()


class OnnxEmbedder:
    """The local embedder; ``threads`` bounds onnxruntime's intra-op threads (1 in tests). Embedders
    with the same ``threads`` share one session (:func:`_runtime`); ``batch`` and ``tokens`` are each one's own."""

    id = EMBEDDER.id

    def __init__(self, threads: int = 1, batch: int = 32):
        self._session, self._tok, self._lock = _runtime(max(1, int(threads)))
        self.batch = max(1, int(batch))
        self.tokens = 0  # tokens embedded so far (the usage an endpoint reports)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text, in order."""
        out = np.zeros((len(texts), DIM), np.float32)
        if not len(texts):
            return out
        enc = self._tok.encode_batch(list(texts))
        for rows in length_batches([len(e.ids) for e in enc], self.batch):
            width = max(len(enc[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is id 0, masked out
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : len(enc[i].ids)] = enc[i].ids
                mask[r, : len(enc[i].ids)] = 1
            out[rows] = self._encode_batch(ids, mask)
        return out

    def _encode_batch(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with self._lock:
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            self.tokens += int(mask.sum())
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
