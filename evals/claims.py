"""`python -m evals.claims`: what the claim check confirms on the training answers, with the rubrics as they are now.

Which sentences of an answer resemble a pitfall is the embedding part of the check, and slow (it embeds every
sentence of every training answer, as `python -m evals.train` does); it is computed once and cached. Whether such a
sentence really asserts the pitfall is lexical (the pitfall's own words against its `truths` and the key points), so
with the cache the whole training pool is checked in seconds. A rubric author sees what a new truth or pitfall wording costs before committing it:

    python -m evals.claims               # confirmations gold lists, and the ones it does not in competent answers
    python -m evals.claims --show 20     # with the candidates' sentences

The cache is keyed by the texts the embedding part reads (answers, key points and their variants, pitfalls and their
variants), so an edit to a truth keeps it and an edit to a pitfall's wording recomputes it.
"""

import argparse
import hashlib
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evals.cases import BLIND_TRAIN, BLIND_WRONG, CASES_DIR, Case, CaseError, load_labelled
from interviewer.grading import EmbeddingGrader, asserts_pitfall, key_point_index
from interviewer.settings import Settings
from knowledge.bank import Bank, BankError, load_bank
from knowledge.store import Store

COMPETENT = {"excellent", "good", "terse_correct", "partial"}
WRONG = ("fluent_central_error", "confidently_wrong")


def cache_key(bank: Bank, cases: list[Case]) -> str:
    """A digest of every text the embedding part reads; truths are not among them."""
    digest = hashlib.sha256()
    for q in sorted(bank.with_rubric(), key=lambda q: q.id):
        r = q.rubric
        texts = [q.zh, q.en] + [t for kp in r.key_points for t in (kp.zh, kp.en, *kp.variants)]
        texts += [t for p in r.pitfalls for t in (p.zh, p.en, *p.variants)]
        digest.update(json.dumps([q.id, texts], ensure_ascii=False).encode())
    for c in cases:
        digest.update(json.dumps([c.id, c.question_id, c.answer], ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def candidates(grader: EmbeddingGrader, bank: Bank, cases: list[Case]) -> list[dict]:
    """Per answer: each sentence (evidence unit) close enough to a pitfall to be checked, with its margin."""
    out = []
    for n, c in enumerate(cases, 1):
        q = bank.get(c.question_id)
        said = grader.evidence(q, c.answer).said
        cands = [[idx, said.units[u], round(float(margin), 4)]
                 for idx, margin, u, _ in grader.pitfall_candidates(said.pitfalls)]
        out.append({"id": c.id, "question_id": c.question_id, "tier": c.tier,
                    "misconceptions": list(c.misconceptions), "candidates": cands})
        if n % 500 == 0:
            logging.warning("candidates: %d/%d answers", n, len(cases))
    return out


def cached_candidates(path: Path, bank: Bank, cases: list[Case],
                      open_grader: Callable[[], EmbeddingGrader]) -> list[dict]:
    """The cached candidates when they were made from the same texts; otherwise computed (`open_grader` is called
    only then) and cached."""
    key = cache_key(bank, cases)
    if path.exists():
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            saved = {}
            logging.warning("%s is not a cache this command wrote (unreadable): recomputing", path)
        if isinstance(saved, dict) and saved.get("key") == key:
            return saved["answers"]
        if saved:
            logging.warning("%s was made from other texts: recomputing", path)
    answers = candidates(open_grader(), bank, cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "answers": answers}, ensure_ascii=False), encoding="utf-8")
    return answers


@dataclass
class Tally:
    listed: int = 0  # (answer, pitfall) pairs confirmed that gold lists
    wrong_hit: Counter = field(default_factory=Counter)  # wrong answers (by tier) with a listed pitfall confirmed
    wrong_n: Counter = field(default_factory=Counter)
    false: list[tuple[str, str, int, str]] = field(default_factory=list)  # competent: (id, question, pitfall, sentence)


def check(bank: Bank, answers: list[dict]) -> Tally:
    """The claim check on cached candidates, with `bank`'s truths and wordings."""
    index = key_point_index(bank.with_rubric())
    tally = Tally()
    for a in answers:
        q = bank.get(a["question_id"])
        listed = set(a["misconceptions"])
        confirmed = {idx: unit for idx, unit, _ in a["candidates"] if asserts_pitfall(q, idx, unit, index)}
        hits = [i for i in confirmed if str(i) in listed]
        tally.listed += len(hits)
        if a["tier"] in WRONG:
            tally.wrong_n[a["tier"]] += 1
            tally.wrong_hit[a["tier"]] += bool(hits)
        if a["tier"] in COMPETENT:
            tally.false += [(a["id"], q.id, i, u) for i, u in confirmed.items() if str(i) not in listed]
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.claims", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=Path, action="append",
                   help="labelled cases (default: the training data, as `python -m evals.train` reads it)")
    p.add_argument("--cache", type=Path, help="the candidates' cache (default: claims-cache.json in the app's home)")
    p.add_argument("--show", type=int, default=0, help="print this many false confirmations with their sentences")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    settings = Settings.from_env()
    try:
        bank = load_bank()
        cases = load_labelled(args.cases or [CASES_DIR, *BLIND_TRAIN, BLIND_WRONG])
        if not cases:
            raise CaseError("no labelled cases (each needs question_id and covered)")
        unknown = sorted({c.question_id for c in cases} - set(bank.questions))
        if unknown:
            raise CaseError(f"cases name questions not in the bank: {unknown[:5]}")
        answers = cached_candidates(args.cache or settings.home / "claims-cache.json", bank, cases,
                                    lambda: EmbeddingGrader(Store.open(settings.store_path)))
    except (CaseError, BankError, OSError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t = check(bank, answers)
    competent = sum(a["tier"] in COMPETENT for a in answers)
    print(f"{len(answers)} answers; confirmed pitfalls gold lists: {t.listed} (answer, pitfall) pairs")
    for tier in WRONG:
        print(f"  {tier}: a listed pitfall confirmed in {t.wrong_hit[tier]} of {t.wrong_n[tier]} answers")
    print(f"confirmed pitfalls gold does not list, in competent answers: {len(t.false)} "
          f"(in {len({f[0] for f in t.false})} of {competent} answers; each would be a false challenge)")
    for aid, qid, idx, unit in t.false[:args.show]:
        print(f"  {aid} {qid} pitfall {idx}: {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
