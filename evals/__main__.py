"""`python -m evals`: grade the eval cases with every grader and write a dated results folder."""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from pathlib import Path

from evals.cases import BLIND_TEST, CASES_DIR, CaseError, agreement, load_cases, resolve
from evals.plots import bars, scatter
from evals.report import to_markdown
from evals.runner import ALL_GRADERS, MODEL_GRADERS, evaluate, followup_quality, run_grader
from interviewer.errors import InterviewerError
from interviewer.llm import Replicas
from interviewer.settings import Settings, add_vllm_flags, positive_int

VLLM_FIELDS = ("engine", "vllm", "vllm_device", "max_model_len", "gpu_memory_utilization", "tensor_parallel_size",
               "vllm_start_timeout")
from knowledge.bank import BankError
from knowledge.store import Store


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    p.add_argument("--cases", type=Path, action="append", help=f"JSONL file or folder (default {CASES_DIR})")
    p.add_argument("--base-url", action="append", help="OpenAI-compatible endpoint for the model graders (default: "
                   "embedded model); give it several times to spread the answers over replicas")
    p.add_argument("--model", help="model name at --base-url (or the model vLLM serves with --engine vllm)")
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
    p.add_argument("--chroma-url", help="the store on a Chroma server: http://host:8000 (env RLI_CHROMA_URL)")
    add_vllm_flags(p)
    return p.parse_args(argv)


def _open_model(args) -> list:
    """One backend per --base-url (several: replicas), or the one --engine starts."""
    from interviewer.session import Backend

    vllm = {k: v for k, v in vars(args).items() if k in VLLM_FIELDS and v is not None}
    settings = Settings.from_env(model=args.model, api_key=args.api_key, local_model=args.local_model,
                                 timeout=300.0, **vllm)
    if args.home:
        settings = settings.with_(home=args.home)
    backends = []
    try:
        for url in args.base_url or [None]:
            backends.append(Backend.open(settings.with_(base_url=url), parallel=max(1, args.concurrency)))
    except BaseException:
        for b in backends:
            b.close()
        raise
    return backends


