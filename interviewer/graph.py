"""The interview as a LangGraph state machine.

    plan -> opening -> wait -> opening_record -> opening ... (resume: self-introduction, project ladders)
         -> pick -> ask -> wait (interrupt) -> retrieve -> score -> decide
                                 ^                                  | follow-up / next
                                 +------------- follow_up <---------+
    close -> pick ... -> finish (report)
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from interviewer import nodes
from interviewer.context import Deps
from interviewer.state import InterviewState


def after_pick(state: InterviewState) -> Literal["ask", "finish"]:
    return "ask" if state.get("current") else "finish"


def after_opening(state: InterviewState) -> Literal["wait", "pick"]:
    return "pick" if state["opening"].get("done") else "wait"


def after_wait(state: InterviewState) -> Literal["opening_record", "retrieve", "close"]:
    if state["pending"].get("kind") == "opening":
        return "opening_record"
    return "close" if state["last_input"].get("action") in ("skip", "end") else "retrieve"


def after_opening_record(state: InterviewState) -> Literal["opening", "finish"]:
    return "finish" if state["last_input"].get("action") == "end" else "opening"


def after_decide(state: InterviewState) -> Literal["follow_up", "close"]:
    return "close" if state["current"]["decisions"][-1]["action"] == "next" else "follow_up"


def build_graph(checkpointer=None):
    g = StateGraph(InterviewState, context_schema=Deps)
    g.add_node("plan", nodes.plan_session)
    g.add_node("opening", nodes.opening_ask)
    g.add_node("opening_record", nodes.opening_record)
    g.add_node("pick", nodes.pick_question)
    g.add_node("ask", nodes.ask)
    g.add_node("wait", nodes.wait_answer)
    g.add_node("retrieve", nodes.retrieve)
    g.add_node("score", nodes.score)
    g.add_node("decide", nodes.choose_followup)
    g.add_node("follow_up", nodes.follow_up)
    g.add_node("close", nodes.close_question)
    g.add_node("finish", nodes.finish)
    g.add_edge(START, "plan")
    g.add_edge("plan", "opening")
    g.add_conditional_edges("opening", after_opening)
    g.add_conditional_edges("opening_record", after_opening_record)
    g.add_conditional_edges("pick", after_pick)
    g.add_edge("ask", "wait")
    g.add_conditional_edges("wait", after_wait)
    g.add_edge("retrieve", "score")
    g.add_edge("score", "decide")
    g.add_conditional_edges("decide", after_decide)
    g.add_edge("follow_up", "wait")
    g.add_edge("close", "pick")
    g.add_edge("finish", END)
    return g.compile(checkpointer=checkpointer)
