"""`python -m evals.bench`: time to the first question and a turn's latency, split by stage;
with --throughput, eval answers per second at several concurrencies against the server's own rate.

Prints figures; asserts nothing. Examples: python -m evals.bench --local-model 1.5b --turns 6
    (`--phrasing model` measures the opt-in rewording on the embedded model)
    python -m evals.bench --throughput --grader llm --concurrency 1,2,4,8,16 --answers 16
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
from interviewer.settings import Settings, add_vllm_flags
from knowledge.store import Store


def _ms(samples: list[float]) -> str:
    return f"median {1000 * statistics.median(samples):.0f} ms, max {1000 * max(samples):.0f} ms"


def _stages(store: Store, plan: list[str], model) -> dict[str, list[float]]:
    """Each stage of a turn on its own, on half of each question's reference answer."""
    grader = make_grader("embedding", store, None)
    out: dict[str, list[float]] = {"retrieval": [], "scoring": [], "policy": [], "wording": []}
    for qid in plan:
        a = time.monotonic()
        q = store.question(qid)
        store.rubric_vectors(qid)
        b = time.monotonic()
        answer = q.rubric.reference_answer.zh[: len(q.rubric.reference_answer.zh) // 2]
        g = grader.grade(q, answer, "zh")
        c = time.monotonic()
        d = decide(q, g.verdicts, g, QuestionProgress())
        e = time.monotonic()
        phrase(model, q.rubric.probes[d.probe].zh if d.probe is not None else q.zh, "zh")
        f = time.monotonic()
        for key, value in zip(out, (b - a, c - b, e - c, f - e)):
            out[key].append(value)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench", description=__doc__)
    p.add_argument("--local-model", default="auto")
    p.add_argument("--base-url", action="append", help="endpoint; several: replicas (throughput mode)")
    p.add_argument("--model")
    p.add_argument("--phrasing", choices=["auto", "model", "verbatim"], default="auto")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--home", type=Path, help="store location (default $RLI_HOME)")
    p.add_argument("--throughput", action="store_true", help="eval answers/s at each --concurrency vs the server's own")
    p.add_argument("--concurrency", default="1,2,4,8,16", help="throughput mode: comma-separated levels")
    p.add_argument("--answers", type=int, default=16, help="throughput mode: fresh answers graded per level")
    p.add_argument("--grader", default="llm", help="throughput mode: llm, llm-per-point, hybrid or no-rubric")
    add_vllm_flags(p)
    args = p.parse_args(argv)
    if args.throughput:
        return _throughput(args)
    args.base_url = (args.base_url or [None])[0]
    settings = Settings.from_env(local_model=args.local_model, base_url=args.base_url, model=args.model,
                                 phrasing=args.phrasing, home=args.home or Settings.from_env().home)
    t0 = time.monotonic()
    backend = Backend.open(settings)
    t_model = time.monotonic() - t0
    store = Store.open(settings.store_path)
    t_store = time.monotonic() - t0 - t_model
    with tempfile.TemporaryDirectory() as tmp:
        # sessions go to a temporary folder; the store is the shared one
        app = Interviewer.open(settings.with_(home=Path(tmp), grader="embedding", opening=False), backend, store=store)
        app.deps.grader.grade(store.question(store.bank.with_rubric()[0].id), "预热", "zh")  # warm: load the e5 model
        t1 = time.monotonic()
        session = app.new_session(questions=args.turns)
        t_first = time.monotonic() - t1
        print(f"{backend.description}; wording: {settings.resolved_phrasing()}")
        print(f"start-up: model server {t_model:.1f}s, store {t_store:.1f}s; first question on screen {t_first:.2f}s "
              f"(server and embeddings warm)")
        turns = []
        while session.pending is not None and len(turns) < args.turns:
            q = store.question(session.pending["qid"])
            a = time.monotonic()
            session.answer(q.rubric.reference_answer.zh[: len(q.rubric.reference_answer.zh) // 2])
            turns.append(time.monotonic() - a)
        print(f"a whole turn (session.answer: score, decide, next line, checkpoint) over {len(turns)} turns: {_ms(turns)}")
        model = backend.model if settings.resolved_phrasing() == "model" else None
        stages = _stages(store, session.state["plan"], model)
        print(f"per stage over {len(stages['retrieval'])} questions:")
        print(f"  retrieval (rubric + vectors from Chroma): {_ms(stages['retrieval'])}")
        print(f"  scoring (embedding key-point matcher):    {_ms(stages['scoring'])}")
        print(f"  follow-up decision (policy):              {_ms(stages['policy'])}")
        print(f"  next line ({'model rewording' if model else 'written line'}):{' ' * (14 if model else 17)}{_ms(stages['wording'])}")
        app.close()
    backend.close()
    return 0


def _throughput(args) -> int:
    from evals.__main__ import _open_model, spread
    from evals.cases import CASES_DIR, load_cases, resolve
    from evals.throughput import measure, table
    from interviewer.llm import Replicas

    levels = [int(c) for c in args.concurrency.split(",")]
    args.api_key, args.concurrency = None, max(levels)  # the embedded server gets a slot per request in flight
    settings = Settings.from_env(home=args.home or Settings.from_env().home)
    store = Store.open(settings.store_path, url=settings.chroma_url)
    items, _ = resolve(spread(load_cases([CASES_DIR]), args.answers * len(levels)), store)
    backends = _open_model(args)
    try:
        model = backends[0].model if len(backends) == 1 else Replicas([b.model for b in backends])
        print("; ".join(b.description for b in backends))
        result = measure(items, store, model, args.grader, levels, args.answers)
        print(f"grader {args.grader}, {args.answers} fresh answers per level\n{table(result)}")
    finally:
        for b in backends:
            b.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
