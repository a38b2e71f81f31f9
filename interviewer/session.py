"""Running interviews: the model backend, the checkpointed graph, and one object per session.

Used by the terminal mode, the web app and the tests alike. Every step is checkpointed to
SQLite before the next one starts, so a crashed process resumes where it was.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from interviewer.context import Deps
from interviewer.errors import SessionError
from interviewer.grading import make_grader
from interviewer.graph import build_graph
from interviewer.inputs import clean_answer, clean_resume, repair, repaired_note
from interviewer.llm import OpenAIChat, mask_url
from interviewer.local_model import LocalServer, resolve_gguf
from interviewer.registry import Registry, connect
from interviewer.report import paths as report_paths
from interviewer.report import save
from interviewer.scoring import so_far
from interviewer.settings import Settings
from interviewer.storage import is_postgres, open_sessions
from interviewer.vllm_server import VLLMServer, start_vllm
from knowledge.bank import default_bank
from knowledge.store import Store

log = logging.getLogger(__name__)
__all__ = ["Backend", "Interviewer", "Session", "clean_answer"]


def writable_folder(folder: Path) -> None:
    """Create `folder` if needed and check that a file can be written in it (OSError otherwise)."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".write-test-{uuid.uuid4().hex[:6]}"
    probe.write_text("")
    probe.unlink()


def open_home(home: Path) -> None:
    """The data folder, created if needed; a clear message when it is a file or not writable."""
    try:
        writable_folder(home)
    except OSError as exc:
        raise SessionError(f"The data folder {home} cannot be used ({exc.strerror or exc}): point --home "
                           "(or RLI_HOME) at a writable folder.") from None


@dataclass
class Backend:
    """The model in use and, for the embedded default, the server that serves it."""

    model: OpenAIChat
    server: LocalServer | VLLMServer | None = None
    description: str = ""

    @classmethod
    def open(cls, settings: Settings, parallel: int = 2) -> "Backend":
        if settings.base_url:
            name = settings.model or "default"
            model = OpenAIChat(settings.base_url, name, settings.api_key, settings.timeout, settings.retries)
            model.ping()
            return cls(model, None, f"model {name} at {mask_url(settings.base_url)} (OpenAI-compatible endpoint)")
        if settings.engine == "vllm":
            server = start_vllm(settings)
            model = OpenAIChat(server.base_url, server.name, None, settings.timeout, settings.retries)
            return cls(model, server, f"model {server.name} at {server.base_url} (vLLM, log {server.log_path})")
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
    registry: Registry
    saver_conn: sqlite3.Connection
    backend: Backend | None = None

    @classmethod
    def open(cls, settings: Settings, backend: Backend | None = None, model=None, store: Store | None = None,
             grader=None) -> "Interviewer":
        """`backend` (a real server) or `model` (any ChatModel, e.g. a scripted fake) or neither (verbatim)."""
        open_home(settings.home)
        if is_postgres(settings.db):  # several web workers share sessions
            tables, checkpointer = open_sessions(settings)
            registry, saver_conn = Registry(settings.db_path, conn=tables), tables
        else:
            if settings.db:
                open_sessions(settings)  # says which URLs --db takes
            registry = Registry(settings.db_path)  # checks the database file first
            saver_conn = connect(settings.db_path)  # the checkpointer's own connection, serialized by its lock
            checkpointer = SqliteSaver(saver_conn)
        store = store or Store.open(settings.store_path, default_bank(), url=settings.chroma_url)
        chat = backend.model if backend else model
        grader = grader or make_grader(settings.resolved_grader(), store, chat)
        graph = build_graph(checkpointer)
        return cls(settings, Deps(settings, store.bank, store, grader, chat), graph, registry, saver_conn, backend)

    @property
    def conn(self) -> sqlite3.Connection:
        return self.registry.conn

    def close(self) -> None:
        self.registry.close()
        self.saver_conn.close()
        if self.backend:
            self.backend.close()

    def new_session(self, resume: str = "", owner: str = "", **config) -> "Session":
        """Complete or absent: the row is written only after the first checkpoint (the first question)."""
        cfg = {
            "lang": self.settings.lang, "questions": self.settings.questions, "track": self.settings.track,
            "infra_share": self.settings.infra_share, "followups": self.settings.followups,
            "coach": self.settings.coach, "seed": self.settings.seed, "opening": self.settings.opening, **config,
        }
        resume = clean_resume(resume)
        sid = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:12]
        session = Session(self, sid)
        session._run({"session_id": sid, "config": cfg, "resume": resume}, record=False)
        self.registry.create(sid, cfg, owner)
        session._record(session.state)
        return session

    def session(self, sid: str, recover: bool = True, owner: str | None = None) -> "Session":
        """An existing session; with `owner`, only if it belongs to that owner (else it is as if unknown)."""
        row = self.registry.get(sid) if sid else None
        if row is None or (owner is not None and row["owner"] != owner):
            raise SessionError(f"No session {sid!r} in {self.settings.db_path}. `python -m interviewer --list` shows them.")
        session = Session(self, sid)
        if not session.state.get("config"):
            raise SessionError(f"Session {sid!r} never finished starting (no saved question): start a new one.")
        if recover:
            session.recover()
        return session

    def list_sessions(self, owner: str | None = None) -> list[dict]:
        """Saved sessions, newest first. A row still "running" whose checkpoint is finished (the process died
        before writing it) is brought up to date first, with its report."""
        rows = self.registry.list(owner)
        stale = [Session(self, r["id"]) for r in rows if r["status"] == "running"]
        stale = [s for s in stale if s.finished]
        for session in stale:
            session._record(session.state)
        return self.registry.list(owner) if stale else rows

    def practice_session(self, owner: str = "", **config) -> "Session":
        """A session on the questions whose missed key points are due again (spaced repetition)."""
        focus = self.registry.due(owner, limit=config.pop("questions", None) or self.settings.questions)
        if not focus:
            raise SessionError("Nothing is due for practice yet: finish a session first, or come back later.")
        return self.new_session(questions=len(focus), focus=list(focus), focus_points=focus, owner=owner, **config)

    def trend(self, owner: str | None = None) -> dict[str, list[tuple[str, float]]]:
        return self.registry.trend(owner)


