"""Candidate text shown as text: in the chat, the coach panel and the reports it can never be HTML.

Markdown emphasis and `$...$` LaTeX still render; tags, styles and remote images do not.
"""

from __future__ import annotations

import html
import re

_IMAGE = re.compile(r"!(?=\[)")  # ![alt](url) and ![alt][ref] would load a remote image


def as_text(text: str) -> str:
    """`text` for a Markdown renderer: HTML escaped (so `<style>` shows as written), images disarmed."""
    return _IMAGE.sub("&#33;", html.escape(text or "", quote=False))


def said_as(sentence: str) -> str:
    """The candidate's sentence that was read as a wrong claim, put before the claim ("“…” → the claim")."""
    return f"“{as_text(sentence)}” → " if sentence else ""
