"""All settings in one place: flags override project variables, which override OPENAI_* ones."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Literal

Lang = Literal["zh", "en"]
GraderName = Literal["auto", "embedding", "llm", "llm-per-point", "hybrid"]

SECTIONS = ("algorithm", "infra", "scenario", "meta")


def _env(*names: str, default: str | None = None) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return default


def data_home() -> Path:
    return Path(_env("RLI_HOME", default=str(Path.home() / ".local" / "share" / "rl-interviewer")))


@dataclass(frozen=True)
class Settings:
    # the model
    base_url: str | None = None  # None: start the embedded llama.cpp server
    model: str | None = None
    api_key: str | None = None
    local_model: str = "auto"  # auto | 0.5b | 1.5b
    gguf: str | None = None  # a GGUF file of the user's own
    timeout: float = 120.0
    retries: int = 2  # extra attempts after an invalid JSON answer or a transient HTTP error
    # auto: the written line at once on the embedded model, the model's wording on an endpoint
    phrasing: Literal["auto", "model", "verbatim"] = "auto"
    # thread follow-ups (the model proposes a question on a claim the candidate made): auto = endpoint only
    threads: Literal["auto", "on", "off"] = "auto"
    grader: GraderName = "auto"
    # the session
    lang: Lang = "zh"
    questions: int = 4
    track: Literal["algorithm", "infra", "mixed"] = "mixed"
    infra_share: float = 0.35  # share of infra questions on the algorithm track (and vice versa)
    followups: int = 3  # follow-up budget per question
    coach: bool = False  # show verdicts after every answer
    opening: bool = True  # with a resume: a self-introduction and a drill into 1-2 of its projects first
    show_scores: bool = False  # print the score of each answer live
    max_answer_chars: int = 8000
    seed: int | None = None
    home: Path = field(default_factory=data_home)

    @property
    def embedded(self) -> bool:
        return not self.base_url

    @property
    def db_path(self) -> Path:
        return self.home / "sessions.sqlite"

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"

    @property
    def store_path(self) -> Path:
        return self.home / "chroma"

    @property
    def capable(self) -> bool:
        """A model worth asking for transitions and thread follow-ups: an endpoint, not the embedded one."""
        return not self.embedded

    def resolved_phrasing(self) -> str:
        if self.phrasing != "auto":
            return self.phrasing
        return "model" if self.capable else "verbatim"

    def resolved_threads(self) -> bool:
        return self.threads == "on" or (self.threads == "auto" and self.capable)

    def resolved_grader(self) -> str:
        if self.grader != "auto":
            return self.grader
        return "embedding" if self.embedded else "llm"

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        env = {
            "base_url": _env("RLI_BASE_URL", "OPENAI_BASE_URL"),
            "model": _env("RLI_MODEL", "OPENAI_MODEL"),
            "api_key": _env("RLI_API_KEY", "OPENAI_API_KEY"),
            "local_model": _env("RLI_LOCAL_MODEL", default="auto"),
            "gguf": _env("RLI_GGUF"),
            "grader": _env("RLI_GRADER", default="auto"),
            "phrasing": _env("RLI_PHRASING", default="auto"),
            "threads": _env("RLI_THREADS", default="auto"),
            "home": data_home(),
        }
        if _env("RLI_TIMEOUT"):
            env["timeout"] = float(_env("RLI_TIMEOUT"))
        merged = {**env, **{k: v for k, v in overrides.items() if v is not None}}
        return cls(**merged)

    def with_(self, **changes) -> "Settings":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("model (default: the embedded local model)")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. a vLLM server (env RLI_BASE_URL / OPENAI_BASE_URL)")
    g.add_argument("--model", help="model name at that endpoint (env RLI_MODEL / OPENAI_MODEL)")
    g.add_argument("--api-key", help="API key (env RLI_API_KEY / OPENAI_API_KEY)")
    g.add_argument("--local-model", choices=["auto", "0.5b", "1.5b"], help="which embedded model to serve")
    g.add_argument("--gguf", help="serve this GGUF file with the embedded server instead")
    g.add_argument("--timeout", type=float, help="seconds per model call (default 120)")
    g.add_argument("--grader", choices=["auto", "embedding", "llm", "llm-per-point", "hybrid"],
                   help="auto: key-point matching on the embedded model, the LLM judge on an endpoint")
    g.add_argument("--phrasing", choices=["auto", "model", "verbatim"],
                   help="let the model adapt the wording of questions (auto: on an endpoint only; the embedded "
                        "model says the written line at once)")
    g.add_argument("--threads", choices=["auto", "on", "off"],
                   help="thread follow-ups on a claim the candidate made (auto: on an endpoint only)")
    g.add_argument("--home", type=Path, help="where sessions, reports and the store live (env RLI_HOME)")


def settings_from_args(args: argparse.Namespace, **extra) -> Settings:
    known = {f.name for f in fields(Settings)}
    given = {k: v for k, v in vars(args).items() if k in known and v is not None}
    return Settings.from_env(**{**given, **extra})
