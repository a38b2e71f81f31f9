"""The session plan: which questions, in which order.

From the documents: difficulty rises through the interview; algorithm candidates get infra
questions and the other way round; a scenario question comes late and the interview ends with
an experience question; methods not on the resume are usually not asked.
"""

from __future__ import annotations

import random
import re

from knowledge.bank import Bank
from knowledge.schema import Question

# tags naming specific methods or frameworks: de-prioritised when a resume does not mention them
NICHE_TAGS = {
    "dapo", "gspo", "cispo", "sapo", "dr-grpo", "reinforce", "remax", "prorl", "areal", "slime", "verl",
    "moe", "routing-replay", "deepseek", "sglang", "vllm", "megatron", "fsdp", "trpo",
}
EXPERIENCE_ID = "experience-debug"
LEVELS = {"junior": (1.0, 3.0), "mid": (1.5, 4.5), "senior": (2.5, 5.0)}  # the difficulty ramp's ends


def resume_terms(resume: str) -> set[str]:
    """Lower-case tokens of a resume, with the '-' and '.' spellings of method names normalised."""
    text = resume.lower().replace(".", "-").replace("_", "-")
    return set(re.findall(r"[a-z][a-z0-9\-]+", text))


def off_resume(resume: str) -> set[str]:
    """Method and framework names that a (non-empty) resume does not mention."""
    if not resume.strip():
        return set()
    terms = resume_terms(resume)
    return {t for t in NICHE_TAGS if t not in terms and t.replace("-", "") not in terms}


def _on_resume(q: Question, terms: set[str]) -> bool | None:
    """True/False if the question is about a niche method that is / is not on the resume; None if generic."""
    niche = NICHE_TAGS & set(q.tags)
    if not niche or not terms:
        return None
    return any(tag in terms or tag.replace("-", "") in terms for tag in niche)


def _pick(pool: list[Question], target: float, rng: random.Random, terms: set[str], taken: set[str]) -> Question | None:
    options = [q for q in pool if q.id not in taken]
    if not options:
        return None

    def cost(q: Question) -> float:
        mismatch = _on_resume(q, terms)
        return abs(q.difficulty - target) + (3.0 if mismatch is False else 0.0) - (0.5 if mismatch else 0.0) + rng.random() * 0.9

    return min(options, key=cost)


def make_plan(
    bank: Bank,
    n: int,
    track: str = "mixed",
    infra_share: float = 0.35,
    seed: int | None = None,
    resume: str = "",
    focus: list[str] | None = None,
    level: str = "mid",
) -> list[str]:
    """Question ids: core questions with rising difficulty, then a scenario, then an experience question."""
    rng = random.Random(seed)
    if focus and all(f in bank.questions for f in focus):  # practice: exactly these, easiest first
        return sorted((f for f in focus if bank.questions[f].rubric), key=lambda f: bank.questions[f].difficulty)
    terms = resume_terms(resume)
    usable = [q for q in bank.with_rubric() if not focus or q.id in focus or set(focus) & set(q.tags)]
    if not usable:
        usable = bank.with_rubric()
    by_section = {s: [q for q in usable if q.section == s] for s in ("algorithm", "infra", "scenario", "meta")}
    taken: set[str] = set()
    tail: list[Question] = []
    if n >= 3:
        experience = bank.questions.get(EXPERIENCE_ID)
        if experience and experience.rubric and experience in usable:
            tail.append(experience)
        elif by_section["meta"]:
            tail.append(rng.choice(by_section["meta"]))
    if n >= 4 and by_section["scenario"]:
        tail.insert(0, _pick(by_section["scenario"], 3.5, rng, terms, taken))
    taken |= {q.id for q in tail}
    core_n = n - len(tail)
    share = {"algorithm": infra_share, "infra": 1 - infra_share}.get(track, 0.5)
    n_infra = round(core_n * share)
    if core_n >= 2 and track != "mixed":
        n_infra = min(max(n_infra, 1), core_n - 1)  # always some of the other side
    sections = ["infra"] * n_infra + ["algorithm"] * (core_n - n_infra)
    rng.shuffle(sections)
    core: list[Question] = []
    for i, section in enumerate(sections):
        low, high = LEVELS.get(level, LEVELS["mid"])
        target = low + (high - low) * i / max(1, core_n - 1)  # from fundamentals up to hard
        pool = by_section[section] or by_section["algorithm"] or usable
        q = _pick(pool, target, rng, terms, taken)
        if q is None:
            continue
        core.append(q)
        taken.add(q.id)
    core.sort(key=lambda q: q.difficulty)  # a strictly rising ramp
    return [q.id for q in core + tail]


def chain_successor(bank: Bank, qid: str, asked: set[str]) -> str | None:
    """The next link of the question's chain that has a rubric and was not asked yet."""
    for chain in bank.chains:
        if qid in chain.questions:
            for nxt in chain.questions[chain.questions.index(qid) + 1 :]:
                q = bank.questions[nxt]
                if nxt not in asked and q.rubric is not None:
                    return nxt
    return None
