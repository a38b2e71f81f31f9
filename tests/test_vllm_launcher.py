"""The vLLM launcher's process handling, on a STAND-IN executable (tests/standin_vllm.py), not vLLM.

    python -m pytest tests/test_vllm_launcher.py

Real child processes, real HTTP on 127.0.0.1, real signals. What vLLM itself does with the flags
is checked by the opt-in `pytest -m vllm` test (tests/test_vllm_real.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from interviewer.errors import VLLMError
from interviewer.llm import OpenAIChat
from interviewer.vllm_server import VLLMOptions, VLLMServer, serve_args

STANDIN = f"{sys.executable} {Path(__file__).with_name('standin_vllm.py')}"
ROOT = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _gone(pids, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.2)
    return False


def _pids(path: Path, within: float = 15.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.1)
    raise AssertionError("the stand-in never wrote its pids")


def opts(**kw) -> VLLMOptions:
    return VLLMOptions(**{"model": "Qwen/Qwen2.5-0.5B-Instruct", "device": "cpu", "executable": STANDIN,
                          "start_timeout": 30, **kw})


@pytest.fixture()
def standin_env(monkeypatch, tmp_path):
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("STANDIN_PIDS", str(pidfile))
    monkeypatch.setenv("STANDIN_DELAY", "1.5")
    return pidfile


def test_start_waits_for_health_then_serves_and_stops_every_process(standin_env, tmp_path):
    lines = []
    started = time.monotonic()
    server = VLLMServer(opts(served_name="qwen"), tmp_path / "logs", progress=lines.append)
    assert time.monotonic() - started >= 1.4  # it waited for /health, not just for the port
    pids = _pids(standin_env)
    assert all(_alive(p) for p in pids)
    assert any("ready" in line and server.base_url in line for line in lines)
    OpenAIChat(server.base_url, server.name).ping()
    assert OpenAIChat(server.base_url, server.name).complete([{"role": "user", "content": "hi"}]) == '{"score": 5}'
    logged = server.log_path.read_text()
    assert "--served-model-name qwen" in logged and "--max-model-len 8192" in logged
    server.stop()
    assert _gone(pids, within=5), "the server or its worker outlived stop()"
    server.stop()  # idempotent


def test_gpu_flags_and_structured_outputs_are_passed():
    args = serve_args(VLLMOptions(model="m", tensor_parallel_size=2, gpu_memory_utilization=0.8), 8123)
    assert args[:2] == ["serve", "m"]
    assert args[args.index("--tensor-parallel-size") + 1] == "2"
    assert args[args.index("--gpu-memory-utilization") + 1] == "0.8"
    assert args[args.index("--host") + 1] == "127.0.0.1"
    assert "--structured-outputs-config.backend" in args
    assert "--gpu-memory-utilization" not in serve_args(VLLMOptions(model="m", device="cpu"), 8123)


def test_exit_during_startup_names_the_log_and_shows_its_last_lines(monkeypatch, standin_env, tmp_path):
    monkeypatch.setenv("STANDIN_MODE", "crash")
    with pytest.raises(VLLMError) as err:
        VLLMServer(opts(), tmp_path / "logs", progress=lambda _: None)
    msg = str(err.value)
    assert "exited during start-up (exit code 3)" in msg
    assert str(tmp_path / "logs") in msg and "CUDA out of memory" in msg
    assert _gone(_pids(standin_env), within=5)


def test_timeout_stops_the_server(monkeypatch, standin_env, tmp_path):
    monkeypatch.setenv("STANDIN_MODE", "hang")
    started = time.monotonic()
    with pytest.raises(VLLMError, match=r"did not become healthy within 3s") as err:
        VLLMServer(opts(start_timeout=3), tmp_path / "logs", progress=lambda _: None)
    assert 3 <= time.monotonic() - started < 20
    assert "stand-in vllm: listening" in str(err.value)  # the log's last lines
    assert _gone(_pids(standin_env), within=5)


def test_vllm_missing_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("RLI_VLLM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(VLLMError, match="vLLM is not installed"):
        VLLMServer(opts(executable=None), tmp_path / "logs")
    with pytest.raises(VLLMError, match="does not exist"):
        VLLMServer(opts(executable=str(tmp_path / "nope" / "vllm")), tmp_path / "logs")


def test_no_gpu_visible_is_refused_before_starting(monkeypatch, standin_env, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    with pytest.raises(VLLMError, match="No GPU is visible"):
        VLLMServer(opts(device="auto"), tmp_path / "logs")
    assert not standin_env.exists()  # nothing was started


PARENT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from interviewer.vllm_server import VLLMOptions, VLLMServer
    opts = VLLMOptions(model="m", device="cpu", executable=sys.argv[1], start_timeout=30)
    with VLLMServer(opts, Path(sys.argv[2]), progress=lambda line: print(line, flush=True)):
        print("UP", flush=True)
        time.sleep(120)
""")


def _parent(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", PARENT, STANDIN, str(tmp_path / "logs")], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    for line in proc.stdout:
        if line.strip() == "UP":
            return proc
    raise AssertionError(f"the parent never came up (exit {proc.wait()})")


def test_no_orphan_when_the_parent_is_killed(standin_env, tmp_path):
    parent = _parent(tmp_path)
    pids = _pids(standin_env)
    parent.kill()  # SIGKILL: no finally, no atexit runs in the parent
    parent.wait()
    assert _gone(pids), "vLLM (or its worker) outlived a killed parent"


def test_ctrl_c_in_the_parent_stops_the_server(standin_env, tmp_path):
    parent = _parent(tmp_path)
    pids = _pids(standin_env)
    parent.send_signal(signal.SIGINT)
    assert parent.wait(timeout=30) != 0
    assert _gone(pids, within=5)
