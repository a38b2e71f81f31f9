"""Lint rubrics for what the schema cannot see: vague or compound key points, duplicates,
missing probes, hints and references."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from knowledge.bank import Bank
from knowledge.schema import Question
from knowledge.text import leaks

VAGUE = re.compile(
    r"^(理解|了解|知道|掌握|熟悉|提到|谈到|讨论|说明了|解释了)|"
    r"\b(understands?|knows?|is familiar with|mentions?|discusses|talks about|explains)\b",
    re.IGNORECASE,
)
MIN_ZH_CHARS = 8
MAX_ZH_CHARS = 120


@dataclass(frozen=True)
class Finding:
    qid: str
    level: str  # "error" or "warning"
    message: str

    def __str__(self) -> str:
        return f"knowledge/data/questions/{self.qid}.json: {self.level}: {self.message}"


def _key_point_findings(q: Question) -> list[Finding]:
    out = []
    kps = q.rubric.key_points
    for kp in kps:
        if VAGUE.search(kp.zh) or VAGUE.search(kp.en):
            out.append(Finding(q.id, "error", f"{kp.id} is vague (say the claim itself, not that the candidate knows it)"))
        if len(kp.zh) < MIN_ZH_CHARS:
            out.append(Finding(q.id, "error", f"{kp.id} is too short to be a checkable claim: {kp.zh!r}"))
        if len(kp.zh) > MAX_ZH_CHARS:
            out.append(Finding(q.id, "warning", f"{kp.id} is long ({len(kp.zh)} chars): is it one claim?"))
        if kp.zh.count("、") >= 4 and len(kp.zh) < 60:
            out.append(Finding(q.id, "warning", f"{kp.id} reads like a keyword list"))
        if len(re.findall(r"[。；;]", kp.zh.rstrip("。；; "))) >= 2:
            out.append(Finding(q.id, "warning", f"{kp.id} has several sentences: split it into atomic points"))
    for i, a in enumerate(kps):
        for b in kps[i + 1 :]:
            if difflib.SequenceMatcher(None, a.zh, b.zh).ratio() > 0.8:
                out.append(Finding(q.id, "error", f"{a.id} and {b.id} are near-duplicates"))
    if all(kp.weight == "optional" for kp in kps):
        out.append(Finding(q.id, "error", "every key point is optional"))
    return out


def _probe_findings(q: Question) -> list[Finding]:
    out = []
    rubric = q.rubric
    targeted = {t for p in rubric.probes for t in p.targets}
    for kp in rubric.key_points:
        if kp.weight == "essential" and kp.id not in targeted:
            out.append(Finding(q.id, "warning", f"essential {kp.id} is not targeted by any probe"))
    for kp in rubric.key_points:
        probes = [p for p in rubric.probes if kp.id in p.targets and p.pattern != "hint"]
        if kp.weight == "essential" and probes and all(leaks(p.zh, kp.zh) for p in probes):
            out.append(Finding(q.id, "warning", f"every probe for essential {kp.id} states it: no gap question can ask for it"))
    patterns = {p.pattern for p in rubric.probes}
    if "hint" not in patterns:
        out.append(Finding(q.id, "warning", "no 'hint' probe for a candidate who does not know"))
    if len(patterns - {"hint"}) < 2:
        out.append(Finding(q.id, "warning", "fewer than two kinds of follow-up probe"))
    return out


def _reference_findings(q: Question) -> list[Finding]:
    refs = q.rubric.references
    if not refs and q.section != "meta":
        return [Finding(q.id, "warning", "no references")]
    return [
        Finding(q.id, "warning", f"unverified reference: {r.title}") for r in refs if not r.verified and not r.note
    ]


def lint(bank: Bank) -> list[Finding]:
    findings: list[Finding] = []
    for q in sorted(bank.questions.values(), key=lambda q: q.id):
        if q.rubric is None:
            findings.append(Finding(q.id, "warning", "no rubric yet"))
            continue
        findings += _key_point_findings(q) + _probe_findings(q) + _reference_findings(q)
        if not q.rubric.pitfalls:
            findings.append(Finding(q.id, "warning", "no pitfalls"))
    return findings
