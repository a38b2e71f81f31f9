"""Reviewing a real interview: parsing, matching through the real Chroma store, grading, history.

    python -m pytest tests/test_review.py
"""

import json
from pathlib import Path

import pytest

from interviewer import practice
from interviewer.cli import main
from interviewer.errors import InterviewerError
from interviewer.review import parse, review
from interviewer.session import Interviewer

TRANSCRIPT = (Path(__file__).parent / "data" / "real_interview.md").read_text(encoding="utf-8")


def test_markdown_text_and_json_transcripts_give_the_same_pairs():
    md = parse(TRANSCRIPT)
    assert [p.question for p in md] == ["PPO 里为什么要取 min？", "GRPO 为什么要加 KL 散度？", "你们组周末加班多吗？"]
    assert md[0].answer.endswith("防止策略一次更新太大。")  # a multi-line answer is kept whole
    as_json = parse(json.dumps([{"question": p.question, "answer": p.answer} for p in md], ensure_ascii=False))
    assert as_json == md
    headings = parse("## PPO 里为什么要取 min？\n取 min 得到悲观下界。\n## GRPO 为什么要加 KL？\n不知道。")
    assert [(p.question, p.answer) for p in headings] == [("PPO 里为什么要取 min？", "取 min 得到悲观下界。"),
                                                           ("GRPO 为什么要加 KL？", "不知道。")]
    with pytest.raises(InterviewerError, match="no questions"):
        parse("just some notes without questions")


def test_a_review_matches_grades_and_feeds_the_history(settings, store):
    app = Interviewer.open(settings, store=store)  # the real embedding grader
    report = review(app, TRANSCRIPT)
    matches = {m["question"]: m for m in report["review"]}
    assert matches["PPO 里为什么要取 min？"]["match"] == "ppo-clip-min" and matches["PPO 里为什么要取 min？"]["matched"]
    assert matches["GRPO 为什么要加 KL 散度？"]["match"] == "grpo-kl-why"
    unmatched = matches["你们组周末加班多吗？"]
    assert not unmatched["matched"] and unmatched["similarity"] is not None  # reported, never forced
    assert [q["qid"] for q in report["questions"]] == ["ppo-clip-min", "grpo-kl-why"]
    ppo, kl = report["questions"]
    assert ppo["score"] > kl["score"]  # the real grader credits the partial answer
    quoted = [e["quote"] for e in ppo["evidence"] + ppo["unclear"]]  # covered, or borderline and asked about
    assert any("悲观的下界" in q for q in quoted) and "kp2" not in {m["key"] for m in ppo["missed"]}
    assert report["lang"] == "zh" and report["practice_next"]
    assert app.list_sessions()[0]["id"] == report["session_id"]  # in the history
    assert "grpo-kl-why" in practice.due(app.conn, now=10**12)  # missed points are due for practice
    assert Path(settings.reports_dir / f"{report['session_id']}.md").exists()
    app.close()


def test_the_review_command(settings, store, tmp_path, capsys, monkeypatch):
    (settings.home / "chroma").parent.mkdir(parents=True, exist_ok=True)
    import shutil

    shutil.copytree(store.path, settings.home / "chroma")
    f = tmp_path / "interview.md"
    f.write_text(TRANSCRIPT, encoding="utf-8")
    assert main(["review", str(f), "--home", str(settings.home), "--grader", "embedding"]) == 0
    out = capsys.readouterr().out
    assert "ppo-clip-min" in out and "Report saved" in out
    assert main(["review", str(tmp_path / "missing.md"), "--home", str(settings.home)]) == 2
