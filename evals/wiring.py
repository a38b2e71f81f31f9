"""`python -m evals.wiring`: the capable-model path on a real server, for wiring: how often the model's
transitions and thread follow-ups pass the guard, the topic similarity of the accepted threads, and
the time per call. Prints figures; asserts nothing.

    python -m evals.wiring --local-model 1.5b -n 8
    python -m evals.wiring --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from interviewer.phrasing import transition
from interviewer.session import Backend
from interviewer.settings import Settings
from interviewer.threads import propose
from knowledge.store import Store


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.wiring", description=__doc__)
    p.add_argument("--local-model", default="auto")
    p.add_argument("--base-url")
    p.add_argument("--model")
    p.add_argument("-n", type=int, default=8, help="questions (answers: half a reference answer plus a claim of the candidate's own)")
    args = p.parse_args(argv)
    settings = Settings.from_env(local_model=args.local_model, base_url=args.base_url, model=args.model)
    backend = Backend.open(settings)
    store = Store.open(settings.store_path)
    questions = [q for q in store.bank.with_rubric() if q.section in ("algorithm", "infra")][: args.n]
    bridges, threads, t_bridge, t_thread = [], [], [], []
    try:
        for q in questions:
            ref = q.rubric.reference_answer.zh
            answer = ref[: len(ref) // 2] + f" 我们项目里还用了 gradient checkpointing，配合 {q.tags[0]} 一起调。"
            secrets = [kp.zh for kp in q.rubric.key_points] + [ref]
            a = time.monotonic()
            bridges.append(transition(backend.model, answer, "zh", secrets))
            b = time.monotonic()
            threads.append(propose(backend.model, q, answer, "zh"))
            t_bridge.append(b - a)
            t_thread.append(time.monotonic() - b)
            th = threads[-1]
            print(f"{q.id}: transition {bridges[-1]!r} ({b - a:.1f}s); thread "
                  f"{(th.accepted, th.reason, th.question) if th else None} ({t_thread[-1]:.1f}s)", flush=True)
    finally:
        backend.close()
    print(backend.description)
    ok = [t for t in bridges if t]
    print(f"transitions accepted: {len(ok)}/{len(bridges)}; median {statistics.median(t_bridge):.1f}s per call")
    for t in ok[:4]:
        print(f"  e.g. {t}")
    accepted = [t for t in threads if t and t.accepted]
    print(f"thread follow-ups accepted: {len(accepted)}/{len(threads)}; median {statistics.median(t_thread):.1f}s per call")
    if accepted:
        print(f"  topic similarity of accepted threads: mean {statistics.mean(t.topic for t in accepted):.3f}, "
              f"min {min(t.topic for t in accepted):.3f}")
    reasons = Counter((t.reason.split(" (")[0] if t else "no valid output") for t in threads if not (t and t.accepted))
    print(f"  refused: {dict(reasons)}")
    for t in accepted[:4]:
        print(f"  e.g. “{t.claim}” -> {t.question}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
