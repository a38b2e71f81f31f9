"""The bad-input corpus: every bad input ends in a message and an exit code, never a traceback.

    python -m pytest tests/test_badinput.py -s

Entry points run in-process (`main(argv)`): an exception escaping `main` is counted as a traceback.
Endpoints are real HTTP servers in this process; the store and the session database are real.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from faultcounts import COUNTS
from interviewer.errors import InterviewerError
from interviewer.llm import OpenAIChat
from interviewer.local_model import free_port
from interviewer.session import Interviewer

ROOT = Path(__file__).resolve().parents[1]
SECRET = "hunter2-sekrit-value"


class Endpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that replies with whatever `mode` says, hangs included."""

    mode = "ok"

    def _send(self, status, body: bytes, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200, b'{"object": "list", "data": []}')

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        mode = type(self).mode
        if mode == "hang":
            time.sleep(6)
            try:
                self._send(200, b"{}")
            except BrokenPipeError:  # the client gave up, as it should
                pass
            return
        bodies = {
            "empty": (200, b"{}"), "no-choices": (200, b'{"choices": []}'),
            "null-message": (200, b'{"id": "x", "choices": [{"index": 0, "message": null}]}'),
            "html": (200, b"<html><body>Welcome to the proxy login page</body></html>", "text/html"),
            "truncated": (200, b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "mess'),
            "reflect": (502, json.dumps({"error": {"message": f"bad gateway; request had Authorization: Bearer "
                                                              f"sk-{SECRET} and api_key={SECRET}" + " x" * 500}}).encode()),
        }
        status, body, *ctype = bodies.get(mode, (200, json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                          "content": '{"utterance": "ok"}'}}]}).encode()))
        self._send(status, body, *ctype)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def endpoint():
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


class Corpus:
    """Runs cases and counts: a case passes when it ends with the expected code and message."""

    def __init__(self):
        self.results: list[tuple[str, str]] = []  # (name, "ok" | "traceback" | "wrong: ...")

    def main(self, name: str, entry, argv: list[str], code: int, message: str, absent: tuple[str, ...] = ()):
        out, err = io.StringIO(), io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                got = entry(argv)
        except SystemExit as exc:  # argparse: usage and a message, exit 2
            got = exc.code
        except BaseException as exc:  # noqa: BLE001  (what this corpus counts: anything escaping main)
            self.results.append((name, f"traceback: {type(exc).__name__}: {exc}"))
            return
        text = out.getvalue() + err.getvalue()
        leaked = [a for a in absent if a in text]
        ok = got == code and re.search(message, text, re.S) and not leaked and "Traceback" not in text
        self.results.append((name, "ok" if ok else f"wrong: exit {got}, leaked {leaked}, output {text[-400:]!r}"))

    def call(self, name: str, fn, message: str, absent: tuple[str, ...] = ()):
        """A library call that must raise an InterviewerError (what the UIs turn into a message) or succeed
        with `message` in what it returns."""
        try:
            text = str(fn())
        except InterviewerError as exc:
            text = str(exc)
        except BaseException as exc:  # noqa: BLE001
            self.results.append((name, f"traceback: {type(exc).__name__}: {exc}"))
            return
        leaked = [a for a in absent if a in text]
        ok = re.search(message, text, re.S) and not leaked
        self.results.append((name, "ok" if ok else f"wrong: leaked {leaked}, got {text[:400]!r}"))


