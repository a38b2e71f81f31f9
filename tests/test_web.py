"""The web session: a real browser (Debian chromium via Playwright), the Gradio API, and the UI logic.

    python -m pytest tests/test_web.py
"""

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import pytest

from interviewer.errors import EndpointError
from interviewer.local_model import free_port
from interviewer.session import Interviewer
from interviewer.web import WebApp

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(os.environ.get("RLI_SHOTS", "/tmp/shots12"))  # copies of the screenshots, for a human to look at
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
# every status text the page shows, recorded as it changes (a turn's "grading…" state is brief)
WATCH_STATUS = """() => { window.statusSeen = []; const el = document.querySelector('#status');
  new MutationObserver(() => window.statusSeen.push(el.innerText)).observe(el, {subtree: true, childList: true,
  characterData: true}); }"""


def shot(page, tmp_path, name):
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SHOTS / path.name)
    return path


def visible(page, selector) -> bool:
    loc = page.locator(selector)
    return loc.count() > 0 and loc.first.is_visible()


@pytest.fixture(scope="module")
def served(tmp_path_factory, store, local_server):
    """`python app.py` in its own process, on the real embedded model server of the test run."""
    home = tmp_path_factory.mktemp("web-home")
    shutil.copytree(store.path, home / "chroma")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "app.py", "--port", str(port), "--base-url", local_server.base_url, "--model",
         local_server.alias, "--grader", "embedding", "--home", str(home), "-n", "2",
         "--phrasing", "verbatim", "--threads", "off"],  # as on the embedded default: instant turns
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
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(url)
        page.wait_for_selector("#start")
        # no empty widgets before there is data: no chart, no download box
        assert not visible(page, "#topics") and not visible(page, "#downloads")
        page.click("#lang label:has-text('en')")  # the labels follow the chosen language
        page.wait_for_function("""document.querySelector('#send').innerText.trim() === 'Send'""", timeout=20_000)
        assert "发送" not in page.locator("#send").inner_text() and "Enter sends" in page.locator("#answer").inner_text()
        page.click("#lang label:has-text('zh')")
        page.wait_for_function("""document.querySelector('#send').innerText.trim() === '发送'""", timeout=20_000)
        started = time.monotonic()
        page.click("#start")
        page.wait_for_selector('#chat [data-testid="bot"]', timeout=120_000)
        first_question = time.monotonic() - started
        assert page.locator('#chat [data-testid="bot"]').count() == 1
        shot(page, tmp_path, "desktop")
        page.evaluate(WATCH_STATUS)
        page.wait_for_function("window.rliEnter === true", timeout=20_000)  # the Enter handler is installed
        box = page.locator("#answer textarea")
        box.fill("PPO 用 clip 把比率限制在 1-ε 到 1+ε 之间，取 min 得到悲观下界：$L=\\min(rA, \\mathrm{clip}(r)A)$")
        box.press("Shift+Enter")  # a new line, not a send
        box.type("第二行")
        assert "\n第二行" in box.input_value() and page.locator('#chat [data-testid="user"]').count() == 0
        box.press("Enter")  # Enter sends
        page.wait_for_function("""document.querySelectorAll('#chat [data-testid="bot"]').length >= 2""", timeout=120_000)
        assert page.locator('#chat [data-testid="user"]').count() == 1 and box.input_value() == ""
        assert any("评分中" in t for t in page.evaluate("window.statusSeen"))  # the grading state was shown
        assert page.locator("#chat .katex").count() >= 1  # the formula rendered
        page.click("#end")
        page.wait_for_selector("#report h1", timeout=120_000)
        page.wait_for_selector("#topics .bar-fill", state="attached", timeout=60_000)  # now there is data
        page.wait_for_selector("#downloads a", timeout=60_000)
        assert visible(page, "#topics") and visible(page, "#downloads")
        # the chart's scale is fixed at 0-10: a bar's width is its score in tenths of the track
        widths = page.eval_on_selector_all("#topics .bar-fill", "els => els.map(e => e.style.width)")
        scores = page.eval_on_selector_all("#topics .bar-score", "els => els.map(e => parseFloat(e.innerText))")
        assert widths and widths == [f"{round(s * 10)}%" for s in scores]
        with page.expect_download() as dl:
            page.locator("#downloads a").first.click()
        saved = tmp_path / dl.value.suggested_filename
        dl.value.save_as(saved)
        assert saved.stat().st_size > 100
        shot(page, tmp_path, "report")
        page.reload()  # a reload resumes the same session
        page.wait_for_selector("#report h1", timeout=60_000)
        browser.close()
    print(f"\nfirst question in the browser after {first_question:.1f}s; screenshots in {tmp_path} and {SHOTS}")


