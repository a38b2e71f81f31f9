"""Every branch of the follow-up policy, on a real rubric.

    python -m pytest tests/test_policy.py
"""

import pytest

from interviewer.policy import QuestionProgress, decide, merge_verdicts
from interviewer.scoring import Grade, Misconception, Verdict, compute_score


@pytest.fixture()
def question(bank):
    return bank.get("ppo-clip-min")


def grade_for(question, statuses, misconceptions=(), dont_know=False, confirmed=True):
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status=s, evidence="" if s == "missed" else f"我说的{kp.id}")
                for kp, s in zip(question.rubric.key_points, statuses)]
    return Grade(grader="test", qid=question.id, score=compute_score(verdicts, len(misconceptions)), verdicts=verdicts,
                 misconceptions=[Misconception(pitfall=i, evidence="我说的", confirmed=confirmed) for i in misconceptions],
                 dont_know=dont_know)


def all_(question, status):
    return [status] * len(question.rubric.key_points)


def test_strong_answer_goes_deeper(question):
    g = grade_for(question, all_(question, "covered"))
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert d.action == "deepen"
    assert d.pattern in ("why", "counterfactual", "successor", "failure_mitigation", "quantitative", "formula",
                         "implementation", "jump_infra", "jump_algorithm", "agentic", "scenario")


def test_partial_answer_asks_about_the_most_important_missed_point(question):
    statuses = ["covered" if kp.weight != "essential" else "missed" for kp in question.rubric.key_points]
    statuses[0] = "covered"  # keep the first point covered so the target is another essential one, if any
    g = grade_for(question, statuses)
    d = decide(question, g.verdicts, g, QuestionProgress())
    missed_essentials = [kp.id for kp, s in zip(question.rubric.key_points, statuses) if s == "missed" and kp.weight == "essential"]
    assert d.action == "gap"
    assert d.target in missed_essentials
    assert d.target in question.rubric.probes[d.probe].targets
    assert question.rubric.probes[d.probe].pattern != "hint"


def test_a_stated_misconception_is_challenged_once(question):
    g = grade_for(question, all_(question, "partial"), misconceptions=[0])
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert d.action == "challenge" and d.target == "pitfall:0" and d.evidence == "我说的"
    again = decide(question, g.verdicts, g, QuestionProgress(depth=1, challenged=[0]))
    assert again.action != "challenge"


def test_dont_know_gets_one_hint_then_moves_on(question):
    g = grade_for(question, all_(question, "missed"), dont_know=True)
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert d.action == "hint" and question.rubric.probes[d.probe].pattern == "hint"
    after = decide(question, g.verdicts, g, QuestionProgress(depth=1, hinted=True, asked_probes=[d.probe]))
    assert after.action == "next"


def test_budget_ends_the_question(question):
    g = grade_for(question, all_(question, "covered"))
    assert decide(question, g.verdicts, g, QuestionProgress(depth=3), budget=3).action == "next"


def test_no_probe_is_asked_twice(question):
    g = grade_for(question, all_(question, "covered"))
    progress = QuestionProgress()
    asked = []
    for _ in range(len(question.rubric.probes) + 1):
        d = decide(question, g.verdicts, g, progress, budget=99)
        if d.action == "next":
            break
        assert d.probe not in asked
        asked.append(d.probe)
        progress.asked_probes.append(d.probe)
        progress.depth += 1
    assert d.action == "next"


def test_probes_naming_methods_off_the_resume_come_last(bank):
    q = bank.get("grpo-kl-why")
    g = grade_for(q, all_(q, "covered"))
    names = lambda i: any(t in (q.rubric.probes[i].zh + q.rubric.probes[i].en).lower() for t in ("dapo", "gspo"))  # noqa: E731
    assert any(names(i) for i in range(len(q.rubric.probes))), "precondition: a probe names DAPO or GSPO"
    progress, seen = QuestionProgress(), []
    while (d := decide(q, g.verdicts, g, progress, budget=99, avoid_terms={"dapo", "gspo"})).action != "next":
        seen.append(names(d.probe))
        progress.asked_probes.append(d.probe)
        progress.depth += 1
    assert True in seen and seen == sorted(seen)  # every probe naming them comes after all the others


def test_merge_keeps_the_best_status_per_point():
    a = [Verdict(key="kp1", weight="essential", status="covered"), Verdict(key="kp2", weight="important", status="missed")]
    b = [Verdict(key="kp1", weight="essential", status="missed"), Verdict(key="kp2", weight="important", status="partial")]
    merged = merge_verdicts(a, b)
    assert [v.status for v in merged] == ["covered", "partial"]


