"""`python -m evals.claims`: the claim check on cached candidates tells a rubric author what a truth is worth.

    python -m pytest tests/test_claims.py
"""

import json

import pytest

from evals.cases import Case
from evals.claims import cache_key, cached_candidates, check, main
from interviewer.grading import EmbeddingGrader, asserts_pitfall, key_point_index
from knowledge.bank import Bank

# a correct sentence a ninth-set candidate wrote, challenged as train-infer-mismatch pitfall 4 until it got truths
CORRECT = "bf16's short mantissa amplifies those differences;"


def _edit_pitfall(bank: Bank, qid: str, index: int, **update) -> Bank:
    """A copy of `bank` with one pitfall's fields replaced."""
    q = bank.get(qid)
    pits = list(q.rubric.pitfalls)
    pits[index] = pits[index].model_copy(update=update)
    q = q.model_copy(update={"rubric": q.rubric.model_copy(update={"pitfalls": pits})})
    return Bank({**bank.questions, qid: q}, bank.chains, bank.sources, bank.fingerprint)


def _answer(tier, sentence, misconceptions=()):
    return {"id": "x1", "question_id": "train-infer-mismatch", "tier": tier, "misconceptions": list(misconceptions),
            "candidates": [[4, sentence, 0.08]]}


def test_a_truth_is_what_keeps_a_correct_sentence_from_a_false_confirmation(bank):
    assert check(bank, [_answer("good", CORRECT)]).false == []
    tally = check(_edit_pitfall(bank, "train-infer-mismatch", 4, truths=[]), [_answer("good", CORRECT)])
    assert [(f[1], f[2]) for f in tally.false] == [("train-infer-mismatch", 4)]


def test_the_wrong_claim_itself_is_a_confirmation_gold_lists(bank):
    wrong = bank.get("train-infer-mismatch").rubric.pitfalls[4].zh
    tally = check(bank, [_answer("fluent_central_error", wrong, ["4"])])
    assert (tally.listed, tally.wrong_hit["fluent_central_error"], tally.false) == (1, 1, [])
    unlisted = check(bank, [_answer("fluent_central_error", wrong, ["other: a different claim"])])
    assert (unlisted.listed, unlisted.wrong_hit["fluent_central_error"]) == (0, 0)


def test_a_negation_in_a_clause_the_sentence_does_not_touch_is_no_denial(bank):
    """A training answer's sentence says a wording of cispo pitfall 6 (no negation in it); the pitfall's first wording
    has "不能" in a clause the sentence does not touch, and a test of whole sentences read that as a denial."""
    q, index = bank.get("cispo"), key_point_index(bank.with_rubric())
    assert asserts_pitfall(q, 6, "另外它重新引入了 critic，用 value model 代替组内均值做 baseline，这样 advantage 的方差更低。", index)
    assert not asserts_pitfall(q, 6, "它没有重新引入 critic，不用 value model 代替组内均值做 baseline。", index)


def test_the_cache_survives_a_truth_edit_and_not_a_wording_edit(bank, store, tmp_path):
    cases = [Case(id="c1", question_id="train-infer-mismatch", answer="BF16 的尾数位比 FP16 多，所以更精确。", gold=2,
                  covered=[], misconceptions=["4"])]
    path = tmp_path / "cache.json"
    first = cached_candidates(path, bank, cases, lambda: EmbeddingGrader(store))
    assert first[0]["candidates"] and json.loads(path.read_text())["answers"] == first
    edited = _edit_pitfall(bank, "train-infer-mismatch", 4, truths=[])
    assert cached_candidates(path, edited, cases, lambda: pytest.fail("recomputed after a truth edit")) == first
    variants = bank.get("train-infer-mismatch").rubric.pitfalls[4].variants
    reworded = _edit_pitfall(bank, "train-infer-mismatch", 4, variants=variants + ["BF16 更精确"])
    assert cache_key(reworded, cases) != cache_key(bank, cases) == cache_key(edited, cases)


def test_a_broken_cache_is_recomputed_and_rewritten(bank, store, tmp_path):
    cases = [Case(id="c1", question_id="train-infer-mismatch", answer="BF16 的尾数位比 FP16 多，所以更精确。", gold=2,
                  covered=[], misconceptions=["4"])]
    path = tmp_path / "cache.json"
    for broken in ("garbage", "[1, 2]"):
        path.write_text(broken)
        fresh = cached_candidates(path, bank, cases, lambda: EmbeddingGrader(store))
        assert fresh[0]["candidates"] and json.loads(path.read_text())["answers"] == fresh


def test_cases_on_an_unknown_question_get_a_clear_error(tmp_path, capsys):
    f = tmp_path / "cases.jsonl"
    f.write_text(json.dumps({"question_id": "no-such-question", "answer": "x", "gold": 1, "covered": []}) + "\n")
    assert main(["--cases", str(f), "--cache", str(tmp_path / "c.json")]) == 2
    assert "no-such-question" in capsys.readouterr().err
