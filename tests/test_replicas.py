"""Evals against endpoints: `--base-url` given twice spreads the answers over both; the throughput mode.

    python -m pytest tests/test_replicas.py

The two endpoints are STAND-INs for vLLM replicas (tests/standin_vllm.py: real HTTP on 127.0.0.1,
a fixed reply); what is tested is how the calls are spread, not grading.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from evals.__main__ import main as evals_main
from interviewer.llm import Replicas
from interviewer.local_model import free_port

STANDIN = Path(__file__).with_name("standin_vllm.py")


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


@pytest.fixture()
def two_replicas():
    procs, urls = [], []
    env = {**os.environ, "STANDIN_DELAY": "0", "STANDIN_LATENCY": "0.2"}
    for _ in range(2):
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, str(STANDIN), "serve", "m", "--port", str(port)], env=env,
                                      stdout=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}")
    for url in urls:
        deadline = time.monotonic() + 20
        while True:
            try:
                _get(url + "/health")
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
    yield urls
    for p in procs:
        p.kill()
        p.wait()


def test_evals_spread_answers_over_every_base_url(two_replicas, home, store, tmp_path):
    a, b = two_replicas
    from evals.cases import CASES_DIR

    code = evals_main(["--base-url", a + "/v1", "--base-url", b + "/v1", "--model", "m", "--graders", "no-rubric",
                       "--cases", str(CASES_DIR), "--limit", "12", "--concurrency", "4", "--home", str(home),
                       "--out", str(tmp_path)])
    assert code == 0
    counts = [_get(u + "/stats")["chat"] for u in (a, b)]
    assert sum(counts) == 12 and min(counts) >= 4, counts  # both replicas graded a fair share
    metrics = json.loads(next(tmp_path.glob("*/metrics.json")).read_text())
    assert metrics["no-rubric"]["overall"]["errors"] == 0


class _Slow:
    def __init__(self, name):
        self.name, self.calls = name, 0

    def complete(self, messages, **kw):
        self.calls += 1
        time.sleep(0.05)
        return self.name


def test_a_call_goes_to_the_least_busy_replica():
    fast, slow = _Slow("a"), _Slow("b")
    pool = Replicas([fast, slow])
    threads = [threading.Thread(target=pool.complete, args=([],)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fast.calls + slow.calls == 8 and abs(fast.calls - slow.calls) <= 2
    assert pool.in_flight == [0, 0] and sum(pool.served) == 8


def test_throughput_mode_reports_every_level_against_the_same_requests(two_replicas, home, store, capsys):
    from evals.bench import main as bench_main

    code = bench_main(["--throughput", "--base-url", two_replicas[0] + "/v1", "--model", "m", "--grader", "no-rubric",
                       "--concurrency", "1,4", "--answers", "8", "--home", str(home)])
    assert code == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 1 |") or line.startswith("| 4 |")]
    assert len(rows) == 2
    one, four = ([float(x) for x in r.strip("|").split("|")[2:5]] for r in rows)
    assert all(x > 0 for x in one + four)  # the figures themselves are the benchmark's (timing is not asserted here)
    stats = _get(two_replicas[0] + "/stats")
    assert stats["chat"] == 2 * (8 + 8)  # every request sent twice: eval + replay
    assert stats["max_in_flight"] >= 2 and stats["in_flight"] == 0  # the level of 4 really kept requests in flight
