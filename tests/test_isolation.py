"""The web app's isolation, over real HTTP: `python app.py` in its own process, no model needed.

    python -m pytest tests/test_isolation.py -s

Each browser (here: a gradio_client with its own secret token) sees only its own sessions; a
session id alone opens nothing; reports are not served from a folder; a foreign Host or Origin
is refused; with --user-header each account sees only its own; 20 sessions at once do not mix.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from faultcounts import COUNTS
from interviewer.local_model import free_port

ROOT = Path(__file__).resolve().parents[1]
PROBES = {"tried": 0, "refused": 0}


class NoModel(BaseHTTPRequestHandler):
    """An endpoint that is up but never asked (verbatim phrasing, embedding grader)."""

    def do_GET(self):
        body = json.dumps({"object": "list", "data": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def endpoint():
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), NoModel)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def _stop(proc) -> None:
    """SIGTERM, as a service manager stops it: the app must exit, quietly, within a minute. Its output is read all
    along (`serve`), so a full pipe cannot stall it; if it hangs, PYTHONFAULTHANDLER's dump of every thread is shown."""
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.reader.join(timeout=10)
        raise AssertionError(f"app.py did not exit within 60 s of SIGTERM; its last output:\n{proc.output()[-6000:]}")
    proc.reader.join(timeout=10)
    assert proc.returncode == 0 and "Traceback" not in proc.output(), proc.output()[-6000:]


def serve(tmp_path_factory, store, endpoint, *extra):
    home = tmp_path_factory.mktemp("iso-home")
    shutil.copytree(store.path, home / "chroma")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port), "--base-url", endpoint, "--model", "none", "--phrasing",
         "verbatim", "--grader", "embedding", "--home", str(home), "-n", "2", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONFAULTHANDLER": "1"})
    lines: list[str] = []
    proc.reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)  # a full pipe blocks the app
    proc.reader.start()
    proc.output = lambda: "".join(lines)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers={"X-User": "probe"}), timeout=2)
            break
        except urllib.error.HTTPError:
            break  # it answers (401 without an account is an answer)
        except OSError:
            assert proc.poll() is None, proc.output()
            assert time.monotonic() < deadline, "app did not start"
            time.sleep(0.3)
    return proc, url, home, port


@pytest.fixture(scope="module")
def served(tmp_path_factory, store, endpoint):
    proc, url, home, port = serve(tmp_path_factory, store, endpoint, "--allowed-host", "interviewer.test")
    yield url, home, port
    _stop(proc)


def browser(url, **kw):
    from gradio_client import Client

    return Client(url, verbose=False, **kw), secrets.token_urlsafe(32)


def refused(ok: bool) -> None:
    PROBES["tried"] += 1
    PROBES["refused"] += ok
    COUNTS["isolation probes refused"] = f"{PROBES['refused']} of {PROBES['tried']}"
    assert ok


def status(url: str, headers: dict) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


def test_a_session_is_reachable_only_from_its_own_browser(served):
    url, home, _ = served
    alice, a_token = browser(url)
    mallory, m_token = browser(url)
    out = alice.predict(a_token, "en", "mixed", 1, "mid", False, None, "", api_name="/start")
    assert out[0] and not out[7], out
    sid = alice.predict(a_token, api_name="/history")["data"][0][0]
    alice.predict(a_token, "ALICE-SECRET-ANSWER about PPO clipping", api_name="/answer")
    assert [r[0] for r in alice.predict(a_token, api_name="/history")["data"]] == [sid]
    refused(sid not in json.dumps(mallory.predict(m_token, api_name="/history")))  # history: only your own
    refused(mallory.predict("", api_name="/history")["data"] == [])  # no secret, no sessions
    stolen = mallory.predict(m_token, sid, api_name="/resume")  # the id alone opens nothing
    refused(stolen[0] == [] and "ALICE" not in json.dumps(stolen))
    stolen = mallory.predict(a_token[:10], sid, api_name="/resume")  # nor a wrong or short secret
    refused(stolen[0] == [] and "ALICE" not in json.dumps(stolen))
    forged = mallory.predict(m_token, "MALLORY WAS HERE", api_name="/answer")
    refused("No interview is running" in forged[7])
    refused(mallory.predict(m_token, sid, api_name="/hint") == "")
    final = alice.predict(a_token, api_name="/end")
    assert "MALLORY" not in json.dumps(final) and "ALICE-SECRET-ANSWER" in json.dumps(final[0])
    downloads = final[5]["value"] if isinstance(final[5], dict) else final[5]  # an update: the box shows with a report
    assert downloads and Path(downloads[0]).read_text(encoding="utf-8").startswith("#")  # through the session
    assert "ALICE-SECRET-ANSWER" in json.dumps(alice.predict(a_token, sid, api_name="/resume")[0])  # owner's reload
    report = home / "reports" / f"{sid}.md"
    assert report.exists()
    for path in (report, home / "sessions.sqlite", ROOT / "README.md"):  # no served folder
        code, _ = status(f"{url}gradio_api/file={path}", {})
        refused(code in (403, 404))


