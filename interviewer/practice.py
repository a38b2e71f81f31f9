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
    conn.execute("CREATE TABLE IF NOT EXISTS practice (qid TEXT, kp TEXT, box INTEGER, due REAL, last REAL, "
                 "PRIMARY KEY (qid, kp))")
    conn.commit()


def record(conn: sqlite3.Connection, report: dict, now: float | None = None) -> None:
    """Update the boxes from a finished session's report (skipped questions count as missed)."""
    now = now or time.time()
    for q in report["questions"]:
        missed = {m["key"] for m in q["missed"]}
        seen = missed | set(q.get("covered", []))
        for kp in missed:
            conn.execute("INSERT INTO practice VALUES (?,?,0,?,?) ON CONFLICT(qid, kp) DO UPDATE SET box=0, due=?, last=?",
                         (q["qid"], kp, now, now, now, now))
        for kp in seen - missed:
            row = conn.execute("SELECT box FROM practice WHERE qid=? AND kp=?", (q["qid"], kp)).fetchone()
            if row is None:
                continue  # only points once missed are tracked
            box = min(row[0] + 1, len(INTERVALS_DAYS) - 1)
            conn.execute("UPDATE practice SET box=?, due=?, last=? WHERE qid=? AND kp=?",
                         (box, now + INTERVALS_DAYS[box] * DAY, now, q["qid"], kp))
    conn.commit()


def due(conn: sqlite3.Connection, now: float | None = None, limit: int = 6) -> dict[str, list[str]]:
    """Questions with due key points, most overdue first: {qid: [kp, ...]}."""
    now = now or time.time()
    rows = conn.execute("SELECT qid, kp, due FROM practice WHERE due <= ? ORDER BY box, due", (now,)).fetchall()
    out: dict[str, list[str]] = {}
    for qid, kp, _ in rows:
        if qid in out or len(out) < limit:
            out.setdefault(qid, []).append(kp)
    return out


def trend(conn: sqlite3.Connection) -> dict[str, list[tuple[str, float]]]:
    """Per topic, (session id, score) in time order, over finished sessions."""
    rows = conn.execute("SELECT id, topics FROM sessions WHERE status='finished' ORDER BY created").fetchall()
    out: dict[str, list[tuple[str, float]]] = {}
    for sid, topics in rows:
        for topic, score in json.loads(topics or "{}").items():
            out.setdefault(topic, []).append((sid, score))
    return out
