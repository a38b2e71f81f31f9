"""The opening: self-introduction, then a drill ladder on 1-2 resume projects, graded on structure.

    python -m pytest tests/test_opening.py
"""

from pathlib import Path

import pytest

from interviewer.cli import parse_args
from interviewer.opening import grade, projects, steps
from interviewer.session import Interviewer

RESUME = (Path(__file__).parent / "data" / "resume.md").read_text(encoding="utf-8")
LADDER = ["contribution", "constraint", "alternative", "validation", "failure"]


def test_projects_come_from_the_resume_with_their_own_terms():
    found = projects(RESUME)
    assert [p.name for p in found] == ["数学推理模型的 GRPO 训练", "长上下文 RL 训练的异步 rollout 框架"]
    assert "DAPO" in found[0].terms and "vLLM" in found[1].terms
    assert not set(found[0].terms) & {"Python", "PyTorch"}  # the skills section is not a project


def test_the_ladder_is_filled_with_the_projects_names_and_terms():
    s = steps(RESUME, "zh")
    assert [x["step"] for x in s] == ["intro"] + LADDER * 2
    for x in s[1:6]:
        assert "数学推理模型的 GRPO 训练" in x["text"]
    assert any("DAPO" in x["text"] for x in s[1:6])
    assert steps("我是一名算法工程师，熟悉 PPO。", "zh") == []  # no project: no opening


def test_the_structure_rubric_credits_what_the_answer_shows():
    crit, score = grade(["我负责 reward 设计，在 64 张卡上训练，AIME24 提升了 13.5%。"])
    met = {c.key: c.met for c in crit}
    assert met == {"contribution": True, "numbers": True, "tradeoff": False, "validation": False}
    _, full = grade(["我负责 reward 设计，AIME24 提升 13.5%。", "我们放弃了 PPO 而不是用 critic，因为显存不够。",
                     "用消融实验和 baseline 对照验证了效果。"])
    assert full == 10.0 and score < full
    assert grade(["做得挺好的，效果不错。"])[1] == 0.0


@pytest.fixture()
def app(settings, store, scripted_grader):
    app = Interviewer.open(settings.with_(phrasing="verbatim"), store=store, grader=scripted_grader)
    yield app
    app.close()


def test_a_resume_opens_with_the_introduction_then_the_ladder(app):
    session = app.new_session(resume=RESUME, questions=2)
    assert session.pending["step"] == "intro"
    session.answer("我叫张三，做了三年大模型后训练。")
    asked = []
    for answer in ["我负责 reward 设计和 DAPO 的实现，在 64 张卡上训练，AIME24 提升了 13 个点。", "显存不够。",
                   "我们放弃了 PPO，因为 critic 太占显存。", "看训练曲线。", "一开始 reward hacking 了。"]:
        asked.append(session.pending["step"])
        session.answer(answer)
    assert asked == LADDER  # one project in a short session, asked in order
    assert session.pending["kind"] == "question"  # then the bank questions
    session.end()
    section = session.report["opening"]
    assert section["introduction"].startswith("我叫张三")
    (project,) = section["projects"]
    met = {c["key"]: c["met"] for c in project["criteria"]}
    assert met == {"contribution": True, "numbers": True, "tradeoff": True, "validation": False}
    md = session.report_paths()[0].read_text(encoding="utf-8")
    assert "数学推理模型的 GRPO 训练" in md


def test_skip_leaves_the_rest_of_a_project(app):
    session = app.new_session(resume=RESUME, questions=4)
    session.answer("自我介绍")
    session.skip()  # the first project's ladder
    assert session.pending["step"] == "contribution" and session.pending["project"] == 1


@pytest.mark.parametrize("resume, opening", [("", True), (RESUME, False)])
def test_no_resume_or_no_opening_starts_with_the_bank(app, resume, opening):
    session = app.new_session(resume=resume, opening=opening)
    assert session.pending["kind"] == "question"


def test_the_terminal_flag_turns_the_opening_off():
    assert parse_args(["--no-opening"]).opening is False and parse_args([]).opening is None
