"""Progress across sessions: the per-topic trend and spaced repetition of missed key points.

    python -m pytest tests/test_practice.py
"""

import pytest

from interviewer import practice
from interviewer.errors import SessionError
from interviewer.session import Interviewer


def finish(session, grader, level):
    while session.pending is not None:
        grader.enqueue(level)
        session.answer("回答")


def test_missed_points_come_back_and_covered_ones_move_up(settings, store, scripted_model, scripted_grader):
    app = Interviewer.open(settings.with_(followups=0), model=scripted_model, store=store, grader=scripted_grader)
    with pytest.raises(SessionError, match="Nothing is due"):
        app.practice_session()
    first = app.new_session(questions=2, followups=0)
    finish(first, scripted_grader, "partial")
    due = practice.due(app.conn)
    missed = {q["qid"]: {m["key"] for m in q["missed"]} for q in first.report["questions"]}
    assert due and all(set(kps) <= missed[qid] for qid, kps in due.items())
    drill = app.practice_session()
    assert set(drill.state["plan"]) == set(due)  # exactly the questions with due points
    assert drill.state["config"]["focus_points"] == due
    finish(drill, scripted_grader, "strong")  # now everything is covered
    assert practice.due(app.conn) == {}  # moved up a box: not due until later
    boxes = app.conn.execute("SELECT min(box) FROM practice").fetchone()[0]
    assert boxes >= 1
    assert practice.due(app.conn, now=__import__("time").time() + 2 * practice.DAY)  # ... and back after a day
    trend = app.trend()
    assert all(len(points) >= 1 for points in trend.values()) and any(len(p) == 2 for p in trend.values())
    app.close()


def test_a_practice_follow_up_goes_for_the_due_point_first(bank):
    from interviewer.policy import QuestionProgress, decide
    from interviewer.scoring import Grade, Verdict

    q = bank.get("ppo-clip-min")
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status="missed") for kp in q.rubric.key_points]
    g = Grade(grader="t", qid=q.id, score=1.0, verdicts=verdicts)
    targeted = {kp for p in q.rubric.probes for kp in p.targets if p.pattern != "hint"}
    least = [kp.id for kp in reversed(q.rubric.key_points) if kp.id in targeted and kp.weight != "optional"][0]
    d = decide(q, verdicts, g.model_copy(update={"score": 4.0}), QuestionProgress(), priority={least})
    assert d.action == "gap" and d.target == least
