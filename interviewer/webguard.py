"""Who may talk to the web app: the Host header, the Origin, and whose sessions a request sees.

A DNS-rebinding page reaches 127.0.0.1 under a foreign host name: requests whose Host (or Origin)
is not the bound host or an `--allowed-host` are refused before Gradio sees them. Sessions
belong to an owner: an account (Gradio auth, or a header set by a trusted reverse proxy) or
else an unguessable secret kept in the browser's local storage (never the session id).
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import socket
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse

log = logging.getLogger(__name__)
LOOPBACK = {"localhost", "127.0.0.1", "::1"}
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")


def allowed_hosts(bind: str, extra: list[str] = ()) -> set[str]:
    """Host names the app answers to: the bound address, loopback names when they reach it, and `extra`."""
    names = {h.lower().strip("[]") for h in extra}
    if bind in ("0.0.0.0", "::", ""):
        names |= LOOPBACK | {socket.gethostname().lower(), socket.getfqdn().lower()}
    else:
        names.add(bind.lower().strip("[]"))
        if bind in LOOPBACK or bind.startswith("127."):
            names |= LOOPBACK
    return names


def hostname(value: str) -> str:
    """'Example.com:7860' / 'http://[::1]:7860' -> 'example.com' / '::1'."""
    try:
        return (urlsplit(value if "//" in value else f"//{value}").hostname or "").lower()
    except ValueError:
        return ""


class HostGuard:
    """ASGI middleware: 403 for a foreign Host or Origin, before any route (or CORS header) answers."""

    def __init__(self, app, allowed: set[str]):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            headers = Headers(scope=scope)
            host, origin = hostname(headers.get("host", "")), headers.get("origin")
            bad = host not in self.allowed or (origin is not None and hostname(origin) not in self.allowed)
            if bad:
                log.warning("refused a request for host %r from origin %r", headers.get("host"), origin)
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                response = PlainTextResponse(
                    "This host name is not served here. Start the app with --allowed-host NAME to allow it.",
                    status_code=403)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def new_browser_token() -> str:
    return secrets.token_urlsafe(32)


def owner_of(token: str | None, username: str | None) -> str | None:
    """The owner a request acts for: its account, else its browser's secret (hashed: the database never
    holds the secret itself); None when it has neither (it then sees no session)."""
    if username:
        return f"user:{username}"
    if isinstance(token, str) and _TOKEN.fullmatch(token):
        return "browser:" + hashlib.sha256(token.encode()).hexdigest()[:40]
    return None


def read_auth_file(path) -> list[tuple[str, str]]:
    """`user:password` lines (blank lines and # comments skipped)."""
    pairs = []
    for n, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, password = line.partition(":")
        if not sep or not user or not password:
            raise ValueError(f"{path}:{n}: expected user:password")
        pairs.append((user, password))
    return pairs
