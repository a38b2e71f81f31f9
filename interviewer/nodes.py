"""The graph's nodes. Each reads the state, does one thing, and returns an update."""

from __future__ import annotations

import logging

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from interviewer import opening, prompts
from interviewer.context import Deps
from interviewer.phrasing import phrase, transition
from interviewer.planner import chain_successor, make_plan, off_resume
from interviewer.policy import Decision, QuestionProgress, decide, merge_verdicts
from interviewer.report import build_report
from interviewer.scoring import Grade, Verdict, compute_score, standing_misconceptions
from interviewer.state import InterviewState
from interviewer.threads import propose
from knowledge.schema import Question

log = logging.getLogger(__name__)


def _lang(state: InterviewState) -> str:
    return state["config"].get("lang", "zh")


def _question(state: InterviewState, runtime: Runtime[Deps]) -> Question:
    """The current question with its rubric, read from the store: the checkpoint keeps only its id."""
    return runtime.context.store.question(state["current"]["qid"])


def _phrasing_model(runtime: Runtime[Deps]):
    """The model that may adapt the wording, or None to say the written text (the embedded default)."""
    return runtime.context.model if runtime.context.settings.resolved_phrasing() == "model" else None


def _secrets(q: Question, lang: str) -> list[str]:
    """What the interviewer must not say: the key points and the reference answer."""
    return [getattr(kp, lang) for kp in q.rubric.key_points] + [getattr(q.rubric.reference_answer, lang)]


def _with_transition(state: InterviewState, runtime: Runtime[Deps], q: Question, text: str) -> tuple[str, str]:
    """(line, transition): on a capable model, a checked sentence picking up the last answer comes first."""
    answer = (state.get("last_input") or {}).get("text", "")
    if not runtime.context.settings.capable or _phrasing_model(runtime) is None or not answer:
        return text, ""
    lang = _lang(state)
    bridge = transition(runtime.context.model, answer, lang, _secrets(q, lang))
    return (f"{bridge}{'' if lang == 'zh' else ' '}{text}" if bridge else text), bridge


