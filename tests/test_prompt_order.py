"""Judge prompts put the candidate's answer last, so a server's prefix cache serves everything before it.

    python -m pytest tests/test_prompt_order.py
"""

import pytest

from evals.runner import NoRubricBaseline
from interviewer.errors import ModelOutputError
from interviewer.grading import make_grader
from interviewer.prompts import wrap_data


def _prompts(grader, question, answer, model):
    model.calls.clear()
    try:
        grader(question, answer)
    except ModelOutputError:
        pass  # the scripted model has nothing queued: only the prompts matter here
    return [m[-1]["content"] for m in model.calls]


@pytest.mark.parametrize("name", ["llm", "llm-per-point", "no-rubric"])
def test_the_answer_is_the_tail_and_everything_before_it_is_shared(name, store, scripted_model):
    q = store.question("ppo-clip-min")
    if name == "no-rubric":
        grade = lambda qq, a: NoRubricBaseline(scripted_model).score(qq, a, "zh")  # noqa: E731
    else:
        g = make_grader(name, store, scripted_model)
        grade = lambda qq, a: g.grade(qq, a, "zh")  # noqa: E731
    first = _prompts(grade, q, "取 min 是为了悲观估计。", scripted_model)
    second = _prompts(grade, q, "因为 ratio 会爆炸，所以要裁剪，这是另一段完全不同的回答。", scripted_model)
    assert first and len(first) == len(second)
    for a, b in zip(sorted(first), sorted(second)):
        assert a.endswith(wrap_data("取 min 是为了悲观估计。")) and b.endswith(wrap_data("因为 ratio 会爆炸，所以要裁剪，这是另一段完全不同的回答。"))
        assert a[: a.rindex("<candidate_data>")] == b[: b.rindex("<candidate_data>")]  # a shared prefix
