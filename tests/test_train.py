"""`python -m evals.train` end to end on a small labelled set: the real store and embeddings, a real fit, and
weights the grader then reads.

    python -m pytest tests/test_train.py
"""

import json

from evals.cases import CASES_DIR
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
