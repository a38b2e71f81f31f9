"""The Gradio interview session. Same graph, store and model settings as the terminal mode.

Every session belongs to an owner (an account, or a secret kept in this browser's local storage,
see webguard.py): every handler checks it, so a session id alone opens nothing. The id is kept
in local storage too, so a reload resumes the session. Candidate text is shown as text.
"""

from __future__ import annotations

import html
import logging
import shutil
import tempfile
import threading
from pathlib import Path

import gradio as gr

from interviewer.errors import AnswerRejected, EndpointError, InterviewerError, ModelOutputError
from interviewer.markup import as_text, said_as
from interviewer.report import paths as report_paths
from interviewer.report import to_markdown
from interviewer.resume import read_resume
from interviewer.review import review
from interviewer.session import Interviewer, Session
from interviewer.webguard import new_browser_token, owner_of

log = logging.getLogger(__name__)
LATEX = [{"left": "$$", "right": "$$", "display": True}, {"left": "$", "right": "$", "display": False},
         {"left": "\\(", "right": "\\)", "display": False}, {"left": "\\[", "right": "\\]", "display": True}]
T = {
    "zh": {"skipped": "（跳过）", "ended": "（结束面试）", "progress": "第 {i} / {n} 题 · {section} · {tags}",
           "opening": "开场 {i} / {n} · {tags}", "grading": "⏳ 评分中…",
           "done": "面试结束，报告见右侧。", "retry": "模型暂时不可用：{e} 你的回答已保存，稍后点“发送”重试评分。",
           "edited": "上一次的回答已保存并完成评分；输入框里改过的文字没有发送，仍保留在框里：可作为下一题的回答发送。",
           "none": "没有进行中的面试：请点“开始”。", "stalled": "上一步没有完成（回答已保存）：点“发送”继续。"},
    "en": {"skipped": "(skipped)", "ended": "(ended the interview)", "progress": "Question {i} of {n} · {section} · {tags}",
           "opening": "Opening {i} of {n} · {tags}", "grading": "⏳ Grading…",
           "done": "The interview is over; the report is on the right.",
           "retry": "The model is unavailable: {e} Your answer is saved; press Send to retry grading it.",
           "edited": "Your saved answer has now been graded. The edited text in the box was not sent; it is still "
                     "there: send it as your answer to the next question if you want.",
           "none": "No interview is running: press Start.",
           "stalled": "The last step did not complete (your answer is saved): press Send to continue."},
}
LABELS = {  # the UI's labels, in the chosen language (not both at once)
    "zh": {"title": "## 大模型强化学习模拟面试", "setup": "设置", "lang": "语言", "track": "方向", "n": "题数",
           "level": "难度", "coach": "教练模式（每题后显示评分）", "opening": "开场：自我介绍 + 简历项目深挖",
           "resume_file": "简历（PDF / Markdown / 文本）", "resume_text": "…或直接粘贴", "start": "开始",
           "practise": "练习薄弱点", "chat": "面试", "answer": "你的回答（Enter 发送，Shift+Enter 换行）",
           "send": "发送", "skip": "跳过", "hint": "提示", "end": "结束", "topics": "各主题得分（0-10）",
           "files": "下载报告", "past": "历史记录", "refresh": "刷新", "review": "复盘一场真实面试",
           "review_text": "粘贴面试记录（Q: / A:，问：/ 答：，Markdown 标题，或 JSON）", "review_btn": "复盘",
           "cancel": "停止等待"},
    "en": {"title": "## LLM-RL mock interviewer", "setup": "Set-up", "lang": "Language", "track": "Track", "n": "Questions",
           "level": "Difficulty", "coach": "Coach mode (verdicts after every answer)",
           "opening": "Opening: self-introduction + resume projects", "resume_file": "Resume (PDF / Markdown / text)",
           "resume_text": "…or paste it", "start": "Start", "practise": "Practise my weak points", "chat": "Interview",
           "answer": "Your answer (Enter sends, Shift+Enter for a new line)", "send": "Send", "skip": "Skip",
           "hint": "Hint", "end": "End", "topics": "Per-topic scores (0-10)", "files": "Report downloads",
           "past": "Past sessions", "refresh": "Refresh", "review": "Review a real interview",
           "review_text": "Paste the transcript (Q: / A:, Markdown headings, or JSON)", "review_btn": "Review",
           "cancel": "Stop waiting"},
}
# Enter sends the answer; Shift+Enter is a new line (Gradio's own handler would take Shift+Enter as
# "submit" in a multi-line box, so it is kept from seeing either); never while an input method composes
ENTER_JS = """
() => {
  if (window.rliEnter) return;  // installed once (page load and app load both run it)
  window.rliEnter = true;
  const inBox = (e) => e.key === 'Enter' && e.target.closest && e.target.closest('#answer');
  document.addEventListener('keydown', (e) => {
    if (!inBox(e) || e.isComposing || e.keyCode === 229) return;
    e.stopPropagation();
    if (e.shiftKey) return;  // the browser's default: a new line
    e.preventDefault();
    document.querySelector('#send').click();
  }, true);
  document.addEventListener('keypress', (e) => { if (inBox(e)) e.stopPropagation(); }, true);
}
"""
CSS = """
#topics .bar-row { display: flex; align-items: center; gap: .5em; margin: .15em 0; font-size: .9em; }
#topics .bar-name { flex: 0 0 9em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#topics .bar-track { flex: 1; background: var(--neutral-200, #e5e7eb); border-radius: 3px; height: .9em; }
#topics .bar-fill { background: var(--color-accent, #f97316); height: 100%; border-radius: 3px; }
#topics .bar-title { font-weight: 600; margin-bottom: .3em; }
@media (max-width: 480px) {
  .gradio-container { padding: 4px !important; }
  #chat { height: 360px !important; }
  #topics .bar-name { flex-basis: 6em; }
}
"""


