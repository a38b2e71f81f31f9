"""The model seam over real HTTP: retries, bounded attempts, clear errors.

    python -m pytest tests/test_llm.py
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from interviewer.errors import EndpointError, ModelOutputError
from interviewer.llm import OpenAIChat, json_schema
from interviewer.local_model import free_port


class Answer(BaseModel):
    utterance: str
    tags: list[str]


class Scripted(BaseHTTPRequestHandler):
    """Serves /v1/chat/completions from a list of (status, content) pairs."""

    script: list = []
    bodies: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        status, content = type(self).script.pop(0) if type(self).script else (200, "{}")
        payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}
        data = json.dumps(payload if status == 200 else {"error": {"message": content}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    Scripted.script, Scripted.bodies = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Scripted)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_structured_output_is_requested_with_a_json_schema(server):
    Scripted.script = [(200, json.dumps({"utterance": "hi", "tags": ["a"]}))]
    out = OpenAIChat(server, "m").structured([{"role": "user", "content": "x"}], Answer)
    assert out == Answer(utterance="hi", tags=["a"])
    fmt = Scripted.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["additionalProperties"] is False


def test_invalid_json_is_retried_then_accepted(server):
    Scripted.script = [(200, "not json"), (200, json.dumps({"utterance": "ok", "tags": []}))]
    assert OpenAIChat(server, "m", retries=2).structured([], Answer).utterance == "ok"
    assert len(Scripted.bodies) == 2


def test_invalid_output_gives_up_after_the_bounded_attempts(server):
    Scripted.script = [(200, '{"utterance": 1}')] * 5
    with pytest.raises(ModelOutputError, match="after 3 attempts"):
        OpenAIChat(server, "m", retries=2).structured([], Answer)
    assert len(Scripted.bodies) == 3


def test_a_transient_server_error_is_retried(server):
    Scripted.script = [(503, "busy"), (200, "fine")]
    assert OpenAIChat(server, "m", retries=2).complete([{"role": "user", "content": "x"}]) == "fine"


def test_a_dead_endpoint_names_the_url_and_what_to_do():
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAIChat(url, "m", timeout=3, retries=0)
    with pytest.raises(EndpointError, match=r"Cannot reach the model endpoint http://127\.0\.0\.1:\d+/v1.*--base-url"):
        model.complete([{"role": "user", "content": "x"}])
    with pytest.raises(EndpointError, match="Cannot reach"):
        model.ping()


def test_the_schema_never_contains_items_false():
    class Pair(BaseModel):
        both: tuple[int, int]

    assert '"items": false' not in json.dumps(json_schema(Pair))