def case_sets(args) -> dict[str, list[Path]]:
    """The sets to evaluate, each reported on its own: by default the answer ladders (written by the
    rubric authors; the grader is fitted on them) and the held-out blind set (written without the rubrics)."""
    if args.cases:
        return {"cases": args.cases}
    sets = {"ladders": [CASES_DIR]}
    if BLIND_TEST.exists():
        sets["blind"] = [BLIND_TEST]
    return sets


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
    backends: list = []
    try:
        _check_writable(args.out)  # before the grading, not after it
        settings = Settings.from_env(home=args.home) if args.home else Settings.from_env()
        store = Store.open(settings.store_path, url=args.chroma_url or settings.chroma_url)
        model = None
        if any(g in MODEL_GRADERS for g in graders):
            backends = _open_model(args)
            model = backends[0].model if len(backends) == 1 else Replicas([b.model for b in backends])
            for b in backends:
                print(f"Using {b.description}", file=sys.stderr)
        started = time.monotonic()
        sets, all_runs, notes, counts = {}, {}, [], {}
        for name, paths in case_sets(args).items():
            cases = load_cases(paths)[: args.limit]
            if not cases:
                raise CaseError(f"no case to grade in {name}: the case files hold no cases")
            if args.sample:
                cases = spread(cases, args.sample)
            items, set_notes = resolve(cases, store)
            if not items:
                raise CaseError(f"no case to grade in {name}: the case files are empty, or every question_id is "
                                "unknown" + (f" ({set_notes[0]})" if set_notes else ""))
            notes += [f"{name}: {n}" for n in set_notes]
            runs = [run_grader(g, items, store, model, args.concurrency, args.repeat) for g in graders]
            results = evaluate(runs)
            primary = next((r for r in runs if r.name == "embedding"), runs[0])
            grades = {i: _grade(primary, i) for i in range(len(primary.rows))}
            results["followups"] = {"grader": primary.name, **followup_quality(items, grades, store)}
            sets[name], all_runs[name] = results, runs
            counts[name] = {"cases": len(items), "questions": len({i.qid for i in items})}
        meta = {"sets": counts, "notes": notes, "model": "; ".join(b.description for b in backends) or None,
                "concurrency": args.concurrency, "repeat": args.repeat,
                "total_seconds": round(time.monotonic() - started, 1), "bank_fingerprint": store.fingerprint,
                "agreement": agreement() if "blind" in sets else None}
        folder = _write(args.out, all_runs, sets, meta)
        print(f"results: {folder}")
        for name, results in sets.items():
            print(f"[{name}] {counts[name]['cases']} answers on {counts[name]['questions']} questions")
            for g in graders:
                o = results[g]["overall"]
                print(f"{g:>14}: spearman {o.get('spearman', float('nan')):.3f}  pairwise "
                      f"{o.get('pairwise_accuracy', float('nan')):.3f}  exploit {o.get('exploit_rate', float('nan')):.2f}  "
                      f"MAE {o.get('mean_abs_error', float('nan')):.2f}  {o['seconds_per_answer']}s/answer")
            f = results["followups"]
            print(f"{'follow-ups':>14}: false challenges {f['false_challenge_rate']:.3f}  redundant gap questions "
                  f"{f['redundant_gap_rate']:.3f} (of {f['competent_gap_questions']}, on {f['competent_answers']} competent answers)  "
                  f"clarifications of a stated point {f['clarified_stated']}/{f['clarifications']}  "
                  f"deeper on a stated point {f['deepen_stated']}/{f['deepens']}")
        if meta["agreement"]:
            a = meta["agreement"]
            print(f"inter-annotator agreement on {a['n']} blind answers: Spearman {a['spearman']:.3f}, "
                  f"mean absolute difference {a['mean_abs_diff']:.2f} (the ceiling for any grader)")
        return 0
    except (CaseError, BankError, InterviewerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        for b in backends:
            b.close()


def _check_writable(out: Path) -> None:
    from interviewer.session import writable_folder

    try:
        writable_folder(out)
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


def _write(out: Path, all_runs: dict, sets: dict, meta: dict) -> Path:
    folder = out / time.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    single = len(sets) == 1
    payload = {"meta": meta, **(next(iter(sets.values())) if single else sets)}
    (folder / "metrics.json").write_text(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    with (folder / "answers.jsonl").open("w", encoding="utf-8") as f:
        for name, runs in all_runs.items():
            for run in runs:
                for row in run.rows:
                    f.write(json.dumps({"set": name, **{k: v for k, v in row.items() if k != "grade"}}, ensure_ascii=False) + "\n")
    for name, runs in all_runs.items():
        prefix = "" if single else f"{name}_"
        results = sets[name]
        for run in runs:
            (folder / f"{prefix}scatter_{run.name}.svg").write_text(scatter(run.rows, f"{name}: {run.name} vs gold"))
        if "embedding" in results:
            per = {q: m["pairwise_accuracy"] for q, m in results["embedding"]["per_rubric"].items()}
            (folder / f"{prefix}per_rubric_embedding.svg").write_text(
                bars(dict(sorted(per.items(), key=lambda kv: kv[1])), f"{name}: embedding pairwise accuracy per rubric"))
        exploit = {r.name: results[r.name]["overall"].get("exploit_rate", float("nan")) for r in runs}
        (folder / f"{prefix}exploit_rates.svg").write_text(bars(exploit, f"{name}: exploit rate (adversarial answers scored >= gold + 2)"))
    (folder / "report.md").write_text("\n".join(to_markdown(results, meta, name, meta["sets"][name])
                                                for name, results in sets.items()), encoding="utf-8")
    return folder


if __name__ == "__main__":
    sys.exit(main())
