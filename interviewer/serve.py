"""`python -m interviewer serve --model NAME`: start vLLM, print its endpoint, keep it up until Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from interviewer.errors import InterviewerError
from interviewer.settings import add_vllm_flags, settings_from_args
from interviewer.vllm_server import start_vllm


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m interviewer serve", description=__doc__)
    p.add_argument("--model", required=True, help="Hugging Face id or local folder, e.g. Qwen/Qwen2.5-7B-Instruct")
    p.add_argument("--home", type=Path, help="vLLM's log goes to HOME/logs (env RLI_HOME)")
    add_vllm_flags(p, engine=False)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_args(args, engine="vllm")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `kill` stops vLLM too (the finally below)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, even where a shell started us ignoring it
    try:
        server = start_vllm(settings)
    except InterviewerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    try:
        print(f"endpoint: {server.base_url}  model: {server.name}  log: {server.log_path}", flush=True)
        print(f"use it with: python -m interviewer --base-url {server.base_url} --model {server.name}"
              "   (Ctrl-C stops the server)", flush=True)
        server.proc.wait()
        print(f"error: vLLM exited. Its log is {server.log_path}; the last lines:\n{server.tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
