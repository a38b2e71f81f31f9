"""The interviewer's words: the rewording guard, transitions and thread follow-ups (real e5 embeddings;
a scripted model where a model is needed; the real server in test_real_model.py).

    python -m pytest tests/test_phrasing.py
"""

import pytest

from interviewer.phrasing import acceptable, acceptable_transition
from interviewer.session import Interviewer
from interviewer.settings import Settings
from interviewer.threads import ThreadProposal, check

DDP_PROBE = "DDP 是怎么让梯度通信和反向计算重叠起来的？"
ANSWER = "我们用 DDP 做数据并行，每张卡算梯度后 all-reduce。我们还试过 gradient checkpointing 来省显存。"


@pytest.fixture()
def backprop(bank):
    return bank.get("multinode-backprop")


def secrets(q):
    return [kp.zh for kp in q.rubric.key_points] + [q.rubric.reference_answer.zh]


def test_the_real_failing_rewording_is_rejected(backprop):
    """Seen in a real session on the 0.5B: the probe came back as a statement that gives the answer."""
    bad = "DDP 是一种用于在分布式环境中实现梯度通信和反向计算重叠的算法。"
    assert not acceptable(bad, DDP_PROBE, "zh", secrets(backprop))
    assert not acceptable(bad, DDP_PROBE, "zh")  # even with no key point to compare: it no longer asks


@pytest.mark.parametrize("reworded, ok", [
    ("能说说 DDP 是怎么把梯度通信和反向计算重叠起来的吗？", True),
    ("DDP 里梯度通信和反向计算是如何重叠起来的？", True),
    ("DDP 是什么？", False),  # another question: the intent (how) is lost
    ("DDP 把梯度分桶，某个桶的梯度一算好就发起 all-reduce，这样怎么让通信和反向重叠？", False),  # states kp2
])
def test_a_rewording_must_keep_the_question_and_its_intent(backprop, reworded, ok):
    assert acceptable(reworded, DDP_PROBE, "zh", secrets(backprop)) is ok


@pytest.mark.parametrize("text, ok", [
    ("你提到了 gradient checkpointing。", True),
    ("你说得很好，gradient checkpointing 用得对。", False),  # a grade
    ("你提到了 gradient checkpointing，那它的代价是什么？", False),  # a question of its own
    ("好的，我们继续。", False),  # refers to nothing the candidate said
    ("gradient checkpointing 可以省显存。", False),  # a bare statement: asserts the claim (seen from the 0.5B)
    ("你提到 all-reduce，DDP 把梯度分桶，反向时某个桶的梯度一算好就发起 all-reduce。", False),  # a key point
])
def test_a_transition_names_the_answer_and_stays_in_role(backprop, text, ok):
    assert acceptable_transition(text, ANSWER, "zh", secrets(backprop)) is ok


@pytest.mark.parametrize("claim, question, reason", [
    ("gradient checkpointing", "你提到用了 gradient checkpointing，它会让反向多出多少计算量？", ""),
    ("routing replay", "你说用了 routing replay，它有什么问题？", "not in the answer"),
    ("gradient checkpointing", "你觉得反向多出多少计算量？", "does not name"),
    ("gradient checkpointing", "你提到 gradient checkpointing，你平时周末喜欢做什么运动？", "off topic"),
    ("gradient checkpointing", "你提到 gradient checkpointing？那显存呢？", "single question"),
    ("gradient checkpointing", "你提到 gradient checkpointing。DDP 把梯度分桶，反向时某个桶的梯度一算好就发起 all-reduce，"
                               "这对它有影响吗？", "gives a key point away"),
])
def test_a_thread_follow_up_is_accepted_only_when_every_check_holds(backprop, claim, question, reason):
    thread = check(ThreadProposal(claim=claim, question=question), backprop, ANSWER, "zh")
    assert thread.accepted is (reason == "") and reason in thread.reason


def test_the_embedded_model_says_the_written_line_at_once(tmp_path):
    assert Settings(home=tmp_path).resolved_phrasing() == "verbatim"
    assert not Settings(home=tmp_path).resolved_threads()
    assert Settings(home=tmp_path, phrasing="model").resolved_phrasing() == "model"  # opt-in
    endpoint = Settings(home=tmp_path, base_url="http://127.0.0.1:8000/v1")
    assert endpoint.resolved_phrasing() == "model" and endpoint.resolved_threads()


def test_no_model_call_on_the_embedded_default(tmp_path, store, scripted_model, scripted_grader):
    app = Interviewer.open(Settings(home=tmp_path, questions=1, seed=7, opening=False), model=scripted_model,
                           store=store, grader=scripted_grader)
    session = app.new_session()
    scripted_grader.enqueue("strong")
    session.answer("回答")
    assert scripted_model.calls == [] and session.pending["source"] == "written"
    app.close()


@pytest.fixture()
def capable(tmp_path, store, scripted_model, scripted_grader):
    """A 'capable endpoint' stood in for by the scripted model (the real server: test_real_model.py)."""
    settings = Settings(home=tmp_path, base_url="http://127.0.0.1:9/v1", questions=1, seed=7, followups=2, opening=False)
    app = Interviewer.open(settings, model=scripted_model, store=store, grader=scripted_grader)
    yield app
    app.close()


def test_a_thread_follow_up_is_asked_and_reported_with_its_claim(capable, scripted_model, scripted_grader):
    session = capable.new_session()
    q = capable.deps.bank.get(session.pending["qid"])
    term = next(t for t in q.tags)
    answer = f"{q.rubric.reference_answer.zh} 我们项目里还用过 gradient checkpointing 配合 {term}。"
    thread_q = f"你提到 gradient checkpointing，在 {term} 里它会让反向多出多少计算量？"
    scripted_model.enqueue({"claim": "gradient checkpointing", "question": thread_q})  # the thread proposal
    scripted_grader.enqueue("strong", "strong")
    session.answer(answer)
    assert session.pending["action"] == "thread" and session.pending["text"] == thread_q
    session.end()
    entry = session.report["questions"][0]
    assert entry["threads"] == [{"claim": "gradient checkpointing", "question": thread_q}]


def test_a_refused_thread_falls_back_to_the_written_probe(capable, scripted_model, scripted_grader):
    session = capable.new_session()
    q = capable.deps.bank.get(session.pending["qid"])
    scripted_model.enqueue({"claim": "周末", "question": "你周末喜欢做什么运动？"})
    scripted_grader.enqueue("strong")
    session.answer(q.rubric.reference_answer.zh)
    assert session.pending["action"] == "deepen"
    assert session.pending["text"] in [p.zh for p in q.rubric.probes]
    assert "thread refused" in session.state["current"]["decisions"][-1]["reason"]
