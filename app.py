"""The web interview: `python app.py` serves a Gradio session on 127.0.0.1 (embedded model by default).

Requests for any other host name are refused (--allowed-host adds one). Each browser sees only
its own sessions; for a shared deployment (--host 0.0.0.0) add accounts with --auth / --auth-file,
or trust the user name a reverse proxy puts in a header (--user-header).
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import signal
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
log = logging.getLogger("app")


def parse_args(argv):
    from interviewer.settings import add_model_flags, positive_int

    p = argparse.ArgumentParser(prog="python app.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name (or address) browsers may use to reach the app, besides the bound one")
    p.add_argument("--auth", action="append", default=[], metavar="USER:PASSWORD", help="an account (repeatable)")
    p.add_argument("--auth-file", type=Path, help="accounts, one user:password per line")
    p.add_argument("--user-header", metavar="HEADER",
                   help="trust this header (set by your reverse proxy, e.g. X-Forwarded-User) as the account name")
    p.add_argument("--lang", choices=["zh", "en"])
    p.add_argument("-n", "--questions", type=positive_int)
    p.add_argument("--coach", action="store_true", default=None)
    p.add_argument("--no-opening", dest="opening", action="store_false", default=None,
                   help="no opening by default (self-introduction and a drill into the resume's projects)")
    add_model_flags(p)
    args = p.parse_args(argv)
    if (args.auth or args.auth_file) and args.user_header:
        p.error("--auth/--auth-file and --user-header exclude each other: choose one way to log in")
    return args


def accounts(args) -> list[tuple[str, str]]:
    from interviewer.webguard import read_auth_file

    pairs = []
    for item in args.auth:
        user, sep, password = item.partition(":")
        if not sep or not user or not password:
            raise ValueError(f"--auth {user or '?'}:…: expected USER:PASSWORD")
        pairs.append((user, password))
    if args.auth_file:
        pairs += read_auth_file(args.auth_file)
    return pairs


def storage_secret(home: Path) -> str:
    """The key for the browser's local storage, kept in the data folder so a restart keeps browsers' identities."""
    path = home / "web-secret"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(24))
        path.chmod(0o600)
    return path.read_text().strip()


def stopped(signum, frame) -> None:
    print("Stopped.", flush=True)
    raise SystemExit(0)


class ShutdownNoise(logging.Filter):
    """Drops uvicorn's traceback for each browser connection it cancels on SIGTERM or Ctrl-C (an open chat stream
    outlives the 3 s grace period): a deliberate stop is not an error, and pages of tracebacks hide the real ones."""

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio

        if record.msg.startswith("Cancel %s running task(s)"):  # the one-line summary of the same
            return False
        return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


def serve(app, args, logins) -> None:
    import gradio as gr
    import uvicorn
    from fastapi import FastAPI
    from starlette.middleware.cors import CORSMiddleware

    from interviewer.web import CSS, ENTER_JS, build_ui
    from interviewer.webguard import HostGuard, allowed_hosts

    hosts = allowed_hosts(args.host, args.allowed_host)
    demo = build_ui(app, storage_secret(app.settings.home)).queue(default_concurrency_limit=4)
    server = FastAPI()
    origins = [f"{scheme}://{h}:{args.port}" for h in hosts for scheme in ("http", "https")]
    server.add_middleware(CORSMiddleware, allow_origins=origins, allow_credentials=True, allow_methods=["*"],
                          allow_headers=["*"])  # Gradio then adds no CORS headers of its own
    server.add_middleware(HostGuard, allowed=hosts)  # outermost: a foreign host gets nothing, not even CORS
    header = args.user_header
    server = gr.mount_gradio_app(
        server, demo, path="/", server_name=args.host, server_port=args.port,
        auth=logins or None, auth_dependency=(lambda request: request.headers.get(header) or None) if header else None,
        blocked_paths=[str(app.settings.home)], css=CSS, js=ENTER_JS)
    if args.host not in ("127.0.0.1", "localhost", "::1") and not (logins or header):
        log.warning("serving on %s without accounts: anyone who can reach the port can start interviews "
                    "(each browser still sees only its own). Add --auth or --user-header for a shared deployment.",
                    args.host)
    print(f"Serving on http://{args.host}:{args.port} (host names: {', '.join(sorted(hosts))})", flush=True)
    logging.getLogger("uvicorn.error").addFilter(ShutdownNoise())
    for sig in (signal.SIGTERM, signal.SIGINT):  # uvicorn re-raises the stop signal once it has shut down: exit
        signal.signal(sig, stopped)  # through main's clean-up (model server, store) instead of dying at once
    try:
        uvicorn.run(server, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=3)
    finally:
        demo.web.close()


def main(argv: list[str] | None = None) -> int:
    from interviewer.errors import InterviewerError
    from interviewer.session import Backend, Interviewer
    from interviewer.settings import settings_from_args
    from knowledge.bank import BankError

    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    backend = app = None
    try:
        logins = accounts(args)
        settings = settings_from_args(args)
        backend = Backend.open(settings)
        print(f"Using {backend.description}; grader: {settings.resolved_grader()}", flush=True)
        app = Interviewer.open(settings, backend)
        serve(app, args, logins)
    except (InterviewerError, BankError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if app:
            app.close()
        elif backend:
            backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
