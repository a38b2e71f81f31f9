"""Turning a written question or probe into the interviewer's words.

The rubric's text is the content; the model may only adapt the wording. Its output is
accepted only if it keeps the technical terms, stays in the language, has a sane length and
does not leak a key point; otherwise the written text is used as it is.
"""

from __future__ import annotations

import difflib
import logging
import re

from pydantic import BaseModel, Field

from interviewer import prompts
from interviewer.errors import ModelOutputError
from interviewer.llm import ChatModel
from knowledge.embed import embed

log = logging.getLogger(__name__)
_TERM = re.compile(r"[A-Za-z][A-Za-z0-9.\-+]*")
_CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_SIMILARITY = 0.93  # e5 cosine between the written line and the rewording (paraphrases score ~0.98)


class Utterance(BaseModel):
    utterance: str = Field(max_length=600)


def acceptable(candidate: str, line: str, lang: str, secrets: list[str] = ()) -> bool:
    if not (0.4 * len(line) <= len(candidate) <= 2.5 * len(line) + 60):
        return False
    cjk_share = len(_CJK.findall(candidate)) / max(1, len(candidate))
    if (lang == "zh") != (cjk_share > 0.15):
        return False
    terms = {t.lower() for t in _TERM.findall(line) if len(t) >= 2}
    if not terms <= {t.lower() for t in _TERM.findall(candidate)}:
        return False
    for secret in secrets:  # a key point the question must not give away
        m = difflib.SequenceMatcher(None, candidate, secret).find_longest_match()
        if m.size >= 10 and candidate[m.a : m.a + m.size] not in line:
            return False
    a, b = embed([line, candidate])
    return float(a @ b) >= MIN_SIMILARITY


def phrase(model: ChatModel | None, line: str, lang: str, secrets: list[str] = ()) -> tuple[str, str]:
    """(text, source): source is 'model' when the model's wording was accepted, else 'written'."""
    if model is None:
        return line, "written"
    msgs = [
        {"role": "system", "content": prompts.PHRASE_SYSTEM.substitute(language="Chinese" if lang == "zh" else "English")},
        {"role": "user", "content": prompts.PHRASE_USER.substitute(line=line)},
    ]
    try:
        text = model.structured(msgs, Utterance, max_tokens=160).utterance.strip()
    except ModelOutputError as exc:
        log.warning("phrasing failed, using the written text: %s", exc)
        return line, "written"
    if acceptable(text, line, lang, secrets):
        return text, "model"
    log.info("rephrasing rejected, using the written text: %r", text[:120])
    return line, "written"
