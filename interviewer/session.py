"""Running interviews: the model backend, the checkpointed graph, and one object per session.

Used by the terminal mode, the web app and the tests alike. Every step is checkpointed to
SQLite before the next one starts, so a crashed process resumes where it was.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from interviewer import practice
from interviewer.context import Deps
from interviewer.errors import AnswerRejected, SessionError
from interviewer.grading import make_grader
from interviewer.graph import build_graph
from interviewer.llm import OpenAIChat
from interviewer.local_model import LocalServer, resolve_gguf
from interviewer.report import paths as report_paths
from interviewer.report import save
from interviewer.settings import Settings
from knowledge.bank import default_bank
from knowledge.store import Store

log = logging.getLogger(__name__)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u202e]")


def clean_answer(text: str | None, max_chars: int) -> str:
    """The answer as it will be graded, or AnswerRejected with a message saying what to do."""
    text = _CONTROL.sub("", text or "").replace("\r\n", "\n").strip()
    if not text:
        raise AnswerRejected("The answer is empty. Type your answer, or /skip to skip the question, /quit to save and leave.")
    if len(text) > max_chars:
        raise AnswerRejected(
            f"The answer is {len(text)} characters; the limit is {max_chars}. Shorten it to the key points "
            "(an interviewer would stop you too) and send it again."
        )
    return text


@dataclass
class Backend:
    """The model in use and, for the embedded default, the server that serves it."""

    model: OpenAIChat
    server: LocalServer | None = None
    description: str = ""

    @classmethod
    def open(cls, settings: Settings, parallel: int = 2) -> "Backend":
        if settings.base_url:
            name = settings.model or "default"
            model = OpenAIChat(settings.base_url, name, settings.api_key, settings.timeout, settings.retries)
            model.ping()
            return cls(model, None, f"model {name} at {settings.base_url} (OpenAI-compatible endpoint)")
        name, path = resolve_gguf(settings.local_model, settings.gguf)
        server = LocalServer(path, alias=name, parallel=parallel)
        model = OpenAIChat(server.base_url, name, None, settings.timeout, settings.retries)
        return cls(model, server, f"model {name} at {server.base_url} (embedded llama.cpp, {path})")

    def close(self) -> None:
        if self.server:
            self.server.stop()


@dataclass
class Interviewer:
    """Shared by all sessions of one process: settings, store, model, grader, compiled graph."""

    settings: Settings
    deps: Deps
    graph: object
    conn: sqlite3.Connection
    backend: Backend | None = None

    @classmethod
    def open(cls, settings: Settings, backend: Backend | None = None, model=None, store: Store | None = None,
             grader=None) -> "Interviewer":
        """`backend` (a real server) or `model` (any ChatModel, e.g. a scripted fake) or neither (verbatim)."""
        settings.home.mkdir(parents=True, exist_ok=True)
        store = store or Store.open(settings.store_path, default_bank())
        bank = store.bank
        chat = backend.model if backend else model
        grader = grader or make_grader(settings.resolved_grader(), store, chat)
        conn = sqlite3.connect(settings.db_path, check_same_thread=False)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created REAL, updated REAL, status TEXT, "
            "lang TEXT, questions INTEGER, overall REAL, topics TEXT, config TEXT)"
        )
        conn.commit()
        practice.init(conn)
        graph = build_graph(SqliteSaver(conn))
        return cls(settings, Deps(settings, bank, store, grader, chat), graph, conn, backend)

    def close(self) -> None:
        self.conn.close()
        if self.backend:
            self.backend.close()

    def new_session(self, resume: str = "", **config) -> "Session":
        cfg = {
            "lang": self.settings.lang, "questions": self.settings.questions, "track": self.settings.track,
            "infra_share": self.settings.infra_share, "followups": self.settings.followups,
            "coach": self.settings.coach, "seed": self.settings.seed, "opening": self.settings.opening, **config,
        }
        sid = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        session = Session(self, sid)
        self.conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)",
                          (sid, time.time(), time.time(), "running", cfg["lang"], cfg["questions"], None, "{}", json.dumps(cfg)))
        self.conn.commit()
        session._run({"session_id": sid, "config": cfg, "resume": resume})
        return session

    def session(self, sid: str, recover: bool = True) -> "Session":
        row = self.conn.execute("SELECT id FROM sessions WHERE id = ?", (sid,)).fetchone()
        if row is None:
            raise SessionError(f"No session {sid!r} in {self.settings.db_path}. `python -m interviewer --list` shows them.")
        session = Session(self, sid)
        if recover:
            session.recover()
        return session

    def list_sessions(self) -> list[dict]:
        return list_sessions(self.conn)

    def practice_session(self, **config) -> "Session":
        """A session on the questions whose missed key points are due again (spaced repetition)."""
        focus = practice.due(self.conn, limit=config.pop("questions", None) or self.settings.questions)
        if not focus:
            raise SessionError("Nothing is due for practice yet: finish a session first, or come back later.")
        return self.new_session(questions=len(focus), focus=list(focus), focus_points=focus, **config)

    def trend(self) -> dict[str, list[tuple[str, float]]]:
        return practice.trend(self.conn)


def list_sessions(conn: sqlite3.Connection) -> list[dict]:
    """Saved sessions, newest first, with their overall score and per-topic scores."""
    rows = conn.execute(
        "SELECT id, created, status, lang, questions, overall, topics FROM sessions ORDER BY created DESC").fetchall()
    return [{"id": r[0], "created": r[1], "status": r[2], "lang": r[3], "questions": r[4], "overall": r[5],
             "topics": json.loads(r[6] or "{}")} for r in rows]


class Session:
    def __init__(self, app: Interviewer, sid: str):
        self.app = app
        self.id = sid
        self.config = {"configurable": {"thread_id": sid}}
        self._snap = None  # the checkpoint as last read; dropped whenever this object runs a step

    # -- state ----------------------------------------------------------------------
    def _snapshot(self):
        if self._snap is None:
            self._snap = self.app.graph.get_state(self.config)
        return self._snap

    @property
    def state(self) -> dict:
        return self._snapshot().values

    @property
    def pending(self) -> dict | None:
        """What the interviewer asked and is waiting for, or None when finished."""
        snap = self._snapshot()
        for task in snap.tasks:
            for intr in task.interrupts:
                return intr.value
        return None

    @property
    def stalled(self) -> bool:
        """A step failed after the answer was saved (e.g. the endpoint went down): `recover()` retries it."""
        return bool(self._snapshot().next) and self.pending is None

    @property
    def finished(self) -> bool:
        return self.state.get("status") == "finished"

    @property
    def report(self) -> dict | None:
        return self.state.get("report")

    # -- steps ----------------------------------------------------------------------
    def _run(self, payload) -> list[dict]:
        before = len(self.state.get("transcript", []))
        try:
            self.app.graph.invoke(payload, self.config, context=self.app.deps, durability="sync")
        finally:
            self._snap = None  # the checkpoint moved on (or a step failed part-way)
        state = self.state
        self._record(state)
        return state.get("transcript", [])[before:]

    def recover(self) -> list[dict]:
        """After a crash: finish the step that was under way (the answer is already saved)."""
        return self._run(None) if self.stalled else []

    def answer(self, text: str) -> list[dict]:
        if self.pending is None:
            raise SessionError("This session has finished; start a new one.")
        return self._run(Command(resume={"action": "answer", "text": clean_answer(text, self.app.settings.max_answer_chars)}))

    def skip(self) -> list[dict]:
        if self.pending is None:
            raise SessionError("This session has finished; start a new one.")
        return self._run(Command(resume={"action": "skip", "text": ""}))

    def end(self) -> list[dict]:
        """Finish now: the current question is closed with what was answered, then the report."""
        if self.pending is None:
            raise SessionError("This session has finished; start a new one.")
        return self._run(Command(resume={"action": "end", "text": ""}))

    def last_grade(self) -> dict | None:
        cur = self.state.get("current") or {}
        answers = cur.get("answers") or []
        if answers:
            return answers[-1]["grade"]
        results = self.state.get("results") or []
        if results and results[-1].get("answers"):
            return results[-1]["answers"][-1]["grade"]
        return None

    def _record(self, state: dict) -> None:
        report = state.get("report")
        row = self.app.conn.execute("SELECT status FROM sessions WHERE id=?", (self.id,)).fetchone()
        if report and row and row[0] != "finished":  # first time finished: update the spaced repetition
            practice.record(self.app.conn, report)
        overall = report["overall"] if report else None
        topics = json.dumps(report["topics"] if report else {}, ensure_ascii=False)
        self.app.conn.execute("UPDATE sessions SET updated=?, status=?, overall=?, topics=? WHERE id=?",
                              (time.time(), state.get("status", "running"), overall, topics, self.id))
        self.app.conn.commit()
        if report:
            save(report, self.app.settings.reports_dir)

    def report_paths(self) -> tuple[Path, Path]:
        return report_paths(self.app.settings.reports_dir, self.id)