def test_the_bad_input_corpus(tmp_path, store, endpoint, settings):
    from evals.__main__ import main as evals_main
    from interviewer.cli import main as cli_main

    c = Corpus()
    home = tmp_path / "home"
    shutil.copytree(store.path, home / "chroma")
    fake = ["--base-url", endpoint, "--model", "m", "--phrasing", "verbatim", "--grader", "embedding", "--home", str(home)]

    # -- flags ---------------------------------------------------------------------------------
    for flags, msg in ((["-n", "0"], "out of range"), (["-n", "-3"], "out of range"), (["-n", "abc"], "not a number"),
                       (["--followups", "-5"], "out of range"), (["--infra-share", "7"], "out of range"),
                       (["--timeout", "0"], "out of range"), (["--timeout", "nan"], "out of range"),
                       (["--resume", ""], "must not be empty"), (["--resume", "  "], "must not be empty")):
        c.main(f"cli {' '.join(flags)!r}", cli_main, flags + ["--list"], 2, msg)

    # -- the data folder and the session database ------------------------------------------------
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    c.main("--home is a file", cli_main, ["--list", "--home", str(a_file)], 2, "cannot be used.*--home")
    c.main("--home under a file", cli_main, ["--list", "--home", str(a_file / "sub")], 2, "cannot be used")
    c.main("--home unwritable", cli_main, ["--list", "--home", "/proc/rli-home"], 2, "cannot be used")
    for name, damage in (("garbage", lambda db: db.write_bytes(os.urandom(8192))),
                         ("truncated", lambda db: db.write_bytes(db.read_bytes()[:5000])),
                         ("zeroed header", lambda db: db.write_bytes(b"\0" * 100 + db.read_bytes()[100:]))):
        bad = tmp_path / f"db-{name.replace(' ', '-')}"
        shutil.copytree(home / "chroma", bad / "chroma")
        app = Interviewer.open(settings.with_(home=bad), store=store)
        app.new_session(questions=1)
        app.close()
        damage(bad / "sessions.sqlite")
        before = (bad / "sessions.sqlite").read_bytes()
        c.main(f"sessions.sqlite {name}", cli_main, ["--list", "--home", str(bad)], 2,
               r"sessions\.sqlite cannot be read.*not deleted")
        assert (bad / "sessions.sqlite").read_bytes() == before  # never silently deleted

    # -- endpoints -------------------------------------------------------------------------------
    from interviewer.session import Backend

    Endpoint.mode = "ok"
    with_creds = endpoint.replace("http://", f"http://user:{SECRET}@") + f"?api_key={SECRET}"
    c.call("credentials in --base-url at start-up", lambda: Backend.open(settings.with_(base_url=with_creds)).description,
           r"at http://\*\*\*@127\.0\.0\.1:\d+/v1\?api_key=\*\*\*", absent=(SECRET,))
    dead = f"http://user:{SECRET}@127.0.0.1:{free_port()}/v1?key={SECRET}"
    c.main("dead endpoint with credentials in the URL", cli_main, ["--base-url", dead, "--home", str(home)], 2,
           r"Cannot reach the model endpoint http://\*\*\*@127\.0\.0\.1", absent=(SECRET,))
    for mode, msg in (("empty", "without a message"), ("no-choices", "without a message"),
                      ("null-message", "without a message"), ("html", "not valid JSON|without a message"),
                      ("truncated", "not valid JSON"), ("reflect", r"HTTP 502: .*\*\*\*")):
        Endpoint.mode = mode
        model = OpenAIChat(endpoint, "m", api_key=f"sk-{SECRET}", timeout=5, retries=1)
        c.call(f"endpoint reply {mode}", lambda: model.complete([{"role": "user", "content": "x"}]), msg,
               absent=(SECRET, "Bearer sk"))
    Endpoint.mode = "hang"
    started = time.monotonic()
    c.call("hanging endpoint", lambda: OpenAIChat(endpoint, "m", timeout=1, retries=2).complete([]), "within the timeout")
    hung = time.monotonic() - started
    assert hung < 5, f"a hanging endpoint blocked {hung:.1f}s with a 1 s timeout"  # at most two attempts

    # a malformed reply in the middle of an interview: a message, and the answer kept for the retry
    Endpoint.mode = "ok"
    app = Interviewer.open(settings.with_(home=tmp_path / "mid", phrasing="model"), store=store,
                           model=OpenAIChat(endpoint, "m", timeout=5, retries=0))
    session = app.new_session(questions=2, followups=1)
    Endpoint.mode = "empty"
    # "不知道": the next line is a hint or the next question, a written line the model rewords
    # (a clarification quotes the candidate and is never reworded, so it would not reach the model)
    c.call("malformed reply after an answer", lambda: session.answer("PPO 的 clip 这块我不知道。"),
           "without a message")
    kept = session.stalled and session.last_answer().startswith("PPO 的 clip")
    c.results.append(("the answer is kept after a malformed reply", "ok" if kept else "wrong: answer not kept"))
    Endpoint.mode = "ok"
    app.close()

    # -- answers and resumes -------------------------------------------------------------------------
    app = Interviewer.open(settings.with_(home=tmp_path / "answers"), store=store)
    session = app.new_session(questions=1)
    c.call("zero-width-only answer", lambda: session.answer("\u200b\u200c\u200d\u2060\ufeff"), "empty")
    c.call("control characters only", lambda: session.answer("\x00\x01\x1b\x7f"), "empty")
    c.call("answer over the limit", lambda: session.answer("很长" * 5000), "the limit is")

    def surrogates():
        session.answer("\udcff\udcfe PPO 的 clip 把比率限制在 1±ε")
        stored = session.last_answer()
        assert "\ufffd" in stored and "?" not in stored
        return session.notice

    c.call("lone surrogates (invalid UTF-8)", surrogates, "not valid UTF-8.*replaced")
    c.call("a pasted resume of 1,000,000 characters", lambda: app.new_session(resume="x" * 1_000_000), "limit is 20000")
    app.close()

    from interviewer.resume import read_resume
    from interviewer.web import WebApp

    (tmp_path / "cv.txt").write_bytes(b"\xff\xfe\xfa not utf-8")
    (tmp_path / "cv.pdf").write_bytes(b"%PDF-1.4 this is no pdf at all")
    c.call("resume not UTF-8", lambda: read_resume(tmp_path / "cv.txt"), "not UTF-8")
    c.call("resume missing", lambda: read_resume(tmp_path / "nope.txt"), "not found")
    c.call("resume not a PDF", lambda: read_resume(tmp_path / "cv.pdf"), "could not read the PDF")
    web = WebApp(Interviewer.open(settings.with_(home=tmp_path / "web"), store=store))
    shown = web.start(WebApp.owner("s" * 40, None), "en", "mixed", 1, "mid", False, str(tmp_path / "cv.pdf"), "")[7]
    c.call("web upload error shows no server path", lambda: shown, "cv.pdf", absent=(str(tmp_path),))

    # -- evals ---------------------------------------------------------------------------------------
    ev = ["--home", str(home), "--no-model", "--out", str(tmp_path / "results")]
    (tmp_path / "latin1.jsonl").write_bytes('{"question_id": "ppo-clip-min", "answer": "caf\xe9", "gold": 1}'.encode("latin-1"))
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "unknown.jsonl").write_text(json.dumps({"question_id": "no-such-q", "answer": "x", "gold": 1}) + "\n")
    cases = [(["--cases", str(tmp_path / "missing.jsonl")], 2, "no such file"),
             (["--cases", str(tmp_path / "latin1.jsonl")], 2, "not UTF-8"),
             (["--cases", str(tmp_path / "empty.jsonl")], 2, "no case"),
             (["--cases", str(tmp_path / "unknown.jsonl")], 2, "no case.*unknown"),
             (["--graders", ""], 2, "--graders is empty"), (["--graders", "llm,hybrid"], 2, "leaves no grader"),
             (["--limit", "0"], 2, "out of range"), (["--sample", "-5"], 2, "out of range"),
             (["--repeat", "0"], 2, "out of range"), (["--concurrency", "0"], 2, "out of range")]
    for flags, code, msg in cases:
        c.main(f"evals {' '.join(flags[:2])!r}", evals_main, ev + flags, code, msg)
    started = time.monotonic()
    c.main("evals --out is a file", evals_main, ["--home", str(home), "--no-model", "--out", str(a_file)], 2,
           "not a writable folder")
    assert time.monotonic() - started < 30  # refused before any grading

    tracebacks = sum(r.startswith("traceback") for _, r in c.results)
    wrong = [(n, r) for n, r in c.results if r != "ok"]
    COUNTS.update({"bad inputs": len(c.results), "tracebacks among bad inputs": tracebacks,
                   "bad inputs with a wrong message or exit code": len(wrong) - tracebacks})
    print(f"\nbad-input corpus: {len(c.results)} inputs, {tracebacks} tracebacks, {len(wrong) - tracebacks} wrong messages")
    assert not wrong, "\n".join(f"{n}: {r}" for n, r in wrong)


