"""all-MiniLM-L6-v2 (int8 ONNX) in process: WordPiece tokens (the vendored ``tokenizer.json``), the
ONNX graph on onnxruntime, mean pooling over the attention mask and L2 normalisation (what
sentence-transformers does for this model), at most 256 tokens per text.

``OnnxEmbedder(threads=1).encode(["a", "b"])`` → float32 array (2, 384), rows of unit length.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from .catalog import EMBEDDER, model_file, tokenizer_file

__all__ = ["OnnxEmbedder", "MAX_TOKENS", "DIM"]

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
DIM = 384


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
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.batch = max(1, int(batch))
        self._lock = threading.Lock()  # one run at a time: the session's threads are the bound
        self.tokens = 0  # tokens embedded so far (the usage an endpoint reports)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text, in order."""
        out = [self._encode_batch(list(texts[i : i + self.batch])) for i in range(0, len(texts), self.batch)]
        return np.concatenate(out) if out else np.zeros((0, DIM), np.float32)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        enc = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
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
