"""Run every grader on the same cases, concurrently, and measure them against the gold scores."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import BaseModel, Field

from evals.cases import Resolved
from evals.metrics import per_rubric, stability, summarize
from interviewer import prompts
from interviewer.errors import InterviewerError
from interviewer.grading import make_grader
from interviewer.llm import ChatModel
from interviewer.policy import QuestionProgress, decide
from knowledge.text import leaks
from interviewer.scoring import Grade
from knowledge.schema import Question
from knowledge.store import Store

MODEL_GRADERS = ("llm", "llm-per-point", "hybrid", "no-rubric")
ALL_GRADERS = ("embedding", "length") + MODEL_GRADERS


class _Score(BaseModel):
    score: float = Field(ge=0, le=10)


class LengthBaseline:
    """Answer length alone: the bar every grader has to clear."""

    name = "length"

    def score(self, question: Question, answer: str, lang: str) -> tuple[float, None]:
        return round(10 * min(1.0, len(answer.strip()) / 300), 2), None


class NoRubricBaseline:
    """The same model grading 0-10 without the rubric: what the rubric adds."""

    name = "no-rubric"

    def __init__(self, model: ChatModel):
        self.model = model

    def score(self, question: Question, answer: str, lang: str) -> tuple[float, None]:
        msgs = [{"role": "system", "content": prompts.DATA_RULE},
                {"role": "user", "content": prompts.NO_RUBRIC_USER.substitute(
                    question=question.text(lang), answer=prompts.wrap_data(answer))}]
        return self.model.structured(msgs, _Score, max_tokens=60).score, None


class RubricGrader:
    """Adapts a product grader (the very code the interviewer uses) to the eval's interface."""

    def __init__(self, grader):
        self.grader = grader
        self.name = {"llm-judge": "llm"}.get(grader.name, grader.name)

    def score(self, question: Question, answer: str, lang: str) -> tuple[float, Grade]:
        g = self.grader.grade(question, answer, lang)
        return g.score, g


def make(name: str, store: Store, model: ChatModel | None):
    if name == "length":
        return LengthBaseline()
    if name == "no-rubric":
        return NoRubricBaseline(model)
    return RubricGrader(make_grader(name, store, model))


class Progress:
    def __init__(self, label: str, total: int):
        self.label, self.total, self.done = label, total, 0
        self.lock = threading.Lock()

    def tick(self) -> None:
        """A bar redrawn in place on a terminal; in a log file, a line per tenth (not one per answer)."""
        with self.lock:
            self.done += 1
            if sys.stderr.isatty():
                bar = "#" * int(30 * self.done / self.total)
                print(f"\r{self.label:>14} [{bar:<30}] {self.done}/{self.total}", end="", file=sys.stderr, flush=True)
                if self.done == self.total:
                    print(file=sys.stderr)
            elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
                print(f"{self.label:>14}: {self.done}/{self.total}", file=sys.stderr, flush=True)


@dataclass
class GraderRun:
    name: str
    rows: list[dict]
    seconds: float
    errors: int
    repeats: list[list[float]]


def _row(item: Resolved, q: Question, score: float, grade: Grade | None, seconds: float, grader: str) -> dict:
    c = item.case
    kps = [kp.id for kp in q.rubric.key_points]
    gold_points = None if c.covered is None else {k: (k in c.covered or k in c.partial) for k in kps}
    points = None if grade is None or gold_points is None else {v.key: v.status != "missed" for v in grade.verdicts}
    return {"grader": grader, "qid": item.qid, "tier": c.tier, "lang": c.lang, "gold": c.gold, "score": score,
            "length": len(c.answer), "seconds": round(seconds, 3), "gold_points": gold_points or {},
            "points": points, "match": item.match, "answer": c.answer[:200],
            "grade": grade.model_dump() if grade else None}


