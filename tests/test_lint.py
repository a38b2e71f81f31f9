"""The rubric lint catches probes that give their key point away, not only ones that repeat it.

    python -m pytest tests/test_lint.py

The leaking probes are the ones the outside review (rubric review 1) found in the bank, with the key
point and interview question they were written for; the good probes are their replacements and
other probes that ask without asserting.
"""

import json
import shutil

import pytest

from knowledge.bank import DATA_DIR, load_bank
from knowledge.lint import lint
from knowledge.text import leaks, stated_claim

GRPO_KL_Q = "Why does GRPO add a KL term, and why did DAPO and GSPO remove it again?"
GRPO_KL_KP2 = ("GRPO adds the KL directly to the loss instead of subtracting it from the per-token reward as PPO-RLHF "
               "does, so it does not disturb the group-relative advantage.")
GRPO_KL_Q_ZH = "GRPO 为什么要加 KL 散度？为什么 DAPO、GSPO 又去掉了 KL 散度？"
GRPO_KL_KP2_ZH = "GRPO 把 KL 直接加在 loss 上，而不是像 PPO-RLHF 那样按 token 扣进 reward，这样不会干扰组内 advantage 的计算。"
CISPO_Q = "How does CISPO work?"
CISPO_KP1 = ("CISPO does not clip the token update; it clips the importance-sampling weight itself and stops the "
             "gradient through the clipped weight.")
DET_Q = ("How do you turn on deterministic mode? What is batch invariance and what breaks it? Are atomic adds "
         "involved, and would fixing them solve it?")
DET_KP4 = ("The ops to make batch invariant are the reductions in RMSNorm, matmul and attention; for example "
           "attention's split-KV should fix the size of each split rather than the number of splits.")
ENTROPY_Q = "How would you deal with entropy collapse during RL training?"
ENTROPY_KP3 = ("Clip-Higher makes the upper clip bound larger than the lower one, for example 0.2 below and 0.28 above, "
               "so low-probability tokens can grow more and entropy is preserved.")
ENTROPY_KP2 = ("Entropy falls because its change is driven by the covariance between a token's log-probability and "
               "its advantage: reinforcing tokens that are already likely and have positive advantage lowers entropy.")
DAPO_Q = "What does DAPO change relative to GRPO?"
DAPO_KP1 = ("Clip-Higher decouples the clip bounds, keeping ε_low at 0.2 and raising ε_high to 0.28, so "
            "low-probability exploration tokens can gain probability and entropy collapse is eased.")
MOE_Q = "Do you know routing replay for RL training of MoE models?"
MOE_KP5 = ("Only the choice of experts is replayed; the gate weights are still recomputed from the current router "
           "logits, so the router still receives gradients.")

# (probe, key point, interview question, does the probe target the point?)
REVIEW_LEAKS = {
    "grpo-kl-why: where the KL goes": (
        "Why does GRPO put the KL in the loss rather than in the reward? What would putting it in the reward affect?",
        GRPO_KL_KP2, GRPO_KL_Q, True),
    "grpo-kl-why, zh": ("GRPO 的 KL 为什么放在 loss 里而不是 reward 里？放进 reward 会影响什么？", GRPO_KL_KP2_ZH, GRPO_KL_Q_ZH, True),
    "cispo: the stop-gradient of kp1, asked by a probe for kp2": (
        "Why stop the gradient through the clipped weight? What if you did not?", CISPO_KP1, CISPO_Q, False),
    "deterministic: splits vs split size offered as options": (
        "For split-KV attention decoding, what is the difference between fixing the number of splits and fixing the "
        "split size? Which is batch invariant?", DET_KP4, DET_Q, True),
    "entropy-collapse: only one bound changes": (
        "In clip-higher, which of the two clip bounds is changed, and why not the other one?",
        ENTROPY_KP3, ENTROPY_Q, True),
    "entropy-collapse, zh": ("clip-higher 改的是 clip 的哪一个边界？为什么不动另一个？",
                             "Clip-Higher 把 clip 的上界调得比下界大，比如下界 0.2、上界 0.28，让低概率 token 的概率能涨得更多，从而保住熵。",
                             "强化学习训练时出现 entropy collapse，有什么解决思路？", True),
    "dapo: the upper clip restricts low-probability tokens": (
        "Why does the upper clip restrict low-probability tokens? Work it out for tokens with probability 0.01 and 0.9.",
        DAPO_KP1, DAPO_Q, True),
    "moe-routing-replay: a yes/no pair (mild)": (
        "During replay, are the gate weights taken from the record or recomputed? Does the router still get a "
        "gradient?", MOE_KP5, MOE_Q, True),
}