def test_invalid_utf8_piped_into_the_terminal_is_repaired_and_reported(tmp_path, store, endpoint):
    home = tmp_path / "home"
    shutil.copytree(store.path, home / "chroma")
    Endpoint.mode = "ok"
    run = subprocess.run(
        [sys.executable, "-m", "interviewer", "--base-url", endpoint, "--model", "m", "--phrasing", "verbatim",
         "--grader", "embedding", "--home", str(home), "-n", "1", "--lang", "en"],
        input=b"\xff\xfe PPO clips the probability ratio to 1 +- eps\n/quit\n", capture_output=True, cwd=ROOT,
        timeout=180)
    out = (run.stdout + run.stderr).decode("utf-8", "replace")
    assert run.returncode == 0 and "Traceback" not in out, out[-2000:]
    assert "not valid UTF-8" in out and "--resume" in out


def test_a_damaged_store_is_moved_aside_and_rebuilt(tmp_path, store):
    from knowledge.store import Store

    copy = tmp_path / "chroma"
    shutil.copytree(store.path, copy)
    for index in copy.glob("*/*.bin"):  # index segments gone: before, this surfaced only while scoring
        index.unlink()
    rebuilt = Store.open(copy, store.bank)
    assert rebuilt.nearest_questions("PPO clip", k=1)[0].qid
    assert rebuilt.question("ppo-clip-min").id == "ppo-clip-min"
    assert list(tmp_path.glob("chroma.damaged-*"))  # kept, not deleted


def test_a_damaged_vectors_file_is_ignored_with_a_message(tmp_path, caplog):
    from knowledge.store import shipped_vectors

    bad = tmp_path / "vectors.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    assert shipped_vectors(bad) == {}
    assert "vectors.npz are damaged" in caplog.text and "Reinstall" in caplog.text
