"""`python -m evals.ablation`: each lever of the embedding grader removed in turn, refitted on the training
data and reported on the held-out blind set. It writes nothing and must choose nothing: every decision about
the grader is taken on the training data's question-grouped folds (`python -m evals.train`); this only says,
once per grader, what each lever was worth on answers nothing was fitted on.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace

from evals.cases import BLIND_TEST, load_cases
from evals.train import MODEL, Example, apply, featurize, fit, report, training_examples
from interviewer.evidence import ALL_FEATURES, CONTEXT, FEATURES
from interviewer.grading import EmbeddingGrader
from interviewer.settings import Settings
from knowledge.store import Store

def _without(examples: list[Example], drop: list[str]) -> list[Example]:
    """The same examples with some features made constant: a per-point feature with its answer-level
    aggregates (mean_, max_, min_), or a context feature by its own name."""
    names = set(drop) | {f"{agg}_{f}" for f in drop if f in FEATURES for agg in ("mean", "max", "min")}
    idx = [ALL_FEATURES.index(n) for n in names]
    out = []
    for e in examples:
        xs = [None if x is None else x.copy() for x in (e.x, e.x_listed)]
        for x in (x for x in xs if x is not None):
            x[:, idx] = 0.0
        out.append(replace(e, x=xs[0], x_listed=xs[1]))
    return out

def _thresholds_on_everything(examples, preds, models):
    from evals.train import choose_thresholds

    return choose_thresholds([replace(e, extra={**e.extra, "in_thresholds": True}) for e in examples],
                             preds, models)

VARIANTS = {  # name: (features made constant, model kind, train on the wrong-answer supplement, threshold rule)
    "all levers": ([], MODEL, True, None),
    "one boosted-tree model instead of the stacked pair": ([], "trees", True, None),
    "logistic instead of boosted trees": ([], "logistic", True, None),
    "no context features (the answer around a point)": (list(CONTEXT), MODEL, True, None),
    "not fitted on the wrong-answer supplement": ([], MODEL, False, None),
    "thresholds chosen with the wrong-answer supplement": ([], MODEL, True, _thresholds_on_everything),
    "no contrasts (contrast, contrast_terms)": (["contrast", "contrast_terms"], MODEL, True, None),
    "no term overlap": (["terms"], MODEL, True, None),
    "no competition (ownership, ownership_near, pitfall)": (["ownership", "ownership_near", "pitfall"], MODEL, True, None),
    "the grader of 2479c87 (logistic, no context, no wrong supplement)": (list(CONTEXT), "logistic", False, None),
}

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.ablation", description=__doc__.split("\n\n")[0])
    p.add_argument("--folds", type=int, default=5)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    grader = EmbeddingGrader(Store.open(Settings.from_env().store_path), weights={})
    train = training_examples(grader)
    test = featurize(grader, [c for c in load_cases([BLIND_TEST]) if c.question_id])
    rows = {}
    for name, (drop, kind, wrong, rule) in VARIANTS.items():
        tr = [e for e in _without(train, drop) if wrong or e.extra.get("in_thresholds", True)]
        weights, _ = fit(tr, args.folds, kind, rule)
        te = _without(test, drop)
        rows[name] = report(te, apply(weights, te), f"held-out, {name}")
        rows[name]["thresholds"] = [weights["cover_p"], weights["unclear_p"]]
    print(json.dumps(rows, ensure_ascii=False, indent=1))
    return 0

if __name__ == "__main__":
    sys.exit(main())
