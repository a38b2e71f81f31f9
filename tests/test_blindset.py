"""Making a blind set: writers see no rubric, graders see no persona, and nothing half-made becomes a set.

    python -m pytest tests/test_blindset.py
"""

import json
import re

import pytest

from evals.blindset import PERSONAS, SetError, assemble, grader_packets, main, merge, writer_prompts
from knowledge.bank import load_bank

BANK = load_bank().questions


def _write_answers(out, skip=None):
    """Every writer answers every question of its share, one answer per persona (the `skip` one left out)."""
    for d in out.glob("w*/"):
        share = re.findall(r"- id: `([^`]+)`", (d / "prompt.md").read_text(encoding="utf-8"))
        rows = [{"question_id": q, "persona": p, "lang": "en" if p == "english" else "zh",
                 "answer": f"{'an answer' if p == 'english' else '一个回答'} {q} {PERSONAS.index(p)}"}
                for q in share for p in PERSONAS if (q, p) != skip]
        (d / "answers.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _label(a, **over):
    return {"id": a["id"], "question_id": a["question_id"], "covered": [], "partial": [], "misconceptions": [],
            "gold": 5, "tier": "partial", "note": "", **over}


def _grade(out, shares, answers, bad=None):
    for name, qids in shares.items():
        rows = [_label(a) for a in answers if a["question_id"] in qids]
        if bad and name == "g1":
            rows[0] = _label(answers[[a["id"] for a in answers].index(rows[0]["id"])], covered=["kp99"])
        (out / name / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_writers_get_every_question_once_and_no_word_of_any_rubric(tmp_path):
    shares = writer_prompts(list(BANK.values()), 7, tmp_path)
    assert sorted(q for s in shares.values() for q in s) == sorted(BANK)
    prompts = "".join((tmp_path / name / "prompt.md").read_text(encoding="utf-8") for name in shares)
    for q in BANK.values():
        r = q.rubric
        leaked = [t for kp in r.key_points for t in (kp.zh, kp.en)] + [p.zh for p in r.pitfalls]
        leaked += [r.reference_answer.zh, r.strong_answer.zh]
        assert not [t for t in leaked if t in prompts], q.id
        assert q.zh in prompts
    assert str(tmp_path / "w3" / "answers.jsonl") in (tmp_path / "w3" / "prompt.md").read_text(encoding="utf-8")


def test_assembly_numbers_seven_answers_a_question_the_same_way_for_the_same_seed(tmp_path):
    writer_prompts(list(BANK.values()), 7, tmp_path)
    _write_answers(tmp_path)
    rows = assemble(tmp_path, 3, "z")
    assert len(rows) == 7 * len(BANK) and rows[0]["id"] == "z000"
    assert {r["lang"] for r in rows if r["persona"] == "english"} == {"en"}
    assert rows == assemble(tmp_path, 3, "z") != assemble(tmp_path, 4, "z")


def test_a_missing_persona_is_named_and_no_set_is_written(tmp_path):
    shares = writer_prompts(list(BANK.values()), 7, tmp_path)
    qid = shares["w5"][0]
    _write_answers(tmp_path, skip=(qid, "terse"))
    with pytest.raises(SetError, match=f"w5 {qid}"):
        assemble(tmp_path, 3, "z")
    assert not (tmp_path / "all.jsonl").exists()


def test_graders_see_each_answer_once_without_its_persona_and_merge_refuses_a_bad_label(tmp_path):
    writer_prompts(list(BANK.values()), 7, tmp_path)
    _write_answers(tmp_path)
    answers = assemble(tmp_path, 3, "z")
    shares = grader_packets(tmp_path, 5, BANK)
    first = "".join((tmp_path / f"g{i}" / "packet.md").read_text(encoding="utf-8") for i in range(1, 11))
    assert all(first.count(f"#### id `{a['id']}`\n\n{a['answer']}\n") == 1 for a in answers)  # the id, then the answer
    assert "persona" not in first
    second = shares["s1"] + shares["s2"]
    assert len(set(second)) == 12 and all(any(q in shares[f"g{i}"] for q in second) for i in range(1, 11))
    _grade(tmp_path, shares, answers, bad=True)
    with pytest.raises(SetError, match="g1/gold.jsonl line 1"):
        merge(tmp_path, tmp_path, BANK)
    assert not (tmp_path / "next.jsonl").exists()
    _grade(tmp_path, shares, answers)
    assert merge(tmp_path, tmp_path, BANK) == (len(answers), 7 * 12)
    row = json.loads((tmp_path / "next.jsonl").read_text().splitlines()[0])
    assert {"id", "question_id", "answer", "gold", "tier", "lang", "persona", "covered"} <= set(row)


def test_the_command_says_what_is_wrong_instead_of_failing(tmp_path, capsys):
    assert main(["assemble", str(tmp_path), "--seed", "1", "--prefix", "zz"]) == 2
    assert "--prefix" in capsys.readouterr().err
    assert main(["graders", str(tmp_path), "--seed", "1"]) == 2
    assert "run `assemble` first" in capsys.readouterr().err
    assert main(["writers", str(tmp_path)]) == 2
    assert "--seed" in capsys.readouterr().err and not (tmp_path / "w1").exists()


def test_merge_writes_nothing_for_a_set_with_no_answers(tmp_path, capsys):
    """A mistyped folder has no all.jsonl: merge must not write an empty next.jsonl over the real one."""
    out = tmp_path / "out"
    out.mkdir()
    assert main(["merge", str(tmp_path / "no-such-set"), "--out", str(out)]) == 2
    assert "run `assemble` first" in capsys.readouterr().err
    assert not list(out.iterdir())
