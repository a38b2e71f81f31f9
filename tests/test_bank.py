"""The question bank is complete, traceable to its documents, and validated loudly.

    python -m pytest tests/test_bank.py
"""

import json
import re
import shutil

import pytest

from knowledge.bank import DATA_DIR, BankError, load_bank


def test_every_span_is_verbatim_in_its_document(bank):
    docs = {p.name: p.read_text(encoding="utf-8") for p in (DATA_DIR / "seeds").glob("*.txt")}
    for q in bank.questions.values():
        for span in q.provenance:
            assert docs[span.source][span.start : span.end] == span.quote, q.id


def test_no_question_bearing_text_is_left_uncovered(bank):
    """Question spans plus the declared non-question spans (preambles, headings, the advert) cover
    every document; what is left is whitespace and list markers."""
    for name, meta in bank.sources.items():
        text = (DATA_DIR / "seeds" / name).read_text(encoding="utf-8")
        covered = [False] * len(text)
        spans = [(s.start, s.end) for q in bank.questions.values() for s in q.provenance if s.source == name]
        spans += [(s["start"], s["end"]) for s in meta["non_question_spans"]]
        for start, end in spans:
            covered[start:end] = [True] * (end - start)
        left = "".join(ch for ch, c in zip(text, covered) if not c)
        assert re.sub(r"[\s\-]", "", left) == "", f"{name}: uncovered text {left!r}"


def test_question_spans_do_not_overlap(bank):
    seen = {}
    for q in bank.questions.values():
        for s in q.provenance:
            for other_id, (a, b) in seen.get(s.source, {}).items():
                assert s.end <= a or s.start >= b, f"{q.id} overlaps {other_id}"
            seen.setdefault(s.source, {})[q.id + str(s.start)] = (s.start, s.end)


def test_the_advertisement_is_not_a_question(bank):
    assert not any("学AI大模型" in s.quote or "CSDN" in s.quote for q in bank.questions.values() for s in q.provenance)
    kinds = {span["kind"] for meta in bank.sources.values() for span in meta["non_question_spans"]}
    assert "advertisement" in kinds


def test_both_documents_and_all_sections_are_represented(bank):
    sources = {s.source for q in bank.questions.values() for s in q.provenance}
    assert len(sources) == 2
    assert {q.section for q in bank.questions.values()} == {"algorithm", "infra", "scenario", "meta"}
    assert len(bank.questions) >= 70
    assert len(bank.with_rubric()) >= 10


def test_typos_are_fixed_and_noted(bank):
    q = bank.get("rm-loss-log-sigmoid")
    assert "sigmod" in q.provenance[0].quote and "sigmoid" in q.zh
    assert any("sigmod" in n for n in q.notes)


def test_chains_keep_the_documents_order(bank):
    chain = next(c for c in bank.chains if c.id == "rlhf-ppo")
    starts = [bank.get(qid).provenance[0].start for qid in chain.questions]
    assert starts == sorted(starts)


def test_merged_duplicates_keep_every_source_span(bank):
    q = bank.get("grpo-memory-models")
    assert {s.source for s in q.provenance} == {"000_4cd96c15967dd1a0.txt", "003_4810e971db6fd468.txt"}


@pytest.fixture()
def data_copy(tmp_path):
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target


def test_a_typo_in_a_field_name_fails_naming_file_and_id(data_copy):
    path = data_copy / "questions" / "dapo.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["dificulty"] = raw.pop("difficulty")
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BankError, match=r"dapo\.json \(question dapo\).*dificulty"):
        load_bank(data_copy)


def test_broken_json_fails_with_line_number(data_copy):
    path = data_copy / "questions" / "gspo.json"
    path.write_text(path.read_text(encoding="utf-8")[:-20], encoding="utf-8")
    with pytest.raises(BankError, match=r"gspo\.json: invalid JSON at line"):
        load_bank(data_copy)


def test_a_moved_span_fails(data_copy):
    path = data_copy / "questions" / "dapo.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["provenance"][0]["start"] += 1
    raw["provenance"][0]["end"] += 1
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BankError, match="the quote is not at"):
        load_bank(data_copy)


def test_a_dangling_related_id_fails(data_copy):
    path = data_copy / "questions" / "dapo.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["related"].append("no-such-question")
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BankError, match="no-such-question"):
        load_bank(data_copy)


REVIEW_1 = {  # verdicts of the outside review in ../shared/reviews/rubric-review-1.md
    "ppo-clip-min": "ok", "ppo-advantage-gae": "ok", "grpo-kl-why": "minor", "kl-estimator": "minor", "dapo": "minor",
    "gspo": "minor", "cispo": "ok", "dpo-loss-derivation": "ok", "dpo-reward-hacking": "ok", "rm-loss-log-sigmoid": "ok",
    "kl-ce-mle": "ok", "entropy-collapse": "minor", "train-infer-mismatch": "minor", "verl-batch-sizes": "minor",
    "grpo-memory-models": "major", "sync-problems-long-tail": "ok", "deterministic-batch-invariance": "ok",
    "moe-routing-replay": "ok", "partial-rollout-kv-cache": "minor", "allreduce-loss-extra": "ok",
}


def test_every_rubric_records_its_reviews(bank):
    for q in bank.with_rubric():
        assert q.reviews and q.reviews[0].role.startswith("rubric author"), q.id
        outside = [r for r in q.reviews if r.role.startswith("outside LLM-RL reviewer (review 1)")]
        assert [r.verdict for r in outside] == ([REVIEW_1[q.id]] if q.id in REVIEW_1 else []), q.id
        if outside and outside[0].verdict != "ok":
            assert outside[0].changes, f"{q.id}: a minor or major verdict must record what changed"


def test_stats_counts_rubrics_reviewed_twice(bank, capsys):
    from knowledge.__main__ import main

    twice = sum(len(q.reviews) >= 2 for q in bank.with_rubric())
    assert twice >= len(REVIEW_1)
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert f"rubrics reviewed at least twice: {twice} of {len(bank.with_rubric())}" in out
    assert "rubrics by number of reviews:" in out


def test_no_reference_is_left_unverified_without_a_note(bank):
    for q in bank.with_rubric():
        for r in q.rubric.references:
            assert r.verified or r.note, f"{q.id}: {r.title}"