@pytest.mark.model
@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian chromium")
def test_the_session_works_at_a_phone_width(served, tmp_path):
    from playwright.sync_api import sync_playwright

    url, _ = served
    resume = (ROOT / "tests" / "data" / "resume.md").read_text(encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
                                has_touch=True)
        page.goto(url)
        page.wait_for_selector("#start")
        page.fill("#resume-text textarea", resume)
        page.click("#start")
        page.wait_for_selector('#chat [data-testid="bot"]', timeout=120_000)
        assert "自我介绍" in page.locator('#chat [data-testid="bot"]').first.inner_text()  # the opening
        page.locator("#answer textarea").fill("我叫张三，做了三年大模型后训练。")
        page.locator("#answer textarea").press("Enter")
        # the project drill follows, named after the resume's first project (the line streams in)
        page.wait_for_function("""[...document.querySelectorAll('#chat [data-testid="bot"]')]
                                  .some(e => e.innerText.includes('数学推理模型的 GRPO 训练'))""", timeout=120_000)
        # nothing wider than the phone: no sideways scrolling, the buttons and the box are on screen
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for sel in ["#send", "#skip", "#end", "#answer textarea"]:
            b = page.locator(sel).bounding_box()
            assert b and b["x"] >= 0 and b["x"] + b["width"] <= 390, sel
        shot(page, tmp_path, "phone")
        browser.close()


@pytest.mark.model
def test_several_sessions_at_once_do_not_cross_talk(served):
    from gradio_client import Client

    url, _ = served

    def interview(tag):
        client = Client(url, verbose=False)  # one client = one browser session (gr.State is per session)
        token = f"browser-secret-of-{tag}-" + "x" * 20  # what the browser keeps in its local storage
        client.predict(token, "zh", "mixed", 1, "mid", False, None, f"我的简历 {tag}", True, api_name="/start")
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
    client.predict(token, "en", "infra", 1, "mid", False, None, "", True, api_name="/start")
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


def test_end_while_the_reply_types_in_keeps_the_report(settings, store, scripted_grader):
    """The reply streams in frames; End pressed meanwhile is a newer step, and no later frame of the older one may
    overwrite its report (the browser test once clicked End mid-stream and saw its report blanked)."""
    app = Interviewer.open(settings, store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "e" * 30, None)
    sid = web.start(me, "en", "mixed", 2, "mid", False, None, "", False)[-1]
    scripted_grader.enqueue("strong", "strong")
    stream = web.act_stream(me, sid, "answer", "an answer")
    next(stream)  # the candidate's turn, shown while it is graded
    typing = next(stream)  # the first frame of the reply
    assert typing[0][-1]["role"] == "assistant" and typing[3] == gr.skip()  # a frame touches only the chat
    ended = web.act(me, sid, "end")
    assert ended[3].startswith("#")  # the report
    assert list(stream) == []  # the older step stops typing and never sends its final view
    # without a newer step, the stream ends on the step's full view
    sid = web.start(me, "en", "mixed", 2, "mid", False, None, "", False)[-1]
    scripted_grader.enqueue("strong", "strong")
    frames = list(web.act_stream(me, sid, "answer", "an answer"))
    assert frames[-1] == tuple(web.view(app.session(sid)))
    app.close()


def test_the_panels_stay_hidden_until_there_is_a_report_and_the_scale_is_fixed(settings, store, scripted_grader):
    from interviewer.web import topic_bars

    app = Interviewer.open(settings, store=store, grader=scripted_grader)
    web = WebApp(app)
    me = WebApp.owner("a-browser-secret-" + "t" * 30, None)
    out = web.start(me, "en", "mixed", 1, "mid", False, None, "", False)
    assert out[4]["visible"] is False and out[5]["visible"] is False  # no chart, no download box yet
    out = web.act(me, out[-1], "end")
    assert out[4]["visible"] is True and out[5]["visible"] is True
    assert 'width:0%' in out[4]["value"]  # a skipped question scores 0: an empty bar, not a full one
    assert 'width:75%' in topic_bars({"lang": "en", "topics": {"ppo": 7.5}})
    app.close()


def test_a_pasted_transcript_is_reviewed_in_the_web_app(settings, store):
    app = Interviewer.open(settings, store=store)
    web = WebApp(app)
    transcript = (Path(__file__).parent / "data" / "real_interview.md").read_text(encoding="utf-8")
    me = WebApp.owner("a-browser-secret-" + "s" * 30, None)
    report, chart, files, status = web.review(me, transcript, "zh")
    assert "ppo-clip-min" in report and "未匹配" in report and status == ""
    assert chart["visible"] and files["visible"] and all(Path(f).exists() for f in files["value"])
    report, chart, _, status = web.review(me, "no questions here", "zh")
    assert report == "" and not chart["visible"] and "no questions" in status
    assert all(Path(f).parent == web.downloads for f in files["value"])  # copies, never the reports folder
    assert [s["id"] for s in app.list_sessions(me)] and not app.list_sessions(WebApp.owner("another-" + "r" * 30, None))
    app.close()