def chat_history(session: Session) -> list[dict]:
    """The transcript as Gradio messages (role + text)."""
    lang = session.state["config"].get("lang", "zh")
    out = []
    for e in session.state.get("transcript", []):
        if e["role"] == "interviewer":
            out.append({"role": "assistant", "content": as_text(e["text"])})  # a challenge quotes the candidate
        else:
            text = {"skip": T[lang]["skipped"], "end": T[lang]["ended"]}.get(e["kind"]) or as_text(e["text"])
            out.append({"role": "user", "content": text})
    return out


def progress_text(session: Session) -> str:
    lang = session.state["config"].get("lang", "zh")
    p = session.pending
    if p is None:
        return T[lang]["stalled"] if session.stalled else T[lang]["done"]
    if p["kind"] == "opening":
        return T[lang]["opening"].format(i=p["index"], n=p["total"], tags=p["tags"][0])
    return T[lang]["progress"].format(i=p["index"], n=p["total"], section=p["section"], tags=", ".join(p["tags"][:3]))


def coach_text(session: Session) -> str:
    """The verdicts on this question so far (every answer to it counts), with the candidate's own sentences."""
    if not session.state["config"].get("coach"):
        return ""
    view = session.coach_view()
    if not view:
        return ""
    lines = [f"**{view['score']}/10** · grader `{view['grader']}`", ""]
    q = session.app.deps.bank.get(view["qid"])
    lang = session.state["config"].get("lang", "zh")
    for v in view["verdicts"]:
        mark = {"covered": "✅", "partial": "🟡", "unclear": "❔", "missed": "❌"}[v.status]
        kp = getattr(q.rubric.key_point(v.key), lang)
        quote = f" — “{as_text(v.evidence)}”" if v.evidence else ""
        lines.append(f"- {mark} {kp}{quote}")
    for m in view["misconceptions"]:
        lines.append(f"- ⚠️ {said_as(m.evidence)}{getattr(q.rubric.pitfalls[m.pitfall], lang)}")
    for m in view.get("settled", []):  # challenged, then explained: not counted as wrong
        lines.append(f"- ☑️ “{as_text(m.evidence)}” ({'已澄清，不计错' if lang == 'zh' else 'settled, not counted'})")
    return "\n".join(lines)


def hint_text(session: Session) -> str:
    p = session.pending
    if p is None or not session.state["config"].get("coach"):
        return ""
    lang = session.state["config"].get("lang", "zh")
    q = session.app.deps.bank.get(p["qid"])
    hints = [getattr(pr, lang) for pr in q.rubric.probes if pr.pattern == "hint"]
    return ("💡 " + hints[0]) if hints else ""


