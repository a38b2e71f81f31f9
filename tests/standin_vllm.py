"""A STAND-IN for `vllm serve`, for testing the launcher's process handling in CI. Not vLLM.

Takes the same command line (`serve MODEL --port P --served-model-name N ...`), logs a few lines,
answers /health, /v1/models and /v1/chat/completions (with a fixed reply) on 127.0.0.1 and, like
vLLM, starts a worker process of its own. STANDIN_MODE picks the behaviour:
  ok    healthy after STANDIN_DELAY seconds (default 1)
  crash logs a traceback-like line and exits with code 3 during start-up
  hang  never becomes healthy
STANDIN_PIDS, if set, is a file the stand-in writes its own and its worker's pid to.
STANDIN_REPLY is the chat reply's content (default {"score": 5}).
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--served-model-name")
    args, rest = p.parse_known_args()
    mode, delay = os.environ.get("STANDIN_MODE", "ok"), float(os.environ.get("STANDIN_DELAY", "1"))
    print(f"INFO stand-in vllm: serving {args.model} on port {args.port}; other flags {rest}", flush=True)
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if os.environ.get("STANDIN_PIDS"):
        with open(os.environ["STANDIN_PIDS"], "w") as f:
            f.write(f"{os.getpid()} {worker.pid}\n")
    if mode == "crash":
        time.sleep(0.5)
        print("ERROR stand-in vllm: torch.OutOfMemoryError: CUDA out of memory (simulated)", flush=True)
        worker.kill()
        return 3
    ready_at = time.monotonic() + (1e9 if mode == "hang" else delay)
    name = args.served_model_name or args.model
    counts = {"chat": 0, "in_flight": 0, "max_in_flight": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if time.monotonic() < ready_at:
                return self._send(503, {"error": "loading"})
            if self.path == "/health":
                return self._send(200, {})
            if self.path == "/v1/models":
                return self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "standin"}]})
            if self.path == "/stats":
                return self._send(200, counts)
            return self._send(404, {"error": "no route"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with lock:
                counts["chat"] += 1
                counts["in_flight"] += 1
                counts["max_in_flight"] = max(counts["max_in_flight"], counts["in_flight"])
            time.sleep(float(os.environ.get("STANDIN_LATENCY", "0")))
            with lock:
                counts["in_flight"] -= 1
            reply = os.environ.get("STANDIN_REPLY", '{"score": 5}')
            return self._send(200, {
                "id": "standin", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print("INFO stand-in vllm: listening", flush=True)
    try:
        server.serve_forever()
    finally:
        worker.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