def test_an_unconfirmed_misconception_is_asked_about_not_challenged(question):
    g = grade_for(question, all_(question, "covered"), misconceptions=[0], confirmed=False)
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert d.action == "clarify" and d.target == "pitfall:0" and d.evidence == "我说的"


def test_an_unclear_point_is_clarified_before_a_missed_one_is_asked_for(question):
    kps = question.rubric.key_points
    statuses = ["covered"] * len(kps)
    essentials = [i for i, kp in enumerate(kps) if kp.weight == "essential"]
    statuses[essentials[0]] = "missed"
    statuses[-1 if kps[-1].weight != "optional" else essentials[-1]] = "unclear"
    g = grade_for(question, statuses)
    d = decide(question, g.verdicts, g, QuestionProgress())
    unclear = next(kp.id for kp, s in zip(kps, statuses) if s == "unclear")
    assert d.action == "clarify" and d.target == unclear and d.evidence == f"我说的{unclear}"
    after = decide(question, g.verdicts, g, QuestionProgress(depth=1, clarified=[unclear]))
    assert after.action == "gap" and after.target == kps[essentials[0]].id


def test_of_several_unclear_points_the_least_likely_stated_is_clarified_first(question):
    """Lowest P(stated) first, an essential point counted ESSENTIAL_EDGE lower; without P, essentials first."""
    from interviewer.policy import ESSENTIAL_EDGE

    kps = question.rubric.key_points
    essential = next(i for i, kp in enumerate(kps) if kp.weight == "essential")
    important = next(i for i, kp in enumerate(kps) if kp.weight == "important")

    def first(p_essential, p_important):
        g = grade_for(question, ["missed"] * len(kps))
        for i, p in ((essential, p_essential), (important, p_important)):
            g.verdicts[i] = g.verdicts[i].model_copy(update={"status": "unclear", "evidence": f"我说的{kps[i].id}",
                                                              "confidence": p})
        d = decide(question, g.verdicts, g, QuestionProgress())
        assert d.action == "clarify"
        return d.target

    assert first(0.7, 0.2) == kps[important].id  # the essential point was very likely said
    assert first(0.3, 0.2) == kps[essential].id  # within the edge the essential point comes first
    assert first(0.2 + ESSENTIAL_EDGE + 0.05, 0.2) == kps[important].id
    assert first(None, None) == kps[essential].id


def test_after_a_strong_answer_only_an_unclear_essential_point_is_clarified(question):
    kps = question.rubric.key_points
    important = next(i for i, kp in enumerate(kps) if kp.weight == "important")
    statuses = ["covered"] * len(kps)
    statuses[important] = "unclear"
    g = grade_for(question, statuses)
    assert g.score >= 7.5
    assert decide(question, g.verdicts, g, QuestionProgress()).action == "deepen"  # not "say that again, precisely"
    essential = next(i for i, kp in enumerate(kps) if kp.weight == "essential")
    statuses[essential] = "unclear"
    g = grade_for(question, statuses)
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert g.score >= 7.5 and d.action == "clarify" and d.target == kps[essential].id


def test_a_gap_question_never_targets_an_unclear_point(question):
    g = grade_for(question, all_(question, "unclear"))
    progress = QuestionProgress(clarified=[kp.id for kp in question.rubric.key_points])
    d = decide(question, g.verdicts, g, progress)
    assert d.action != "gap"


def test_the_answer_to_a_clarification_settles_the_point():
    before = [Verdict(key="kp1", weight="essential", status="unclear", evidence="x"),
              Verdict(key="kp2", weight="important", status="unclear", evidence="y")]
    still = [Verdict(key="kp1", weight="essential", status="unclear", evidence="x2"),
             Verdict(key="kp2", weight="important", status="missed")]
    merged = merge_verdicts(before, still, settled="kp1")
    assert [v.status for v in merged] == ["missed", "unclear"]  # asked and still vague: missed; the other stays unclear
    said = [Verdict(key="kp1", weight="essential", status="covered", evidence="z")]
    assert merge_verdicts(before, said, settled="kp1")[0].status == "covered"


