"""`python -m evals`: grade the eval cases with every grader and write a dated results folder."""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from pathlib import Path

from evals.cases import CASES_DIR, CaseError, load_cases, resolve
from evals.plots import bars, scatter
from evals.report import to_markdown
from evals.runner import ALL_GRADERS, MODEL_GRADERS, evaluate, followup_quality, run_grader
from interviewer.errors import InterviewerError
from interviewer.settings import Settings, positive_int
from knowledge.bank import BankError
from knowledge.store import Store


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    p.add_argument("--cases", type=Path, action="append", help=f"JSONL file or folder (default {CASES_DIR})")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for the model graders (default: embedded model)")
    p.add_argument("--model", help="model name at --base-url")
    p.add_argument("--api-key")
    p.add_argument("--local-model", default="auto", help="embedded model when no --base-url: auto, 0.5b, 1.5b")
    p.add_argument("--graders", default=",".join(ALL_GRADERS), help=f"comma-separated, from {','.join(ALL_GRADERS)}")
    p.add_argument("--no-model", action="store_true", help="only the graders that need no model")
    p.add_argument("--concurrency", type=positive_int, default=4, help="grader calls in flight (a vLLM server batches them)")
    p.add_argument("--repeat", type=positive_int, default=1, help="grade every answer K times to measure stability")
    p.add_argument("--limit", type=positive_int, help="only the first N cases (a smoke test)")
    p.add_argument("--sample", type=positive_int, help="N cases spread over all questions and tiers (for slow graders)")
    p.add_argument("--out", type=Path, default=Path("evals/results"), help="where the dated results folder goes")
    p.add_argument("--home", type=Path, help="where the Chroma store lives (env RLI_HOME)")
    return p.parse_args(argv)


def _open_model(args):
    from interviewer.session import Backend

    settings = Settings.from_env(base_url=args.base_url, model=args.model, api_key=args.api_key,
                                 local_model=args.local_model, timeout=300.0)
    return Backend.open(settings, parallel=max(1, args.concurrency))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    graders = [g.strip() for g in args.graders.split(",") if g.strip()]
    unknown = set(graders) - set(ALL_GRADERS)
    if unknown:
        print(f"error: unknown graders {sorted(unknown)}; choose from {', '.join(ALL_GRADERS)}", file=sys.stderr)
        return 2
    if not graders:
        print(f"error: --graders is empty; choose from {', '.join(ALL_GRADERS)}", file=sys.stderr)
        return 2
    if args.no_model:
        kept = [g for g in graders if g not in MODEL_GRADERS]
        if not kept:
            print(f"error: --no-model leaves no grader ({', '.join(graders)} need a model); drop --no-model, or add "
                  "embedding or length to --graders", file=sys.stderr)
            return 2
        graders = kept
    backend = None
    try:
        _check_writable(args.out)  # before the grading, not after it
        settings = Settings.from_env(home=args.home) if args.home else Settings.from_env()
        store = Store.open(settings.store_path)
        cases = load_cases(args.cases or [CASES_DIR])[: args.limit]
        if not cases:
            raise CaseError("no case to grade: the case files hold no cases")
        if args.sample:
            cases = spread(cases, args.sample)
        items, notes = resolve(cases, store)
        if not items:
            raise CaseError("no case to grade: the case files are empty, or every question_id is unknown"
                            + (f" ({notes[0]})" if notes else ""))
        model = None
        if any(g in MODEL_GRADERS for g in graders):
            backend = _open_model(args)
            model = backend.model
            print(f"Using {backend.description}", file=sys.stderr)
        started = time.monotonic()
        runs = [run_grader(g, items, store, model, args.concurrency, args.repeat) for g in graders]
        results = evaluate(runs)
        primary = next((r for r in runs if r.name == "embedding"), runs[0])
        grades = {i: _grade(primary, i) for i in range(len(primary.rows))}
        results["followups"] = {"grader": primary.name, **followup_quality(items, grades, store)}
        meta = {"cases": len(items), "questions": len({i.qid for i in items}), "notes": notes,
                "model": backend.description if backend else None, "concurrency": args.concurrency,
                "repeat": args.repeat, "total_seconds": round(time.monotonic() - started, 1),
                "bank_fingerprint": store.fingerprint}
        folder = _write(args.out, runs, results, meta)
        print(f"results: {folder}")
        for r in runs:
            o = results[r.name]["overall"]
            print(f"{r.name:>14}: spearman {o.get('spearman', float('nan')):.3f}  pairwise "
                  f"{o.get('pairwise_accuracy', float('nan')):.3f}  exploit {o.get('exploit_rate', float('nan')):.2f}  "
                  f"{o['seconds']}s")
        return 0
    except (CaseError, BankError, InterviewerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if backend:
            backend.close()


def _check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{time.time_ns()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise CaseError(f"--out {out} is not a writable folder ({exc.strerror or exc}); choose another") from None


def spread(cases, n: int, seed: int = 0):
    """Round-robin over questions (each shuffled with a fixed seed): a small sample still covers every
    question and many tiers."""
    rng = random.Random(seed)
    groups: dict[str, list] = {}
    for c in cases:
        groups.setdefault(c.question_id or c.question, []).append(c)
    for g in groups.values():
        rng.shuffle(g)
    out = []
    for i in range(max(len(g) for g in groups.values())):
        out += [g[i] for g in groups.values() if i < len(g)]
    return out[:n]


def _grade(run, i):
    from interviewer.scoring import Grade

    g = run.rows[i].get("grade")
    return Grade.model_validate(g) if g else None


def _write(out: Path, runs, results: dict, meta: dict) -> Path:
    folder = out / time.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").write_text(json.dumps({"meta": meta, **results}, ensure_ascii=False, indent=2, default=str))
    with (folder / "answers.jsonl").open("w", encoding="utf-8") as f:
        for run in runs:
            for row in run.rows:
                f.write(json.dumps({k: v for k, v in row.items() if k != "grade"}, ensure_ascii=False) + "\n")
    for run in runs:
        (folder / f"scatter_{run.name}.svg").write_text(scatter(run.rows, f"{run.name}: grader vs gold"))
    if "embedding" in results:
        per = {q: m["pairwise_accuracy"] for q, m in results["embedding"]["per_rubric"].items()}
        (folder / "per_rubric_embedding.svg").write_text(bars(dict(sorted(per.items(), key=lambda kv: kv[1])), "embedding: pairwise accuracy per rubric"))
    exploit = {r.name: results[r.name]["overall"].get("exploit_rate", float("nan")) for r in runs}
    (folder / "exploit_rates.svg").write_text(bars(exploit, "exploit rate (adversarial answers scored >= gold + 2)"))
    (folder / "report.md").write_text(to_markdown(results, meta), encoding="utf-8")
    return folder


if __name__ == "__main__":
    sys.exit(main())
