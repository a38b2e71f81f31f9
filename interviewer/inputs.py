"""What the candidate types, made safe to grade and store: invalid text repaired, invisible text refused.

Shared by the terminal, the web app and the evals, so every entry point treats input alike.
"""

from __future__ import annotations

import re

from interviewer.errors import AnswerRejected

# control characters, and characters that are invisible or reorder text (zero-width, bidi, BOM, soft hyphen)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                      r"\u2066-\u2069\ufeff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
MAX_RESUME_CHARS = 20000


def repair(text: str) -> tuple[str, int]:
    """(text, n): lone surrogates (undecodable bytes read with surrogateescape, or sent as JSON escapes)
    become U+FFFD, so the text can be encoded as UTF-8 everywhere; n says how many were replaced."""
    fixed, n = _SURROGATE.subn(REPLACEMENT, text)
    return fixed, n


def repaired_note(n: int) -> str:
    return (f"{n} character(s) of your answer were not valid UTF-8 text and were replaced by {REPLACEMENT}; "
            "check your terminal's encoding (UTF-8) if that was not intended.") if n else ""


def clean_answer(text: str | None, max_chars: int) -> str:
    """The answer as it will be graded, or AnswerRejected with a message saying what to do."""
    text, _ = repair(text or "")
    text = _CONTROL.sub("", text).replace("\r\n", "\n").strip()
    if not text.replace(REPLACEMENT, "").strip():
        raise AnswerRejected("The answer is empty (or has only invisible or unreadable characters). Type your answer, "
                             "or /skip to skip the question, /quit to save and leave.")
    if len(text) > max_chars:
        raise AnswerRejected(
            f"The answer is {len(text)} characters; the limit is {max_chars}. Shorten it to the key points "
            "(an interviewer would stop you too) and send it again."
        )
    return text


def clean_resume(text: str | None) -> str:
    """A pasted or read resume: repaired, and refused over the size limit (it is stored in every checkpoint)."""
    text, _ = repair(text or "")
    text = _CONTROL.sub("", text).strip()
    if len(text) > MAX_RESUME_CHARS:
        raise AnswerRejected(f"The resume is {len(text)} characters; the limit is {MAX_RESUME_CHARS}. "
                             "Paste the relevant part (projects, methods, systems) and start again.")
    return text
