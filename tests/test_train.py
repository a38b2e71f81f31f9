"""`python -m evals.train` end to end on a small labelled set: the real store and embeddings, a real fit, and
weights the grader then reads.

    python -m pytest tests/test_train.py
"""

import json

import pytest

from evals.cases import (BLIND_NEXT, BLIND_NEXT_SECOND, BLIND_SECOND, BLIND_TEST, BLIND_TRAIN, BLIND_WRONG, CASES_DIR,
                         load_cases)
from evals.train import main
from interviewer.grading import EmbeddingGrader


def test_training_writes_weights_that_the_grader_reads_and_grades_with(store, home, tmp_path, monkeypatch):
    monkeypatch.setenv("RLI_HOME", str(home))  # the session's store
    out = tmp_path / "weights.json"
    assert main(["--cases", str(CASES_DIR / "ladders_g1.jsonl"), "--cases", str(CASES_DIR / "ladders_g2.jsonl"),
                 "--folds", "2", "--out", str(out)]) == 0
    weights = json.loads(out.read_text(encoding="utf-8"))
    assert weights["point_model"]["kind"] == "stacked" and 0 < weights["unclear_p"] < weights["cover_p"] <= 0.8
    assert weights["trained_on"]["answers"] == 64 and "spearman" in weights["cross_validated"]["raw"]
    grader = EmbeddingGrader(store, weights=weights)
    q = store.question("ppo-clip-min")
    good = grader.grade(q, q.rubric.reference_answer.zh, "zh")
    off = grader.grade(q, "我最近在做推荐系统，用 LightGBM 做特征工程，主要靠交叉特征和负采样。", "zh")
    assert good.score > off.score and any(v.status == "covered" for v in good.verdicts)


def test_training_says_what_is_wrong_with_its_input(store, home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RLI_HOME", str(home))
    assert main(["--cases", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["--folds", "1"]) == 2


@pytest.mark.parametrize("held_out, second_gold, other", [(BLIND_TEST, BLIND_SECOND, BLIND_NEXT),
                                                           (BLIND_NEXT, BLIND_NEXT_SECOND, BLIND_TEST)])
def test_the_held_out_set_is_never_training_data(held_out, second_gold, other):
    """The reported figures are honest only while no held-out answer reaches the fit: not as a file of the training
    list, not as an answer copied into a training file. Its second gold grades answers of the held-out set itself.
    The same holds for the next reported set, and the two share no answer."""
    training = [*BLIND_TRAIN, BLIND_WRONG, CASES_DIR]
    assert held_out.resolve() not in {p.resolve() for p in training}
    held = load_cases([held_out])
    held_ids, held_answers = {c.id for c in held}, {c.answer.strip() for c in held}
    assert None not in held_ids and len(held_ids) == len(held) >= 500
    for c in load_cases([*training, other]):
        assert c.id not in held_ids, c.id
        assert c.answer.strip() not in held_answers, c.answer[:40]
    by_id = {c.id: c for c in held}
    second = load_cases([second_gold])
    assert second and all(by_id[c.id].answer == c.answer for c in second)
