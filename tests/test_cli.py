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


def test_a_retry_says_what_happens_to_text_typed_since(settings, store, scripted_grader):
    from interviewer.errors import EndpointError

    class Flaky:
        name = "flaky"
        up = True

        def structured(self, messages, schema, **kw):
            if not self.up:
                self.up = True  # down once
                raise EndpointError("Cannot reach the model endpoint http://127.0.0.1:9/v1.")
            return schema.model_validate({"utterance": messages[-1]["content"].split("say: ")[1].split("\n")[0]})

    model = Flaky()
    app = Interviewer.open(settings, model=model, store=store, grader=scripted_grader)
    session = app.new_session(questions=2, followups=1)
    model.up = False
    scripted_grader.enqueue("partial", "partial")
    out = io.StringIO()
    run(session, app.settings, out, scripted(["saved answer", "an edited answer", "/quit"]))
    text = out.getvalue()
    answers = [e["text"] for e in session.state["transcript"] if e["role"] == "candidate"]
    assert "Your answer is saved" in text and answers == ["saved answer"]
    assert "was not sent" in text and "an edited answer" in text.split("was not sent")[1]
    app.close()
