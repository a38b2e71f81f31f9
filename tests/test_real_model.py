"""Against the real embedded model server over HTTP (Qwen2.5-Coder-0.5B, llama.cpp).

    python -m pytest tests/test_real_model.py

Assertions are on the flow and on what is stored, never on the model's wording.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interviewer.errors import LocalModelError
from interviewer.local_model import MODELS, GGUFSpec, assemble
from interviewer.phrasing import Utterance
from interviewer.session import Interviewer

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[1]


def test_assembled_model_is_verified_once_then_reused(local_server, monkeypatch):
    import interviewer.local_model as local_model

    spec = MODELS["0.5b"]
    path = assemble(spec)
    stamp = path.with_name(f"{spec.name}.verified.json")
    assert stamp.exists() and path.stat().st_size == spec.size

    def rehash(*a, **kw):
        raise AssertionError("the verified file was hashed again (470 MB)")

    monkeypatch.setattr(local_model.hashlib, "sha256", rehash)
    assert assemble(spec) == path  # the stamp (sha256, size, mtime) says it was verified: reused as it is


def test_a_wrong_checksum_is_refused(tmp_path):
    bad = GGUFSpec(**{**MODELS["0.5b"].__dict__, "sha256": "0" * 64, "name": "tampered"})
    with pytest.raises(LocalModelError, match="expected 0000"):
        assemble(bad, tmp_path)
    assert not list(tmp_path.glob("*.gguf"))


def test_the_server_returns_schema_valid_json(real_model):
    out = real_model.structured([{"role": "user", "content": "Say hello as JSON with field utterance."}], Utterance)
    assert isinstance(out, Utterance)


def test_a_whole_two_question_interview_on_the_real_model(settings, store, real_model):
    app = Interviewer.open(settings, model=real_model, store=store)
    session = app.new_session(questions=2, followups=1)
    kinds = []
    while session.pending is not None:
        q = app.deps.bank.get(session.pending["qid"])
        kinds.append(session.pending["kind"])
        session.answer(q.rubric.reference_answer.zh if session.pending["kind"] == "question" else "不知道")
    report = session.report
    assert kinds.count("question") == 2 and "followup" in kinds
    assert len(report["questions"]) == 2
    for rec in session.state["results"]:
        grade = rec["answers"][0]["grade"]
        assert grade["grader"] == "embedding"
        assert {v["key"] for v in grade["verdicts"]} == {kp.id for kp in app.deps.bank.get(rec["qid"]).rubric.key_points}
        assert any(v["status"] == "covered" and v["evidence"] for v in grade["verdicts"])
    sources = {e.get("source") for e in session.state["transcript"] if e["role"] == "interviewer"}
    assert sources <= {"model", "written"}
    app.close()


def _read_until(proc, marker: str, timeout: float = 240) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        assert time.monotonic() < deadline, f"timed out waiting for {marker!r}; got {seen[-500:]!r}"
        ch = proc.stdout.read(1)
        assert ch, f"process ended early: {seen[-800:]!r}"
        seen += ch
    return seen


def test_a_killed_terminal_session_resumes_with_nothing_lost(tmp_path, store, local_server, real_model, settings):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(store.path, home / "chroma")
    cmd = [sys.executable, "-m", "interviewer", "-n", "2", "--base-url", local_server.base_url, "--model",
           local_server.alias, "--grader", "embedding", "--home", str(home), "--followups", "2"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, bufsize=0)
    out = _read_until(proc, "你> ")
    sid = out.split("Session ")[1].split()[0]
    proc.stdin.write("PPO 用 clip 把重要性比率限制在 1-ε 到 1+ε 之间，取 min 得到悲观下界。\n")
    proc.stdin.flush()
    _read_until(proc, "你> ")  # the answer was graded and a follow-up asked
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    app = Interviewer.open(settings.with_(home=home), model=real_model, store=store)
    session = app.session(sid)
    answers = [e["text"] for e in session.state["transcript"] if e["role"] == "candidate"]
    assert answers == ["PPO 用 clip 把重要性比率限制在 1-ε 到 1+ε 之间，取 min 得到悲观下界。"]
    assert session.pending is not None and session.pending["kind"] in ("followup", "question")
    assert session.state["current"]["answers"][0]["grade"]["verdicts"]
    session.skip()  # and it goes on from there
    app.close()


def test_the_cli_says_what_to_do_when_the_endpoint_is_dead(tmp_path):
    from interviewer.local_model import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    res = subprocess.run([sys.executable, "-m", "interviewer", "--base-url", url, "--home", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2
    assert url in res.stderr and "--base-url" in res.stderr


def test_the_session_shape_holds_on_the_real_model(settings, store, real_model):
    """Difficulty ramp, both sides, the follow-up budget, no repeats, scenario then experience at the end."""
    app = Interviewer.open(settings, model=real_model, store=store)
    session = app.new_session(questions=5, followups=1, track="algorithm", seed=11)
    while session.pending is not None:
        q = app.deps.bank.get(session.pending["qid"])
        session.answer(q.rubric.reference_answer.zh[:120])
    results = session.state["results"]
    sections = [r["section"] for r in results]
    core = [r["difficulty"] for r in results if r["section"] in ("algorithm", "infra")]
    assert core == sorted(core) and "infra" in sections
    assert sections[-1] == "meta" and sections[-2] == "scenario"
    assert all(len(r["answers"]) <= 2 for r in results)  # one seed answer + at most one follow-up
    assert len({r["qid"] for r in results}) == 5
    app.close()


def test_the_latency_benchmark_runs_and_prints_its_figures(home, store, local_server, capsys):
    from evals.bench import main as bench

    assert bench(["--base-url", local_server.base_url, "--model", local_server.alias, "--turns", "1",
                  "--home", str(home)]) == 0
    out = capsys.readouterr().out
    assert "first question on screen" in out and "a whole turn" in out and "model rewording" in out


def test_the_capable_path_is_wired_to_the_real_server(tmp_path, store, real_model, local_server):
    """An endpoint: transitions and thread follow-ups are asked for; whatever the small model says, what
    reaches the candidate is the written line (or an accepted thread question), at most preceded by a
    transition that passed the guard."""
    from interviewer.phrasing import acceptable_transition
    from interviewer.settings import Settings

    settings = Settings(home=tmp_path, base_url=local_server.base_url, grader="embedding", seed=7, opening=False)
    app = Interviewer.open(settings, model=real_model, store=store)
    session = app.new_session(questions=1, followups=1)
    q = app.deps.bank.get(session.pending["qid"])
    answer = q.rubric.reference_answer.zh + " 我们还用了 gradient checkpointing 来省显存。"
    session.answer(answer)
    p, d = session.pending, session.state["current"]["decisions"][-1]
    assert p is not None and p["action"] == d["action"]
    if d["action"] == "thread":  # an accepted thread question is said as it was checked
        assert p["text"] == d["question"] and d["evidence"]
    elif d["probe"] is not None:  # the written probe (or an accepted rewording), after a checked transition
        assert p["text"].endswith(q.rubric.probes[d["probe"]].zh) or p["source"] == "model"
        assert p["transition"] == "" or acceptable_transition(p["transition"], answer, "zh")
        assert p["text"].startswith(p["transition"])
    else:  # a clarification or a challenge quotes the candidate: said as written, no transition
        assert p["source"] == "written" and p["transition"] == ""
    app.close()
