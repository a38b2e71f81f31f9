"""The end-of-session report: per question what was covered, missed and wrong, and what to read."""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from pathlib import Path

from interviewer.markup import as_text, said_as
from interviewer.opening import report_section
from interviewer.scoring import Verdict, own_evidence, standing_misconceptions
from knowledge.bank import Bank

WEAK = 6.0
# what a grader cannot see, said in the report of every session it graded: the embedding grader matches the rubric's
# key points and recognises only the wrong claims the rubric lists, so a fluent answer with a new wrong claim can score
# well above what an expert would give (the README's "Still weak" has the held-out figures)
LIMITS = {
    "embedding": {
        "zh": "评分说明：本地评分器核对的是你说到了哪些要点，只认得出题库里列出的错误说法。一个流畅但题库没列出的错误说法"
              "可能不会被发现，分数会偏高：请对照每题的参考答案自查。",
        "en": "How to read this grade: the local grader checks which key points you stated and recognises only the wrong "
              "claims its rubric lists. A fluent wrong claim it does not list can go unnoticed and score higher than it "
              "should: check your answers against each question's model answer.",
    },
}


def _question_entry(rec: dict, bank: Bank, lang: str) -> dict:
    q = bank.get(rec["qid"])
    r = q.rubric
    verdicts = rec.get("verdicts", [])
    shown = {v.key: v.evidence for v in own_evidence([Verdict.model_validate(v) for v in verdicts])}
    missed = [v for v in verdicts if v["status"] in ("partial", "missed")]
    standing, settled = standing_misconceptions(rec.get("answers", []))
    miscs = {i: m.evidence for i, m in standing.items()}
    graders = sorted({a["grade"]["grader"] for a in rec.get("answers", [])})
    return {
        "qid": q.id,
        "question": q.text(lang),
        "section": q.section,
        "tags": q.tags,
        "difficulty": q.difficulty,
        "score": rec["score"],
        "skipped": rec.get("skipped", False),
        "graders": graders,
        "covered": [v["key"] for v in verdicts if v["status"] == "covered"],
        "evidence": [{"key": v["key"], "key_point": getattr(r.key_point(v["key"]), lang), "quote": v["evidence"]}
                     for v in verdicts if v["status"] == "covered" and v["evidence"]],
        "missed": [{"key": v["key"], "weight": v["weight"], "status": v["status"],
                    "text": getattr(r.key_point(v["key"]), lang)} for v in missed],
        # borderline evidence: the grader could not tell, so it is neither credited nor called missed
        "unclear": [{"key": v["key"], "weight": v["weight"], "text": getattr(r.key_point(v["key"]), lang),
                     "quote": shown[v["key"]]} for v in verdicts if v["status"] == "unclear"],
        "misconceptions": [{"claim": getattr(r.pitfalls[i], lang), "why": r.pitfalls[i].why, "quote": quote}
                           for i, quote in sorted(miscs.items())],
        # challenged, then explained: not counted as wrong, but shown, so the candidate sees what was asked and why
        "settled": [{"claim": getattr(r.pitfalls[i], lang), "quote": m.evidence} for i, m in sorted(settled.items())],
        "followups": [{"action": d["action"], "pattern": d.get("pattern"), "target": d.get("target")}
                      for d in rec.get("decisions", []) if d["action"] != "next"],
        # thread follow-ups (the model's question on a claim the candidate made), with their source claim
        "threads": [{"claim": d["evidence"], "question": d.get("question", "")}
                    for d in rec.get("decisions", []) if d["action"] == "thread"],
        "model_answer": getattr(r.reference_answer, lang),
        "read": [{"title": ref.title, "year": ref.year, "venue": ref.venue, "url": ref.url, "verified": ref.verified}
                 for ref in r.references],
    }


