"""Thread follow-ups: a question on a claim the candidate made that the rubric's probes do not cover
("你说用了 routing replay，R3 和 GSPO 的 routing replay 有什么不同？").

The model proposes; code decides. A proposal is used only if it quotes or names a claim that is
really in the answer, stays on the question's topic (e5 similarity to the question and its rubric),
gives no key point away and is one single question. Otherwise the written probe is asked.
Capable models only: off by default on the embedded model.
"""

from __future__ import annotations

import logging
import re

from pydantic import BaseModel, Field

from interviewer import prompts
from interviewer.errors import EndpointError, ModelOutputError
from interviewer.llm import ChatModel
from interviewer.phrasing import gives_away
from knowledge.embed import embed
from knowledge.schema import Question
from knowledge.text import content_terms, is_question

log = logging.getLogger(__name__)
# e5 cosine of the thread question, with the claim taken out, to the question or a key point: on-topic
# questions score 0.85-0.91, chit-chat ("你平时周末喜欢做什么运动？") 0.82-0.83 (a narrow margin: e5 is coarse)
MIN_TOPIC = 0.845
MAX_CHARS = {"zh": 90, "en": 240}
_SPACE = re.compile(r"\s+")


class ThreadProposal(BaseModel):
    claim: str = Field(max_length=300)  # the candidate's words the question follows up
    question: str = Field(max_length=400)


class Thread(BaseModel):
    """A checked proposal, or the reason it was refused."""

    claim: str
    question: str
    accepted: bool
    reason: str = ""
    topic: float = 0.0  # similarity to the question / rubric


def _norm(text: str) -> str:
    return _SPACE.sub("", text).lower()


def check(p: ThreadProposal, question: Question, answer: str, lang: str) -> Thread:
    claim, text = p.claim.strip(), p.question.strip()
    out = Thread(claim=claim, question=text, accepted=False)
    claim_terms = content_terms(claim)
    if not claim_terms or not (_norm(claim) in _norm(answer) or len(claim_terms & content_terms(answer)) >= 0.8 * len(claim_terms)):
        return out.model_copy(update={"reason": "the claim is not in the answer"})
    if not claim_terms & content_terms(text) - content_terms(question.text(lang)):
        return out.model_copy(update={"reason": "the question does not name the claim"})
    marks = text.count("?") + text.count("？")
    if len(text) > MAX_CHARS[lang] or marks != 1 or not is_question(text):
        return out.model_copy(update={"reason": "not a single question"})
    rubric = question.rubric
    secrets = [getattr(kp, lang) for kp in rubric.key_points] + [getattr(rubric.reference_answer, lang)]
    if gives_away(text, secrets, answer):
        return out.model_copy(update={"reason": "it gives a key point away"})
    rest = text.replace(claim, " ") if claim in text else text  # the claim itself is on topic by construction
    vecs = embed([rest, question.text(lang)] + [getattr(kp, lang) for kp in rubric.key_points])
    topic = float((vecs[1:] @ vecs[0]).max())
    if topic < MIN_TOPIC:
        return out.model_copy(update={"reason": f"off topic ({topic:.2f})", "topic": topic})
    return out.model_copy(update={"accepted": True, "topic": topic})


def propose(model: ChatModel, question: Question, answer: str, lang: str) -> Thread | None:
    """Ask the model for a thread follow-up and check it; None when the model gave nothing usable."""
    msgs = [
        {"role": "system", "content": prompts.THREAD_SYSTEM.substitute(language="Chinese" if lang == "zh" else "English")},
        {"role": "user", "content": prompts.THREAD_USER.substitute(
            question=question.text(lang), answer=prompts.wrap_data(answer[:2000]),
            covered="\n".join(f"- {getattr(kp, lang)}" for kp in question.rubric.key_points))},
    ]
    try:
        proposal = model.structured(msgs, ThreadProposal, max_tokens=320)
    except (ModelOutputError, EndpointError) as exc:
        log.warning("no thread follow-up: %s", exc)
        return None
    thread = check(proposal, question, answer, lang)
    log.info("thread follow-up %s: %r (%s)", "accepted" if thread.accepted else "refused", thread.question[:80], thread.reason)
    return thread