def run_grader(name: str, items: list[Resolved], store: Store, model: ChatModel | None,
               concurrency: int = 1, repeat: int = 1) -> GraderRun:
    grader = make(name, store, model)
    questions = {i.qid: store.question(i.qid) for i in items}
    rows: list[dict] = []
    repeats: list[list[float]] = []
    errors = 0
    started = time.monotonic()
    for rep in range(repeat):
        progress = Progress(f"{name}#{rep + 1}" if repeat > 1 else name, len(items))

        def one(item: Resolved):
            t = time.monotonic()
            try:
                score, grade = grader.score(questions[item.qid], item.case.answer, item.case.lang)
            except InterviewerError as exc:  # a failed call is counted, never replaced by an invented grade
                progress.tick()
                return None, str(exc)
            progress.tick()
            return _row(item, questions[item.qid], score, grade, time.monotonic() - t, name), None

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            results = list(pool.map(one, items))
        errors += sum(1 for r, e in results if r is None)
        run_rows = [r for r, _ in results if r is not None]
        repeats.append([r["score"] for r in run_rows] if len(run_rows) == len(items) else [])
        if rep == 0:
            rows = run_rows
    return GraderRun(name, rows, time.monotonic() - started, errors, [r for r in repeats if r])


COMPETENT = {"excellent", "good", "terse_correct", "partial"}


def followup_quality(items: list[Resolved], grades: dict[int, Grade], store: Store) -> dict:
    """Does the policy, fed with this grader's verdicts, ask about what the candidate really missed?

    Judged against the gold labels (written by a separate grader, not by the grader under test):
    on competent answers, a challenge whose pitfall gold does not list accuses a correct sentence,
    a gap question on a key point gold marks covered asks what was just said, and a clarification of
    such a point asks the candidate to say again, more precisely, what they said (milder, still a cost)."""
    hits = gaps = unnecessary = complete = repeats = leaked = 0
    competent = false_challenges = comp_gaps = redundant = clarifications = clarified_stated = deepens = deepen_stated = 0
    for idx, item in enumerate(items):
        grade, c = grades.get(idx), item.case
        if grade is None or c.covered is None:
            continue
        q = store.question(item.qid)
        gold_missed = {kp.id for kp in q.rubric.key_points if kp.id not in c.covered}  # missed or only partly said
        progress, asked, decisions = QuestionProgress(), [], []
        for _ in range(3):
            d = decide(q, grade.verdicts, grade, progress, budget=3)
            decisions.append(d)
            if d.action == "next":
                break
            if d.probe is not None:
                repeats += d.probe in asked
                asked.append(d.probe)
                probe = q.rubric.probes[d.probe]
                if d.action == "gap":  # a gap question must not state the point it asks for
                    leaked += leaks(probe.zh, q.rubric.key_point(d.target).zh)
            progress.record(d)
        first = decisions[0]
        if c.tier == "partial" or 3 <= c.gold < 8:
            if first.action == "gap":
                gaps += 1
                hits += first.target in gold_missed
        if c.gold >= 9:
            complete += 1
            unnecessary += first.action == "gap" and first.target not in gold_missed
        if c.tier in COMPETENT:
            competent += 1
            clarifications += first.action == "clarify"
            clarified_stated += first.action == "clarify" and first.target in c.covered
            deepens += first.action == "deepen"
            deepen_stated += first.action == "deepen" and first.target in c.covered  # its answer was already given
            if first.action == "challenge":
                false_challenges += first.target.split(":")[1] not in c.misconceptions
            if first.action == "gap":
                comp_gaps += 1
                redundant += first.target in c.covered
    rate = lambda a, b: a / b if b else float("nan")  # noqa: E731
    return {"partial_answers_with_gap_question": gaps, "gap_hit_rate": rate(hits, gaps),
            "repeated_probes": repeats, "rubric_leaks": leaked, "complete_answers": complete,
            "unnecessary_followups": unnecessary, "competent_answers": competent,
            "false_challenge_rate": rate(false_challenges, competent), "false_challenges": false_challenges,
            "competent_gap_questions": comp_gaps, "redundant_gap_rate": rate(redundant, comp_gaps),
            "clarifications": clarifications, "clarified_stated": clarified_stated,
            "clarified_stated_rate": rate(clarified_stated, clarifications),
            "deepens": deepens, "deepen_stated": deepen_stated}


def evaluate(runs: list[GraderRun]) -> dict:
    out = {}
    for run in runs:
        metrics = summarize(run.rows) if run.rows else {}
        metrics.update({"seconds": round(run.seconds, 1), "errors": run.errors,
                        "seconds_per_answer": round(run.seconds / max(1, len(run.rows) * max(1, len(run.repeats))), 3)})
        metrics["stability"] = stability(run.repeats)
        out[run.name] = {"overall": metrics, "per_rubric": per_rubric(run.rows) if run.rows else {}}
    return out
