"""The graders that ask a model: `LLMJudge` asks a capable model, in one call for all key points ("all") or
one small call per key point sent concurrently ("per-point"); `HybridGrader` keeps the embedding verdicts and
asks the model only where they are unclear. A verdict's evidence must be a real quote from the answer."""

from __future__ import annotations

import difflib
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, Field

from interviewer import prompts
from interviewer.grading import EmbeddingGrader, _clip, _finish
from interviewer.llm import ChatModel
from interviewer.scoring import Grade, Misconception, Verdict
from knowledge.schema import Question
from knowledge.store import Store
from knowledge.text import split_sentences


class _PointVerdict(BaseModel):
    key: str
    status: Literal["covered", "partial", "missed"]
    evidence: str = Field(max_length=300)


class _Misc(BaseModel):
    pitfall: int
    evidence: str = Field(max_length=300)


class JudgeOutput(BaseModel):
    verdicts: list[_PointVerdict]
    misconceptions: list[_Misc]
    feedback: str = Field(max_length=800)


class PointOutput(BaseModel):
    verdict: Literal["yes", "partly", "no"]
    evidence: str = Field(max_length=300)


def _found_in(evidence: str, answer: str) -> bool:
    """Is the quoted evidence really in the answer? (guards against invented quotes)"""
    ev = "".join(evidence.split())
    if not ev:
        return False
    flat = "".join(answer.split())
    if ev in flat:
        return True
    return any(difflib.SequenceMatcher(None, ev, "".join(s.split())).ratio() > 0.8 for s in split_sentences(answer))


def _lines(items: list[str]) -> str:
    return "\n".join(items)


class LLMJudge:
    def __init__(self, model: ChatModel, mode: Literal["all", "per-point"] = "all", concurrency: int = 4):
        self.model = model
        self.mode = mode
        self.concurrency = concurrency
        self.name = "llm-judge" if mode == "all" else "llm-per-point"

    def _all(self, question: Question, answer: str, lang: str) -> tuple[list[Verdict], list[Misconception]]:
        r = question.rubric
        msgs = [
            {"role": "system", "content": prompts.JUDGE_SYSTEM},
            {"role": "user", "content": prompts.JUDGE_USER.substitute(
                question=question.text(lang),
                key_points=_lines([f"{kp.id}: {getattr(kp, lang)}" for kp in r.key_points]),
                pitfalls=_lines([f"{i}: {getattr(p, lang)}" for i, p in enumerate(r.pitfalls)]) or "(none)",
                answer=prompts.wrap_data(answer),
                language="Chinese" if lang == "zh" else "English",
            )},
        ]
        out = self.model.structured(msgs, JudgeOutput, max_tokens=1400)
        by_key = {v.key: v for v in out.verdicts}
        verdicts = []
        for kp in r.key_points:
            v = by_key.get(kp.id)
            status = v.status if v else "missed"
            evidence = v.evidence if v else ""
            if status != "missed" and not _found_in(evidence, answer):
                status, evidence = "missed", ""  # no real quote, no credit
            verdicts.append(Verdict(key=kp.id, weight=kp.weight, status=status, evidence=evidence))
        miscs = [
            Misconception(pitfall=m.pitfall, evidence=m.evidence)
            for m in out.misconceptions
            if 0 <= m.pitfall < len(r.pitfalls) and _found_in(m.evidence, answer)
        ]
        return verdicts, miscs

    def check_point(self, question: Question, kp, answer: str, lang: str) -> Verdict:
        msgs = [
            {"role": "system", "content": prompts.POINT_SYSTEM},
            {"role": "user", "content": prompts.POINT_USER.substitute(
                question=question.text(lang), claim=getattr(kp, lang), answer=prompts.wrap_data(answer))},
        ]
        out = self.model.structured(msgs, PointOutput, max_tokens=300)
        status = {"yes": "covered", "partly": "partial", "no": "missed"}[out.verdict]
        evidence = out.evidence
        if status != "missed" and not _found_in(evidence, answer):
            status, evidence = "missed", ""
        return Verdict(key=kp.id, weight=kp.weight, status=status, evidence=evidence if status != "missed" else "")

    def _per_point(self, question: Question, answer: str, lang: str) -> list[Verdict]:
        kps = question.rubric.key_points
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda kp: self.check_point(question, kp, answer, lang), kps))

    def grade(self, question: Question, answer: str, lang: str, focus: str | None = None) -> Grade:
        text, notes = _clip(answer)
        if not text.strip():
            verdicts = [Verdict(key=k.id, weight=k.weight, status="missed") for k in question.rubric.key_points]
            return _finish(self.name, question, verdicts, [], text, lang, notes)
        if self.mode == "all":
            verdicts, miscs = self._all(question, text, lang)
        else:
            verdicts, miscs = self._per_point(question, text, lang), []
        return _finish(self.name, question, verdicts, miscs, text, lang, notes)


class HybridGrader:
    """Embedding verdicts; the model re-checks only the key points the embedding grader finds unclear."""

    name = "hybrid"

    def __init__(self, store: Store, model: ChatModel):
        self.embedding = EmbeddingGrader(store)
        self.judge = LLMJudge(model, mode="per-point")

    def grade(self, question: Question, answer: str, lang: str, focus: str | None = None) -> Grade:
        base = self.embedding.grade(question, answer, lang, focus)
        text, _ = _clip(answer)
        unsure = [v for v in base.verdicts if v.status == "unclear"]
        if not unsure or not text.strip():
            return base.model_copy(update={"grader": self.name})
        kps = {kp.id: kp for kp in question.rubric.key_points}
        with ThreadPoolExecutor(max_workers=4) as pool:
            rechecked = dict(zip(
                [v.key for v in unsure],
                pool.map(lambda v: self.judge.check_point(question, kps[v.key], text, lang), unsure),
            ))
        verdicts = [rechecked.get(v.key, v) for v in base.verdicts]
        return _finish(self.name, question, verdicts, base.misconceptions, text, lang, base.notes,
                       scale=self.embedding.scale)
