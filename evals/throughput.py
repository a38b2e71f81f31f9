"""Eval throughput: answers per second at several concurrencies, against the server's own rate.

At each concurrency C a fresh slice of answers is graded by the real eval code (`run_grader`,
the product grader). Every model request it makes is recorded, and then the same requests are
sent again straight to the server, C at a time, with no grading around them: the server's own
throughput on the same requests. The ratio eval / server, from the same run, says how much of
what the server can do the eval pipeline gets. The replay meets a warm prefix cache (it repeats
requests just sent), so it is an upper bound of the server's rate and the ratio a lower bound.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from evals.runner import run_grader
from interviewer.errors import InterviewerError


class Recorder:
    """A ChatModel that forwards every call and keeps it, to be replayed later."""

    def __init__(self, model):
        self.model, self.name = model, model.name
        self.calls: list[tuple[str, tuple, dict]] = []
        self._lock = threading.Lock()

    def _keep(self, method: str, args: tuple, kwargs: dict):
        with self._lock:
            self.calls.append((method, args, kwargs))
        return getattr(self.model, method)(*args, **kwargs)

    def complete(self, messages, **kwargs):
        return self._keep("complete", (messages,), kwargs)

    def structured(self, messages, schema, **kwargs):
        return self._keep("structured", (messages, schema), kwargs)


@dataclass
class Level:
    concurrency: int
    answers: int
    eval_rate: float  # answers per second through the eval
    server_rate: float  # answers per second when the server gets the same requests directly
    calls: int
    cached_share: float  # prompt tokens served from the prefix cache during the eval (nan if not reported)
    errors: int

    @property
    def ratio(self) -> float:
        return self.eval_rate / self.server_rate if self.server_rate else float("nan")


def _replay(model, calls, concurrency: int) -> float:
    def one(call):
        method, args, kwargs = call
        try:
            getattr(model, method)(*args, **kwargs)
        except InterviewerError:  # an invalid or failed answer still took the server's time: counted as done
            pass

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, calls))
    return time.monotonic() - started


def _usage(model) -> tuple[int, int]:
    models = getattr(model, "models", [model])
    return (sum(getattr(getattr(m, "usage", None), "prompt_tokens", 0) for m in models),
            sum(getattr(getattr(m, "usage", None), "cached_tokens", 0) for m in models))


def measure(items, store, model, grader: str, levels: list[int], per_level: int) -> list[Level]:
    """Fresh answers at every level (none graded before, so the prefix cache helps only as it would live)."""
    out = []
    for i, c in enumerate(levels):
        batch = items[i * per_level : (i + 1) * per_level] or items[:per_level]
        rec = Recorder(model)
        p0, k0 = _usage(model)
        run = run_grader(grader, batch, store, rec, concurrency=c)
        p1, k1 = _usage(model)
        replay_seconds = _replay(model, list(rec.calls), c)
        n = len(run.rows)
        out.append(Level(c, n, n / run.seconds if run.seconds else float("nan"),
                         len(batch) / replay_seconds if replay_seconds else float("nan"), len(rec.calls),
                         (k1 - k0) / (p1 - p0) if p1 > p0 else float("nan"), run.errors))
    return out


def table(levels: list[Level]) -> str:
    base = levels[0].eval_rate if levels else float("nan")
    lines = ["| concurrency | answers | eval answers/s | server answers/s (same requests) | ratio | eval speed-up vs 1st | cached prompt share |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for lv in levels:
        lines.append(f"| {lv.concurrency} | {lv.answers} | {lv.eval_rate:.3f} | {lv.server_rate:.3f} | {lv.ratio:.2f} | "
                     f"{lv.eval_rate / base:.2f} | {lv.cached_share:.0%} |")
    return "\n".join(lines)
