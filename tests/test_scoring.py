"""The score is arithmetic on the verdicts, nothing else.

    python -m pytest tests/test_scoring.py
"""

from interviewer.scoring import (
    MAX_PENALTY,
    MISCONCEPTION_PENALTY,
    Verdict,
    compute_score,
    own_evidence,
    says_dont_know,
)


def v(weight, status):
    return Verdict(key="kp", weight=weight, status=status)


def test_all_core_points_covered_is_ten():
    assert compute_score([v("essential", "covered"), v("important", "covered")]) == 10.0


def test_weights_decide_the_score():
    # essential 3, important 2: covering only the essential point earns 3/5 of 10
    assert compute_score([v("essential", "covered"), v("important", "missed")]) == 6.0
    assert compute_score([v("essential", "missed"), v("important", "covered")]) == 4.0


def test_partial_is_half_credit():
    assert compute_score([v("essential", "partial"), v("important", "partial")]) == 5.0


def test_optional_points_are_a_bonus_not_a_requirement():
    base = [v("essential", "covered"), v("important", "missed")]
    assert compute_score(base + [v("optional", "missed")]) == 6.0
    assert compute_score(base + [v("optional", "covered")]) == 6.5


def test_misconceptions_cost_points_and_score_is_clamped():
    full = [v("essential", "covered"), v("important", "covered")]
    assert compute_score(full, misconceptions=1) == 10 - MISCONCEPTION_PENALTY
    assert compute_score(full, misconceptions=9) == 10 - MAX_PENALTY
    assert compute_score([v("essential", "missed")], misconceptions=3) == 0.0


def test_dont_know_detection():
    assert says_dont_know("不知道")
    assert says_dont_know("   ")
    assert says_dont_know("Sorry, I don't know this one.")
    assert not says_dont_know("我不太清楚细节，但 PPO 的 clip 是把比率限制在 1-ε 到 1+ε 之间，取 min 保证目标是悲观下界，这样策略不会一步走太远。")


def test_an_unclear_point_is_not_shown_with_a_sentence_that_belongs_to_a_covered_one():
    """The report said "你的说法接近" about the sampling-parameters point, quoting the candidate's kernel sentence."""
    kernel = "vLLM 和 FSDP 用的 kernel 不一样，浮点加法不满足结合律，bf16 下累加顺序一变结果就不同。"
    verdicts = [Verdict(key="kp2", weight="essential", status="covered", evidence="浮点加法不满足结合律，"),
                Verdict(key="kp7", weight="important", status="unclear", evidence=kernel),
                Verdict(key="kp3", weight="important", status="unclear", evidence="batch 大小影响数值。")]
    shown = {x.key: x.evidence for x in own_evidence(verdicts)}
    assert shown == {"kp2": "浮点加法不满足结合律，", "kp7": "", "kp3": "batch 大小影响数值。"}
    assert compute_score(own_evidence(verdicts)) == compute_score(verdicts)  # what is shown, not the grade


def test_an_unclear_point_is_not_shown_with_a_sentence_that_fits_another_one_best():
    verdicts = [Verdict(key="kp1", weight="essential", status="covered", evidence="第一句"),
                Verdict(key="kp2", weight="important", status="unclear", evidence="FP8 保留了指数位", about="kp1"),
                Verdict(key="kp3", weight="important", status="unclear", evidence="第四个要点的一句", about="kp4"),
                Verdict(key="kp4", weight="important", status="unclear", evidence="第四句")]
    shown = {v.key: v.evidence for v in own_evidence(verdicts)}
    assert shown == {"kp1": "第一句", "kp2": "", "kp3": "", "kp4": "第四句"}


def test_a_wrong_claim_is_shown_with_the_candidates_own_sentence(bank):
    """The feedback quotes what was read as the error, so a candidate can see when the grader misread them."""
    from interviewer.scoring import Misconception, feedback

    q = bank.get("ppo-clip-min")
    said = "取 min 就是为了让梯度更大"
    shown = feedback(q, [], [Misconception(pitfall=0, evidence=said)], "zh")
    assert said in shown and q.rubric.pitfalls[0].zh in shown
    assert said in feedback(q, [], [Misconception(pitfall=0, evidence=said)], "en")
    assert "有误" not in feedback(q, [], [Misconception(pitfall=0, evidence=said, confirmed=False)], "zh")


def _answer(miscs, prompt=None, evidence="FP8 的指数位让大值小值都能表示", dont_know=False):
    verdicts = [{"key": "kp1", "weight": "essential", "status": "covered" if evidence else "missed", "evidence": evidence}]
    return {"prompt": prompt or {"kind": "question"}, "grade": {
        "misconceptions": [{"pitfall": i, "evidence": "FP8 对 outlier 更友好"} for i in miscs],
        "verdicts": verdicts, "dont_know": dont_know}}


def test_a_challenge_answered_with_an_explanation_settles_the_misconception():
    from interviewer.scoring import standing_misconceptions

    challenge = {"kind": "followup", "action": "challenge", "target": "pitfall:4"}
    standing, settled = standing_misconceptions([_answer([4]), _answer([], challenge)])
    assert standing == {} and list(settled) == [4]
    # asserting it again, or answering with nothing (no point with evidence, or "I don't know"), settles nothing
    assert list(standing_misconceptions([_answer([4]), _answer([4], challenge)])[0]) == [4]
    assert list(standing_misconceptions([_answer([4]), _answer([], challenge, evidence="")])[0]) == [4]
    assert list(standing_misconceptions([_answer([4]), _answer([], challenge, dont_know=True)])[0]) == [4]
    # an answer to another follow-up settles nothing, and a pitfall said again after it was settled stands again
    other = {"kind": "followup", "action": "deepen", "target": "kp2"}
    assert list(standing_misconceptions([_answer([4]), _answer([], other)])[0]) == [4]
    standing, settled = standing_misconceptions([_answer([4]), _answer([], challenge), _answer([4], other)])
    assert list(standing) == [4] and settled == {}
