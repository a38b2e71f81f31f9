"""The web session: a real browser (Debian chromium via Playwright), the Gradio API, and the UI logic.

    python -m pytest tests/test_web.py
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from interviewer.errors import EndpointError
from interviewer.local_model import free_port
from interviewer.session import Interviewer
from interviewer.web import WebApp

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def served(tmp_path_factory, store, local_server):
    """`python app.py` in its own process, on the real embedded model server of the test run."""
    home = tmp_path_factory.mktemp("web-home")
    shutil.copytree(store.path, home / "chroma")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port), "--base-url", local_server.base_url, "--model",
         local_server.alias, "--grader", "embedding", "--home", str(home), "-n", "2"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"})
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            break
        except OSError:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "app did not start"
            time.sleep(0.5)
    yield url, home
    proc.terminate()
    proc.wait(timeout=20)


@pytest.mark.model
@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian chromium (.ci/run installs it)")
def test_a_short_interview_in_a_real_browser(served, tmp_path):
    from playwright.sync_api import sync_playwright

    url, _ = served
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(url)
        started = time.monotonic()
        page.click("#start")
        page.wait_for_selector('#chat [data-testid="bot"]', timeout=120_000)
        first_question = time.monotonic() - started
        assert page.locator('#chat [data-testid="bot"]').count() == 1
        page.fill("#answer textarea", "PPO 用 clip 把比率限制在 1-ε 到 1+ε 之间，取 min 得到悲观下界：$L=\\min(rA, \\mathrm{clip}(r)A)$")
        page.click("#send")
        page.wait_for_function("""document.querySelectorAll('#chat [data-testid="bot"]').length >= 2""", timeout=120_000)
        assert page.locator('#chat [data-testid="user"]').count() == 1
        assert page.locator("#chat .katex").count() >= 1  # the formula rendered
        page.click("#end")
        page.wait_for_selector("#report h1", timeout=120_000)
        with page.expect_download() as dl:
            page.locator("#downloads a").first.click()
        saved = tmp_path / dl.value.suggested_filename
        dl.value.save_as(saved)
        assert saved.stat().st_size > 100
        page.screenshot(path=str(ARTIFACTS / "web_session.png"), full_page=True)
        page.reload()  # a reload resumes the same session
        page.wait_for_selector("#report h1", timeout=60_000)
        browser.close()
    print(f"\nfirst question in the browser after {first_question:.1f}s; screenshot {ARTIFACTS / 'web_session.png'}")


@pytest.mark.model
def test_several_sessions_at_once_do_not_cross_talk(served):
    from gradio_client import Client

    url, _ = served

    def interview(tag):
        client = Client(url, verbose=False)  # one client = one browser session (gr.State is per session)
        token = f"browser-secret-of-{tag}-" + "x" * 20  # what the browser keeps in its local storage
        client.predict(token, "zh", "mixed", 1, "mid", False, None, f"我的简历 {tag}", api_name="/start")
        client.predict(token, f"回答来自 {tag}：PPO 的 clip 把比率限制在 1±ε。", api_name="/answer")
        final = client.predict(token, f"回答来自 {tag} 第二次", api_name="/answer")
        return str(final[0])

    with ThreadPoolExecutor(2) as pool:
        chat_a, chat_b = pool.map(interview, ["AAA", "BBB"])
    assert "AAA" in chat_a and "BBB" not in chat_a
    assert "BBB" in chat_b and "AAA" not in chat_b


@pytest.mark.model
def test_an_oversized_answer_is_refused_and_kept_in_the_box(served):
    from gradio_client import Client

    url, _ = served
    client = Client(url, verbose=False)
    token = "a-browser-secret-" + "y" * 30
    client.predict(token, "en", "infra", 1, "mid", False, None, "", api_name="/start")
    huge = "x " * 9000
    out = client.predict(token, huge, api_name="/answer")
    assert out[6] == huge and "limit" in out[7]


class FlakyModel:
    """Fails like a dead endpoint until `up` is set."""

    name = "flaky"

    def __init__(self):
        self.up = False

    def structured(self, messages, schema, **kw):
        if not self.up:
            raise EndpointError("Cannot reach the model endpoint http://127.0.0.1:9/v1.")
        return schema.model_validate({"utterance": messages[-1]["content"].split("say: ")[1].split("\n")[0]})

    def complete(self, messages, **kw):
        return ""


def test_a_dead_endpoint_shows_a_retry_message_and_keeps_the_answer(settings, store, scripted_grader):
    model = FlakyModel()
    model.up = True
    app = Interviewer.open(settings, model=model, store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "z" * 30, None)
    sid = web.start(me, "zh", "mixed", 1, "mid", False, None, "")[-1]
    model.up = False
    scripted_grader.enqueue("strong", "strong", "strong")
    out = web.act(me, sid, "answer", "我的回答")
    assert out[6] == "我的回答" and "http://127.0.0.1:9/v1" in out[7]
    model.up = True
    out = web.act(me, sid, "answer", "我的回答")  # retry: the step that failed runs again, nothing lost
    answers = [e["text"] for e in app.session(sid).state["transcript"] if e["role"] == "candidate"]
    assert answers == ["我的回答"] and out[7] == ""
    app.close()


def test_a_retry_keeps_the_text_edited_since_and_says_so(settings, store, scripted_grader):
    model = FlakyModel()
    model.up = True
    app = Interviewer.open(settings, model=model, store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "w" * 30, None)
    sid = web.start(me, "en", "mixed", 2, "mid", False, None, "")[-1]
    model.up = False
    scripted_grader.enqueue("strong", "strong", "strong")
    web.act(me, sid, "answer", "first version")
    model.up = True
    out = web.act(me, sid, "answer", "first version, edited after the error")
    answers = [e["text"] for e in app.session(sid).state["transcript"] if e["role"] == "candidate"]
    assert answers == ["first version"]  # the saved answer was graded ...
    assert out[6] == "first version, edited after the error" and "not sent" in out[7]  # ... the edit is kept
    app.close()


def test_candidate_html_is_shown_as_text(settings, store, scripted_grader):
    app = Interviewer.open(settings.with_(coach=True), store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "v" * 30, None)
    sid = web.start(me, "en", "mixed", 1, "mid", True, None, "")[-1]
    attack = ('<style>body{display:none}</style><div style="position:fixed;inset:0">x</div>'
              '<img src="http://evil.example/a.png"> ![t](http://evil.example/b.png) **bold** $a<b$')
    scripted_grader.enqueue("strong")
    web.act(me, sid, "answer", attack)
    web.act(me, sid, "end")
    out = web.resume(me, sid)
    shown = [m["content"] for m in out[0] if m["role"] == "user"][0] + out[2] + out[3]
    saved = app.session(sid).report_paths()[0].read_text(encoding="utf-8")
    for text in (shown, saved):
        assert "<style" not in text and "<img" not in text and "<div" not in text and "![t]" not in text
    assert "&lt;style&gt;" in shown and "**bold**" in shown and "$a&lt;b$" in shown  # emphasis and LaTeX stay
    app.close()


def test_a_second_send_while_a_step_runs_is_refused_and_keeps_its_text(settings, store, scripted_grader):
    import threading

    class Slow(FlakyModel):
        def structured(self, messages, schema, **kw):
            time.sleep(1.5)
            return super().structured(messages, schema, **kw)

    model = Slow()
    model.up = True
    app = Interviewer.open(settings, model=model, store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "u" * 30, None)
    sid = web.start(me, "en", "mixed", 2, "mid", False, None, "")[-1]
    scripted_grader.enqueue("strong", "strong")
    first = threading.Thread(target=web.act, args=(me, sid, "answer", "the first answer"))
    first.start()
    time.sleep(0.5)
    out = web.act(me, sid, "answer", "a double click")
    first.join()
    answers = [e["text"] for e in app.session(sid).state["transcript"] if e["role"] == "candidate"]
    assert answers == ["the first answer"] and out[6] == "a double click" and "still running" in out[7]
    app.close()
