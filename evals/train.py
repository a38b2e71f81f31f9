"""`python -m evals.train`: fit the embedding grader's key-point model and its two thresholds.

Training data: the answer ladders (`evals/cases/`), the blind sets that `evals.cases.BLIND_TRAIN` lists (the first
set's `train.jsonl` and `dev.jsonl`, every earlier reported set `setN.jsonl`, the terse supplement `terse.jsonl`) and the
wrong-answer supplement (`wrong.jsonl`), each answer labelled per key point (covered / partial / missed) and with
a 0-10 gold. The held-out blind set (`evals/blind/heldout.jsonl`) is never read here; `python -m evals.ablation` only reports on it.

Validation is by question-grouped folds: no question's answers are in both the fitting and the scoring
part of a fold, so the cross-validated figures say how the grader does on a rubric it was not fitted on.
The thresholds and any calibration are chosen on the out-of-fold predictions, so they are not flattered
by the fit either.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evals.cases import BLIND_TRAIN, BLIND_WRONG, CASES_DIR, CaseError, load_labelled
from evals.metrics import spearman
from interviewer.evidence import ALL_FEATURES
from interviewer.grading import LIST_CREDIT, PITFALL_MARGIN, WEIGHTS_PATH, EmbeddingGrader, degenerate, judge_point
from interviewer.pointmodel import (STACK_FEATURES, LogisticModel, PointModel, StackedModel, TreeModel, calibrate, isotonic,
                                    stack_features)
from interviewer.scoring import CREDIT, MISCONCEPTION_PENALTY, Verdict, compute_score
from interviewer.settings import Settings
from knowledge.bank import BankError
from knowledge.store import Store

LABEL = {"covered": 1.0, "partial": 0.5, "missed": 0.0}
# the boosted trees: set once (2026-12-04), not searched; a leaf holds at least 40 key points of the ~9,000
TREES = {"n_estimators": 300, "max_depth": 3, "learning_rate": 0.05, "min_samples_leaf": 40, "subsample": 0.8}
# the stacked model's second stage (set once, 2026-12-05, not searched) and the folds its training P come from
SECOND_TREES = {"n_estimators": 200, "max_depth": 3, "learning_rate": 0.05, "min_samples_leaf": 40, "subsample": 0.8}
INNER_FOLDS = 4
MODEL = "stacked"  # the key-point model fitted by default


@dataclass
class Example:
    qid: str
    gold: float
    tier: str
    weights: list[str]  # per key point
    labels: np.ndarray  # per key point, 0 / 0.5 / 1
    x: np.ndarray | None  # key points x ALL_FEATURES from the sentences that say something (None: no such sentence)
    x_listed: np.ndarray | None  # the same from the sentences that only list terms (None: no such sentence)
    misconceptions: int  # confirmed pitfalls
    degenerate: bool
    wrong_about: list[int] = field(default_factory=list)  # key points a confirmed pitfall is about (credited nothing)
    extra: dict = field(default_factory=dict)  # id; in_thresholds: False for the wrong-answer supplement


def featurize(grader: EmbeddingGrader, cases, in_thresholds: bool = True) -> list[Example]:
    """Each case read exactly as the grader reads it (`EmbeddingGrader.evidence` and `.features`)."""
    out = []
    for n, c in enumerate(cases, 1):
        q = grader.store.question(c.question_id)
        kps = q.rubric.key_points
        reading = grader.evidence(q, c.answer)
        said, listed = grader.features(q, reading)
        labels = np.array([LABEL["covered"] if kp.id in (c.covered or []) else
                           LABEL["partial"] if kp.id in c.partial else 0.0 for kp in kps])
        miscs = grader.misconceptions(q, reading.said.units, reading.said.pitfalls)
        wrong_about = grader.contradicted(q, reading.said, miscs)
        out.append(Example(c.question_id, c.gold, c.tier, [kp.weight for kp in kps], labels, said, listed,
                           sum(m.confirmed for m in miscs), degenerate(q, c.answer) is not None,
                           [i for i, kp in enumerate(kps) if kp.id in wrong_about],
                           {"id": c.id or "", "in_thresholds": in_thresholds, "length": len(c.answer)}))
        if n % 50 == 0:
            print(f"  features: {n}/{len(cases)}", file=sys.stderr)
    return out


def fit_model(x: np.ndarray, y: np.ndarray, kind: str = "trees", features=ALL_FEATURES, params=None) -> PointModel:
    if kind == "logistic":
        return LogisticModel.fit(features, x, y)
    from sklearn.ensemble import GradientBoostingRegressor  # training only: grading reads the trees with numpy

    return TreeModel.from_sklearn(features, GradientBoostingRegressor(random_state=0, **(params or TREES)).fit(x, y))


def _fit_on(examples: list[Example], kind: str) -> PointModel:
    rows = [e for e in examples if e.x is not None]
    if kind == "stacked":
        return _fit_stacked(rows)
    return fit_model(np.vstack([e.x for e in rows]), np.concatenate([e.labels for e in rows]), kind)


def _fit_stacked(rows: list[Example]) -> StackedModel:
    """The first stage on all rows; the second on the first stage's P for each answer from a first stage not
    fitted on its question (question-grouped, INNER_FOLDS), as it will see P for answers to new rubrics."""
    weight = ALL_FEATURES.index("weight")
    first_p, _ = out_of_fold(rows, INNER_FOLDS, "trees")
    x = np.vstack([np.hstack([e.x, stack_features(p, e.x[:, weight])]) for e, p in zip(rows, first_p)])
    second = fit_model(x, np.concatenate([e.labels for e in rows]), "trees", ALL_FEATURES + STACK_FEATURES, SECOND_TREES)
    return StackedModel(ALL_FEATURES, _fit_on(rows, "trees"), second, weight)


def _predict(model: PointModel, x: np.ndarray | None, n: int) -> np.ndarray:
    return np.zeros(n) if x is None else model.predict(x)


def raw_score(ex: Example, model: PointModel, cover_p: float, unclear_p: float, p: np.ndarray | None = None) -> float:
    """The grader's score (see EmbeddingGrader.grade); `p`: P(stated) already predicted for ex.x."""
    if ex.degenerate:
        return 0.0
    p = _predict(model, ex.x, len(ex.labels)) if p is None else p
    listed = _predict(model, ex.x_listed, len(p))
    verdicts = []
    for i, (w, a, b) in enumerate(zip(ex.weights, p, listed)):
        status, credit, _ = judge_point(float(a), float(b), cover_p, unclear_p, i in ex.wrong_about)
        verdicts.append(Verdict(key=f"kp{i}", weight=w, status=status, credit=credit))
    return compute_score(verdicts, ex.misconceptions)


