"""The graph's state. Everything in it is plain JSON data, so the SQLite checkpointer can store it."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class InterviewState(TypedDict, total=False):
    session_id: str
    config: dict[str, Any]  # lang, questions, track, coach, ... (the session's choices)
    resume: str  # the candidate's resume text (data, never instructions)
    plan: list[str]  # question ids, in order
    opening: dict[str, Any]  # the self-introduction and project ladder: steps, i (next step), answers
    q_index: int  # index into plan of the current question
    current: dict[str, Any]  # the current question: qid, progress, answers, cumulative verdicts, decisions
    question: dict[str, Any]  # unused: checkpoints written before the rubric was read from the store have it
    pending: dict[str, Any]  # what the interviewer is waiting for an answer to
    last_input: dict[str, Any]  # the candidate's last input: {"action": "answer"|"skip", "text": ...}
    transcript: Annotated[list[dict[str, Any]], operator.add]
    results: Annotated[list[dict[str, Any]], operator.add]  # one record per finished question
    status: str  # "running" | "finished"
    report: dict[str, Any]
