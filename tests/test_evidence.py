"""The evidence features and the learned combination: pure functions, no store or model.

    python -m pytest tests/test_evidence.py
"""

import numpy as np

import pytest

from interviewer.evidence import (ALL_FEATURES, CONTEXT, FEATURES, AnswerShape, TermIndex, contradiction_confirmed, negated,
                                  terms, with_context)
from interviewer.pointmodel import LogisticModel, TreeModel, calibrate, isotonic, load_model
from knowledge.text import clauses, evidence_plan, evidence_units


def test_terms_mix_chinese_bigrams_english_words_and_symbols():
    t = terms("PPO 的 ratio 要 clip，∇ 不变")
    assert {"ppo", "ratio", "clip", "∇", "不变"} <= set(t)
    assert "的" not in t and "the" not in terms("the ratio")


def test_negation_in_both_languages():
    assert negated("取 min 并不是为了让梯度更大") and negated("KL is not symmetric")
    assert not negated("取 min 是为了让梯度更大")
    # a partial negation rejects the claim too (a training answer's "不完全是 RL 凭空弄出来的" was once challenged
    # as "aha moment 证明模型在 RL 中从零学会了反思能力")
    assert negated("R1-Zero 的 aha moment 不完全是 RL 凭空弄出来的") and negated("reward 不全是规则算的")


def test_term_recall_weights_rare_terms_higher():
    index = TermIndex(["优势函数 baseline", "baseline 方差", "baseline 期望", "clip ratio"])
    said = set(terms("clip 一下"))
    assert index.recall("clip ratio", said) > index.recall("baseline 方差", said) == 0.0


def test_enumerations_and_clauses_become_their_own_units():
    parts = clauses("原因有三个：kernel 实现不一样、并行切分方式不一样、训练和推理的精度也不一样。")
    assert len(parts) >= 3 and any("并行切分" in p for p in parts)
    units = evidence_units("第一句，有两个分句。第二句。")
    assert "第一句，有两个分句。" in units and "第一句，有两个分句。第二句。" in units
    embedded, pairs = evidence_plan(["第一句，有两个分句。", "第二句。"])
    assert "第一句，有两个分句。第二句。" not in embedded  # the pair is composed, not embedded again
    assert [embedded[i] + embedded[j] for i, j in pairs] == ["第一句，有两个分句。第二句。"]


def test_a_pitfall_that_is_negated_is_not_a_confirmed_contradiction():
    pit = ["取 min 是为了让梯度更大、学得更快。", "The min makes the gradient larger."]
    kp = ["取 min 得到悲观下界，保留往坏方向走的惩罚。"]
    assert contradiction_confirmed("取 min 就是为了梯度更大，学得更快", pit, kp)
    assert not contradiction_confirmed("取 min 不是为了梯度更大，而是悲观下界", pit, kp)
    assert not contradiction_confirmed("取 min 得到的是悲观下界，惩罚一直保留", pit, kp)


def test_sharing_only_an_appraisal_with_a_pitfall_is_not_asserting_it():
    """"更友好" names no fact: the subject may be the other one (a correct shorthand was once challenged so)."""
    pit = ["INT8 的动态范围比 FP8 更大，所以 INT8 天然更抗 activation 里的 outlier。",
           "INT8 的 range 比 FP8 宽，outlier 通道用 INT8 更友好。"]
    kp = ["LLM 激活有离群值，INT8 按整张量量化时 scale 被离群值拉大，FP8 对此更宽容。"]
    assert not contradiction_confirmed("FP8 对 outlier 更友好。", pit, kp)
    assert contradiction_confirmed("INT8 天然更抗 outlier，动态范围比 FP8 大。", pit, kp)


def test_asking_supposing_or_naming_the_subject_is_not_asserting_a_pitfall():
    pit = ["直接用 reward 相减当 loss 也可以，只是收敛慢一点。", "Using the raw reward difference as the loss works too."]
    kp = ["r_w − r_l 没有上界，直接相减会让奖励尺度发散。"]
    assert contradiction_confirmed("直接用 reward 相减当 loss 也可以，收敛慢一点而已", pit, kp)
    assert not contradiction_confirmed("直接用 reward 相减当 loss 行不行？", pit, kp)
    assert not contradiction_confirmed("如果直接用 reward 相减当 loss，", pit, kp)
    critic = ["Dr.GRPO 是在 GRPO 的基础上加了一个 critic。"]
    question = ["了解 REINFORCE / ReMax / Dr.GRPO / λ-GRPO 等方法吗？"]
    assert contradiction_confirmed("Dr.GRPO 就是给 GRPO 加了一个 critic", critic, ["Dr.GRPO 去掉了长度归一化"], question)
    assert not contradiction_confirmed("Dr.GRPO 是 GRPO 的变体", critic, ["Dr.GRPO 去掉了长度归一化"], question)


def test_the_logistic_model_learns_a_separable_rule_and_round_trips():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 4] > 0).astype(float)
    m = LogisticModel.fit(FEATURES, x, y)
    assert ((m.predict(x) > 0.5) == (y > 0.5)).mean() > 0.95
    again = load_model(m.to_json(), FEATURES)
    assert np.allclose(again.predict(x[:5]), m.predict(x[:5]))


