"""all-MiniLM-L6-v2 (int8 ONNX) in process: WordPiece tokens (the vendored ``tokenizer.json``), the
ONNX graph on onnxruntime, mean pooling over the attention mask and L2 normalisation (what
sentence-transformers does for this model), at most 256 tokens per text. Texts run in batches of
similar length (sorted, :func:`length_batches`): a batch is padded to its longest text, so mixing a
10-token and a 140-token turn would compute 130 padding positions (2.3x the tokens on a lifelog tier).

``OnnxEmbedder(threads=1).encode(["a", "b"])`` → float32 array (2, 384), rows of unit length.
"""

from __future__ import annotations

import threading
from typing import Sequence

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


class OnnxEmbedder:
    """The local embedder; ``threads`` bounds onnxruntime's intra-op threads (1 in tests)."""

    id = EMBEDDER.id

    def __init__(self, threads: int = 1, batch: int = 32):
        import onnxruntime as ort  # on use: the optional extra (the base install never imports it)
        from tokenizers import Tokenizer  # on use: the optional extra

        path = model_file(EMBEDDER)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, int(threads))
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self._tok = Tokenizer.from_file(str(tokenizer_file()))
        self._tok.enable_truncation(max_length=MAX_TOKENS)
        self._tok.no_padding()  # each batch pads itself (tokenizer.json asks for padding)
        self.batch = max(1, int(batch))
        self._lock = threading.Lock()  # one run at a time: the session's threads are the bound
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