class Session:
    def __init__(self, app: Interviewer, sid: str):
        self.app = app
        self.id = sid
        self.config = {"configurable": {"thread_id": sid}}
        self._snap = None  # the checkpoint as last read; dropped whenever this object runs a step
        self.notice = ""  # something the candidate should know about the last input (e.g. repaired text)

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
        """The graph is neither waiting for the candidate nor finished: a step failed or the process died after
        the answer was saved (LangGraph may have saved the step's writes and not the next checkpoint, so that
        `next` is empty). `recover()` continues it."""
        return self.pending is None and not self.finished and bool(self.state.get("config"))

    @property
    def finished(self) -> bool:
        return self.state.get("status") == "finished"

    @property
    def report(self) -> dict | None:
        return self.state.get("report")

    # -- steps ----------------------------------------------------------------------
    def _run(self, payload, record: bool = True) -> list[dict]:
        before = len(self.state.get("transcript", []))
        try:
            self.app.graph.invoke(payload, self.config, context=self.app.deps, durability="sync")
        finally:
            self._snap = None  # the checkpoint moved on (or a step failed part-way)
        state = self.state
        if record:
            self._record(state)
        return state.get("transcript", [])[before:]

    def recover(self) -> list[dict]:
        """After a crash: finish the step that was under way (the answer is already saved), and write the
        report and the session row if the process died before it could."""
        if self.stalled:
            return self._run(None)
        if self.finished and not self._recorded():
            self._record(self.state)
        return []

    def _pending_or_raise(self) -> None:
        if self.pending is None:
            raise SessionError("This session has finished; start a new one." if self.finished else
                               "The last step did not complete; it is retried by your next action.")

    def answer(self, text: str) -> list[dict]:
        """Grade an answer; `notice` then says if the text had to be repaired (invalid UTF-8)."""
        self._pending_or_raise()
        text, bad = repair(text or "")
        self.notice = repaired_note(bad)
        return self._run(Command(resume={"action": "answer", "text": clean_answer(text, self.app.settings.max_answer_chars)}))

    def skip(self) -> list[dict]:
        self._pending_or_raise()
        return self._run(Command(resume={"action": "skip", "text": ""}))

    def end(self) -> list[dict]:
        """Finish now: the current question is closed with what was answered, then the report."""
        self._pending_or_raise()
        return self._run(Command(resume={"action": "end", "text": ""}))

    def last_answer(self) -> str:
        """The candidate's last saved answer (what a retried step grades)."""
        for e in reversed(self.state.get("transcript", [])):
            if e["role"] == "candidate":
                return e["text"]
        return ""

    def coach_view(self) -> dict | None:
        """The verdicts on the question being (or just) answered, over all its answers (`scoring.so_far`)."""
        cur = self.state.get("current") or {}
        if cur.get("answers"):
            return so_far(cur)
        results = self.state.get("results") or []
        return so_far(results[-1]) if results else None

    def _recorded(self) -> bool:
        row = self.app.registry.get(self.id)
        return bool(row and row["status"] == "finished" and all(p.exists() for p in self.report_paths()))

    def _record(self, state: dict) -> None:
        """Derive the report files and the session row from the checkpoint. Idempotent, so after a crash it is
        simply done again: the files are replaced atomically, then the row (and, once, the practice boxes)."""
        report = state.get("report")
        if report:
            save(report, self.app.settings.reports_dir)
        self.app.registry.record(self.id, state.get("status", "running"), report)

    def report_paths(self) -> tuple[Path, Path]:
        return report_paths(self.app.settings.reports_dir, self.id)
