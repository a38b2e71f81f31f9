"""The learned part of the embedding grader: P(a key point is stated) from its evidence features, and the
monotone map of a raw 0-10 score onto the gold scale.

Pure numpy at grading time. `python -m evals.train` fits the models (the boosted trees with scikit-learn,
imported there only) and writes them as JSON next to the grader; nothing here knows how it was fitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


class PointModel(Protocol):
    features: tuple[str, ...]

    def predict(self, x: np.ndarray) -> np.ndarray:
        """P(stated) in [0, 1], one per row of x (points x features)."""
        ...

    def to_json(self) -> dict: ...


def logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


@dataclass(frozen=True)
class LogisticModel:
    """Logistic regression over standardised features (the grader of commit 2479c87, kept for the ablation)."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def predict(self, x: np.ndarray) -> np.ndarray:
        return logistic(((x - self.mean) / self.scale) @ self.weights + self.bias)

    @classmethod
    def fit(cls, features, x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000,
            lr: float = 0.5) -> "LogisticModel":
        """Soft labels y in [0, 1] (partial = 0.5); gradient descent on the mean cross-entropy plus L2."""
        mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
        z = (x - mean) / scale
        w, b = np.zeros(z.shape[1]), 0.0
        n = len(y)
        for _ in range(steps):
            grad = logistic(z @ w + b) - y
            w -= lr * (z.T @ grad / n + l2 * w / n)
            b -= lr * float(grad.mean())
        return cls(tuple(features), mean, scale, w, b)

    def to_json(self) -> dict:
        return {"kind": "logistic", "features": list(self.features), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "weights": self.weights.tolist(), "bias": self.bias}

    @classmethod
    def from_json(cls, d: dict) -> "LogisticModel":
        return cls(tuple(d["features"]), np.array(d["mean"]), np.array(d["scale"]), np.array(d["weights"]), float(d["bias"]))


@dataclass(frozen=True)
class TreeModel:
    """Gradient-boosted regression trees on soft labels, clipped to [0, 1]. Each tree is four flat arrays
    (scikit-learn's layout: a leaf has feature -1; a row goes left when x[feature] <= threshold)."""

    features: tuple[str, ...]
    base: float
    rate: float
    feature: np.ndarray  # trees x nodes, int; -1 at a leaf (padded with leaves)
    threshold: np.ndarray  # trees x nodes
    left: np.ndarray  # trees x nodes, int
    right: np.ndarray
    value: np.ndarray  # trees x nodes: a leaf's output

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        rows = np.arange(len(x))
        out = np.full(len(x), self.base)
        for f, t, lo, hi, v in zip(self.feature, self.threshold, self.left, self.right, self.value):
            node = np.zeros(len(x), dtype=np.int64)
            while True:
                inner = f[node] >= 0
                if not inner.any():
                    break
                go_left = x[rows, np.maximum(f[node], 0)] <= t[node]
                node = np.where(inner, np.where(go_left, lo[node], hi[node]), node)
            out += self.rate * v[node]
        return np.clip(out, 0.0, 1.0)

    @classmethod
    def from_sklearn(cls, features, model) -> "TreeModel":
        """From a fitted sklearn GradientBoostingRegressor (squared error, constant initial prediction)."""
        trees = [est[0].tree_ for est in model.estimators_]
        width = max(t.node_count for t in trees)

        def pad(get, fill, dtype):
            return np.array([np.r_[get(t), np.full(width - t.node_count, fill)] for t in trees], dtype=dtype)

        leaf = lambda t: t.children_left < 0  # noqa: E731
        return cls(tuple(features), float(model.init_.constant_.ravel()[0]), float(model.learning_rate),
                   pad(lambda t: np.where(leaf(t), -1, t.feature), -1, np.int64),
                   pad(lambda t: t.threshold, 0.0, np.float64),
                   pad(lambda t: np.maximum(t.children_left, 0), 0, np.int64),
                   pad(lambda t: np.maximum(t.children_right, 0), 0, np.int64),
                   pad(lambda t: t.value.reshape(t.node_count), 0.0, np.float64))

    def to_json(self) -> dict:
        return {"kind": "trees", "features": list(self.features), "base": self.base, "rate": self.rate,
                **{k: getattr(self, k).tolist() for k in ("feature", "threshold", "left", "right", "value")}}

    @classmethod
    def from_json(cls, d: dict) -> "TreeModel":
        ints = {k: np.array(d[k], dtype=np.int64) for k in ("feature", "left", "right")}
        floats = {k: np.array(d[k], dtype=np.float64) for k in ("threshold", "value")}
        return cls(tuple(d["features"]), float(d["base"]), float(d["rate"]), ints["feature"], floats["threshold"],
                   ints["left"], ints["right"], floats["value"])