def test_a_sentence_already_quoted_back_is_not_quoted_again(question):
    """Two unclear points found in one long sentence would otherwise give the same clarification twice."""
    kps = question.rubric.key_points
    essentials = [kp for kp in kps if kp.weight == "essential"]
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status="unclear", evidence="同一句很长的话") if kp in essentials[:2]
                else Verdict(key=kp.id, weight=kp.weight, status="covered", evidence=f"我说的{kp.id}") for kp in kps]
    g = Grade(grader="test", qid=question.id, score=compute_score(verdicts), verdicts=verdicts)
    first = decide(question, g.verdicts, g, QuestionProgress())
    assert first.action == "clarify" and first.evidence == "同一句很长的话"
    progress = QuestionProgress()
    progress.record(first)
    second = decide(question, g.verdicts, g, progress)
    assert not (second.action == "clarify" and second.evidence == first.evidence)
    # nor a clause of it, found in an earlier answer after the candidate has explained the whole sentence
    part = [v.model_copy(update={"evidence": "同一句"}) if v.status == "unclear" else v for v in verdicts]
    again = decide(question, part, g, progress)
    assert not (again.action == "clarify" and again.evidence == "同一句")


def test_a_sentence_credited_to_another_point_is_not_quoted_to_clarify_this_one(question):
    """"你提到「被 clip 的 token 没有梯度」，能具体说说吗？" asked for kp2 would get more about kp1, and the answer
    would then settle kp2 on a question never put."""
    kps = question.rubric.key_points
    essential = next(kp for kp in kps if kp.weight == "essential")
    other = next(kp for kp in kps if kp is not essential)
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status="unclear" if kp is essential else "covered",
                        evidence="被 clip 的 token 没有梯度" if kp in (essential, other) else f"我说的{kp.id}") for kp in kps]
    g = Grade(grader="test", qid=question.id, score=compute_score(verdicts), verdicts=verdicts)
    d = decide(question, g.verdicts, g, QuestionProgress())
    assert not (d.action == "clarify" and d.target == essential.id) and d.action != "gap"
    longer = verdicts[kps.index(essential)].model_copy(update={"evidence": "我先说：被 clip 的 token 没有梯度，所以没关系。"})
    verdicts[kps.index(essential)] = longer  # a sentence holding the other point's evidence is the same question
    d = decide(question, verdicts, g, QuestionProgress())
    assert not (d.action == "clarify" and d.target == essential.id)
    verdicts[kps.index(essential)] = longer.model_copy(update={"evidence": "它自己的一句"})
    d = decide(question, verdicts, g, QuestionProgress())
    assert d.action == "clarify" and d.target == essential.id and d.evidence == "它自己的一句"


def test_a_sentence_that_fits_another_point_best_is_not_quoted_to_clarify_this_one(question):
    """The grader names the point a borderline point's sentence fits best (`about`): asked to say more about it, the
    candidate explains that other point, and the answer would settle this one on a question never put."""
    kps = question.rubric.key_points
    essential = next(kp for kp in kps if kp.weight == "essential")
    other = next(kp for kp in kps if kp is not essential)
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status="unclear" if kp is essential else "covered",
                        evidence="一句别的要点的话" if kp is essential else f"我说的{kp.id}",
                        about=other.id if kp is essential else None) for kp in kps]
    g = Grade(grader="test", qid=question.id, score=compute_score(verdicts), verdicts=verdicts)
    d = decide(question, verdicts, g, QuestionProgress())
    assert not (d.action == "clarify" and d.target == essential.id) and d.action != "gap"
    # nor while that other point is itself unsettled; the point's own sentence is asked about
    verdicts[kps.index(other)] = verdicts[kps.index(other)].model_copy(update={"status": "missed", "evidence": ""})
    d = decide(question, verdicts, g, QuestionProgress())
    assert not (d.action == "clarify" and d.target == essential.id)
    verdicts[kps.index(essential)] = verdicts[kps.index(essential)].model_copy(update={"about": None})
    d = decide(question, verdicts, g, QuestionProgress())
    assert d.action == "clarify" and d.target == essential.id


