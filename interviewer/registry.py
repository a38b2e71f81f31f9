"""The sessions table: who owns which session, its status and scores. Safe to share between threads.

The interview itself lives in LangGraph's checkpoints; this table is derived from them (see
`Session._record`), so a row can always be rewritten from the checkpoint after a crash.
Every statement runs under one lock on one connection: Gradio's worker threads never
interleave two transactions.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from interviewer import practice
from interviewer.errors import SessionError

COLUMNS = ("id TEXT PRIMARY KEY, created REAL, updated REAL, status TEXT, lang TEXT, questions INTEGER, "
           "overall REAL, topics TEXT, config TEXT, owner TEXT NOT NULL DEFAULT ''")


def damaged(path: Path, exc: Exception) -> SessionError:
    return SessionError(
        f"The session database {path} cannot be read ({exc}). It is not deleted: move it aside "
        f"(mv {path} {path}.damaged) to start with an empty one, or point --home elsewhere."
    )


def connect(path: Path) -> sqlite3.Connection:
    """A connection for a thread-safe user (the checkpointer has its own lock), with the file checked."""
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        ok = conn.execute("PRAGMA quick_check").fetchone()[0]
        if ok != "ok":
            raise sqlite3.DatabaseError(ok)
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from None
    return conn


class Registry:
    def __init__(self, path: Path, conn=None):
        """The table in the SQLite file `path`, or on `conn` (PostgreSQL tables, see storage.py)."""
        self.path = path
        self.conn = conn if conn is not None else connect(path)
        self._lock = threading.RLock()
        with self._lock:
            try:
                self.conn.execute(f"CREATE TABLE IF NOT EXISTS sessions ({COLUMNS})")
                cols = {r[1] for r in self.conn.execute("PRAGMA table_info(sessions)").fetchall()} if conn is None else {"owner"}
                if "owner" not in cols:  # a database from before accounts: its sessions belong to the terminal
                    self.conn.execute("ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
                practice.init(self.conn)
                self.conn.commit()
            except sqlite3.DatabaseError as exc:
                raise damaged(path, exc) from None

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def create(self, sid: str, cfg: dict, owner: str = "", status: str = "running") -> None:
        with self._lock:
            self.conn.execute("INSERT INTO sessions (id, created, updated, status, lang, questions, overall, topics, "
                              "config, owner) VALUES (?,?,?,?,?,?,?,?,?,?)",
                              (sid, time.time(), time.time(), status, cfg["lang"], cfg["questions"], None, "{}",
                               json.dumps(cfg), owner))
            self.conn.commit()

    def get(self, sid: str) -> dict | None:
        with self._lock:
            row = self.conn.execute("SELECT status, owner FROM sessions WHERE id=?", (sid,)).fetchone()
        return {"status": row[0], "owner": row[1]} if row else None

    def record(self, sid: str, status: str, report: dict | None) -> None:
        """Status and scores from the checkpoint; the first time a session is finished, the practice boxes
        move too, in the same transaction (so a crash never counts a session twice)."""
        overall = report["overall"] if report else None
        topics = json.dumps(report["topics"] if report else {}, ensure_ascii=False)
        with self._lock:
            row = self.conn.execute("SELECT status, owner FROM sessions WHERE id=?", (sid,)).fetchone()
            if row is None:
                return
            try:
                if report and row[0] != "finished":
                    practice.record(self.conn, report, owner=row[1], commit=False)
                self.conn.execute("UPDATE sessions SET updated=?, status=?, overall=?, topics=? WHERE id=?",
                                  (time.time(), status, overall, topics, sid))
                self.conn.commit()
            except sqlite3.Error:
                self.conn.rollback()
                raise

    def list(self, owner: str | None = None) -> list[dict]:
        """Saved sessions, newest first; only `owner`'s when given."""
        sql = "SELECT id, created, status, lang, questions, overall, topics FROM sessions"
        with self._lock:
            rows = self.conn.execute(sql + (" WHERE owner=?" if owner is not None else "") + " ORDER BY created DESC",
                                     (owner,) if owner is not None else ()).fetchall()
        return [{"id": r[0], "created": r[1], "status": r[2], "lang": r[3], "questions": r[4], "overall": r[5],
                 "topics": json.loads(r[6] or "{}")} for r in rows]

    def due(self, owner: str = "", limit: int = 6) -> dict[str, list[str]]:
        with self._lock:
            return practice.due(self.conn, limit=limit, owner=owner)

    def trend(self, owner: str | None = None) -> dict[str, list[tuple[str, float]]]:
        with self._lock:
            return practice.trend(self.conn, owner=owner)
