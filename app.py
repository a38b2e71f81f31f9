"""The web interview: `python app.py` serves a Gradio session on 127.0.0.1 (embedded model by default)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def main(argv: list[str] | None = None) -> int:
    from interviewer.errors import InterviewerError
    from interviewer.session import Backend, Interviewer
    from interviewer.settings import add_model_flags, settings_from_args

    p = argparse.ArgumentParser(prog="python app.py", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--lang", choices=["zh", "en"])
    p.add_argument("-n", "--questions", type=int)
    p.add_argument("--coach", action="store_true", default=None)
    p.add_argument("--no-opening", dest="opening", action="store_false", default=None,
                   help="no opening by default (self-introduction and a drill into the resume's projects)")
    add_model_flags(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_args(args)
    from knowledge.bank import BankError

    try:
        backend = Backend.open(settings)
        print(f"Using {backend.description}; grader: {settings.resolved_grader()}", flush=True)
        app = Interviewer.open(settings, backend)
    except (InterviewerError, BankError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from interviewer.web import CSS, ENTER_JS, build_ui

    try:
        build_ui(app).queue(default_concurrency_limit=4).launch(
            server_name=args.host, server_port=args.port, allowed_paths=[str(settings.reports_dir)], css=CSS, js=ENTER_JS)
    finally:
        app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
