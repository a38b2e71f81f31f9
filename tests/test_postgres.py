"""Sessions in a real PostgreSQL server: a whole interview, then a resume in a different process.

    python -m pytest tests/test_postgres.py

Uses the server named by RLI_TEST_PG_URL (`.ci/run` starts one from Debian's postgresql package);
without it, starts a throw-away cluster with the machine's initdb + pg_ctl on a free loopback port.
Skipped only when no PostgreSQL server binary is installed.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest

from interviewer.local_model import free_port
from interviewer.session import Interviewer
from interviewer.settings import Settings
from interviewer.storage import PostgresTables

ROOT = Path(__file__).resolve().parents[1]


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="module")
def server_url():
    if os.environ.get("RLI_TEST_PG_URL"):
        yield os.environ["RLI_TEST_PG_URL"]
        return
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("no PostgreSQL server binary (initdb/pg_ctl): apt-get install postgresql, or set RLI_TEST_PG_URL")
    folder = Path(tempfile.mkdtemp(prefix="rli-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(folder, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    data = folder / "data"
    subprocess.run(as_user + [initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True)
    subprocess.run(as_user + [pg_ctl, "-D", str(data), "-l", str(folder / "log"), "-w", "-t", "60", "-o",
                              f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                   check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(as_user + [pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def pg_url(server_url):
    """A fresh database per test."""
    import psycopg

    name = "rli_" + uuid.uuid4().hex[:8]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield server_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _strong_answer(session) -> str:
    q = session.app.deps.store.question(session.state["current"]["qid"])
    return q.rubric.reference_answer.zh


RESUME = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from interviewer.session import Interviewer
    from interviewer.settings import Settings
    settings = Settings(home=Path(sys.argv[1]), phrasing="verbatim", grader="embedding", db=sys.argv[2])
    app = Interviewer.open(settings)
    session = app.session(sys.argv[3])
    answered = 0
    while session.pending is not None:
        q = app.deps.store.question(session.state["current"]["qid"])
        session.answer(q.rubric.reference_answer.zh)
        answered += 1
    print(json.dumps({"answered": answered, "status": session.state["status"], "pid": __import__("os").getpid()}))
    app.close()
""")


def test_interview_in_postgres_resumes_in_another_process(pg_url, store, tmp_path):
    settings = Settings(home=tmp_path / "worker1", phrasing="verbatim", grader="embedding", questions=2,
                        followups=1, seed=7, db=pg_url)
    app = Interviewer.open(settings, store=store)
    assert isinstance(app.conn, PostgresTables)
    session = app.new_session()
    first = session.state["current"]["qid"]
    session.answer(_strong_answer(session))
    assert not session.finished
    app.close()  # this worker is gone; the next one has nothing of it but the database

    out = subprocess.run([sys.executable, "-c", RESUME, str(tmp_path / "worker2"), pg_url, session.id],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    other = json.loads(out.stdout.strip().splitlines()[-1])
    assert other["status"] == "finished" and other["answered"] >= 1 and other["pid"] != os.getpid()

    again = Interviewer.open(settings, store=store)
    done = again.session(session.id)
    assert done.finished
    report = done.report
    assert [q["qid"] for q in report["questions"]] == done.state["plan"] and report["questions"][0]["qid"] == first
    answers = [e for e in done.state["transcript"] if e["role"] == "candidate"]
    assert len(answers) == 1 + other["answered"]
    row = next(s for s in again.list_sessions() if s["id"] == session.id)
    assert row["status"] == "finished" and row["overall"] == report["overall"] and row["topics"]
    assert not (tmp_path / "worker1" / "sessions.sqlite").exists() and not (tmp_path / "worker2" / "sessions.sqlite").exists()
    again.close()


def test_sessions_table_keeps_second_precision(pg_url, store, tmp_path):
    """PostgreSQL's REAL is 4 bytes (about 2 minutes of resolution at today's epoch): the tables use DOUBLE."""
    app = Interviewer.open(Settings(home=tmp_path, phrasing="verbatim", grader="embedding", db=pg_url), store=store)
    app.conn.execute("INSERT INTO sessions (id, created) VALUES (?, ?)", ("t", 1764790000.25))
    assert app.conn.execute("SELECT created FROM sessions WHERE id = ?", ("t",)).fetchone()[0] == 1764790000.25
    app.close()