def build_report(state: dict, bank: Bank) -> dict:
    lang = state["config"].get("lang", "zh")
    entries = [_question_entry(rec, bank, lang) for rec in state.get("results", [])]
    by_topic: dict[str, list[float]] = defaultdict(list)
    for e in entries:
        if e["skipped"]:
            by_topic[e["section"]].append(0.0)
            continue
        by_topic[e["section"]].append(e["score"])
        for tag in e["tags"]:
            by_topic[tag].append(e["score"])
    topics = {t: round(sum(s) / len(s), 1) for t, s in sorted(by_topic.items())}
    weak = [e for e in entries if e["score"] < WEAK]
    asked = {e["qid"] for e in entries}
    practice: list[str] = []
    for e in weak:
        for rel in [e["qid"]] + bank.get(e["qid"]).related:
            if rel not in practice and bank.questions[rel].rubric is not None and (rel == e["qid"] or rel not in asked):
                practice.append(rel)
    scores = [e["score"] for e in entries]
    return {
        "session_id": state.get("session_id"),
        "lang": lang,
        "overall": round(sum(scores) / len(scores), 1) if scores else 0.0,
        "questions": entries,
        "topics": topics,
        "weak_topics": sorted({t for e in weak for t in [e["section"], *e["tags"]]}),
        "practice_next": practice[:6],
        "missed_key_points": [{"qid": e["qid"], **m} for e in entries for m in e["missed"]],
        "limits": sorted({g for e in entries for g in e["graders"] if g in LIMITS}),
        "opening": report_section(state["opening"], lang) if (state.get("opening") or {}).get("answers") else None,
    }


LABELS = {
    "zh": {"title": "模拟面试报告", "overall": "总分", "score": "得分", "skipped": "（跳过）", "covered": "答到的要点（原话）",
           "missed": "遗漏的要点", "unclear": "无法确认的要点（说法接近或不够明确）", "wrong": "错误的说法",
           "settled": "被质疑后你的解释澄清了（不计错）", "model": "参考答案", "read": "推荐阅读", "topics": "按主题",
           "next": "下次练习", "unverified": "（未核实）", "graders": "评分器", "followups": "追问",
           "threads": "顺着你的话追问（来源）"},
    "en": {"title": "Mock interview report", "overall": "Overall", "score": "Score", "skipped": " (skipped)",
           "covered": "Covered (your words)", "missed": "Missed key points",
           "unclear": "Close but not explicit (the grader could not tell)", "wrong": "Wrong claims",
           "settled": "Challenged, then settled by your explanation (not counted as wrong)",
           "model": "Model answer", "read": "What to read", "topics": "By topic", "next": "Practise next",
           "unverified": " (unverified)", "graders": "Grader", "followups": "Follow-ups",
           "threads": "Follow-ups on your own claims (source)"},
}


CRITERIA = {
    "zh": {"contribution": "具体的个人贡献", "numbers": "数字", "tradeoff": "取舍与理由", "validation": "如何验证",
           "title": "开场：自我介绍与项目深挖", "structure": "结构分", "skipped": "（跳过）", "asked": "问到"},
    "en": {"contribution": "a concrete contribution of your own", "numbers": "numbers", "tradeoff": "a trade-off and why",
           "validation": "how it was validated", "title": "Opening: self-introduction and project deep-dive",
           "structure": "Structure score", "skipped": " (skipped)", "asked": "asked"},
}


def _opening_markdown(opening: dict, lang: str) -> list[str]:
    C = CRITERIA[lang]
    out = [f"## {C['title']}", ""]
    if opening.get("introduction"):
        out += [f"> {as_text(opening['introduction'][:400])}", ""]
    for p in opening["projects"]:
        out += [f"### {as_text(p['project'])}", "", (f"{C['structure']}: **{p['score']}/10**{C['skipped'] if p['skipped'] else ''}"
                f"  ·  {C['asked']}: {', '.join(p['asked']) or '-'}"), ""]
        for c in p["criteria"]:
            out.append(f"- {'✅' if c['met'] else '❌'} {C[c['key']]}" + (f" — “{as_text(c['evidence'])}”" if c["evidence"] else ""))
        out.append("")
    return out