def plan_session(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    if state.get("plan"):
        return {}
    cfg = state["config"]
    plan = make_plan(
        runtime.context.bank, cfg.get("questions", 4), cfg.get("track", "mixed"), cfg.get("infra_share", 0.35),
        seed=cfg.get("seed"), resume=state.get("resume", ""), focus=cfg.get("focus"), level=cfg.get("level", "mid"),
    )
    n_projects = 1 if cfg.get("questions", 4) < 4 else opening.MAX_PROJECTS  # a short session drills one project
    steps = opening.steps(state.get("resume", ""), cfg.get("lang", "zh"), n_projects) if cfg.get("opening", True) else []
    return {"plan": plan, "q_index": 0, "status": "running", "opening": {"steps": steps, "i": 0, "answers": []}}


def opening_ask(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    """The next question of the opening (self-introduction, project ladders), or done."""
    op = dict(state.get("opening") or {"steps": [], "i": 0, "answers": []})
    if op.get("done") or op["i"] >= len(op["steps"]):
        return {"opening": {**op, "done": True}}
    step = op["steps"][op["i"]]
    text = step["text"]
    bridge = ""
    answer = (state.get("last_input") or {}).get("text", "")
    if op["i"] > 0 and answer and runtime.context.settings.capable and _phrasing_model(runtime) is not None:
        bridge = transition(runtime.context.model, answer, _lang(state))  # picks up the last answer (checked)
        text = f"{bridge}{'' if _lang(state) == 'zh' else ' '}{text}" if bridge else text
    pending = {"qid": "opening", "kind": "opening", "step": step["step"], "project": step["project"], "text": text,
               "source": "written", "index": op["i"] + 1, "total": len(op["steps"]), "section": "opening",
               "tags": [step.get("name") or ("自我介绍" if _lang(state) == "zh" else "introduction")],
               "transition": bridge}
    return {"pending": pending, "transcript": [{"role": "interviewer", **pending}]}


def opening_record(state: InterviewState) -> dict:
    """Keep the answer; a skip leaves the rest of that project's ladder, an end ends the interview."""
    op = dict(state["opening"])
    asked, given = state["pending"], state["last_input"]
    action = given.get("action", "answer")
    op["answers"] = op["answers"] + [{"step": asked["step"], "project": asked["project"], "action": action,
                                      "question": asked["text"], "text": given.get("text", "")}]
    i = op["i"] + 1
    if action == "skip" and asked["project"] is not None:
        while i < len(op["steps"]) and op["steps"][i]["project"] == asked["project"]:
            i += 1
    op["i"] = i
    return {"opening": op}


def pick_question(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    i = state.get("q_index", 0)
    if i >= len(state["plan"]):
        return {"current": {}}
    qid = state["plan"][i]
    runtime.context.store.question(qid)  # fail here, before asking, if the store lacks it
    return {
        "current": {"qid": qid, "progress": QuestionProgress().model_dump(), "answers": [], "decisions": [], "verdicts": []},
    }


def ask(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    q = _question(state, runtime)
    lang = _lang(state)
    n, i = len(state["plan"]), state["q_index"]
    text, source = phrase(_phrasing_model(runtime), q.text(lang), lang, _secrets(q, lang))
    bridge = ""
    if i > 0:  # after an answer to the previous question: pick it up first (capable models only)
        text, bridge = _with_transition(state, runtime, q, text)
    pending = {"qid": q.id, "kind": "question", "text": text, "source": source, "index": i + 1, "total": n,
               "section": q.section, "tags": q.tags, "transition": bridge}
    return {"pending": pending, "transcript": [{"role": "interviewer", **pending}]}


def wait_answer(state: InterviewState) -> dict:
    given = interrupt(state["pending"])  # the driver resumes with {"action": ..., "text": ...}
    entry = {"role": "candidate", "qid": state["pending"]["qid"], "kind": given.get("action", "answer"),
             "text": given.get("text", "")}
    return {"last_input": given, "transcript": [entry]}


def retrieve(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    """Check the current question's rubric is in the Chroma store (it may have been rebuilt); the nodes after
    it read the rubric from the store, the state keeps only ids and verdicts."""
    _question(state, runtime)
    return {}


def score(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    q = _question(state, runtime)
    answer = state["last_input"].get("text", "")
    asked = state["pending"]
    # targeted checking: an answer to a follow-up is read first against the point it asked about
    focus = asked.get("target") if asked.get("kind") == "followup" and str(asked.get("target", "")).startswith("kp") else None
    grade = runtime.context.grader.grade(q, answer, _lang(state), focus=focus)
    cur = dict(state["current"])
    previous = [Verdict.model_validate(v) for v in cur["verdicts"]]
    merged = merge_verdicts(previous, grade.verdicts, settled=focus if asked.get("action") == "clarify" else None)
    cur["answers"] = cur["answers"] + [{"prompt": state["pending"], "answer": answer, "grade": grade.model_dump()}]
    cur["verdicts"] = [v.model_dump() for v in merged]
    return {"current": cur}


def choose_followup(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    q = _question(state, runtime)
    cur = dict(state["current"])
    last = Grade.model_validate(cur["answers"][-1]["grade"])
    progress = QuestionProgress.model_validate(cur["progress"])
    avoid = off_resume(state.get("resume", ""))
    decision = decide(q, [Verdict.model_validate(v) for v in cur["verdicts"]], last, progress,
                      budget=state["config"].get("followups", 3), avoid_terms=avoid,
                      priority=set(state["config"].get("focus_points", {}).get(q.id, [])))
    decision = _maybe_thread(state, runtime, q, decision, progress)
    cur["decisions"] = cur["decisions"] + [decision.model_dump()]
    return {"current": cur}


def _maybe_thread(state: InterviewState, runtime: Runtime[Deps], q: Question, decision: Decision,
                  progress: QuestionProgress) -> Decision:
    """Instead of going deeper on the rubric, follow a thread the candidate opened (capable models only);
    every proposal, accepted or not, is logged in the decision's reason."""
    deps = runtime.context
    if decision.action != "deepen" or progress.threaded or deps.model is None or not deps.settings.resolved_threads():
        return decision
    thread = propose(deps.model, q, state["last_input"].get("text", ""), _lang(state))
    if thread is None or not thread.accepted:
        why = thread.reason if thread else "no proposal"
        return decision.model_copy(update={"reason": f"{decision.reason} (thread refused: {why})"})
    return Decision(action="thread", reason=f"a thread the candidate opened (topic {thread.topic:.2f})",
                    pattern="thread", evidence=thread.claim, question=thread.question)


def _followup_line(q: Question, decision: Decision, lang: str) -> str:
    if decision.action == "thread":
        return decision.question
    if decision.action in ("challenge", "clarify"):
        template = prompts.CHALLENGE if decision.action == "challenge" else prompts.CLARIFY
        return template[lang].substitute(evidence=prompts.quote_back(decision.evidence))
    return getattr(q.rubric.probes[decision.probe], lang)


def follow_up(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    q = _question(state, runtime)
    lang = _lang(state)
    cur = dict(state["current"])
    decision = Decision.model_validate(cur["decisions"][-1])
    line = _followup_line(q, decision, lang)
    # a challenge or a clarification quotes the candidate: it is said as written
    quoted = decision.action in ("challenge", "clarify", "thread")
    text, source = phrase(None if quoted else _phrasing_model(runtime), line, lang, _secrets(q, lang))
    bridge = ""
    if not quoted:
        text, bridge = _with_transition(state, runtime, q, text)
    progress = QuestionProgress.model_validate(cur["progress"])
    progress.record(decision)
    cur["progress"] = progress.model_dump()
    pending = {**state["pending"], "kind": "followup", "text": text, "source": source, "action": decision.action,
               "pattern": decision.pattern, "target": decision.target, "transition": bridge}
    return {"current": cur, "pending": pending, "transcript": [{"role": "interviewer", **pending}]}


def close_question(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    cur = dict(state["current"])
    q = _question(state, runtime)
    verdicts = [Verdict.model_validate(v) for v in cur["verdicts"]]
    skipped = not cur["answers"]
    misconceptions, _ = standing_misconceptions(cur["answers"])
    final = 0.0 if skipped else compute_score(verdicts, len(misconceptions))
    record = {**cur, "skipped": skipped, "score": final, "section": q.section, "tags": q.tags, "difficulty": q.difficulty}
    plan = list(state["plan"])
    i = state["q_index"]
    # a good answer leads to the next link of the documents' chain, if it keeps the ramp and the mix of sides
    # (it takes the place of a question of its own section: an algorithm candidate still gets infra questions)
    if final >= 7.0 and i + 1 < len(plan) and not state["config"].get("focus"):  # practice plans stay fixed
        bank = runtime.context.bank
        asked = set(plan[: i + 1])
        nxt = chain_successor(bank, cur["qid"], asked | set(plan))
        core_end = len([p for p in plan if bank.questions[p].section in ("algorithm", "infra")])
        if (nxt and i + 1 < core_end and bank.questions[nxt].difficulty >= q.difficulty
                and bank.questions[nxt].section == bank.questions[plan[i + 1]].section):
            plan[i + 1] = nxt
    if state["last_input"].get("action") == "end":  # the candidate ended the interview: report what there is
        return {"results": [record], "q_index": len(plan), "plan": plan[: i + 1]}
    return {"results": [record], "q_index": i + 1, "plan": plan}


def finish(state: InterviewState, runtime: Runtime[Deps]) -> dict:
    report = build_report(state, runtime.context.bank)
    return {"report": report, "status": "finished", "pending": {}}