def _folds(examples: list[Example], k: int) -> list[set[str]]:
    qids = sorted({e.qid for e in examples})
    rng = np.random.default_rng(0)
    rng.shuffle(qids)
    return [set(qids[i::k]) for i in range(k)]


def out_of_fold(examples: list[Example], k: int = 5, kind: str = "trees") -> tuple[list[np.ndarray], list[PointModel]]:
    """P(stated) for each example from a model not fitted on its question, and that model."""
    preds: list[np.ndarray | None] = [None] * len(examples)
    models: list[PointModel | None] = [None] * len(examples)
    for held in _folds(examples, k):
        model = _fit_on([e for e in examples if e.qid not in held], kind)
        for i, e in enumerate(examples):
            if e.qid in held:
                preds[i], models[i] = _predict(model, e.x, len(e.labels)), model
    return preds, models  # type: ignore[return-value]


CALIBRATION_GAIN = 0.1  # the out-of-fold MAE a calibration must save to be shipped
# "missed" is the verdict a candidate must be able to trust: of the key points candidates fully stated, at
# most this share falls below unclear_p (out of fold). Above it and below cover_p a point is "unclear": never
# reported as missed, asked about with the candidate's own sentence, credited in proportion to where P lies
# between the two thresholds (`judge_point`). (Until 2026-12-04 the
# bound was 2% of the "missed" verdicts; with the sharper model that let 2.3% of the fully stated points of the
# held-out set be called missed, three times the earlier grader's 0.7%.)
FALSE_MISSED = 0.01
MAE_TIE = 0.01  # thresholds whose out-of-fold MAE is this close to the best count as equally close to gold


