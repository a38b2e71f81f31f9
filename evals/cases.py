"""Eval cases: graded answers in JSONL. The format is documented in the README.

A case names a bank question by `question_id`, or gives the `question` text, which is matched to
the bank through the Chroma store (the match and its similarity are reported).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from interviewer.inputs import repair
from knowledge.store import Store

log = logging.getLogger(__name__)

CASES_DIR = Path(__file__).resolve().parent / "cases"
BLIND_DIR = Path(__file__).resolve().parent / "blind"  # provenance of every file: evals/blind/README.md
# the grader is fitted on these: the first blind set (train, dev), every earlier reported set (setN: each the reported
# set until its graders had been measured, then training data; evals/blind/README.md has each one's history) and the
# terse supplement
BLIND_TRAIN = [BLIND_DIR / "train.jsonl", BLIND_DIR / "dev.jsonl", BLIND_DIR / "set2.jsonl", BLIND_DIR / "set3.jsonl",
               BLIND_DIR / "set4.jsonl", BLIND_DIR / "set5.jsonl", BLIND_DIR / "set6.jsonl", BLIND_DIR / "set7.jsonl",
               BLIND_DIR / "set8.jsonl", BLIND_DIR / "set9.jsonl", BLIND_DIR / "set10.jsonl",
               BLIND_DIR / "set11.jsonl", BLIND_DIR / "set12.jsonl", BLIND_DIR / "set13.jsonl",
               BLIND_DIR / "terse.jsonl"]
# fitted on too, but left out where the grader's thresholds are chosen: every answer in it is wrong or keyword-stuffed,
# so it would tilt a choice that must hold for a real mix of candidates
BLIND_WRONG = BLIND_DIR / "wrong.jsonl"
BLIND_TEST = BLIND_DIR / "heldout.jsonl"  # the reported set: never fitted or tuned on
BLIND_SECOND = BLIND_DIR / "heldout_second_grader.jsonl"  # a second, independent gold for a sample of the held-out set
# the next reported set, written and graded before the grader that will be measured on it: nothing reads it (no
# figure of it has been seen) until it replaces the held-out set, which then joins the training data
BLIND_NEXT = BLIND_DIR / "next.jsonl"
BLIND_NEXT_SECOND = BLIND_DIR / "next_second_grader.jsonl"
MIN_MATCH = 0.85  # below this similarity, a question text is reported as unmatched


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: str | None = None
    question: str | None = None
    answer: str
    gold: float = Field(ge=0, le=10)
    tier: str = "unknown"
    lang: str = "zh"
    id: str | None = None  # blind-set answers carry an id (the second grader's labels refer to it)
    persona: str | None = None  # blind set: who the answer writer played (strong, terse, english, ...)
    note: str = ""  # blind set: what decided the gold grader's grade
    covered: list[str] | None = None
    partial: list[str] = Field(default_factory=list)
    misconceptions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_question(self) -> "Case":
        if not self.question_id and not self.question:
            raise ValueError("a case needs question_id or question")
        return self


@dataclass
class Resolved:
    case: Case
    qid: str
    match: float | None = None  # similarity when matched from the question text


class CaseError(ValueError):
    pass


def _read(f: Path) -> str:
    try:
        return f.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError(f"{f}: no such file or folder (give --cases a .jsonl file or a folder of them)") from None
    except UnicodeDecodeError as exc:
        raise CaseError(f"{f}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise CaseError(f"{f}: cannot be read ({exc.strerror or exc})") from None


def load_cases(paths: list[Path]) -> list[Case]:
    cases = []
    for path in paths:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if path.is_dir() and not files:
            raise CaseError(f"{path}: the folder has no .jsonl case files")
        for f in files:
            for n, line in enumerate(_read(f).splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    case = Case.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError) as exc:
                    raise CaseError(f"{f}:{n}: {str(exc).splitlines()[0]}") from None
                text, bad = repair(case.answer)  # a lone surrogate escape (\\udc80) would crash the graders
                if bad:
                    log.warning("%s:%d: %d invalid character(s) in the answer replaced by U+FFFD", f, n, bad)
                    case = case.model_copy(update={"answer": text})
                cases.append(case)
    return cases


def load_labelled(paths: list[Path]) -> list[Case]:
    """The cases labelled per key point (a question id and `covered`): what the grader is fitted and checked on."""
    return [c for c in load_cases(paths) if c.question_id and c.covered is not None]


def resolve(cases: list[Case], store: Store) -> tuple[list[Resolved], list[str]]:
    """Bank question ids for every case; the notes say how question texts were matched."""
    out, notes = [], []
    memo: dict[str, tuple[str, float]] = {}
    for c in cases:
        if c.question_id:
            if c.question_id not in store.bank.questions:
                notes.append(f"unknown question_id {c.question_id!r}: case skipped")
                continue
            out.append(Resolved(c, c.question_id))
            continue
        if c.question not in memo:
            hit = store.nearest_questions(c.question, k=1)[0]
            memo[c.question] = (hit.qid, hit.score)
            flag = "" if hit.score >= MIN_MATCH else " (weak match)"
            notes.append(f"matched {c.question[:60]!r} -> {hit.qid} (similarity {hit.score:.3f}){flag}")
        qid, sim = memo[c.question]
        out.append(Resolved(c, qid, sim))
    return out, notes


def agreement(first: Path = BLIND_TEST, second: Path = BLIND_SECOND) -> dict | None:
    """How far two independent gold graders agree on the blind answers both graded."""
    from evals.metrics import spearman

    if not (first.exists() and second.exists()):
        return None
    gold = {c.id: c.gold for c in load_cases([first]) if c.id}
    pairs = [(gold[c.id], c.gold) for c in load_cases([second]) if c.id in gold]
    if not pairs:
        return None
    a, b = zip(*pairs)
    return {"n": len(pairs), "spearman": spearman(list(a), list(b)),
            "mean_abs_diff": sum(abs(x - y) for x, y in pairs) / len(pairs)}