def test_a_foreign_host_or_origin_is_refused_and_cors_does_not_echo_it(served):
    url, _, port = served
    for headers in ({"Host": f"evil.example:{port}"}, {"Host": f"evil.example:{port}", "Origin": "http://evil.example"},
                    {"Origin": f"http://evil.example:{port}"}, {"Origin": "null"}):
        for path in ("", "config", "gradio_api/info"):
            code, got = status(url + path, headers)
            refused(code == 403 and "evil" not in json.dumps(got) and "Access-Control-Allow-Origin" not in got)
    assert status(url, {"Host": f"interviewer.test:{port}"})[0] == 200  # --allowed-host
    code, got = status(url + "config", {"Origin": f"http://127.0.0.1:{port}"})
    assert code == 200 and got.get("access-control-allow-origin") == f"http://127.0.0.1:{port}"


def test_twenty_sessions_at_once_do_not_cross_talk(served):
    url, _, _ = served

    def interview(i):
        client, token = browser(url)
        tag = f"CANDIDATE{i:02d}X"
        client.predict(token, "zh", "mixed", 1, "mid", False, None, "", api_name="/start")
        out = client.predict(token, f"{tag} 说：PPO 的 clip 限制概率比。", api_name="/answer")
        chat = json.dumps(out[0], ensure_ascii=False)
        mine = client.predict(token, api_name="/history")["data"]
        others = [f"CANDIDATE{j:02d}X" for j in range(20) if j != i]
        return tag in chat and not any(o in chat for o in others) and len(mine) == 1 and not out[7]

    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(interview, range(20)))
    failures = results.count(False)
    COUNTS.update({"concurrent web sessions": len(results), "concurrent sessions failed or crossed": failures})
    print(f"\nconcurrent web sessions: {len(results)} sessions, {failures} failures or cross-talk")
    assert failures == 0


@pytest.fixture(scope="module")
def proxied(tmp_path_factory, store, endpoint):
    proc, url, _, _ = serve(tmp_path_factory, store, endpoint, "--user-header", "X-User")
    yield url
    _stop(proc)


def test_accounts_from_a_trusted_proxy_header_see_only_their_own(proxied):
    url = proxied
    refused(status(url, {})[0] == 401)  # no account, no app
    alice, token = browser(url, headers={"X-User": "alice"})
    bob, _ = browser(url, headers={"X-User": "bob"})
    alice.predict(token, "en", "mixed", 1, "mid", False, None, "", api_name="/start")
    sid = alice.predict(token, api_name="/history")["data"][0][0]
    other_browser, other_token = browser(url, headers={"X-User": "alice"})
    assert [r[0] for r in other_browser.predict(other_token, api_name="/history")["data"]] == [sid]  # same account
    refused(bob.predict(token, api_name="/history")["data"] == [])  # even with alice's browser secret
    refused(bob.predict(token, sid, api_name="/resume")[0] == [])


def test_print_isolation_counts():
    print(f"\nisolation probes: {PROBES['refused']} of {PROBES['tried']} refused")
    assert PROBES["tried"] == 0 or PROBES["refused"] == PROBES["tried"]


def test_accounts_from_flags_and_a_file(tmp_path):
    import app
    from interviewer.webguard import allowed_hosts, owner_of

    (tmp_path / "users").write_text("# team\nalice:wonder\n\nbob:builder\n")
    args = app.parse_args(["--auth", "carol:pw", "--auth-file", str(tmp_path / "users")])
    assert app.accounts(args) == [("carol", "pw"), ("alice", "wonder"), ("bob", "builder")]
    with pytest.raises(ValueError, match="expected USER:PASSWORD"):
        app.accounts(app.parse_args(["--auth", "nopassword"]))
    with pytest.raises(SystemExit):
        app.parse_args(["--auth", "a:b", "--user-header", "X-User"])
    assert owner_of("t" * 40, None) != owner_of("u" * 40, None) and "t" * 40 not in owner_of("t" * 40, None)
    assert owner_of("short", None) is None and owner_of("t" * 40, "alice") == "user:alice"
    assert allowed_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert "evil.example" not in allowed_hosts("0.0.0.0") and "lan.example" in allowed_hosts("0.0.0.0", ["LAN.example"])
