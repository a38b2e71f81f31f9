"""The session plan follows the documents: rising difficulty, both sides, scenario then experience.

    python -m pytest tests/test_planner.py
"""

import pytest

from interviewer.planner import make_plan


@pytest.mark.parametrize("seed", range(5))
def test_difficulty_rises_and_the_session_ends_with_scenario_then_experience(bank, seed):
    plan = make_plan(bank, 6, "algorithm", seed=seed)
    qs = [bank.get(q) for q in plan]
    core = [q for q in qs if q.section in ("algorithm", "infra")]
    assert [q.difficulty for q in core] == sorted(q.difficulty for q in core)
    assert qs[-1].section == "meta"
    assert qs[-2].section == "scenario"
    assert len(set(plan)) == len(plan)


@pytest.mark.parametrize("track,other", [("algorithm", "infra"), ("infra", "algorithm")])
def test_each_track_also_gets_the_other_side(bank, track, other):
    for seed in range(5):
        sections = [bank.get(q).section for q in make_plan(bank, 6, track, seed=seed)]
        assert other in sections
        assert sections.count(track) >= sections.count(other)


def test_only_questions_with_rubrics_are_planned(bank):
    plan = make_plan(bank, 8, "mixed", seed=1)
    assert all(bank.get(q).rubric is not None for q in plan)


def test_methods_not_on_the_resume_are_deprioritised(bank):
    niche = {"dapo", "gspo", "cispo", "gspo-geometric-mean", "reinforce-family"}
    without = [make_plan(bank, 6, "algorithm", seed=s, resume="项目：用 PPO 做 RLHF，训练奖励模型。") for s in range(8)]
    with_it = [make_plan(bank, 6, "algorithm", seed=s, resume="项目：复现 DAPO 和 GSPO，对比 GRPO。") for s in range(8)]
    count = lambda plans: sum(q in niche for p in plans for q in p)  # noqa: E731
    assert count(with_it) > count(without)
