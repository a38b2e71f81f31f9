"""A process that answers one question and ends the interview, and dies where it is told to.

    python tests/crashkit.py HOME STORE SESSION_ID CRASH_AT

CRASH_AT = N > 0: the process ends itself (os._exit, like kill -9: no clean-up) right after the
checkpointer's N-th write (put or put_writes) of the turn and of /end. CRASH_AT = 0: no crash; the
test kills the process from outside after it printed GO. Prints ACK-ANSWER once the answer was
acknowledged, ACK-END once the interview ended. Used by tests/test_faults.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from interviewer.scoring import Grade, Verdict, compute_score  # noqa: E402

ANSWER = "PPO 的 clip 把概率比限制在 1±ε 之间，取 min 得到悲观的下界。"


class AllCovered:
    """A grader that marks every key point covered: the flow is deterministic, no model is needed."""

    name = "all-covered"

    def grade(self, question, answer, lang, focus=None) -> Grade:
        verdicts = [Verdict(key=kp.id, weight=kp.weight, status="covered", evidence=answer[:40])
                    for kp in question.rubric.key_points]
        return Grade(grader=self.name, qid=question.id, score=compute_score(verdicts), verdicts=verdicts)


def crashing_saver(after: int):
    from langgraph.checkpoint.sqlite import SqliteSaver

    class CrashingSaver(SqliteSaver):
        writes = 0

        def _count(self) -> None:
            type(self).writes += 1
            if type(self).writes == after:
                os._exit(137)

        def put(self, *args, **kwargs):
            out = super().put(*args, **kwargs)
            self._count()
            return out

        def put_writes(self, *args, **kwargs):
            super().put_writes(*args, **kwargs)
            self._count()

    return CrashingSaver


def main(home: str, store_path: str, sid: str, crash_at: int) -> int:
    import interviewer.session as session_module
    from interviewer.session import Interviewer
    from interviewer.settings import Settings
    from knowledge.store import Store

    if crash_at:  # every checkpoint write counts (opening an untouched session writes nothing)
        session_module.SqliteSaver = crashing_saver(crash_at)
    settings = Settings(home=Path(home), phrasing="verbatim", grader="embedding", questions=2)
    app = Interviewer.open(settings, store=Store.open(store_path), grader=AllCovered())
    session = app.session(sid)
    print("GO", flush=True)
    session.answer(ANSWER)
    print("ACK-ANSWER", flush=True)
    session.end()
    print("ACK-END", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