def _review_markdown(matches: list[dict], lang: str) -> list[str]:
    zh = lang == "zh"
    out = ["## " + ("复盘：题目与题库的匹配" if zh else "Review: questions matched to the bank"), ""]
    for m in matches:
        sim = f"{m['similarity']:.2f}" if m["similarity"] is not None else "-"
        if m["matched"]:
            out.append(f"- {as_text(m['question'])} → `{m['match']}` ({'相似度' if zh else 'similarity'} {sim})")
        else:
            out.append(f"- {as_text(m['question'])} → {'未匹配（不评分）' if zh else 'unmatched (not graded)'}; "
                       f"{'最接近' if zh else 'nearest'} `{m['match']}` ({sim})")
    return out + [""]


def to_markdown(report: dict) -> str:
    """The report in Markdown; the candidate's own words are escaped (they show as text, never as HTML)."""
    L = LABELS[report["lang"]]
    out = [f"# {L['title']}", "", f"**{L['overall']}: {report['overall']}/10**  ·  session `{report['session_id']}`", ""]
    out += [line for grader in report.get("limits", []) for line in (f"> {LIMITS[grader][report['lang']]}", "")]
    if report.get("opening"):
        out += _opening_markdown(report["opening"], report["lang"])
    if report.get("review"):
        out += _review_markdown(report["review"], report["lang"])
    for i, e in enumerate(report["questions"], 1):
        out += [f"## {i}. {e['question']}", "",
                (f"{L['score']}: **{e['score']}/10**{L['skipped'] if e['skipped'] else ''}  ·  {e['section']}  ·  "
                f"{L['graders']}: {', '.join(e['graders']) or '-'}"), ""]
        if e["evidence"]:
            out += [f"**{L['covered']}**", ""] + [f"- {x['key_point']} — “{as_text(x['quote'])}”" for x in e["evidence"]] + [""]
        if e["missed"]:
            out += [f"**{L['missed']}**", ""] + [f"- [{m['weight']}] {m['text']}" for m in e["missed"]] + [""]
        if e.get("unclear"):
            out += [f"**{L['unclear']}**", ""] + [f"- [{m['weight']}] {m['text']}" + (f" — “{as_text(m['quote'])}”" if m["quote"] else "")
                                                 for m in e["unclear"]] + [""]
        if e["misconceptions"]:
            out += [f"**{L['wrong']}**", ""] + [f"- {said_as(m['quote'])}{m['claim']} — {m['why']}" for m in e["misconceptions"]] + [""]
        if e.get("settled"):
            out += [f"**{L['settled']}**", ""] + [f"- {said_as(m['quote'])}{m['claim']}" for m in e["settled"]] + [""]
        if e["followups"]:
            out += [f"{L['followups']}: " + ", ".join(f"{f['action']}" + (f" ({f['pattern']})" if f["pattern"] and f["pattern"] != f["action"] else "")
                                               for f in e["followups"]), ""]
        if e.get("threads"):
            out += [f"**{L['threads']}**", ""] + [f"- “{t['claim']}” → {t['question']}" for t in e["threads"]] + [""]
        out += [f"**{L['model']}**", "", e["model_answer"], ""]
        if e["read"]:
            out += [f"**{L['read']}**", ""]
            for ref in e["read"]:
                venue = ", ".join(str(x) for x in (ref["venue"], ref["year"]) if x)
                link = f" <{ref['url']}>" if ref["url"] else ""
                out.append(f"- {ref['title']}{f' ({venue})' if venue else ''}{link}{'' if ref['verified'] else L['unverified']}")
            out.append("")
    out += [f"## {L['topics']}", ""] + [f"- {t}: {s}" for t, s in report["topics"].items()] + [""]
    if report["practice_next"]:
        out += [f"## {L['next']}", ""] + [f"- `{q}`" for q in report["practice_next"]] + [""]
    return "\n".join(out)


def paths(directory: Path, session_id: str) -> tuple[Path, Path]:
    """Where a session's Markdown and JSON reports are saved."""
    return directory / f"{session_id}.md", directory / f"{session_id}.json"


def _write_atomic(path: Path, text: str) -> None:
    """Whole or not at all: a crash never leaves half a report."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save(report: dict, directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    md, js = paths(directory, report["session_id"])
    _write_atomic(js, json.dumps(report, ensure_ascii=False, indent=2))
    _write_atomic(md, to_markdown(report))
    return md, js
