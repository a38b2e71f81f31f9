"""The opening real interviews have: 自我介绍, then 项目深挖 on 1-2 projects from the resume.

Each project gets a drill ladder asked in order (own contribution, the constraint, the rejected
alternative, the validation, what failed), from written templates filled with the project's own
name and terms: no model is needed. The answers are graded on a structure rubric (concrete
contribution, numbers, trade-off, validation) by code; the report gives them a section of their own.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import BaseModel

from interviewer import prompts
from knowledge.text import split_sentences

MAX_PROJECTS = 2
_HEADING = re.compile(r"^\s*(#{1,6}\s+|\d+[.、)]\s+|[-*•]\s+\*\*|\*\*)(.+?)\**\s*$")
_PROJECT_SECTION = re.compile(r"项目|project", re.I)
_OTHER_SECTION = re.compile(r"教育|技能|education|skills?|awards?|荣获|获奖|自我评价|publications?|论文", re.I)
_DATES = re.compile(r"[（(]?\s*\d{4}[.\-/年]?\d{0,2}\s*[-–~至到]+\s*(\d{4}[.\-/年]?\d{0,2}|至今|now|present)?\s*[)）]?", re.I)
_TERM = re.compile(r"[A-Za-z][A-Za-z0-9.\-+]*[A-Za-z0-9+]")
_COMMON = {"and", "the", "for", "with", "based", "using", "from", "into", "our", "team", "project", "model", "data"}


class Project(BaseModel):
    name: str
    terms: list[str]  # the project's own technical terms, most frequent first
    text: str  # the resume lines about it


class Criterion(BaseModel):
    key: str  # contribution | numbers | tradeoff | validation
    met: bool
    evidence: str = ""  # the candidate's sentence that shows it


CRITERIA = {  # the structure rubric (the meta rubrics' style), checked on the candidate's own sentences
    "contribution": re.compile(r"我(负责|做|写|实现|设计|提出|搭|改|主导|独立|牵头|定位|发现|优化|推动)|"
                               r"\bI (built|designed|implemented|wrote|led|owned|proposed|found|fixed|added|ran|chose)\b", re.I),
    "numbers": re.compile(r"\d+(\.\d+)?\s*(%|％|倍|x\b|k\b|K\b|M\b|B\b|张|卡|GPU|ms|秒|s\b|小时|天|个点|点|pp|token|条|万|亿|步|steps?)", re.I),
    "tradeoff": re.compile(r"而不是|权衡|取舍|代价|放弃|相比|牺牲|折中|因为.{0,30}(所以|就)|instead of|rather than|trade-?off|"
                           r"at the cost|because|we dropped|gave up", re.I),
    "validation": re.compile(r"验证|实验|消融|对照|基线|baseline|A/B|ablation|指标|评测|评估|\beval|benchmark|测试集|显著|"
                             r"held-out|验证集|复现|significan", re.I),
}
WEIGHTS = {"contribution": 3.0, "numbers": 2.0, "tradeoff": 2.0, "validation": 3.0}


def _clean(line: str) -> str:
    m = _HEADING.match(line)
    name = (m.group(2) if m else line).strip(" *#-•：:")
    return _DATES.sub("", name).strip(" ，,·|（）()")


def projects(resume: str, limit: int = MAX_PROJECTS) -> list[Project]:
    """The resume's projects: the entries (headings) of a 项目 / Projects section, in order."""
    lines = [ln.rstrip() for ln in resume.splitlines()]
    blocks: list[tuple[str, list[str]]] = []
    in_projects = False
    for line in lines:
        if re.match(r"^\s*#{1,2}\s", line) or (line.strip() and line.strip() == line.strip("#").strip() and len(line) < 20
                                               and (_PROJECT_SECTION.search(line) or _OTHER_SECTION.search(line))):
            in_projects = bool(_PROJECT_SECTION.search(line)) and not _OTHER_SECTION.search(line)
            continue
        if not in_projects or not line.strip():
            continue
        if _HEADING.match(line) and not re.match(r"^\s*[-*•]\s+[^*]", line):
            blocks.append((_clean(line), []))
        elif blocks:
            blocks[-1][1].append(line.strip(" -*•"))
        else:
            blocks.append((_clean(line)[:40], [line.strip(" -*•")]))
    out = []
    for name, body in blocks[:limit]:
        text = "\n".join(body)
        # the body's named methods and tools (not the words of the project's title) make the best hooks
        counts = Counter(t for t in _TERM.findall(text) if t.lower() not in _COMMON and t not in name and len(t) > 2)
        # named methods (DAPO, vLLM) first; model sizes, GPUs and benchmarks (Qwen2.5-7B, H800, AIME24) last
        ranked = sorted(counts, key=lambda t: -(counts[t] + 1.5 * (t != t.lower()) - 3 * any(c.isdigit() for c in t)))
        out.append(Project(name=name[:60], terms=(ranked or _TERM.findall(name))[:4], text=text))
    return out


def steps(resume: str, lang: str, limit: int = MAX_PROJECTS) -> list[dict]:
    """The opening's questions, in order: the self-introduction, then each project's ladder."""
    found = projects(resume, limit)
    if not found:
        return []
    out = [{"step": "intro", "project": None, "text": prompts.OPENING_INTRO[lang]}]
    for i, p in enumerate(found):
        term = p.terms[0] if p.terms else ("这个方案" if lang == "zh" else "this approach")
        other = p.terms[1] if len(p.terms) > 1 else term
        for step, template in prompts.LADDER[lang]:
            out.append({"step": step, "project": i, "name": p.name,
                        "text": template.substitute(project=p.name, term=term, other=other)})
    return out


def grade(answers: list[str]) -> tuple[list[Criterion], float]:
    """The structure rubric over a project's answers: each criterion met or not, with the sentence."""
    sentences = [s for a in answers for s in split_sentences(a)]
    crit = []
    for key, rx in CRITERIA.items():
        hit = next((s for s in sentences if rx.search(s)), "")
        crit.append(Criterion(key=key, met=bool(hit), evidence=hit[:160]))
    score = 10.0 * sum(WEIGHTS[c.key] for c in crit if c.met) / sum(WEIGHTS.values())
    return crit, round(score, 1)


def report_section(opening: dict, lang: str) -> dict:
    """The report's opening section: per project, the ladder asked, the criteria met, and the score."""
    steps_, answers = opening.get("steps", []), opening.get("answers", [])
    intro = next((a["text"] for a in answers if a["step"] == "intro"), "")
    out = []
    for i in sorted({s["project"] for s in steps_ if s["project"] is not None}):
        mine = [a for a in answers if a.get("project") == i and a["action"] == "answer"]
        crit, score = grade([a["text"] for a in mine])
        name = next(s["name"] for s in steps_ if s["project"] == i)
        out.append({"project": name, "asked": [a["step"] for a in mine], "score": score if mine else 0.0,
                    "criteria": [c.model_dump() for c in crit], "skipped": not mine})
    return {"introduction": intro, "projects": out}