def choose_thresholds(examples: list[Example], preds: list[np.ndarray], models: list[PointModel]) -> tuple[float, float]:
    """(cover_p, unclear_p), both out of fold and on the examples whose mix of answers is a real one (not the
    wrong-answer supplement). unclear_p: the highest threshold below which at most FALSE_MISSED of the fully
    stated points fall. cover_p: the threshold whose grades land closest to gold (the lowest MAE; among those
    within MAE_TIE of it, the best Spearman). Key-point F1 cannot choose it: it is flat over a wide range."""
    keep = [i for i, e in enumerate(examples) if e.extra.get("in_thresholds", True)]
    examples, preds, models = [examples[i] for i in keep], [preds[i] for i in keep], [models[i] for i in keep]
    p, y = np.concatenate(preds), np.concatenate([e.labels for e in examples])
    grid = [round(float(t), 3) for t in np.arange(0.05, 0.81, 0.025)]
    unclear_p = max((t for t in grid if np.mean(p[y >= 1.0] < t) <= FALSE_MISSED), default=grid[0])
    rows = []
    for t in (t for t in grid if t > unclear_p):
        scores = [raw_score(e, m, t, unclear_p, pe) for e, m, pe in zip(examples, models, preds)]
        rows.append((float(np.mean([abs(s - e.gold) for s, e in zip(scores, examples)])),
                     spearman([e.gold for e in examples], scores), t))
    least = min(r[0] for r in rows)
    cover_p = max((r for r in rows if r[0] <= least + MAE_TIE), key=lambda r: r[1])[2]
    return cover_p, unclear_p


def _macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    out = []
    for cls in (True, False):
        tp = np.sum((y == cls) & (pred == cls))
        fp = np.sum((y != cls) & (pred == cls))
        fn = np.sum((y == cls) & (pred != cls))
        out.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)
    return float(np.mean(out))


def report(examples: list[Example], scores: list[float], label: str) -> dict:
    gold = [e.gold for e in examples]
    by_tier: dict[str, list[tuple[float, float]]] = {}
    for e, s in zip(examples, scores):
        by_tier.setdefault(e.tier, []).append((s, e.gold))
    out = {"n": len(examples), "spearman": round(spearman(gold, scores), 3),
           "mae": round(float(np.mean([abs(s - g) for s, g in zip(scores, gold)])), 2),
           "tiers": {t: (round(float(np.mean([s for s, _ in v])), 1), round(float(np.mean([g for _, g in v])), 1))
                     for t, v in sorted(by_tier.items())}}
    print(f"{label}: n={out['n']} spearman={out['spearman']} mae={out['mae']}", file=sys.stderr)
    print("   " + "  ".join(f"{t} {s}({g})" for t, (s, g) in out["tiers"].items()), file=sys.stderr)
    return out