GOOD_PROBES = {
    "grpo-kl-why, fixed": ("Where does GRPO put the KL term, and why there?", GRPO_KL_KP2, GRPO_KL_Q, True),
    "grpo-kl-why, fixed, zh": ("GRPO 的 KL 项加在哪里？为什么放在那里？", GRPO_KL_KP2_ZH, GRPO_KL_Q_ZH, True),
    "cispo, fixed": ("Which quantities in CISPO's objective carry gradient? What would change if the weight term "
                     "carried gradient too?", CISPO_KP1, CISPO_Q, False),
    "deterministic, fixed": ("For split-KV attention decoding, how must the KV be split so that a request's result "
                             "does not depend on the batch?", DET_KP4, DET_Q, True),
    "entropy-collapse, fixed": ("If you simply widened PPO's clip range symmetrically, say to [0.72, 1.28], what would "
                                "happen to low-probability tokens and to entropy? How does that compare with "
                                "clip-higher?", ENTROPY_KP3, ENTROPY_Q, True),
    "dapo, fixed": ("With ε=0.2, how high can a token with probability 0.01 and one with probability 0.9 go in one "
                    "update? What does that mean for exploration?", DAPO_KP1, DAPO_Q, True),
    "moe-routing-replay, fixed": ("During replay, where do the gate weights come from, and what happens to the "
                                  "router's parameters in training?", MOE_KP5, MOE_Q, True),
    "a why-question about the phenomenon the question names": (
        "Why does entropy fall monotonically in RL training? Explain from the policy-gradient update.",
        ENTROPY_KP2, ENTROPY_Q, True),
    "a which-question without offered options": (
        "Which direction of KL does GRPO constrain, and over which distribution is the expectation taken?",
        "GRPO constrains the reverse KL, KL(π_θ‖π_ref), with the expectation taken over samples from the current "
        "policy itself.", "Is the KL divergence used in GRPO forward or reverse KL, and how exactly is it computed?",
        True),
    "a topic phrase the question then refers back to": (
        "带 KL 约束的奖励最大化问题，它的最优策略长什么样？",
        "推导起点是带 KL 约束的奖励最大化 max E[r] − β·KL(π‖π_ref)，它的最优策略有闭式解 π*(y|x) ∝ π_ref(y|x)·exp(r(x,y)/β)。",
        "你知道 DPO 的损失函数公式吗？它是基于什么模型推导出来的？", True),
    "a scenario that sets a condition": (
        "If you remove the clip and run 4 epochs on the same batch, what happens?",
        "Without clipping, several epochs or mini-batches on the same data let the ratio blow up, and the policy "
        "takes too large a step and collapses.",
        "How does PPO clip? What happens without clipping?", True),
}


@pytest.mark.parametrize("name", REVIEW_LEAKS)
def test_the_reviews_leaking_probes_are_caught(name):
    probe, key_point, question, targeted = REVIEW_LEAKS[name]
    claim = stated_claim(probe, key_point, question, targeted)
    assert claim is not None, name


@pytest.mark.parametrize("name", [n for n in REVIEW_LEAKS if "mild" not in n])
def test_clear_leaks_are_strong_enough_to_fail_the_lint(name):
    probe, key_point, question, targeted = REVIEW_LEAKS[name]
    assert stated_claim(probe, key_point, question, targeted).strong, name


@pytest.mark.parametrize("name", GOOD_PROBES)
def test_probes_that_ask_are_not_flagged(name):
    probe, key_point, question, targeted = GOOD_PROBES[name]
    assert stated_claim(probe, key_point, question, targeted) is None, name


