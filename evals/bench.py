"""`python -m evals.bench`: time to the first question and a turn's latency, split by stage.

Prints figures; asserts nothing. Example: python -m evals.bench --local-model 1.5b --turns 6
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from interviewer.grading import make_grader
from interviewer.phrasing import phrase
from interviewer.policy import QuestionProgress, decide
from interviewer.session import Backend, Interviewer
from interviewer.settings import Settings
from knowledge.store import Store


def _ms(samples: list[float]) -> str:
    return f"median {1000 * statistics.median(samples):.0f} ms, max {1000 * max(samples):.0f} ms"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench", description=__doc__)
    p.add_argument("--local-model", default="auto")
    p.add_argument("--base-url")
    p.add_argument("--model")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--home", type=Path, help="store location (default $RLI_HOME)")
    args = p.parse_args(argv)
    settings = Settings.from_env(local_model=args.local_model, base_url=args.base_url, model=args.model,
                                 home=args.home or Settings.from_env().home)
    t0 = time.monotonic()
    backend = Backend.open(settings)
    t_model = time.monotonic() - t0
    store = Store.open(settings.store_path)
    t_store = time.monotonic() - t0 - t_model
    with tempfile.TemporaryDirectory() as tmp:
        # sessions go to a temporary folder; the store is the shared one
        app = Interviewer.open(settings.with_(home=Path(tmp), grader="embedding"), backend, store=store)
        t1 = time.monotonic()
        session = app.new_session(questions=args.turns)
        t_first = time.monotonic() - t1
        print(f"{backend.description}")
        print(f"start-up: model server {t_model:.1f}s, store {t_store:.1f}s, first question {t_first:.1f}s "
              f"(total {time.monotonic() - t0:.1f}s)")
        grader = make_grader("embedding", store, None)
        retrieval, scoring, policy, phrasing = [], [], [], []
        for qid in session.state["plan"]:
            a = time.monotonic()
            q = store.question(qid)
            store.rubric_vectors(qid)
            b = time.monotonic()
            answer = q.rubric.reference_answer.zh[: len(q.rubric.reference_answer.zh) // 2]
            g = grader.grade(q, answer, "zh")
            c = time.monotonic()
            d = decide(q, g.verdicts, g, QuestionProgress())
            e = time.monotonic()
            line = q.rubric.probes[d.probe].zh if d.probe is not None else q.zh
            phrase(backend.model, line, "zh")
            f = time.monotonic()
            retrieval.append(b - a)
            scoring.append(c - b)
            policy.append(e - c)
            phrasing.append(f - e)
        print(f"per turn over {len(retrieval)} turns:")
        print(f"  retrieval (rubric + vectors from Chroma): {_ms(retrieval)}")
        print(f"  scoring (embedding key-point matcher):    {_ms(scoring)}")
        print(f"  follow-up decision (policy):              {_ms(policy)}")
        print(f"  follow-up wording (model call):           {_ms(phrasing)}")
        app.close()
    backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
