"""The interviewer's words around the rubric's written lines.

`phrase`: the model may adapt the wording of a written question or probe. Its output is accepted
only if it is still a question of the same kind (how / why / what / how much), keeps the technical
terms, stays in the language, has a sane length, states no key point and stays close in meaning;
otherwise the written text is used as it is. On the embedded model the written line is said at once.

`transition`: on a capable model, one short in-role sentence that picks up what the candidate just
said ("你提到了 routing replay……"), checked by the same kind of guard: no grade, no key point, no
question of its own, and it must name something the candidate really said.
"""

from __future__ import annotations

import difflib
import logging
import re

from pydantic import BaseModel, Field

from interviewer import prompts
from interviewer.errors import EndpointError, ModelOutputError
from interviewer.llm import ChatModel
from knowledge.embed import embed
from knowledge.text import content_terms, is_question, leaks

log = logging.getLogger(__name__)
_TERM = re.compile(r"[A-Za-z][A-Za-z0-9.\-+]*")
_CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_SIMILARITY = 0.93  # e5 cosine between the written line and the rewording (paraphrases score ~0.98)
INTENTS = {  # the kind of question a line asks: a rewording must keep at least one of the line's kinds
    "why": re.compile(r"为什么|为何|凭什么|原因|\bwhy\b", re.I),
    "how": re.compile(r"怎么|如何|怎样|哪些方法|\bhow\b(?! (many|much))", re.I),
    "what": re.compile(r"什么|哪|\bwhat\b|\bwhich\b", re.I),
    "amount": re.compile(r"多少|几|多大|多久|\bhow (many|much|long|large)\b", re.I),
    "yesno": re.compile(r"吗|是否|是不是|有没有|会不会|能不能|^\W*(is|are|does|do|did|can|could|would|will|should)\b", re.I),
}
GRADE_WORDS = re.compile(r"很好|不错|正确|错误|答对|答错|对的|错了|完美|满分|分数|打分|优秀|\b(good|great|correct|wrong|"
                         r"excellent|right|perfect|score|nice|well done)\b", re.I)
MAX_TRANSITION = {"zh": 60, "en": 160}
# a transition refers to the candidate ("你提到了 X"); a bare statement ("AVG 时各卡值已相同，多做几次是幂等的",
# seen from the 0.5B) asserts the point as fact, which is an implicit verdict
REFERS = re.compile(r"你(刚才|刚刚)?(提到|说|讲|聊|用|谈|介绍)|你们(用|做|试)|\byou (just )?(mentioned|said|brought up|talked "
                    r"about|used|described|walked)", re.I)


class Utterance(BaseModel):
    utterance: str = Field(max_length=600)


class Transition(BaseModel):
    transition: str = Field(max_length=300)


def intents(text: str) -> set[str]:
    return {name for name, rx in INTENTS.items() if rx.search(text)}


def _in_language(text: str, lang: str) -> bool:
    cjk_share = len(_CJK.findall(text)) / max(1, len(text))
    return (lang == "zh") == (cjk_share > 0.15)


def gives_away(text: str, secrets: list[str], said: str = "") -> bool:
    """Does `text` state one of the secrets (key points, a reference answer) that `said` (the written
    line, or the candidate's answer) did not already state? Chinese: a run of 8 shared characters or an
    asserted claim (`knowledge.text.leaks`); English: also four words of a secret in a row."""
    for secret in secrets:
        if leaks(text, secret) and not leaks(said, secret):
            return True
        m = difflib.SequenceMatcher(None, text.lower(), secret.lower(), autojunk=False).find_longest_match()
        run = text[m.a : m.a + m.size].lower()
        if len(run.split()) >= 5 and run.strip() not in said.lower():
            return True
    return False


def acceptable(candidate: str, line: str, lang: str, secrets: list[str] = ()) -> bool:
    """May the model's rewording of `line` be said instead of it?"""
    if not (0.4 * len(line) <= len(candidate) <= 2.5 * len(line) + 60) or not _in_language(candidate, lang):
        return False
    if is_question(line) and not is_question(candidate):
        return False  # a question reworded into a statement
    if intents(line) and not intents(line) & intents(candidate):
        return False  # "how does X work?" must not become "what is X?"
    terms = {t.lower() for t in _TERM.findall(line) if len(t) >= 2}
    if not terms <= {t.lower() for t in _TERM.findall(candidate)}:
        return False
    if gives_away(candidate, list(secrets), line):
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


def acceptable_transition(text: str, answer: str, lang: str, secrets: list[str] = ()) -> bool:
    """A transition is one short statement, in role, that names something the candidate said."""
    cjk = len(_CJK.findall(text))
    if not text or len(text) > MAX_TRANSITION[lang] or (cjk < 2 if lang == "zh" else not _in_language(text, lang)):
        return False  # in Chinese, mostly English terms are fine ("你提到了 routing replay。")
    if "?" in text or "？" in text or GRADE_WORDS.search(text) or not REFERS.search(text):
        return False  # the question follows; the interviewer does not grade aloud, and speaks of what *you* said
    if not content_terms(text) & content_terms(answer):
        return False  # it must refer to what the candidate said
    return not gives_away(text, list(secrets), answer)


def transition(model: ChatModel | None, answer: str, lang: str, secrets: list[str] = ()) -> str:
    """One checked sentence picking up the candidate's answer, or "" (then the line is said alone)."""
    if model is None or not answer.strip():
        return ""
    msgs = [
        {"role": "system", "content": prompts.TRANSITION_SYSTEM.substitute(language="Chinese" if lang == "zh" else "English")},
        {"role": "user", "content": prompts.TRANSITION_USER.substitute(answer=prompts.wrap_data(answer[:1500]))},
    ]
    try:
        text = model.structured(msgs, Transition, max_tokens=160).transition.strip()
    except (ModelOutputError, EndpointError) as exc:
        log.warning("no transition: %s", exc)
        return ""
    if acceptable_transition(text, answer, lang, secrets):
        return text
    log.info("transition rejected: %r", text[:120])
    return ""