def test_a_claim_says_what_kind_of_leak_it_is():
    kinds = {name: stated_claim(p, k, q, t).kind for name, (p, k, q, t) in REVIEW_LEAKS.items()}
    assert kinds["grpo-kl-why: where the KL goes"] == "why"
    assert kinds["deterministic: splits vs split size offered as options"] == "choice"
    assert kinds["entropy-collapse: only one bound changes"] == "other-option"


def test_leaks_keeps_catching_verbatim_repeats_and_now_presuppositions():
    assert leaks("先说 KL 直接加在 loss 上而不是扣进 reward 会怎样", "GRPO 把 KL 直接加在 loss 上而不是扣进 reward")
    assert leaks("GRPO 的 KL 为什么放在 loss 里而不是 reward 里？", GRPO_KL_KP2_ZH)
    assert not leaks("GRPO 的 KL 项加在哪里？为什么放在那里？", GRPO_KL_KP2_ZH)


def test_the_shipped_bank_has_no_leaking_probe_errors(bank):
    errors = [f for f in lint(bank) if f.level == "error"]
    assert errors == [], "\n".join(map(str, errors))


@pytest.fixture()
def data_copy(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def _set_probe(data_dir, qid, index, zh, en):
    path = data_dir / "questions" / f"{qid}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["rubric"]["probes"][index].update(zh=zh, en=en)
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")


def test_putting_a_reviewed_leak_back_fails_the_lint(data_copy):
    _set_probe(data_copy, "grpo-kl-why", 0, "GRPO 的 KL 为什么放在 loss 里而不是 reward 里？放进 reward 会影响什么？",
               REVIEW_LEAKS["grpo-kl-why: where the KL goes"][0])
    _set_probe(data_copy, "cispo", 1, "为什么要对裁剪后的权重做 stop-gradient？不做会怎样？",
               REVIEW_LEAKS["cispo: the stop-gradient of kp1, asked by a probe for kp2"][0])
    errors = [f for f in lint(load_bank(data_copy)) if f.level == "error"]
    assert {(f.qid, f.message.split(" (")[0]) for f in errors} == {("grpo-kl-why", "probe 0"), ("cispo", "probe 1")}
    assert any("kp2" in f.message for f in errors if f.qid == "grpo-kl-why")
    assert any("kp1" in f.message for f in errors if f.qid == "cispo")


def _set_contrasts(data_dir, qid, kp_id, contrasts):
    path = data_dir / "questions" / f"{qid}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    next(k for k in raw["rubric"]["key_points"] if k["id"] == kp_id)["contrasts"] = contrasts
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")


def test_a_contrast_that_is_a_true_text_of_the_rubric_fails_the_lint(data_copy):
    q = load_bank(data_copy).questions["ppo-clip-min"]
    kp1, kp2 = q.rubric.key_points[0], q.rubric.key_points[1]
    # a flipped word is what a contrast is (no error); kp2's own text, re-punctuated, as a false version of kp1 is one
    _set_contrasts(data_copy, "ppo-clip-min", "kp1", [kp1.zh.replace("π_θ/π_old", "π_old/π_θ"), kp2.zh.replace("，", " ")])
    errors = [f for f in lint(load_bank(data_copy)) if f.level == "error"]
    assert [(f.qid, f.message.split(" contrast")[0]) for f in errors] == [("ppo-clip-min", "kp1")]
    assert "true text of kp2" in errors[0].message


def test_a_pitfall_truth_that_repeats_the_pitfall_fails_the_lint(data_copy):
    path = data_copy / "questions" / "cispo.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    pit = raw["rubric"]["pitfalls"][3]
    pit["truths"] = [pit["truths"][0], pit["zh"].replace("。", "")]  # the wrong claim itself, re-punctuated
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    errors = [f for f in lint(load_bank(data_copy)) if f.level == "error"]
    assert [(f.qid, f.message.split(" truth")[0]) for f in errors] == [("cispo", "pitfall 3")]
