"""Where sessions live: SQLite under the home folder, or a PostgreSQL server shared by several workers.

`open_sessions(settings)` returns the LangGraph checkpointer and a connection for the sessions and
practice tables. Both databases take the same SQL through that connection (`?` placeholders,
`execute(...).fetchone()`, `commit()`), so the session code does not know which one it has.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass

from interviewer.errors import SessionError
from interviewer.settings import Settings

log = logging.getLogger(__name__)


def is_postgres(url: str | None) -> bool:
    return bool(url) and url.split("://", 1)[0] in ("postgresql", "postgres")


def open_sessions(settings: Settings):
    """(connection, checkpointer) for `settings.db` (a PostgreSQL URL) or SQLite under `settings.home`."""
    if is_postgres(settings.db):
        return _open_postgres(settings.db)
    if settings.db:
        raise SessionError(f"--db {settings.db!r}: only postgresql://... URLs are supported (leave it out for SQLite)")
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(settings.db_path, check_same_thread=False)
    return conn, SqliteSaver(conn)


@dataclass
class _Rows:
    rows: list

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows


class PostgresTables:
    """The sessions and practice tables in PostgreSQL, behind sqlite3's small interface.

    Each statement takes a connection from a pool and commits at once (autocommit), so any
    number of threads and worker processes can share it."""

    def __init__(self, pool, checkpoints=None):
        self.pool = pool
        self.checkpoints = checkpoints  # the checkpointer's own pool, closed with this one

    @staticmethod
    def translate(sql: str) -> str:
        sql = sql.replace("?", "%s")
        if sql.lstrip().upper().startswith("CREATE TABLE"):
            sql = re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)  # PostgreSQL's REAL is 4 bytes: too coarse for time
        return sql

    def execute(self, sql: str, params=()) -> _Rows:
        with self.pool.connection() as conn:
            cur = conn.execute(self.translate(sql), params)
            return _Rows(cur.fetchall() if cur.description else [])

    def commit(self) -> None:
        pass  # every statement is committed on its own

    def rollback(self) -> None:
        pass  # likewise: nothing is pending

    def close(self) -> None:
        self.pool.close()
        if self.checkpoints is not None:
            self.checkpoints.close()


def _open_postgres(url: str):
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise SessionError(
            'Sessions in PostgreSQL need: pip install -e ".[postgres]" (langgraph-checkpoint-postgres, psycopg)'
        ) from None
    kwargs = {"autocommit": True, "prepare_threshold": 0}
    try:
        tables = ConnectionPool(url, min_size=1, max_size=8, kwargs=kwargs, open=True, timeout=15)
        tables.wait(timeout=15)
        checkpoints = ConnectionPool(url, min_size=1, max_size=8, kwargs={**kwargs, "row_factory": dict_row},
                                     open=True, timeout=15)
        saver = PostgresSaver(checkpoints)
        saver.setup()  # creates or migrates LangGraph's tables
    except (psycopg.Error, TimeoutError) as exc:
        raise SessionError(f"Cannot use the PostgreSQL database {_redact(url)}: {exc}") from None
    pg = PostgresTables(tables, checkpoints)
    log.info("sessions in PostgreSQL at %s", _redact(url))
    return pg, saver


def _redact(url: str) -> str:
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
