"""Terminal mode, driven with scripted input.

    python -m pytest tests/test_cli.py
"""

import io

from interviewer.cli import run
from interviewer.session import Interviewer


def scripted(lines):
    it = iter(lines)

    def read(prompt):
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return read


def test_commands_bad_input_and_the_report(settings, store, scripted_model, scripted_grader):
    app = Interviewer.open(settings.with_(show_scores=True), model=scripted_model, store=store, grader=scripted_grader)
    session = app.new_session(questions=3, followups=1)
    scripted_grader.enqueue("strong", "strong")
    out = io.StringIO()
    code = run(session, app.settings, out, scripted(["", "第一题的回答", "追问的回答", "/skip", "/end"]))
    text = out.getvalue()
    assert code == 0 and session.finished
    assert "The answer is empty" in text  # refused with a message, then the interview went on
    assert "(score 10.0/10" in text
    results = session.state["results"]
    assert [r["skipped"] for r in results] == [False, True, True] and len(session.state["plan"]) == 3
    assert "Report saved" in text and session.report_paths()[0].exists()
    app.close()


def test_quit_saves_and_says_how_to_resume(settings, store, scripted_model, scripted_grader):
    app = Interviewer.open(settings, model=scripted_model, store=store, grader=scripted_grader)
    session = app.new_session(questions=2)
    out = io.StringIO()
    assert run(session, app.settings, out, scripted(["/quit"])) == 0
    assert f"--resume {session.id}" in out.getvalue() and session.pending is not None
    app.close()
