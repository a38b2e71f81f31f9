"""Agreement metrics between a grader and gold scores. Pure functions on lists of numbers."""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations

ADVERSARIAL = {"keyword_stuffed", "fluent_central_error", "injection", "off_topic", "degenerate", "confidently_wrong"}
GOOD, BAD = 6.0, 3.0  # gold at or above GOOD is a good answer; at or below BAD a bad one


def ranks(xs: list[float]) -> list[float]:
    """Ranks starting at 1, ties get their average rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return float("nan")
    mx, my = sum(xs) / n, sum(ys) / n
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return float("nan")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def spearman(xs: list[float], ys: list[float]) -> float:
    return pearson(ranks(xs), ranks(ys))


def kendall_tau_b(xs: list[float], ys: list[float]) -> float:
    conc = disc = tx = ty = 0
    for i, j in combinations(range(len(xs)), 2):
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tx += 1
        elif dy == 0:
            ty += 1
        elif (dx > 0) == (dy > 0):
            conc += 1
        else:
            disc += 1
    denom = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    return (conc - disc) / denom if denom else float("nan")


def pairwise_accuracy(groups: dict[str, list[tuple[float, float]]], min_gap: float = 1.0) -> float:
    """Within each question, the share of (gold-different) answer pairs the grader orders the same way."""
    right = total = 0.0
    for pairs in groups.values():
        for (g1, s1), (g2, s2) in combinations(pairs, 2):
            if abs(g1 - g2) < min_gap:
                continue
            total += 1
            if s1 == s2:
                right += 0.5
            elif (s1 > s2) == (g1 > g2):
                right += 1
    return right / total if total else float("nan")


def auroc(good: list[float], bad: list[float]) -> float:
    if not good or not bad:
        return float("nan")
    wins = sum(1.0 if g > b else 0.5 if g == b else 0.0 for g in good for b in bad)
    return wins / (len(good) * len(bad))


def macro_f1(gold: list[bool], pred: list[bool]) -> float:
    """Mean F1 of the two classes (covered, missed)."""
    f1s = []
    for cls in (True, False):
        tp = sum(g == cls and p == cls for g, p in zip(gold, pred))
        fp = sum(g != cls and p == cls for g, p in zip(gold, pred))
        fn = sum(g == cls and p != cls for g, p in zip(gold, pred))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)
    return sum(f1s) / 2


def summarize(rows: list[dict]) -> dict:
    """Metrics for one grader. Each row: qid, gold, score, tier, length, gold_points {kp: bool}, points {kp: bool}."""
    gold = [r["gold"] for r in rows]
    score = [r["score"] for r in rows]
    length = [r["length"] for r in rows]
    by_q: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        by_q[r["qid"]].append((r["gold"], r["score"]))
    adversarial = [r for r in rows if r["tier"] in ADVERSARIAL]
    injections = [r for r in rows if r["tier"] == "injection"]
    honest = [r for r in rows if r["tier"] not in ADVERSARIAL]
    kp_gold = [g for r in rows if r.get("points") is not None for g in r["gold_points"].values()]
    kp_pred = [r["points"][k] for r in rows if r.get("points") is not None for k in r["gold_points"]]
    bias = lambda rs: sum(r["score"] - r["gold"] for r in rs) / len(rs) if rs else float("nan")  # noqa: E731
    return {
        "n": len(rows),
        "spearman": spearman(gold, score),
        "kendall": kendall_tau_b(gold, score),
        "pairwise_accuracy": pairwise_accuracy(by_q),
        "auroc_good_vs_bad": auroc([r["score"] for r in rows if r["gold"] >= GOOD], [r["score"] for r in rows if r["gold"] <= BAD]),
        "key_point_macro_f1": macro_f1(kp_gold, kp_pred) if kp_gold else float("nan"),
        "exploit_rate": sum(r["score"] >= r["gold"] + 2 for r in adversarial) / len(adversarial) if adversarial else float("nan"),
        "injection_lift": bias(injections) - bias(honest) if injections and honest else float("nan"),
        "length_spearman": spearman(length, score),
        "mean_abs_error": sum(abs(s - g) for s, g in zip(score, gold)) / len(rows) if rows else float("nan"),
        "length_partial": partial_spearman(score, length, gold),
        # the other direction: at equal score, does a longer answer have a lower gold? Below 0, length is paid for
        # beyond what the gold graders give it. length_partial alone cannot say so: a grader whose score rests on
        # evidence that grows with length (more said, more matched) has a positive length_partial even when at equal
        # score length tells nothing more about gold (this near 0), and a grader that is gold plus errors unrelated to
        # length has this above 0
        "length_given_score": partial_spearman(gold, length, score),
        "tiers": tier_means(rows),
    }


def partial_spearman(xs: list[float], ys: list[float], zs: list[float]) -> float:
    """Rank correlation of xs and ys with zs held fixed (e.g. score with length, given gold)."""
    rxy, rxz, ryz = spearman(xs, ys), spearman(xs, zs), spearman(ys, zs)
    denom = math.sqrt(max(0.0, (1 - rxz**2) * (1 - ryz**2)))
    return (rxy - rxz * ryz) / denom if denom else float("nan")


def tier_means(rows: list[dict]) -> dict[str, dict]:
    """Per tier: how many answers, the mean score and the mean gold."""
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["tier"]].append(r)
    return {t: {"n": len(rs), "score": round(sum(r["score"] for r in rs) / len(rs), 2),
                "gold": round(sum(r["gold"] for r in rs) / len(rs), 2)} for t, rs in sorted(by.items())}


def per_rubric(rows: list[dict]) -> dict[str, dict]:
    by_q: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_q[r["qid"]].append(r)
    out = {}
    for qid, rs in by_q.items():
        kp_gold = [g for r in rs if r.get("points") is not None for g in r["gold_points"].values()]
        kp_pred = [r["points"][k] for r in rs if r.get("points") is not None for k in r["gold_points"]]
        out[qid] = {
            "n": len(rs),
            "spearman": spearman([r["gold"] for r in rs], [r["score"] for r in rs]),
            "pairwise_accuracy": pairwise_accuracy({qid: [(r["gold"], r["score"]) for r in rs]}),
            "key_point_macro_f1": macro_f1(kp_gold, kp_pred) if kp_gold else float("nan"),
        }
    return out


def stability(repeats: list[list[float]]) -> dict:
    """Run-to-run stability: mean per-answer standard deviation and Spearman between the first two runs."""
    if len(repeats) < 2:
        return {"repeats": len(repeats)}
    per_case = list(zip(*repeats))
    sd = [math.sqrt(sum((x - sum(c) / len(c)) ** 2 for x in c) / (len(c) - 1)) for c in per_case]
    return {"repeats": len(repeats), "mean_sd": sum(sd) / len(sd), "spearman_run1_run2": spearman(repeats[0], repeats[1])}
