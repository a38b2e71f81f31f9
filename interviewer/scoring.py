"""Grades as data, and the pure arithmetic that turns key-point verdicts into a 0-10 score."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from knowledge.schema import WEIGHT_VALUES, Question

# "unclear": the evidence is borderline (the grader cannot tell); never reported as missed, and the
# interviewer asks the candidate to make it precise before asking about anything clearly missed
Status = Literal["covered", "partial", "unclear", "missed"]
CREDIT: dict[str, float] = {"covered": 1.0, "partial": 0.5, "unclear": 0.5, "missed": 0.0}
OPTIONAL_BONUS = 0.5  # points per covered optional key point
MISCONCEPTION_PENALTY = 1.5  # a confirmed misconception; 2.5 fitted gold slightly better out of fold, but the check still
# confirms some correct sentences ("clip 把 ratio 限制在 1-ε 到 1+ε"), and a false "wrong" must stay cheap
MAX_PENALTY = 4.5

_DONT_KNOW = re.compile(
    r"不知道|不清楚|不太清楚|不了解|没了解|不会|不记得|忘了|没接触|没用过|"
    r"\b(i don'?t know|no idea|not sure|i'?m not familiar|never (used|heard))\b",
    re.IGNORECASE,
)


class Verdict(BaseModel):
    key: str  # key point id
    weight: str
    status: Status
    evidence: str = ""  # the candidate's sentence that shows it; empty when missed
    confidence: float | None = None  # grader-specific (P(stated) for the embedding grader)
    # the share of the point's weight this answer earns; None: from the status (CREDIT). The embedding
    # grader gives P(stated), so a borderline point earns what the evidence supports, not 0 or 1
    credit: float | None = Field(default=None, ge=0, le=1)
    # the key point the evidence sentence fits best, when that is another one (the embedding grader): a borderline
    # point's best sentence is often about a neighbouring point; it is then neither quoted back as this point's nor
    # asked about for it (asked to say more, the candidate would explain the other point)
    about: str | None = None

    def earned(self) -> float:
        return CREDIT[self.status] if self.credit is None else self.credit


class Misconception(BaseModel):
    pitfall: int  # index into the rubric's pitfalls
    evidence: str
    # False: the sentence resembles the pitfall but the contradiction check did not confirm that it
    # asserts it; no penalty, and the interviewer asks for clarification instead of challenging
    confirmed: bool = True


class Grade(BaseModel):
    grader: str  # which grader produced it
    qid: str
    score: float = Field(ge=0, le=10)
    verdicts: list[Verdict]
    misconceptions: list[Misconception] = Field(default_factory=list)
    dont_know: bool = False
    feedback: str = ""
    notes: list[str] = Field(default_factory=list)


def confirmed(misconceptions: list[Misconception]) -> list[Misconception]:
    return [m for m in misconceptions if m.confirmed]


def standing_misconceptions(answers: list[dict]) -> tuple[dict[int, Misconception], dict[int, Misconception]]:
    """The confirmed misconceptions over a question's answers ({pitfall: the one that stands}), and those a later
    answer settled: the reply to a challenge of that pitfall that says something (a point with evidence) without
    asserting it again. A challenge is a question, as an interviewer's "你确定吗？" is: a candidate who then explains
    the point is not marked wrong on the sentence the check misread (or that they put right themselves)."""
    standing: dict[int, Misconception] = {}
    settled: dict[int, Misconception] = {}
    for a in answers:
        grade, prompt = a["grade"], a.get("prompt") or {}
        mine = {m["pitfall"]: Misconception.model_validate(m) for m in grade["misconceptions"] if m.get("confirmed", True)}
        target = str(prompt.get("target") or "")
        if prompt.get("action") == "challenge" and target.startswith("pitfall:"):
            i = int(target.split(":")[1])
            says = not grade.get("dont_know") and any(v.get("evidence") and v["status"] != "missed"
                                                      for v in grade["verdicts"])
            if i in standing and i not in mine and says:
                settled[i] = standing.pop(i)
        standing.update(mine)
        for i in mine:
            settled.pop(i, None)
    return standing, settled


def overlaps(sentence: str, others: list[str]) -> bool:
    """The same sentence, one of its clauses, or a sentence holding it."""
    return any(o in sentence or sentence in o for o in others if o)


def own_evidence(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts as shown to the candidate: an unclear point keeps its sentence only if that sentence is its own.
    One that holds (or is part of) a covered point's evidence, or fits another point best, is about that point
    (a low-P unclear point's best sentence often is), and quoting it as "close to" this one would misreport what
    the candidate said."""
    return [v.model_copy(update={"evidence": ""}) if v.status == "unclear" and belongs_elsewhere(v, verdicts) else v
            for v in verdicts]


