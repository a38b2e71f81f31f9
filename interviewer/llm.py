"""The one module that talks to a model: any OpenAI-compatible endpoint (vLLM, llama.cpp, hosted).

Everything else depends on the small `ChatModel` protocol, so the scripted fake in the tests
and the real server fit the same seam.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from typing import Protocol, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import openai
from pydantic import BaseModel, ValidationError

from interviewer.errors import EndpointError, ModelOutputError

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
Message = dict[str, str]


_SECRET_PATTERNS = [
    re.compile(r"(?i)(authorization|proxy-authorization|x-api-key|api[-_]?key|access[-_]?token|token|password|secret)"
               r"(\W{1,4})(bearer\s+|basic\s+)?[^\s\"',;&}]+"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{6,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
]
MAX_DETAIL = 200


def mask_url(url: str) -> str:
    """The URL as it may be shown: user and password, and every query value, replaced by ***."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<the configured endpoint URL>"
    netloc = ("***@" if parts.username or parts.password else "") + host + port
    query = urlencode([(k, "***") for k, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def mask_secrets(text: str, known: tuple[str, ...] = ()) -> str:
    """An upstream message as it may be shown: known secrets and anything that looks like a credential
    masked, cut to a couple of lines."""
    for secret in known:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _SECRET_PATTERNS[0].sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    for pattern in _SECRET_PATTERNS[1:]:
        text = pattern.sub("***", text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL] + "…"


class ChatModel(Protocol):
    name: str

    def complete(self, messages: list[Message], *, max_tokens: int = 400, temperature: float = 0.3) -> str: ...

    def structured(self, messages: list[Message], schema: type[T], *, max_tokens: int = 600) -> T: ...


def json_schema(schema: type[BaseModel]) -> dict:
    """The schema a server is asked to follow: closed objects, no `"items": false` (llama.cpp rejects it)."""

    def close(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                node.setdefault("additionalProperties", False)
            if node.get("items") is False:
                del node["items"]
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)
        return node

    return close(schema.model_json_schema())


class Usage:
    """Token counts over every call, incl. the prompt tokens the server's prefix cache served."""

    def __init__(self):
        self._lock = threading.Lock()
        self.calls = self.prompt_tokens = self.cached_tokens = self.completion_tokens = 0

    def add(self, resp) -> None:
        usage = getattr(resp, "usage", None)
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        timings = (getattr(resp, "model_extra", None) or {}).get("timings") or {}
        if cached is None and "cache_n" in timings:  # llama.cpp's own report
            cached = timings["cache_n"]
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt
            self.cached_tokens += cached or 0
            self.completion_tokens += getattr(usage, "completion_tokens", 0) or 0

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else float("nan")


class OpenAIChat:
    """A chat model behind an OpenAI-compatible endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0, retries: int = 2):
        self.base_url = base_url.rstrip("/")
        self.shown_url = mask_url(self.base_url)  # what messages say: never a credential
        self.name = model
        self.retries = retries
        self.usage = Usage()
        parts = urlsplit(self.base_url)
        self._secrets = tuple(x for x in (api_key, parts.password, parts.username,
                                          *(v for _, v in parse_qsl(parts.query))) if x)
        # a timed-out call is tried at most twice: a hanging endpoint costs 2 x timeout, not 3 x
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=min(retries, 1)
        )

    def _create(self, **kwargs) -> str:
        """The reply's text, or EndpointError: a malformed reply (no choices, HTML, cut-off JSON) is an error
        with a message, never a TypeError."""
        try:
            resp = self._client.chat.completions.create(model=self.name, **kwargs)
        except (openai.APIResponseValidationError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise EndpointError(f"The model endpoint {self.shown_url} sent a reply that is not valid JSON "
                                f"({type(exc).__name__}). Is --base-url an OpenAI-compatible /v1 URL?") from None
        except openai.APITimeoutError:
            raise EndpointError(
                f"The model at {self.shown_url} did not answer within the timeout. "
                "Try again, raise --timeout, or use a smaller/faster model."
            ) from None
        except openai.APIConnectionError:
            raise EndpointError(
                f"Cannot reach the model endpoint {self.shown_url}. Start the server (e.g. `vllm serve MODEL`), "
                "fix --base-url / OPENAI_BASE_URL, or unset them to use the embedded local model."
            ) from None
        except openai.AuthenticationError:
            raise EndpointError(f"{self.shown_url} refused the API key: set --api-key or OPENAI_API_KEY.") from None
        except openai.NotFoundError:
            raise EndpointError(f"{self.shown_url} has no model named {self.name!r}: check --model.") from None
        except openai.APIStatusError as exc:
            raise EndpointError(f"{self.shown_url} answered HTTP {exc.status_code}: "
                                f"{mask_secrets(str(exc.message), self._secrets)}") from None
        self.usage.add(resp)
        return self._content(resp)

    def _content(self, resp) -> str:
        choices = getattr(resp, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        content = getattr(message, "content", None)
        if message is None or not (content is None or isinstance(content, str)):
            shown = mask_secrets(resp if isinstance(resp, str) else repr(resp)[:300], self._secrets)
            raise EndpointError(f"The model endpoint {self.shown_url} sent a reply without a message "
                                f"({shown[:80]}). Is --base-url an OpenAI-compatible /v1 URL, and --model right?")
        return content or ""

    def complete(self, messages: list[Message], *, max_tokens: int = 400, temperature: float = 0.3) -> str:
        return self._create(messages=messages, max_tokens=max_tokens, temperature=temperature).strip()

    def structured(self, messages: list[Message], schema: type[T], *, max_tokens: int = 600) -> T:
        """Ask for `schema` as JSON output, validate it, retry a bounded number of times."""
        fmt = {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema(schema), "strict": True}}
        problem = ""
        for attempt in range(1 + self.retries):
            text = self._create(messages=messages, max_tokens=max_tokens, temperature=0.0, response_format=fmt)
            try:
                return schema.model_validate(json.loads(text))
            except (json.JSONDecodeError, ValidationError) as exc:
                problem = f"{type(exc).__name__}: {str(exc)[:200]}"
                log.warning("invalid %s from %s (attempt %d): %s", schema.__name__, self.name, attempt + 1, problem)
                time.sleep(0.2 * (attempt + 1))
        raise ModelOutputError(
            f"The model {self.name} at {self.shown_url} did not return a valid {schema.__name__} "
            f"after {1 + self.retries} attempts ({problem}). A larger model, or --grader embedding, avoids this."
        )

    def ping(self) -> None:
        """Fail early, with a clear message, when the endpoint is down."""
        try:
            self._client.with_options(max_retries=0, timeout=10).models.list()
        except openai.APIConnectionError:
            raise EndpointError(
                f"Cannot reach the model endpoint {self.shown_url}. Start the server, fix --base-url / "
                "OPENAI_BASE_URL, or unset them to use the embedded local model."
            ) from None
        except openai.APIStatusError:
            pass  # some servers have no /models route; the first real call will tell


class Replicas:
    """Several endpoints serving the same model as one ChatModel: each call goes to the replica with the
    fewest calls in flight (ties in turn), so concurrent answers spread over vLLM replicas or DP ranks."""

    def __init__(self, models: list):
        if not models:
            raise ValueError("Replicas needs at least one model")
        self.models = list(models)
        self.name = self.models[0].name
        self.in_flight = [0] * len(self.models)
        self.served = [0] * len(self.models)
        self._lock = threading.Lock()
        self._turn = 0

    def _call(self, method: str, *args, **kwargs):
        with self._lock:
            n = len(self.models)
            i = min(range(n), key=lambda k: (self.in_flight[k], (k - self._turn) % n))
            self._turn = (i + 1) % n
            self.in_flight[i] += 1
        try:
            return getattr(self.models[i], method)(*args, **kwargs)
        finally:
            with self._lock:
                self.in_flight[i] -= 1
                self.served[i] += 1

    def complete(self, messages: list[Message], **kwargs) -> str:
        return self._call("complete", messages, **kwargs)

    def structured(self, messages: list[Message], schema: type[T], **kwargs) -> T:
        return self._call("structured", messages, schema, **kwargs)
