"""Lint rubrics for what the schema cannot see: vague or compound key points, duplicates,
missing probes, hints and references."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from knowledge.bank import Bank
from knowledge.schema import Question
from knowledge.text import leaks, stated_claim

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
    out += _stated_claim_findings(q)
    patterns = {p.pattern for p in rubric.probes}
    if "hint" not in patterns:
        out.append(Finding(q.id, "warning", "no 'hint' probe for a candidate who does not know"))
    if len(patterns - {"hint"}) < 2:
        out.append(Finding(q.id, "warning", "fewer than two kinds of follow-up probe"))
    return out


def _stated_claim_findings(q: Question) -> list[Finding]:
    """A probe must ask for its key point, not presuppose it ("Why does GRPO put the KL in the loss?"),
    offer it as an option ("the number of splits or the split size: which is batch invariant?") or
    state it. Checked in both languages against the points it targets and every essential point;
    the interview question's own terms are common ground. One finding per probe."""
    out = []
    given = {lang: " ".join([q.text(lang)] + [getattr(s, lang) for s in q.sub_questions]) for lang in ("zh", "en")}
    for i, probe in enumerate(q.rubric.probes):
        if probe.pattern == "hint":  # a hint may point the way; it is asked only after "I don't know"
            continue
        found = []
        for kp in q.rubric.key_points:
            targeted = kp.id in probe.targets
            if not targeted and kp.weight != "essential":
                continue
            for lang in ("zh", "en"):
                claim = stated_claim(getattr(probe, lang), getattr(kp, lang), given[lang], targeted)
                if claim is not None and probe.pattern == "scenario" and claim.kind == "statement":
                    continue  # a scenario probe describes what is observed by design
                if claim is not None and (claim.strong or targeted):
                    found.append((claim.strong, claim.share, kp.id, claim))
        if found:
            strong, _, kp_id, claim = max(found, key=lambda f: (f[0], f[1]))
            level = "error" if strong else "warning"
            what = {"why": "presupposes", "choice": "offers as an option", "statement": "states",
                    "other-option": "says only one option is right, which gives away"}[claim.kind]
            out.append(Finding(q.id, level, f"probe {i} ({probe.pattern}) {what} {kp_id} instead of asking for it: "
                                            f"{claim.text!r} (shared: {', '.join(claim.shared) or '-'})"))
    return out


MAX_VARIANT_CHARS = 160
VARIANT_COPY_RATIO = 0.85  # a variant this close to its key point's text adds nothing for matching


def _variant_findings(q: Question) -> list[Finding]:
    """The "ways a candidate says it" of each key point: there, short, not copies, not shared."""
    out = []
    owner: dict[str, str] = {}
    for kp in q.rubric.key_points:
        if not kp.variants:
            out.append(Finding(q.id, "warning", f"{kp.id} has no variants (ways a candidate says it)"))
        elif not 2 <= len(kp.variants) <= 7:
            out.append(Finding(q.id, "warning", f"{kp.id} has {len(kp.variants)} variants (2-7 expected)"))
        for v in kp.variants:
            if len(v) > MAX_VARIANT_CHARS:
                out.append(Finding(q.id, "error", f"{kp.id} variant is too long to be one claim: {v[:40]!r}..."))
            for own in (kp.zh, kp.en):
                if difflib.SequenceMatcher(None, v, own, autojunk=False).ratio() > VARIANT_COPY_RATIO:
                    out.append(Finding(q.id, "error", f"{kp.id} variant copies the key point's own text: {v[:40]!r}"))
            if v in owner and owner[v] != kp.id:
                out.append(Finding(q.id, "error", f"{kp.id} and {owner[v]} share the variant {v[:40]!r}"))
            owner[v] = kp.id
    for i, pit in enumerate(q.rubric.pitfalls):
        for v in pit.variants:
            if v in owner:
                out.append(Finding(q.id, "error", f"pitfall {i} variant is also a variant of {owner[v]}: {v[:40]!r}"))
        for t in pit.truths:  # a truth is the correct sentence, never a wording of the wrong claim itself
            if any(_same_claim(t, w) for w in (pit.zh, pit.en, *pit.variants)):
                out.append(Finding(q.id, "error", f"pitfall {i} truth repeats the pitfall: {t[:40]!r}"))
            if len(t) > MAX_VARIANT_CHARS:
                out.append(Finding(q.id, "error", f"pitfall {i} truth is too long to be one claim: {t[:40]!r}..."))
    return out


_PUNCT = re.compile(r"[\s，。、；：,.;:!?！？\"'“”‘’()（）]+")


def _same_claim(a: str, b: str) -> bool:
    """The same text but for spacing and punctuation (a contrast is a near-miss by design: one flipped
    word or sign, so closeness alone is no error)."""
    return _PUNCT.sub("", a).lower() == _PUNCT.sub("", b).lower()


def _contrast_findings(q: Question) -> list[Finding]:
    """The false versions of each key point: short, not a true text of this rubric, not shared."""
    out = []
    true_texts = {t: kp.id for kp in q.rubric.key_points for t in (kp.zh, kp.en, *kp.variants)}
    owner: dict[str, str] = {}
    for kp in q.rubric.key_points:
        if not kp.contrasts and q.section != "meta":
            out.append(Finding(q.id, "warning", f"{kp.id} has no contrasts (false versions of the point)"))
        elif len(kp.contrasts) > 4:
            out.append(Finding(q.id, "warning", f"{kp.id} has {len(kp.contrasts)} contrasts (at most 4 expected)"))
        for c in kp.contrasts:
            if len(c) > MAX_VARIANT_CHARS:
                out.append(Finding(q.id, "error", f"{kp.id} contrast is too long to be one claim: {c[:40]!r}..."))
            close = next((k for t, k in true_texts.items() if _same_claim(c, t)), None)
            if close:
                out.append(Finding(q.id, "error", f"{kp.id} contrast copies a true text of {close}: {c[:40]!r}"))
            if c in owner and owner[c] != kp.id:
                out.append(Finding(q.id, "error", f"{kp.id} and {owner[c]} share the contrast {c[:40]!r}"))
            owner[c] = kp.id
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
        findings += _key_point_findings(q) + _probe_findings(q) + _variant_findings(q) + _contrast_findings(q) + _reference_findings(q)
        if not q.rubric.pitfalls:
            findings.append(Finding(q.id, "warning", "no pitfalls"))
    return findings