def belongs_elsewhere(v: Verdict, verdicts: list[Verdict]) -> bool:
    """Is this point's evidence sentence about another point: it fits another point best (`Verdict.about`), or it
    holds or is part of a covered point's evidence?"""
    return bool(v.about) or overlaps(v.evidence, [c.evidence for c in verdicts
                                                  if c.status == "covered" and c.key != v.key and c.evidence])


def compute_score(verdicts: list[Verdict], misconceptions: int = 0) -> float:
    """10 x weighted credit (`Verdict.earned`) over essential+important points, optional points as a bonus,
    minus a penalty per stated misconception; clamped to [0, 10]."""
    core = [v for v in verdicts if v.weight != "optional"]
    total = sum(WEIGHT_VALUES[v.weight] for v in core)
    earned = sum(WEIGHT_VALUES[v.weight] * v.earned() for v in core)
    base = 10.0 * earned / total if total else 0.0
    bonus = OPTIONAL_BONUS * sum(v.earned() for v in verdicts if v.weight == "optional")
    penalty = min(MAX_PENALTY, MISCONCEPTION_PENALTY * misconceptions)
    return round(max(0.0, min(10.0, base + bonus - penalty)), 1)


def says_dont_know(answer: str) -> bool:
    """A short answer that says 'I don't know' (a long one that says it in passing does not count)."""
    text = answer.strip()
    return not text or (len(text) < 60 and bool(_DONT_KNOW.search(text)))


def feedback(question: Question, verdicts: list[Verdict], misconceptions: list[Misconception], lang: str,
             settled: list[Misconception] = ()) -> str:
    """Short feedback composed from the verdicts (the rubric's own words, not a model's)."""
    rubric = question.rubric
    covered = [rubric.key_point(v.key) for v in verdicts if v.status == "covered"]
    unclear = [rubric.key_point(v.key) for v in verdicts if v.status == "unclear"]
    missed = [rubric.key_point(v.key) for v in verdicts if v.status in ("partial", "missed")]
    zh = lang == "zh"
    sep = "；" if zh else "; "
    lines = []
    if covered:
        lines.append(("答到了：" if zh else "Covered: ") + sep.join(getattr(k, lang) for k in covered))
    if unclear:
        lines.append(("不确定（你的说法接近，但不够明确）：" if zh else "Unclear (close, but not explicit): ")
                     + sep.join(getattr(k, lang) for k in unclear))
    if missed:
        lines.append(("还缺：" if zh else "Missing: ") + sep.join(getattr(k, lang) for k in missed))
    for m in confirmed(misconceptions):  # the candidate's own sentence first: they see what was read as the error
        pit = rubric.pitfalls[m.pitfall]
        said = (f"你说「{m.evidence}」，读作：" if zh else f"you said “{m.evidence}”, read as: ") if m.evidence else ""
        lines.append(("有误：" if zh else "Wrong: ") + said + getattr(pit, lang) + f" ({pit.why})")
    for m in settled:  # challenged, then explained: shown so the candidate sees why the "wrong" line went away
        lines.append((f"已澄清（不计错）：你说「{m.evidence}」" if zh else f"Settled (not counted): you said “{m.evidence}”")
                     + ("，被质疑后解释清楚了" if zh else ", and explained it when challenged"))
    return "\n".join(lines)


# said after the verdicts when the grader dropped text addressed to it (`screening.grader_directives`)
IGNORED = {"zh": "已忽略：回答里写给评分器的指令（只按你的回答内容评分）。",
           "en": "Ignored: instructions addressed to the grader (only what you answered is graded)."}
IGNORED_NOTE = "ignored text addressed to the grader"  # how the grade's notes name it


def so_far(record: dict) -> dict | None:
    """What coach mode shows after an answer: the question's verdicts over all its answers so far, so a point said
    in an earlier answer is never shown as missing after a follow-up; their score; the confirmed misconceptions;
    and the last answer's grader and notes. `record`: the state's current question, or a closed one."""
    answers = record.get("answers") or []
    if not answers:
        return None
    last = answers[-1]["grade"]
    verdicts = own_evidence([Verdict.model_validate(v) for v in (record.get("verdicts") or last["verdicts"])])
    miscs, settled = standing_misconceptions(answers)
    return {"qid": last["qid"], "grader": last["grader"], "score": compute_score(verdicts, len(miscs)),
            "verdicts": verdicts, "misconceptions": list(miscs.values()), "settled": list(settled.values()),
            "notes": last.get("notes", []), "answers": len(answers)}