# What the second stage of a stacked model reads besides a point's own features: the first stage's P for the
# point and for the rest of the answer's points (an answer whose every point matches faintly is more often wrong
# than one that states two points plainly and skips the rest). HIGH and LOW are fixed cut-offs (the first
# stage's cover and unclear thresholds when this was written, 2026-12-05), not fitted.
STACK_FEATURES = ("p", "p_weighted_mean", "p_max", "p_min", "share_high", "share_low", "p_median", "p_over_others",
                  "share_above")
HIGH, LOW = 0.75, 0.125


def stack_features(p: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Rows of STACK_FEATURES, one per key point of one answer; `weights`: the points' weights (3/2/1)."""
    n = len(p)
    answer = [np.average(p, weights=weights), p.max(), p.min(), np.mean(p >= HIGH), np.mean(p < LOW), np.median(p)]
    rows = [[p[i], *answer, p[i] - (np.delete(p, i).max() if n > 1 else 0.0), np.mean(p > p[i])] for i in range(n)]
    return np.array(rows, dtype=np.float64)


@dataclass(frozen=True)
class StackedModel:
    """Two boosted-tree models: the first gives P(stated) from a point's features; the second sees those
    features again with the first's P for every point of the answer (`stack_features`). The rows passed to
    `predict` are the key points of one answer, in rubric order; `weight_column` is the index of the points'
    weight in them."""

    features: tuple[str, ...]
    first: TreeModel
    second: TreeModel
    weight_column: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        extra = stack_features(self.first.predict(x), x[:, self.weight_column])
        return self.second.predict(np.hstack([x, extra]))

    def to_json(self) -> dict:
        return {"kind": "stacked", "features": list(self.features), "first": self.first.to_json(),
                "second": self.second.to_json(), "weight_column": self.weight_column}

    @classmethod
    def from_json(cls, d: dict) -> "StackedModel":
        return cls(tuple(d["features"]), TreeModel.from_json(d["first"]), TreeModel.from_json(d["second"]),
                   int(d["weight_column"]))


def load_model(d: dict, features: tuple[str, ...]) -> PointModel:
    """The model a weights file describes; it must have been fitted on exactly these features."""
    if list(d.get("features", [])) != list(features):
        raise ValueError(f"grader weights were fitted on features {d.get('features')}, this code computes {list(features)}")
    kind = d.get("kind", "logistic")
    if kind == "stacked":
        return StackedModel.from_json(d)
    if kind == "trees":
        return TreeModel.from_json(d)
    if kind == "logistic":
        return LogisticModel.from_json(d)
    raise ValueError(f"unknown point model kind {kind!r}")


def isotonic(x: list[float], y: list[float]) -> list[tuple[float, float]]:
    """Pool-adjacent-violators: knots (x, y) of the best non-decreasing fit of y on x."""
    pts = sorted(zip(x, y))
    blocks: list[list[float]] = []  # [sum_x, sum_y, count]
    for xi, yi in pts:
        blocks.append([xi, yi, 1.0])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] > blocks[-1][1] / blocks[-1][2]:
            a = blocks.pop()
            blocks[-1] = [blocks[-1][0] + a[0], blocks[-1][1] + a[1], blocks[-1][2] + a[2]]
    return [(b[0] / b[2], b[1] / b[2]) for b in blocks]


def calibrate(raw: float, knots: list[tuple[float, float]]) -> float:
    """Piecewise-linear, non-decreasing map of a raw 0-10 score onto the gold scale."""
    if not knots:
        return raw
    xs, ys = [k[0] for k in knots], [k[1] for k in knots]
    return float(np.clip(np.interp(raw, xs, ys), 0.0, 10.0))
