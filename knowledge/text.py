"""Splitting answers and reference texts into the sentences the grader compares."""

from __future__ import annotations

import difflib
import re

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=[.])\s+|\n+")
_CLAUSE = re.compile(r"(?<=[，,：:])")
MAX_SENTENCE = 160  # characters; longer runs are cut at commas so one claim stays one unit


def split_sentences(text: str, limit: int = 400) -> list[str]:
    """Sentences of `text`, long ones cut at clause boundaries; at most `limit` pieces."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip(" \t-•*#>")
        if not sentence:
            continue
        if len(sentence) <= MAX_SENTENCE:
            pieces.append(sentence)
            continue
        chunk = ""
        for clause in _CLAUSE.split(sentence):
            if chunk and len(chunk) + len(clause) > MAX_SENTENCE:
                pieces.append(chunk)
                chunk = ""
            chunk += clause
        while len(chunk) > MAX_SENTENCE:  # no commas at all: cut hard
            pieces.append(chunk[:MAX_SENTENCE])
            chunk = chunk[MAX_SENTENCE:]
        if chunk.strip():
            pieces.append(chunk.strip())
    return [p for p in pieces if len(p) >= 2][:limit]


def windows(sentences: list[str]) -> list[str]:
    """Each sentence, plus each pair of neighbours: a claim often spans two sentences."""
    pairs = [a + b for a, b in zip(sentences, sentences[1:]) if len(a) + len(b) <= 2 * MAX_SENTENCE]
    return sentences + pairs


_NON_CJK = re.compile(r"[A-Za-z0-9_\s\-./]+")


def leaks(probe: str, key_point: str, min_chars: int = 8) -> bool:
    """Does a probe state its key point (a run of >= 8 shared Chinese characters, technical terms aside)?"""
    a, b = _NON_CJK.sub("·", probe), _NON_CJK.sub("·", key_point)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match().size >= min_chars