def fit(examples: list[Example], folds: int = 5, kind: str = "trees", thresholds=None) -> tuple[dict, dict]:
    """(weights to ship, cross-validated figures). `thresholds`: how (cover_p, unclear_p) are chosen
    (default `choose_thresholds`; the ablation passes the earlier rule). The figures are on the examples
    the thresholds are chosen on (the wrong-answer supplement apart)."""
    preds, models = out_of_fold(examples, folds, kind)
    cover_p, unclear_p = (thresholds or choose_thresholds)(examples, preds, models)
    keep = [i for i, e in enumerate(examples) if e.extra.get("in_thresholds", True)]
    mixed = [examples[i] for i in keep]
    raw = [raw_score(examples[i], models[i], cover_p, unclear_p, preds[i]) for i in keep]
    p = np.concatenate([preds[i] for i in keep])
    cv = {"raw": report(mixed, raw, "cross-validated raw"),
          "calibrated": report(mixed, _calibrated_out_of_fold(mixed, raw, folds), "cross-validated calibrated"),
          "key_point_macro_f1": round(_macro_f1(np.concatenate([e.labels for e in mixed]) >= 0.5, p >= cover_p), 3)}
    # a monotone calibration is shipped only if, fitted out of fold, it brings scores clearly closer to gold
    # without costing the ordering: an isotonic fit pulls every score towards the middle, so a hair's better
    # MAE bought by marking correct answers down is no gain (2026-12-04: 1.30 against 1.32, terse 5.0 against 6.0)
    honest = [(r, e.gold) for r, e in zip(raw, mixed) if not e.degenerate]
    helps = (cv["calibrated"]["mae"] <= cv["raw"]["mae"] - CALIBRATION_GAIN
             and cv["calibrated"]["spearman"] >= cv["raw"]["spearman"])
    knots = isotonic([r for r, _ in honest], [g for _, g in honest]) if helps else []
    cv["calibration_used"] = bool(knots)
    model = _fit_on(examples, kind)
    weights = {"point_model": model.to_json(), "cover_p": cover_p, "unclear_p": unclear_p,
               "pitfall_margin": PITFALL_MARGIN, "list_credit": LIST_CREDIT,
               "misconception_penalty": MISCONCEPTION_PENALTY, "calibration": [[round(a, 3), round(b, 3)] for a, b in knots],
               "credit": CREDIT, "trained_on": {"answers": len(examples), "questions": len({e.qid for e in examples}),
                                                "key_points": int(sum(len(e.labels) for e in examples))},
               "cross_validated": cv}
    return weights, cv


def _calibrated_out_of_fold(examples: list[Example], raw: list[float], folds: int) -> list[float]:
    out = list(raw)
    for held in _folds(examples, folds):
        fit_on = [(r, e.gold) for r, e in zip(raw, examples) if e.qid not in held and not e.degenerate]
        knots = isotonic([r for r, _ in fit_on], [g for _, g in fit_on])
        for i, e in enumerate(examples):
            if e.qid in held and not e.degenerate:
                out[i] = calibrate(raw[i], knots)
    return out


def apply(weights: dict, examples: list[Example]) -> list[float]:
    from interviewer.pointmodel import load_model

    model = load_model(weights["point_model"], ALL_FEATURES)
    knots = [tuple(k) for k in weights["calibration"]]
    return [0.0 if e.degenerate else calibrate(raw_score(e, model, weights["cover_p"], weights["unclear_p"]), knots)
            for e in examples]


def dump_weights(weights: dict) -> str:
    """The weights as JSON: the figures readable (one per line), the model's arrays on one line."""
    text = json.dumps({**weights, "point_model": "@model"}, ensure_ascii=False, indent=1)
    return text.replace('"@model"', json.dumps(weights["point_model"])) + "\n"


def training_examples(grader: EmbeddingGrader, paths: list[Path] | None = None) -> list[Example]:
    """The labelled training answers, read by `grader`; the wrong-answer supplement is marked apart."""
    if paths:
        return featurize(grader, load_labelled(paths))
    return (featurize(grader, load_labelled([CASES_DIR, *BLIND_TRAIN]))
            + featurize(grader, load_labelled([BLIND_WRONG]), False))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=Path, action="append",
                   help=f"labelled cases to fit on (default: {CASES_DIR}, {', '.join(map(str, BLIND_TRAIN))} and {BLIND_WRONG})")
    p.add_argument("--out", type=Path, default=WEIGHTS_PATH, help="where the weights go")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--model", choices=("trees", "stacked", "logistic"), default=MODEL,
                   help="the key-point model (default: stacked, two boosted-tree models; trees: the first alone)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.folds < 2:
        print("error: --folds must be at least 2", file=sys.stderr)
        return 2
    try:
        grader = EmbeddingGrader(Store.open(Settings.from_env().store_path), weights={})
        examples = training_examples(grader, args.cases)
        if not examples:
            print("error: no labelled cases (each needs question_id and covered)", file=sys.stderr)
            return 2
        weights, _ = fit(examples, args.folds, args.model)
        args.out.write_text(dump_weights(weights), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
        return 0
    except (CaseError, BankError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
