"""Review a real interview: `python -m interviewer review FILE`, or the paste box in the web app.

The transcript (Markdown, text, or JSON question/answer pairs) is split into pairs; each question is
matched to the bank through the Chroma store (the match and its similarity are shown; below
MIN_MATCH it is reported as unmatched, never forced); each answer is graded by the same grader as
an interview. The result is the same report, saved with the session history, and it feeds spaced
repetition.
"""

from __future__ import annotations

import json
import re
import time
import uuid

from pydantic import BaseModel, ValidationError

from interviewer.errors import InterviewerError
from interviewer.report import build_report, save
from interviewer.scoring import compute_score
from interviewer.session import Interviewer
from knowledge.text import content_terms

# e5 cosine to the nearest bank question; below it the question is "unmatched". e5 is coarse: chit-chat
# ("你们组周末加班多吗？", "为什么离职") still scores 0.85-0.88, so a match must also share a content term
MIN_MATCH = 0.85
MAX_PAIRS = 40
_Q = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?:#{1,4}\s*)?(?:Q\d*|问题?\d*|面试官|interviewer|question\s*\d*)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?",
                re.I)
_A = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?:A\d*|答|回答|我|候选人|me|candidate|answer\s*\d*)\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?", re.I)
_HEADING = re.compile(r"^\s*#{1,4}\s+(?:\d+[.、)]\s*)?(.+?)\s*$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


class Pair(BaseModel):
    question: str
    answer: str = ""


def _from_json(text: str) -> list[Pair]:
    data = json.loads(text)
    items = data.get("pairs", data.get("questions", [])) if isinstance(data, dict) else data
    try:
        return [Pair(question=i.get("question") or i.get("q", ""), answer=i.get("answer") or i.get("a", "")) for i in items]
    except (AttributeError, ValidationError) as exc:
        raise InterviewerError(f"the JSON must be a list of {{'question': ..., 'answer': ...}} objects ({exc})") from None


def parse(text: str) -> list[Pair]:
    """Question/answer pairs from JSON, or from lines marked Q:/A: (问：/答：, 面试官：/我：), or from
    Markdown headings (the question) followed by the answer."""
    text = text.strip()
    if text[:1] in "[{":
        try:
            pairs = _from_json(text)
        except json.JSONDecodeError as exc:
            raise InterviewerError(f"this looks like JSON but does not parse: {exc}") from None
    else:
        pairs, field = [], None
        marked = any(_Q.match(line) for line in text.splitlines())
        for line in text.splitlines():
            heading = None if marked else _HEADING.match(line)
            if (m := _Q.match(line)) or heading:
                pairs.append(Pair(question=line[m.end():].strip() if m else heading.group(1)))
                field = "question" if m else "answer"
            elif (m := _A.match(line)) and pairs:
                pairs[-1].answer = (pairs[-1].answer + "\n" + line[m.end():].strip()).strip()
                field = "answer"
            elif line.strip() and pairs and field:
                setattr(pairs[-1], field, (getattr(pairs[-1], field) + "\n" + line.strip()).strip())
    pairs = [p for p in pairs if p.question.strip()]
    if not pairs:
        raise InterviewerError("no questions found: mark them 'Q:' / '问：' (answers 'A:' / '答：'), use Markdown "
                               "headings for the questions, or give JSON [{\"question\": ..., \"answer\": ...}]")
    return pairs[:MAX_PAIRS]


def _shares_terms(asked: str, q) -> bool:
    return bool(content_terms(asked) & (content_terms(q.zh) | content_terms(q.en)))


def review(app: Interviewer, text: str, lang: str | None = None, owner: str = "") -> dict:
    """Grade a real interview's answers; returns the report (saved, recorded in `owner`'s history)."""
    pairs = parse(text)
    lang = lang or ("zh" if len(_CJK.findall(text)) > 0.1 * len(text) else "en")
    store, grader = app.deps.store, app.deps.grader
    results, matches = [], []
    for pair in pairs:
        hit = (store.nearest_questions(pair.question, k=1) or [None])[0]
        matched = hit is not None and hit.score >= MIN_MATCH and _shares_terms(pair.question, store.bank.get(hit.qid))
        matches.append({"question": pair.question, "match": hit.qid if hit else None,
                        "similarity": round(hit.score, 3) if hit else None, "matched": matched,
                        "answered": bool(pair.answer.strip())})
        if not matched:
            continue
        q = store.question(hit.qid)
        answer = pair.answer.strip()
        if not answer:
            results.append({"qid": q.id, "answers": [], "verdicts": [], "decisions": [], "skipped": True, "score": 0.0,
                            "section": q.section, "tags": q.tags, "difficulty": q.difficulty})
            continue
        grade = grader.grade(q, answer, lang)
        miscs = {m.pitfall for m in grade.misconceptions if m.confirmed}
        results.append({"qid": q.id, "answers": [{"prompt": {"text": pair.question}, "answer": answer, "grade": grade.model_dump()}],
                        "verdicts": [v.model_dump() for v in grade.verdicts], "decisions": [], "skipped": False,
                        "score": compute_score(grade.verdicts, len(miscs)), "section": q.section, "tags": q.tags,
                        "difficulty": q.difficulty})
    sid = "review-" + time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    report = build_report({"session_id": sid, "config": {"lang": lang}, "results": results}, app.deps.bank)
    report["review"] = matches
    _record(app, report, lang, owner)
    return report


def _record(app: Interviewer, report: dict, lang: str, owner: str = "") -> None:
    """Into `owner`'s session history (as a finished session) and spaced repetition, and the report files."""
    sid = report["session_id"]
    app.registry.create(sid, {"kind": "review", "lang": lang, "questions": len(report["questions"])}, owner)
    app.registry.record(sid, "finished", report)  # moves the practice boxes, in one transaction
    save(report, app.settings.reports_dir)
