"""Reading a candidate's resume (PDF, Markdown or plain text). The text is data, never instructions."""

from __future__ import annotations

from pathlib import Path

from interviewer.errors import InterviewerError

MAX_RESUME_CHARS = 20000


def read_resume(path: Path | str) -> str:
    path = Path(path)
    if not path.is_file():
        raise InterviewerError(f"resume file {path} not found")
    if path.suffix.lower() == ".pdf":
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

        try:
            text = "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)
        except (PdfReadError, ValueError) as exc:
            raise InterviewerError(f"could not read the PDF {path}: {exc}; save it as text or Markdown instead") from None
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InterviewerError(f"{path} is not UTF-8 text; save it as UTF-8, or as PDF") from None
    text = text.strip()
    if not text:
        raise InterviewerError(f"{path} has no text (a scanned PDF?); paste the text instead")
    return text[:MAX_RESUME_CHARS]
