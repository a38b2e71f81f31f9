"""Terminal mode: `python -m interviewer`."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import threading
import time
from pathlib import Path

from interviewer.errors import AnswerRejected, EndpointError, InterviewerError, ModelOutputError
from interviewer.resume import read_resume
from interviewer.scoring import IGNORED, IGNORED_NOTE, feedback
from interviewer.session import Backend, Interviewer, Session
from interviewer.settings import add_model_flags, count, non_empty, positive_int, settings_from_args, share
from knowledge.bank import BankError

HELP = {
    "zh": "命令：/skip 跳过本题，/end 结束面试并出报告，/quit 保存并退出（之后用 --resume 继续），/help 帮助。"
          '多行回答以 """ 开始、以单独一行 . 结束。',
    "en": "Commands: /skip skips the question, /end ends the interview with a report, /quit saves and leaves "
          "(continue later with --resume), /help. Start a multi-line answer with \"\"\", end it with a line '.'.",
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m interviewer", description="A mock interviewer for LLM RL jobs.",
                                epilog="python -m interviewer review FILE: review a real interview you had (see review --help). "
                                       "python -m interviewer serve --model NAME: just the vLLM server (see serve --help).")
    p.add_argument("--lang", choices=["zh", "en"], help="interview language (default zh)")
    p.add_argument("-n", "--questions", type=positive_int, help="number of seed questions (default 4)")
    p.add_argument("--track", choices=["algorithm", "infra", "mixed"], help="your track; the other side is asked too")
    p.add_argument("--infra-share", type=share, help="share of questions from the other side (default 0.35)")
    p.add_argument("--followups", type=count, help="follow-up budget per question (default 3)")
    p.add_argument("--coach", action="store_true", default=None, help="show the rubric verdicts after every answer")
    p.add_argument("--show-scores", action="store_true", default=None, help="print each answer's score live")
    p.add_argument("--resume-file", type=Path, help="your resume (PDF, Markdown or text): questions follow it")
    p.add_argument("--no-opening", dest="opening", action="store_false", default=None,
                   help="skip the opening (self-introduction and a drill into your resume's projects)")
    p.add_argument("--seed", type=int, help="random seed for the question plan")
    p.add_argument("--resume", metavar="SESSION_ID", type=non_empty, help="continue a saved session")
    p.add_argument("--list", action="store_true", help="list saved sessions and the per-topic trend, then exit")
    p.add_argument("--practice", action="store_true", help="practise my weak points: missed key points that are due")
    add_model_flags(p)
    return p.parse_args(argv)


TTY_LINE_LIMIT = 4095  # a terminal in canonical mode cuts a line here; readline reads past it


def _line_editing() -> bool:
    """Use readline for a terminal: it reads raw keys, so a pasted line is not cut at 4095 bytes."""
    if not sys.stdin.isatty():
        return True
    try:
        import readline  # noqa: F401  (importing it switches input() to readline)
    except ImportError:
        return False
    return True


def _input(prompt: str) -> str:
    line = input(prompt)
    if len(line.encode("utf-8", "surrogateescape")) >= TTY_LINE_LIMIT and sys.stdin.isatty() and not _LINE_EDITING:
        print(f"! This line reached the terminal's limit of {TTY_LINE_LIMIT} bytes and may be cut: send long "
              'answers as several lines between """ and a line with a single ".".', file=sys.stderr)
    return line


_LINE_EDITING = True


def _read_answer(prompt: str) -> str:
    first = _input(prompt)
    if first.strip() != '"""' and not first.endswith("\\"):
        return first
    lines = [first.rstrip("\\")] if first.strip() != '"""' else []
    while True:
        line = _input("... ")
        if line.strip() in (".", '"""'):
            return "\n".join(lines)
        lines.append(line)


def _show(events: list[dict], session: Session, out) -> None:
    cfg = session.state.get("config", {})
    for e in events:
        if e["role"] != "interviewer":
            continue
        if e["kind"] == "question":
            print(f"\n[{e['index']}/{e['total']} · {e['section']}]", file=out)
        elif e["kind"] == "opening" and e.get("step") in ("intro", "contribution"):
            print(f"\n[{'开场' if cfg.get('lang') == 'zh' else 'opening'} · {e['tags'][0]}]", file=out)
        print(f"面试官> {e['text']}" if cfg.get("lang") == "zh" else f"Interviewer> {e['text']}", file=out)


def _show_grade(session: Session, settings, out) -> None:
    """The score and (coach mode) the verdicts on this question so far: every answer to it counts."""
    cfg = session.state.get("config", {})
    view = session.coach_view()
    if not view:
        return
    zh = cfg.get("lang", "zh") == "zh"
    if settings.show_scores or cfg.get("coach"):
        so_far = (f"，本题 {view['answers']} 次回答合计" if zh else f", this question over {view['answers']} answers") \
            if view["answers"] > 1 else ""
        print(f"  (score {view['score']}/10{so_far}, grader: {view['grader']})", file=out)
    if cfg.get("coach"):
        q = session.app.deps.bank.get(view["qid"])
        text = feedback(q, view["verdicts"], view["misconceptions"], cfg.get("lang", "zh"), view["settled"])
        if any(n.startswith(IGNORED_NOTE) for n in view["notes"]):
            text += "\n" + IGNORED["zh" if zh else "en"]
        if text:
            print("  " + text.replace("\n", "\n  "), file=out)