def topic_bars(report: dict | None) -> str:
    """Per-topic scores as bars on a fixed 0-10 scale (a zero is an empty bar, not a full one)."""
    if not report:
        return ""
    rows = [f'<div class="bar-title">{LABELS[report.get("lang", "zh")]["topics"]}</div>']
    for topic, score in report.get("topics", {}).items():
        width = max(0.0, min(10.0, float(score))) * 10
        rows.append(f'<div class="bar-row"><span class="bar-name">{html.escape(topic)}</span>'
                    f'<span class="bar-track"><span class="bar-fill" style="display:block;width:{width:.0f}%"></span>'
                    f'</span><span class="bar-score">{score}</span></div>')
    return "".join(rows)


class WebApp:
    """The handlers; each takes the owner first (see `owner`), and never shows another owner's session."""

    def __init__(self, interviewer: Interviewer):
        self.app = interviewer
        self.downloads = Path(tempfile.mkdtemp(prefix="rli-downloads-"))  # copies handed to Gradio, per session
        self._busy: dict[str, threading.Lock] = {}  # one step at a time per session (double clicks, a stopped wait)
        self._busy_guard = threading.Lock()
        self._steps: dict[str, int] = {}  # steps taken per session: a reply still typing in stops once another starts

    def _lock(self, sid: str) -> threading.Lock:
        with self._busy_guard:
            return self._busy.setdefault(sid, threading.Lock())

    def close(self) -> None:
        shutil.rmtree(self.downloads, ignore_errors=True)

    @staticmethod
    def owner(token: str | None, request: gr.Request | None) -> str | None:
        return owner_of(token, getattr(request, "username", None))

    def _session(self, owner: str | None, sid: str | None) -> Session | None:
        if not sid or owner is None:
            return None
        try:
            return self.app.session(sid, recover=False, owner=owner)  # a failed step is retried by the next action
        except InterviewerError:
            return None

    def _files(self, session: Session) -> list[str]:
        """The reports, copied out for this session's download (no folder of reports is ever served)."""
        return self._copies(session.report_paths())

    def _copies(self, paths) -> list[str]:
        out = []
        for path in paths:
            if path.exists():
                copy = self.downloads / path.name
                shutil.copyfile(path, copy)
                out.append(str(copy))
        return out

    @staticmethod
    def _panels(report: dict | None, files: list[str] | None):
        """The chart and the downloads: shown only once there is a report."""
        return (gr.update(value=topic_bars(report), visible=bool(report)),
                gr.update(value=files, visible=bool(files)))

    def view(self, session: Session | None, answer_box: str = "", status: str = ""):
        """(chat, progress, coach, report markdown, topic chart, files, answer box, status, sid)"""
        if session is None:
            return [], "", "", "", *self._panels(None, None), answer_box, status, ""
        report = session.report
        files = self._files(session) if report else None
        return (chat_history(session), progress_text(session), coach_text(session),
                to_markdown(report) if report else "", *self._panels(report, files), answer_box, status, session.id)

    def start(self, owner, lang, track, n, level, coach, resume_file, resume_text, opening=True):
        if owner is None:
            return self.view(None, status="⚠️ This browser has no identity yet: reload the page.")
        try:
            resume = read_resume(resume_file, shown=Path(resume_file).name) if resume_file else (resume_text or "")
            session = self.app.new_session(resume=resume, owner=owner, lang=lang, track=track, questions=int(n),
                                           coach=bool(coach), level=level, opening=bool(opening))
        except InterviewerError as exc:
            return self.view(None, status=f"⚠️ {exc}")
        return self.view(session)

    def act(self, owner, sid: str, action: str, answer: str = ""):
        return self._step(owner, sid, action, answer)[0]

    def _step(self, owner, sid: str, action: str, answer: str = ""):
        """`act`'s view, and the number of the step it took in this session (None if it took none)."""
        session = self._session(owner, sid)
        if session is None:
            return self.view(None, answer, "⚠️ " + T["en"]["none"]), None
        lock = self._lock(session.id)
        if not lock.acquire(blocking=False):
            return self.view(session, answer, "⏳ The previous step is still running (waiting for the model); "
                                              "your text is kept here: send it again in a moment."), None
        try:
            step = self._steps[session.id] = self._steps.get(session.id, 0) + 1
            return self._act(session, action, answer), step
        finally:
            lock.release()

    def _act(self, session: Session, action: str, answer: str):
        lang = session.state["config"].get("lang", "zh")
        try:
            if session.stalled:  # the last answer is saved; only the step after it failed: retry that
                saved = session.last_answer()
                session.recover()
                edited = action == "answer" and answer.strip() and answer.strip() != saved.strip()
                if edited:  # never drop what the candidate typed since: keep it, and say so
                    return self.view(session, answer, "ℹ️ " + T[lang]["edited"])
            else:
                {"answer": lambda: session.answer(answer), "skip": session.skip, "end": session.end}[action]()
        except AnswerRejected as exc:
            return self.view(session, answer, f"⚠️ {exc}")
        except (EndpointError, ModelOutputError) as exc:
            return self.view(session, answer, "⚠️ " + T[lang]["retry"].format(e=exc))
        except InterviewerError as exc:
            return self.view(session, answer, f"⚠️ {exc}")
        return self.view(session, status=f"ℹ️ {session.notice}" if session.notice else "")

    def practise(self, owner, lang, coach):
        if owner is None:
            return self.view(None, status="⚠️ This browser has no identity yet: reload the page.")
        try:
            session = self.app.practice_session(owner=owner, lang=lang, coach=bool(coach))
        except InterviewerError as exc:
            return self.view(None, status=f"⚠️ {exc}")
        return self.view(session)

    def trend_text(self, owner) -> str:
        trend = self.app.trend(owner) if owner is not None else {}
        lines = [f"- **{t}**: " + " → ".join(str(v) for _, v in pts) for t, pts in sorted(trend.items())]
        return "\n".join(lines) or "No finished sessions yet."

    def act_stream(self, owner, sid: str, action: str, answer: str = ""):
        """Like `act`, but the candidate's turn shows at once and the interviewer's reply streams in."""
        session = self._session(owner, sid)
        if session is not None and session.pending is not None:
            lang = session.state["config"].get("lang", "zh")
            mine = {"skip": T[lang]["skipped"], "end": T[lang]["ended"]}.get(action) or as_text(answer)
            first = self.view(session, "", T[lang]["grading"])  # shown while the turn is processed
            yield (first[0] + [{"role": "user", "content": mine}], *first[1:])
        final, step = self._step(owner, sid, action, answer)

        def newest() -> bool:  # False once the candidate took another step (End while this typed in): theirs stands
            return step is None or self._steps.get(sid) == step

        chat, rest = final[0], final[1:]
        if chat and chat[-1]["role"] == "assistant" and not final[7]:
            text = chat[-1]["content"]
            for cut in range(0, len(text), max(4, len(text) // 12)):
                if not newest():
                    return
                # only the chat changes while the reply types in: a late frame never blanks a newer report
                yield (chat[:-1] + [{"role": "assistant", "content": text[:cut]}], *(gr.skip() for _ in rest))
        if newest():
            yield final

    def resume(self, owner, sid: str):
        session = self._session(owner, sid)
        if session is not None:
            try:
                session.recover()
            except InterviewerError as exc:
                return self.view(session, status=f"⚠️ {exc}")
        return self.view(session)

    def review(self, owner, text: str, lang: str):
        """A pasted real interview: matched, graded and saved like an interview (in this browser's or account's
        history); the report is shown and downloads through copies, like a session's."""
        if owner is None:
            return "", *self._panels(None, None), "⚠️ This browser has no identity yet: reload the page."
        try:
            report = review(self.app, text or "", lang, owner=owner)
        except InterviewerError as exc:
            return "", *self._panels(None, None), f"⚠️ {exc}"
        files = self._copies(report_paths(self.app.settings.reports_dir, report["session_id"]))
        return to_markdown(report), *self._panels(report, files), ""

    def hint(self, owner, sid: str) -> str:
        session = self._session(owner, sid)
        return hint_text(session) if session else ""

    def history(self, owner):
        rows = []
        for s in self.app.list_sessions(owner) if owner is not None else []:
            top = ", ".join(f"{t} {v}" for t, v in list(s["topics"].items())[:4])
            rows.append([s["id"], s["status"], s["lang"], s["questions"], s["overall"], top])
        return rows


def relabel(lang: str) -> list:
    """Updates for every labelled widget, in `build_ui`'s `labelled` order, in the chosen language."""
    L = LABELS[lang]
    return [gr.update(value=L["title"]), gr.update(label=L["setup"]), gr.update(label=L["lang"]),
            gr.update(label=L["track"]), gr.update(label=L["n"]), gr.update(label=L["level"]),
            gr.update(label=L["coach"]), gr.update(label=L["opening"]), gr.update(label=L["resume_file"]),
            gr.update(label=L["resume_text"]), gr.update(value=L["start"]), gr.update(value=L["practise"]),
            gr.update(label=L["chat"]), gr.update(label=L["answer"]), gr.update(value=L["send"]),
            gr.update(value=L["skip"]), gr.update(value=L["hint"]), gr.update(value=L["end"]),
            gr.update(label=L["files"]), gr.update(label=L["past"]),
            gr.update(value=L["refresh"]), gr.update(label=L["review"]), gr.update(label=L["review_text"]),
            gr.update(value=L["review_btn"]), gr.update(value=L["cancel"])]


def build_ui(interviewer: Interviewer, secret: str | None = None) -> gr.Blocks:
    """`secret` encrypts what is kept in the browser's local storage; keep it stable across restarts."""
    web = WebApp(interviewer)
    L = LABELS[interviewer.settings.lang]
    with gr.Blocks(title="RL interviewer") as demo:
        sid = gr.State("")
        saved = gr.BrowserState("", storage_key="rl-interviewer-session", secret=secret)
        me = gr.BrowserState("", storage_key="rl-interviewer-owner", secret=secret)
        title = gr.Markdown(L["title"])
        with gr.Row():
            with gr.Column(scale=3, min_width=300):
                with gr.Accordion(L["setup"], open=True) as setup:
                    with gr.Row():
                        lang = gr.Radio(["zh", "en"], value=interviewer.settings.lang, label=L["lang"], elem_id="lang")
                        track = gr.Radio(["algorithm", "infra", "mixed"], value="mixed", label=L["track"])
                        n = gr.Slider(1, 10, value=interviewer.settings.questions, step=1, label=L["n"])
                        level = gr.Radio(["junior", "mid", "senior"], value="mid", label=L["level"])
                    with gr.Row():
                        coach = gr.Checkbox(value=interviewer.settings.coach, label=L["coach"])
                        opening = gr.Checkbox(value=interviewer.settings.opening, label=L["opening"], elem_id="opening")
                    with gr.Row():
                        resume_file = gr.File(label=L["resume_file"], file_types=[".pdf", ".md", ".txt"], type="filepath")
                        resume_text = gr.Textbox(label=L["resume_text"], lines=3, elem_id="resume-text")
                    with gr.Row():
                        start = gr.Button(L["start"], variant="primary", elem_id="start")
                        practise = gr.Button(L["practise"], elem_id="practise")
                chat = gr.Chatbot(label=L["chat"], height=460, latex_delimiters=LATEX, elem_id="chat")
                status = gr.Markdown(elem_id="status")
                answer = gr.Textbox(label=L["answer"], lines=4, elem_id="answer",
                                    max_length=interviewer.settings.max_answer_chars * 2)
                with gr.Row():
                    send = gr.Button(L["send"], variant="primary", elem_id="send", min_width=60)
                    skip = gr.Button(L["skip"], elem_id="skip", min_width=60)
                    hint = gr.Button(L["hint"], elem_id="hint", visible=interviewer.settings.coach, min_width=60)
                    end = gr.Button(L["end"], variant="stop", elem_id="end", min_width=60)
                    cancel = gr.Button(L["cancel"], elem_id="cancel", size="sm", min_width=60)
            with gr.Column(scale=2, min_width=300):
                progress = gr.Markdown(elem_id="progress")
                hint_box = gr.Markdown(elem_id="hint-box")
                coach_box = gr.Markdown(elem_id="coach")
                topics = gr.HTML(elem_id="topics", visible=False)
                report = gr.Markdown(elem_id="report")
                files = gr.File(label=L["files"], file_count="multiple", elem_id="downloads", visible=False)
                with gr.Accordion(L["past"], open=False) as past_box:
                    past = gr.Dataframe(headers=["session", "status", "lang", "questions", "overall", "topics"],
                                        interactive=False)
                    trend = gr.Markdown(elem_id="trend")
                    refresh = gr.Button(L["refresh"])
                with gr.Accordion(L["review"], open=False, elem_id="review-box") as review_box:
                    review_text = gr.Textbox(label=L["review_text"], lines=6, elem_id="review-text")
                    review_btn = gr.Button(L["review_btn"], elem_id="review")
        outputs = [chat, progress, coach_box, report, topics, files, answer, status, sid]
        labelled = [title, setup, lang, track, n, level, coach, opening, resume_file, resume_text, start, practise,
                    chat, answer, send, skip, hint, end, files, past_box, refresh, review_box, review_text,
                    review_btn, cancel]

        def remember(s):
            return s

        def identify(token):  # this browser's secret: created once, kept in its local storage
            return token if owner_of(token, None) else new_browser_token()

        def start_fn(token, lang_, track_, n_, level_, coach_, file_, text_, opening_, request: gr.Request):
            return web.start(web.owner(token, request), lang_, track_, n_, level_, coach_, file_, text_, opening_)

        def practise_fn(token, lang_, coach_, request: gr.Request):
            return web.practise(web.owner(token, request), lang_, coach_)

        def send_answer(token, s, a, request: gr.Request):
            yield from web.act_stream(web.owner(token, request), s, "answer", a)

        def skip_question(token, s, request: gr.Request):
            yield from web.act_stream(web.owner(token, request), s, "skip")

        def end_interview(token, s, request: gr.Request):
            yield from web.act_stream(web.owner(token, request), s, "end")

        def hint_fn(token, s, request: gr.Request):
            return web.hint(web.owner(token, request), s)

        def review_fn(token, text_, lang_, request: gr.Request):
            return web.review(web.owner(token, request), text_, lang_)

        def history_fn(token, request: gr.Request):
            return web.history(web.owner(token, request))

        def trend_fn(token, request: gr.Request):
            return web.trend_text(web.owner(token, request))

        def resume_fn(token, s, request: gr.Request):
            return web.resume(web.owner(token, request), s)

        lang.change(relabel, lang, labelled)
        start.click(start_fn, [me, lang, track, n, level, coach, resume_file, resume_text, opening], outputs,
                    api_name="start").then(remember, sid, saved).then(lambda: gr.Accordion(open=False), None, setup)
        practise.click(practise_fn, [me, lang, coach], outputs, api_name="practise").then(remember, sid, saved).then(
            lambda: gr.Accordion(open=False), None, setup)
        coach.change(lambda c: gr.Button(visible=bool(c)), coach, hint)
        # Enter in the answer box clicks Send (ENTER_JS), so there is no separate submit event
        steps = [send.click(send_answer, [me, sid, answer], outputs, api_name="answer"),
                 skip.click(skip_question, [me, sid], outputs, api_name="skip"),
                 end.click(end_interview, [me, sid], outputs, api_name="end")]
        # the page stops waiting; the step itself ends by the model timeout, and the answer stays saved
        cancel.click(lambda: "ℹ️ Stopped waiting. Your answer is saved: press Send to grade it again.", None, status,
                     cancels=steps)
        hint.click(hint_fn, [me, sid], hint_box, api_name="hint")
        review_btn.click(review_fn, [me, review_text, lang], [report, topics, files, status], api_name="review")
        refresh.click(history_fn, me, past, api_name="history").then(trend_fn, me, trend)
        demo.load(identify, me, me, api_name="identify").then(resume_fn, [me, saved], outputs, api_name="resume").then(
            history_fn, me, past).then(trend_fn, me, trend)
        demo.load(None, js=ENTER_JS)
    demo.web = web  # the app closes it (its download copies) on exit
    return demo
