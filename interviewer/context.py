"""What the graph's nodes depend on, passed in through LangGraph's runtime context."""

from __future__ import annotations

from dataclasses import dataclass

from interviewer.grading import Grader
from interviewer.llm import ChatModel
from interviewer.settings import Settings
from knowledge.bank import Bank
from knowledge.store import Store


@dataclass(frozen=True)
class Deps:
    settings: Settings
    bank: Bank
    store: Store
    grader: Grader
    model: ChatModel | None  # None: questions are asked verbatim