def test_the_answer_to_a_clarification_is_not_itself_quoted_back_to_be_made_precise(question):
    """Asked "你提到「…」，能具体说说吗？", the candidate gave their precise version; quoting a sentence of it back
    (for another borderline point, or because it resembles a pitfall the check did not confirm) asks again."""
    kps = question.rubric.key_points
    essentials = [kp for kp in kps if kp.weight == "essential"]
    first, second = essentials[0], kps[-1] if kps[-1].weight != "optional" else kps[1]
    before = [Verdict(key=kp.id, weight=kp.weight, status="unclear" if kp is first else "covered", evidence=f"我说的{kp.id}")
              if kp is not second else Verdict(key=kp.id, weight=kp.weight, status="missed") for kp in kps]
    g = Grade(grader="test", qid=question.id, score=compute_score(before), verdicts=before)
    progress = QuestionProgress()
    asked = decide(question, before, g, progress)
    assert asked.action == "clarify" and asked.target == first.id
    progress.record(asked)
    reply = [Verdict(key=kp.id, weight=kp.weight, status="covered" if kp is first else "unclear" if kp is second
                     else "missed", evidence="" if kp not in (first, second) else "我的意思是这一整句")
             for kp in kps]
    answer = Grade(grader="test", qid=question.id, score=compute_score(reply), verdicts=reply,
                   misconceptions=[Misconception(pitfall=0, evidence="我的意思是另一句", confirmed=False)])
    merged = merge_verdicts(before, reply, settled=first.id)
    d = decide(question, merged, answer, progress)
    assert d.action != "clarify", d
    # a sentence of it that asserts a misconception is still challenged
    wrong = answer.model_copy(update={"misconceptions": [Misconception(pitfall=0, evidence="我的意思是另一句")]})
    assert decide(question, merged, wrong, progress).action == "challenge"


def test_going_deeper_asks_about_new_ground_not_what_was_just_said(question):
    """A probe's expected answer is the point it targets: after a strong answer, a probe on a point not said comes
    before one on a borderline point, and that before one on points already covered."""
    kps = question.rubric.key_points
    probes = question.rubric.probes
    deep = [i for i, p in enumerate(probes) if p.pattern != "hint"]
    target = next(i for i in deep if all(next(k for k in kps if k.id == t).weight == "optional" for t in probes[i].targets))
    statuses = {kp.id: "missed" if kp.id in probes[target].targets else "covered" for kp in kps}
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status=statuses[kp.id], evidence=f"我说的{kp.id}") for kp in kps]
    g = Grade(grader="test", qid=question.id, score=compute_score(verdicts), verdicts=verdicts)
    d = decide(question, verdicts, g, QuestionProgress())
    assert d.action == "deepen" and d.probe == target
    # a borderline important point (not clarified after a strong answer) comes before points already covered
    borderline = next(i for i in deep if i != target and len(probes[i].targets) == 1
                      and next(k for k in kps if k.id == probes[i].targets[0]).weight == "important")
    verdicts = [v.model_copy(update={"status": "unclear" if v.key in probes[borderline].targets else "covered"})
                for v in verdicts]
    g = Grade(grader="test", qid=question.id, score=9.0, verdicts=verdicts)
    d = decide(question, verdicts, g, QuestionProgress())
    assert d.action == "deepen" and d.probe == borderline


def test_a_probe_whose_main_point_was_just_made_is_not_new_ground(bank):
    """int8-vs-fp8, after a strong answer that covered the quantised-rollout point (kp6) but not the optional kp7/kp8:
    "How does a quantised rollout affect the policy gradient…" (kp6, kp8) asks mostly what was said; a probe on the
    borderline hardware point (kp4) comes first."""
    q = bank.get("int8-vs-fp8")
    status = {"kp4": "unclear", "kp7": "missed", "kp8": "missed"}
    verdicts = [Verdict(key=kp.id, weight=kp.weight, status=status.get(kp.id, "covered"), evidence=f"我说的{kp.id}")
                for kp in q.rubric.key_points]
    g = Grade(grader="test", qid=q.id, score=9.0, verdicts=verdicts)
    d = decide(q, verdicts, g, QuestionProgress())
    assert d.action == "deepen" and q.rubric.probes[d.probe].targets[0] == "kp4", d


def test_after_follow_ups_the_whole_question_decides_whether_the_answer_was_strong(question):
    """An answer to a follow-up is about one point and scores low on its own; once everything said on the question
    is strong, a borderline important point is not clarified any more: the interviewer goes deeper."""
    kps = question.rubric.key_points
    important = next(kp for kp in kps if kp.weight == "important")
    cumulative = [Verdict(key=kp.id, weight=kp.weight, status="unclear" if kp is important else "covered",
                          evidence=f"我说的{kp.id}") for kp in kps]
    reply = [v.model_copy(update={"status": "missed", "evidence": ""}) if v.key != kps[0].id else v for v in cumulative]
    short = Grade(grader="test", qid=question.id, score=compute_score(reply), verdicts=reply)
    assert short.score < 7.5 <= compute_score(cumulative)
    first = decide(question, cumulative, short, QuestionProgress())  # a first answer is judged on its own
    assert first.action == "clarify" and first.target == important.id
    progress = QuestionProgress(depth=1, last_action="deepen")
    later = decide(question, cumulative, short, progress)
    assert not (later.action == "clarify" and later.target == important.id)
