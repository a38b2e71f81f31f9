"""The Gradio interview session. Same graph, store and model settings as the terminal mode.

Every session belongs to an owner (an account, or a secret kept in this browser's local storage,
see webguard.py): every handler checks it, so a session id alone opens nothing. The id is kept
in local storage too, so a reload resumes the session. Candidate text is shown as text.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path

import gradio as gr

from interviewer.errors import AnswerRejected, EndpointError, InterviewerError, ModelOutputError
from interviewer.markup import as_text
from interviewer.report import to_markdown
from interviewer.resume import read_resume
from interviewer.session import Interviewer, Session
from interviewer.webguard import new_browser_token, owner_of

log = logging.getLogger(__name__)
LATEX = [{"left": "$$", "right": "$$", "display": True}, {"left": "$", "right": "$", "display": False},
         {"left": "\\(", "right": "\\)", "display": False}, {"left": "\\[", "right": "\\]", "display": True}]
T = {
    "zh": {"skipped": "（跳过）", "ended": "（结束面试）", "progress": "第 {i} / {n} 题 · {section} · {tags}",
           "done": "面试结束，报告见右侧。", "retry": "模型暂时不可用：{e} 你的回答已保存，稍后点“发送”重试评分。",
           "edited": "上一次的回答已保存并完成评分；输入框里改过的文字没有发送，仍保留在框里：可作为下一题的回答发送。",
           "none": "没有进行中的面试：请点“开始”。", "stalled": "上一步没有完成（回答已保存）：点“发送”继续。"},
    "en": {"skipped": "(skipped)", "ended": "(ended the interview)", "progress": "Question {i} of {n} · {section} · {tags}",
           "done": "The interview is over; the report is on the right.",
           "retry": "The model is unavailable: {e} Your answer is saved; press Send to retry grading it.",
           "edited": "Your saved answer has now been graded. The edited text in the box was not sent; it is still "
                     "there: send it as your answer to the next question if you want.",
           "none": "No interview is running: press Start.",
           "stalled": "The last step did not complete (your answer is saved): press Send to continue."},
}


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
    return T[lang]["progress"].format(i=p["index"], n=p["total"], section=p["section"], tags=", ".join(p["tags"][:3]))


def coach_text(session: Session) -> str:
    if not session.state["config"].get("coach"):
        return ""
    grade = session.last_grade()
    if not grade:
        return ""
    lines = [f"**{grade['score']}/10** · grader `{grade['grader']}`", ""]
    q = session.app.deps.bank.get(grade["qid"])
    lang = session.state["config"].get("lang", "zh")
    for v in grade["verdicts"]:
        mark = {"covered": "✅", "partial": "🟡", "unclear": "❔", "missed": "❌"}[v["status"]]
        kp = getattr(q.rubric.key_point(v["key"]), lang)
        quote = f" — “{as_text(v['evidence'])}”" if v["evidence"] else ""
        lines.append(f"- {mark} {kp}{quote}")
    for m in grade["misconceptions"]:
        if m.get("confirmed", True):
            lines.append(f"- ⚠️ {getattr(q.rubric.pitfalls[m['pitfall']], lang)}")
    return "\n".join(lines)


def hint_text(session: Session) -> str:
    p = session.pending
    if p is None or not session.state["config"].get("coach"):
        return ""
    lang = session.state["config"].get("lang", "zh")
    q = session.app.deps.bank.get(p["qid"])
    hints = [getattr(pr, lang) for pr in q.rubric.probes if pr.pattern == "hint"]
    return ("💡 " + hints[0]) if hints else ""


def topic_rows(report: dict | None):
    import pandas as pd  # a Gradio dependency

    return pd.DataFrame([{"topic": t, "score": s} for t, s in (report or {}).get("topics", {}).items()],
                        columns=["topic", "score"])


class WebApp:
    """The handlers; each takes the owner first (see `owner`), and never shows another owner's session."""

    def __init__(self, interviewer: Interviewer):
        self.app = interviewer
        self.downloads = Path(tempfile.mkdtemp(prefix="rli-downloads-"))  # copies handed to Gradio, per session
        self._busy: dict[str, threading.Lock] = {}  # one step at a time per session (double clicks, a stopped wait)
        self._busy_guard = threading.Lock()

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
        out = []
        for path in session.report_paths():
            if path.exists():
                copy = self.downloads / path.name
                shutil.copyfile(path, copy)
                out.append(str(copy))
        return out

    def view(self, session: Session | None, answer_box: str = "", status: str = ""):
        """(chat, progress, coach, report markdown, topic table, files, answer box, status, sid)"""
        if session is None:
            return [], "", "", "", topic_rows(None), None, answer_box, status, ""
        report = session.report
        files = self._files(session) if report else None
        return (chat_history(session), progress_text(session), coach_text(session),
                to_markdown(report) if report else "", topic_rows(report), files, answer_box, status, session.id)

    def start(self, owner, lang, track, n, level, coach, resume_file, resume_text):
        if owner is None:
            return self.view(None, status="⚠️ This browser has no identity yet: reload the page.")
        try:
            resume = read_resume(resume_file, shown=Path(resume_file).name) if resume_file else (resume_text or "")
            session = self.app.new_session(resume=resume, owner=owner, lang=lang, track=track, questions=int(n),
                                           coach=bool(coach), level=level)
        except InterviewerError as exc:
            return self.view(None, status=f"⚠️ {exc}")
        return self.view(session)

    def act(self, owner, sid: str, action: str, answer: str = ""):
        session = self._session(owner, sid)
        if session is None:
            return self.view(None, answer, "⚠️ " + T["en"]["none"])
        lock = self._lock(session.id)
        if not lock.acquire(blocking=False):
            return self.view(session, answer, "⏳ The previous step is still running (waiting for the model); "
                                              "your text is kept here: send it again in a moment.")
        try:
            return self._act(session, action, answer)
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
            first = self.view(session, "", "…")
            yield (first[0] + [{"role": "user", "content": mine}], *first[1:])
        final = self.act(owner, sid, action, answer)
        chat, rest = final[0], final[1:]
        if chat and chat[-1]["role"] == "assistant" and not final[7]:
            text = chat[-1]["content"]
            for cut in range(0, len(text), max(4, len(text) // 12)):
                yield (chat[:-1] + [{"role": "assistant", "content": text[:cut]}], *rest)
        yield final

    def resume(self, owner, sid: str):
        session = self._session(owner, sid)
        if session is not None:
            try:
                session.recover()
            except InterviewerError as exc:
                return self.view(session, status=f"⚠️ {exc}")
        return self.view(session)

    def hint(self, owner, sid: str) -> str:
        session = self._session(owner, sid)
        return hint_text(session) if session else ""

    def history(self, owner):
        rows = []
        for s in self.app.list_sessions(owner) if owner is not None else []:
            top = ", ".join(f"{t} {v}" for t, v in list(s["topics"].items())[:4])
            rows.append([s["id"], s["status"], s["lang"], s["questions"], s["overall"], top])
        return rows


def build_ui(interviewer: Interviewer, secret: str | None = None) -> gr.Blocks:
    """`secret` encrypts what is kept in the browser's local storage; keep it stable across restarts."""
    web = WebApp(interviewer)
    with gr.Blocks(title="RL interviewer") as demo:
        sid = gr.State("")
        saved = gr.BrowserState("", storage_key="rl-interviewer-session", secret=secret)
        me = gr.BrowserState("", storage_key="rl-interviewer-owner", secret=secret)
        gr.Markdown("## LLM-RL mock interviewer · 大模型强化学习模拟面试")
        with gr.Row():
            with gr.Column(scale=3):
                with gr.Accordion("Set-up · 设置", open=True) as setup:
                    with gr.Row():
                        lang = gr.Radio(["zh", "en"], value=interviewer.settings.lang, label="Language")
                        track = gr.Radio(["algorithm", "infra", "mixed"], value="mixed", label="Track")
                        n = gr.Slider(1, 10, value=interviewer.settings.questions, step=1, label="Questions")
                        level = gr.Radio(["junior", "mid", "senior"], value="mid", label="Difficulty")
                        coach = gr.Checkbox(value=interviewer.settings.coach, label="Coach mode")
                    with gr.Row():
                        resume_file = gr.File(label="Resume (PDF / Markdown / text)", file_types=[".pdf", ".md", ".txt"], type="filepath")
                        resume_text = gr.Textbox(label="…or paste it", lines=3)
                    with gr.Row():
                        start = gr.Button("Start · 开始", variant="primary", elem_id="start")
                        practise = gr.Button("Practise my weak points · 练习薄弱点", elem_id="practise")
                chat = gr.Chatbot(label="Interview", height=460, latex_delimiters=LATEX, elem_id="chat")
                status = gr.Markdown(elem_id="status")
                answer = gr.Textbox(label="Your answer · 你的回答", lines=4, elem_id="answer",
                                    max_length=interviewer.settings.max_answer_chars * 2)
                with gr.Row():
                    send = gr.Button("Send · 发送", variant="primary", elem_id="send")
                    skip = gr.Button("Skip · 跳过", elem_id="skip")
                    hint = gr.Button("Hint · 提示", elem_id="hint", visible=interviewer.settings.coach)
                    end = gr.Button("End · 结束", variant="stop", elem_id="end")
                    cancel = gr.Button("Stop waiting · 停止等待", elem_id="cancel", size="sm")
            with gr.Column(scale=2):
                progress = gr.Markdown(elem_id="progress")
                hint_box = gr.Markdown(elem_id="hint-box")
                coach_box = gr.Markdown(elem_id="coach")
                report = gr.Markdown(elem_id="report")
                topics = gr.BarPlot(x="topic", y="score", y_lim=[0, 10], label="Per-topic scores", elem_id="topics")
                files = gr.File(label="Report downloads", file_count="multiple", elem_id="downloads")
                with gr.Accordion("Past sessions · 历史", open=False):
                    past = gr.Dataframe(headers=["session", "status", "lang", "questions", "overall", "topics"],
                                        interactive=False)
                    trend = gr.Markdown(elem_id="trend")
                    refresh = gr.Button("Refresh")
        outputs = [chat, progress, coach_box, report, topics, files, answer, status, sid]

        def remember(s):
            return s

        def identify(token):  # this browser's secret: created once, kept in its local storage
            return token if owner_of(token, None) else new_browser_token()

        def start_fn(token, lang_, track_, n_, level_, coach_, file_, text_, request: gr.Request):
            return web.start(web.owner(token, request), lang_, track_, n_, level_, coach_, file_, text_)

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

        def history_fn(token, request: gr.Request):
            return web.history(web.owner(token, request))

        def trend_fn(token, request: gr.Request):
            return web.trend_text(web.owner(token, request))

        def resume_fn(token, s, request: gr.Request):
            return web.resume(web.owner(token, request), s)

        start.click(start_fn, [me, lang, track, n, level, coach, resume_file, resume_text], outputs,
                    api_name="start").then(remember, sid, saved).then(lambda: gr.Accordion(open=False), None, setup)
        practise.click(practise_fn, [me, lang, coach], outputs, api_name="practise").then(remember, sid, saved).then(
            lambda: gr.Accordion(open=False), None, setup)
        coach.change(lambda c: gr.Button(visible=bool(c)), coach, hint)
        steps = [send.click(send_answer, [me, sid, answer], outputs, api_name="answer"),
                 answer.submit(send_answer, [me, sid, answer], outputs),
                 skip.click(skip_question, [me, sid], outputs, api_name="skip"),
                 end.click(end_interview, [me, sid], outputs, api_name="end")]
        # the page stops waiting; the step itself ends by the model timeout, and the answer stays saved
        cancel.click(lambda: "ℹ️ Stopped waiting. Your answer is saved: press Send to grade it again.", None, status,
                     cancels=steps)
        hint.click(hint_fn, [me, sid], hint_box, api_name="hint")
        refresh.click(history_fn, me, past, api_name="history").then(trend_fn, me, trend)
        demo.load(identify, me, me, api_name="identify").then(resume_fn, [me, saved], outputs, api_name="resume").then(
            history_fn, me, past).then(trend_fn, me, trend)
    demo.web = web  # the app closes it (its download copies) on exit
    return demo
