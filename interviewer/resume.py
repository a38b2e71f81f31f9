"""Reading a candidate's resume (PDF, Markdown or plain text). The text is data, never instructions."""

from __future__ import annotations

from pathlib import Path

from interviewer.errors import InterviewerError
from interviewer.inputs import MAX_RESUME_CHARS, repair


def read_resume(path: Path | str, shown: str | None = None) -> str:
    """The resume's text; `shown` is how messages name the file (the web app gives the upload's own name,
    never the server's temporary path)."""
    path = Path(path)
    name = shown or str(path)
    if not path.is_file():
        raise InterviewerError(f"resume file {name} not found")
    if path.suffix.lower() == ".pdf":
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError

        try:
            text = "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)
        except (PyPdfError, ValueError, KeyError, TypeError, AttributeError) as exc:  # malformed PDFs raise any of these
            raise InterviewerError(f"could not read the PDF {name} ({type(exc).__name__}); save it as text or Markdown instead") from None
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InterviewerError(f"{name} is not UTF-8 text; save it as UTF-8, or as PDF") from None
    text = repair(text)[0].strip()
    if not text:
        raise InterviewerError(f"{name} has no text (a scanned PDF?); paste the text instead")
    return text[:MAX_RESUME_CHARS]