@contextlib.contextmanager
def _waiting(out, every: float = 10.0):
    """A progress line while a step waits for the model, so a slow or hanging endpoint is never silent."""
    done = threading.Event()
    started = time.monotonic()

    def tick():
        while not done.wait(every):
            print(f"  … waiting for the model ({time.monotonic() - started:.0f} s; Ctrl-C cancels, "
                  "your answer is saved)", file=out, flush=True)

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()


def _step(session: Session, cmd: str, text: str, out) -> list[dict]:
    """One command. After a failed step the saved answer is graded again; typed text is never dropped unsaid."""
    if session.stalled:  # the answer was saved before the failure: retry the step, not the answer
        saved = session.last_answer()
        events = session.recover()
        if text.strip() and not text.startswith("/") and text.strip() != saved.strip():
            print("! Your saved answer has now been graded; the text you just typed was not sent. Here it is, "
                  f"to send as your next answer if you want:\n{text}", file=out)
        return events
    events = {"/skip": session.skip, "/end": session.end}.get(cmd, lambda: session.answer(text))()
    if session.notice:
        print(f"! {session.notice}", file=out)
    return events


def run(session: Session, settings, out=sys.stdout, read=_read_answer) -> int:
    lang = session.state["config"].get("lang", "zh")
    print(HELP[lang], file=out)
    pending = session.pending
    if pending:
        _show([{"role": "interviewer", **pending}], session, out)
    while session.pending is not None or session.stalled:
        try:
            text = read("你> " if lang == "zh" else "You> ")
        except EOFError:
            text = "/quit"
        cmd = text.strip().lower()
        if cmd in ("/quit", "/exit", "/q"):
            print(f"Saved. Continue with: python -m interviewer --resume {session.id}", file=out)
            return 0
        if cmd == "/help":
            print(HELP[lang], file=out)
            continue
        try:
            with _waiting(out):
                events = _step(session, cmd, text, out)
        except AnswerRejected as exc:
            print(f"! {exc}", file=out)
            continue
        except (EndpointError, ModelOutputError) as exc:
            print(f"! {exc}\n  Your answer is saved. Press Enter to retry, or /quit and --resume later.", file=out)
            continue
        except KeyboardInterrupt:
            print("\n! Cancelled. Your answer is saved: press Enter to grade it again, or /quit and --resume later.",
                  file=out)
            continue
        if cmd not in ("/skip", "/end"):
            _show_grade(session, settings, out)
        _show(events, session, out)
    md, js = session.report_paths()
    from interviewer.report import to_markdown

    print("\n" + to_markdown(session.report), file=out)
    print(f"Report saved: {md} and {js}", file=out)
    return 0


def review_main(argv: list[str]) -> int:
    """`python -m interviewer review FILE`: grade a real interview's answers against the bank."""
    from interviewer.report import paths, to_markdown
    from interviewer.review import review

    p = argparse.ArgumentParser(prog="python -m interviewer review", description=review_main.__doc__)
    p.add_argument("file", type=Path, help="the transcript: Markdown or text (Q:/A:, 问：/答：) or JSON pairs")
    p.add_argument("--lang", choices=["zh", "en"], help="report language (default: the transcript's)")
    add_model_flags(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    backend = None
    try:
        settings = settings_from_args(args)
        text = args.file.read_text(encoding="utf-8")
        if settings.resolved_grader() != "embedding":  # an LLM judge needs the model
            backend = Backend.open(settings)
        app = Interviewer.open(settings, backend)
        report = review(app, text, args.lang)
        print(to_markdown(report))
        md, js = paths(settings.reports_dir, report["session_id"])
        print(f"Report saved: {md} and {js}; missed key points are due in `python -m interviewer --practice`.")
        return 0
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    except (InterviewerError, BankError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if backend:
            backend.close()


def main(argv: list[str] | None = None) -> int:
    global _LINE_EDITING
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        from interviewer.serve import main as serve

        return serve(argv[1:])
    if argv[:1] == ["review"]:
        return review_main(argv[1:])
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if hasattr(sys.stdin, "reconfigure"):  # undecodable bytes reach the answer check, which repairs them and says so
        sys.stdin.reconfigure(errors="surrogateescape")
    _LINE_EDITING = _line_editing()
    backend = None
    try:
        settings = settings_from_args(args)
        if args.list:
            app = Interviewer.open(settings)
            for s in app.list_sessions():
                print(f"{s['id']}  {s['status']:9}  {s['lang']}  {s['questions']} questions  overall {s['overall']}")
            for topic, points in sorted(app.trend().items()):
                print(f"  {topic:24} " + " -> ".join(str(score) for _, score in points))
            return 0
        backend = Backend.open(settings)
        print(f"Using {backend.description}; grader: {settings.resolved_grader()}", flush=True)
        app = Interviewer.open(settings, backend)
        if args.resume:
            session = app.session(args.resume)
        elif args.practice:
            session = app.practice_session()
            print(f"Practice session {session.id}: {', '.join(session.state['plan'])}", flush=True)
        else:
            resume = read_resume(args.resume_file) if args.resume_file else ""
            session = app.new_session(resume=resume)
            print(f"Session {session.id}", flush=True)
        return run(session, settings)
    except (InterviewerError, BankError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted; your answers so far are saved.", file=sys.stderr)
        return 130
    finally:
        if backend:
            backend.close()