def test_the_boosted_trees_read_with_numpy_predict_what_scikit_learn_fitted():
    from sklearn.ensemble import GradientBoostingRegressor

    rng = np.random.default_rng(1)
    x = rng.normal(size=(600, 4))
    y = ((x[:, 0] > 0) & (x[:, 1] * x[:, 2] > 0)).astype(float)  # an interaction a linear model cannot fit
    fitted = GradientBoostingRegressor(n_estimators=60, max_depth=3, learning_rate=0.2, random_state=0).fit(x, y)
    trees = load_model(TreeModel.from_sklearn(("a", "b", "c", "d"), fitted).to_json(), ("a", "b", "c", "d"))
    assert np.allclose(trees.predict(x), np.clip(fitted.predict(x), 0, 1))
    assert ((trees.predict(x) > 0.5) == (y > 0.5)).mean() > 0.9


def test_the_stacked_model_reads_the_rest_of_the_answer_and_round_trips():
    """A point here counts as stated only when another point of the same answer is stated too (as a wrong answer
    matches every point faintly): a model of one point's features cannot see that, the second stage can."""
    from evals.train import Example, _fit_on

    rng = np.random.default_rng(2)
    weight = ALL_FEATURES.index("weight")

    def answers(n, start):
        out = []
        for a in range(n):
            x = np.zeros((3, len(ALL_FEATURES)))
            x[:, 0] = rng.normal(size=3)
            x[:, weight] = [3.0, 2.0, 1.0]
            said = x[:, 0] > 0
            labels = (said & (said.sum() >= 2)).astype(float)
            out.append(Example(f"q{(start + a) % 20}", 0.0, "t", ["essential", "important", "optional"], labels, x, None,
                               0, False))
        return out

    train, test = answers(600, 0), answers(200, 7)
    stacked, single = _fit_on(train, "stacked"), _fit_on(train, "trees")
    accuracy = lambda m: np.mean([((m.predict(e.x) > 0.5) == (e.labels > 0.5)).mean() for e in test])  # noqa: E731
    assert accuracy(stacked) >= accuracy(single) + 0.1
    again = load_model(stacked.to_json(), ALL_FEATURES)
    assert np.allclose(again.predict(test[0].x), stacked.predict(test[0].x))


def test_weights_fitted_on_other_features_are_refused():
    m = LogisticModel.fit(("a", "b"), np.eye(2), np.array([0.0, 1.0]), steps=1)
    with pytest.raises(ValueError, match="fitted on features"):
        load_model(m.to_json(), ("a", "c"))


def test_context_features_describe_the_answer_around_each_point():
    x = np.zeros((3, len(FEATURES)))
    x[:, FEATURES.index("margin_main")] = [0.10, 0.02, -0.05]
    shape = AnswerShape("GRPO 用组内均值做 baseline，不需要 critic。", ["GRPO 用组内均值做 baseline，", "不需要 critic。"],
                        False, [3.0, 2.0, 1.0], [20, 20, 20])
    full = with_context(x, [0, 0, 1], shape)
    assert full.shape == (3, len(ALL_FEATURES)) and len(ALL_FEATURES) == len(FEATURES) + len(CONTEXT)
    col = {name: full[:, i] for i, name in enumerate(ALL_FEATURES)}
    assert list(col["rank"]) == [0.0, 0.5, 1.0]  # the best-matched point first
    assert col["below_best"][0] == 0.0 > col["below_best"][1] > col["below_best"][2]
    assert list(col["shared"]) == [1, 1, 0]  # points 1 and 2 found in the same unit
    assert list(col["weight"]) == [3.0, 2.0, 1.0] and set(col["english"]) == {0.0}
    assert len(set(col["max_margin_main"])) == 1 and col["max_margin_main"][0] == 0.10  # the same on every row


def test_isotonic_calibration_is_monotone_and_clamped():
    knots = isotonic([0, 1, 2, 3, 4, 5], [0, 3, 2, 5, 9, 8])
    ys = [k[1] for k in knots]
    assert ys == sorted(ys)
    assert calibrate(-5, knots) == 0.0 and 0 <= calibrate(2.5, knots) <= 10
    assert calibrate(3.0, []) == 3.0


def test_a_composed_pair_vector_is_close_to_embedding_the_joined_text():
    from interviewer.evidence import compose
    from knowledge.embed import embed, token_counts

    a, b = "GRPO 用组内均值做 baseline。", "所以它不需要 critic，也省掉了价值模型的显存。"
    vecs = embed([a, b])
    joined = compose(vecs, token_counts([a, b]), [(0, 1)])[0]
    assert abs(float(joined @ joined) - 1.0) < 1e-4
    assert float(joined @ embed([a + b])[0]) > 0.95 > float(vecs[0] @ embed(["推荐系统的特征工程和负采样。"])[0])


def test_a_sentence_must_say_the_pitfalls_own_claim_to_be_accused_of_it():
    """Sharing the subject's words is not asserting the pitfall: the flipped claim itself must be said."""
    pit = ["动作空间是所有可能的完整回答，所以是连续的。", "The action space is all possible full responses, so it is continuous."]
    kp = ["每一步的动作是下一个 token，动作空间就是词表。"]
    question = ["RL 里 LLM 的状态和动作是什么？"]
    index = TermIndex(pit + kp + question)
    for idx in (None, index):
        assert not contradiction_confirmed("动作空间是所有可能序列（|V|^L 量级），", pit, kp, question, idx)
        assert contradiction_confirmed("动作空间就是所有可能的完整回答，所以它是连续的", pit, kp, question, idx)
