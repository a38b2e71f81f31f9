"""Progress across sessions: the per-topic trend, and spaced repetition of missed key points.

Every finished session updates a Leitner box per (question, key point): a missed point goes
back to box 0 (due at once), a covered one moves up a box and comes back later. "Practise my
weak points" plans a session from the questions whose missed points are due.
"""

from __future__ import annotations

import json
import sqlite3
import time

INTERVALS_DAYS = [0, 1, 3, 7, 21, 60]  # box -> days until the point is due again
DAY = 86400.0


def init(conn: sqlite3.Connection) -> None:
    """The boxes, one set per owner (a browser or an account; '' is the terminal). Does not commit."""
    # an old SQLite table may lack the owner column (PostgreSQL tables are always new: no PRAGMA there)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(practice)").fetchall()} if isinstance(conn, sqlite3.Connection) else set()
    if cols and "owner" not in cols:  # from before accounts: the boxes belong to the terminal
        conn.execute("ALTER TABLE practice RENAME TO practice_old")
    conn.execute("CREATE TABLE IF NOT EXISTS practice (owner TEXT NOT NULL DEFAULT '', qid TEXT, kp TEXT, "
                 "box INTEGER, due REAL, last REAL, PRIMARY KEY (owner, qid, kp))")
    if cols and "owner" not in cols:
        conn.execute("INSERT INTO practice SELECT '', qid, kp, box, due, last FROM practice_old")
        conn.execute("DROP TABLE practice_old")


def record(conn: sqlite3.Connection, report: dict, now: float | None = None, owner: str = "",
           commit: bool = True) -> None:
    """Update the boxes from a finished session's report (skipped questions count as missed)."""
    now = now or time.time()
    for q in report["questions"]:
        missed = {m["key"] for m in q["missed"]}
        seen = missed | set(q.get("covered", []))
        for kp in missed:
            conn.execute("INSERT INTO practice VALUES (?,?,?,0,?,?) ON CONFLICT(owner, qid, kp) "
                         "DO UPDATE SET box=0, due=?, last=?", (owner, q["qid"], kp, now, now, now, now))
        for kp in seen - missed:
            row = conn.execute("SELECT box FROM practice WHERE owner=? AND qid=? AND kp=?",
                               (owner, q["qid"], kp)).fetchone()
            if row is None:
                continue  # only points once missed are tracked
            box = min(row[0] + 1, len(INTERVALS_DAYS) - 1)
            conn.execute("UPDATE practice SET box=?, due=?, last=? WHERE owner=? AND qid=? AND kp=?",
                         (box, now + INTERVALS_DAYS[box] * DAY, now, owner, q["qid"], kp))
    if commit:
        conn.commit()


def due(conn: sqlite3.Connection, now: float | None = None, limit: int = 6, owner: str = "") -> dict[str, list[str]]:
    """Questions with due key points, most overdue first: {qid: [kp, ...]}."""
    now = now or time.time()
    rows = conn.execute("SELECT qid, kp, due FROM practice WHERE owner=? AND due <= ? ORDER BY box, due",
                        (owner, now)).fetchall()
    out: dict[str, list[str]] = {}
    for qid, kp, _ in rows:
        if qid in out or len(out) < limit:
            out.setdefault(qid, []).append(kp)
    return out


def trend(conn: sqlite3.Connection, owner: str | None = None) -> dict[str, list[tuple[str, float]]]:
    """Per topic, (session id, score) in time order, over finished sessions (only `owner`'s when given)."""
    where = "status='finished'" + (" AND owner=?" if owner is not None else "")
    rows = conn.execute(f"SELECT id, topics FROM sessions WHERE {where} ORDER BY created",
                        (owner,) if owner is not None else ()).fetchall()
    out: dict[str, list[tuple[str, float]]] = {}
    for sid, topics in rows:
        for topic, score in json.loads(topics or "{}").items():
            out.setdefault(topic, []).append((sid, score))
    return out
