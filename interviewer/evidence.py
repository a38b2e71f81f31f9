"""Evidence for each key point in an answer: the features the embedding grader's learned scorer combines.

Pure functions of texts and vectors (the embeddings come in from outside), so they are tested and
reused by `python -m evals.train` exactly as the grader computes them.

Per key point, over the answer's evidence units (sentences, clauses, neighbour pairs):
- margin_main:    best similarity to the key point's own zh/en text, minus that text's negative baseline
- margin_variant: the same over its variants (other ways a candidate says it); margin_main if none
- cosine:         the best raw cosine over all its texts
- support:        the second-best unit's margin (a claim often spans two units)
- terms:          idf-weighted share of the point's terms (CJK bigrams, English words, symbols) in the answer
- ownership:      how much better the best unit fits this point than any other point of the rubric
- pitfall:        how much better that unit fits a pitfall than this point
- negation_flip:  the unit and the point disagree on negation ("不是…", "not …")
- ownership_near: the best ownership among units almost as close as the best one: a dense sentence that
                  resembles every point owns none of them, while its clause "得到悲观下界" owns one
- contrast:       how much better the best unit fits one of the point's contrasts (its near-miss false
                  versions: "λ 越大偏差越大" against "λ 越大偏差越小") than the point itself
- contrast_terms: on the best unit, the share of a contrast's own terms it uses (the flipped words: 下界,
                  ε_low) minus the share of the point's own terms it uses (上界, ε_high); the best contrast
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from knowledge.text import clauses, split_sentences

FEATURES = ("margin_main", "margin_variant", "cosine", "support", "terms", "ownership", "pitfall", "negation_flip",
            "ownership_near", "contrast", "contrast_terms")
NO_CONTRAST = -0.2  # the margin of a contrast a point does not have
NEAR_BEST = 0.06  # ownership_near looks at the units whose margin is within this of the point's best

_CJK = re.compile(r"[\u4e00-\u9fff]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*|[α-ωΑ-Ωεπθλγσ∇Σ]")
_STOP = frozenset("""a an the of to in on at by for and or is are be it its this that with as from than
then so not no can do does did will would should could may might must have has had was were been being
which what when where how why who whom into out up down over under about more most less least very just
also only same other such each both all any some one two their there these those they them we our you your
he she his her i me my if but because while after before during between through via per""".split())
_NEGATION = re.compile(
    r"不是|并不|并非|不会|不能|不需要|不用|不一定|不完全|不全是|没有|无需|而非|不等于|不改变|不影响|"
    r"\b(not|no|never|isn'?t|aren'?t|doesn'?t|don'?t|won'?t|cannot|can'?t|without|rather than)\b",
    re.IGNORECASE,
)


def terms(text: str) -> list[str]:
    """Content terms of a text: CJK character bigrams, lower-cased English words (no stop words), symbols."""
    out = []
    for run in _CJK.findall(text):
        out += [run[i : i + 2] for i in range(len(run) - 1)]  # a lone character ("的") says nothing
    out += [w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP]
    return out


def negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


class TermIndex:
    """Inverse document frequencies of terms over the bank's key points (a rare term says more)."""

    def __init__(self, documents: list[str]):
        df: Counter[str] = Counter()
        for doc in documents:
            df.update(set(terms(doc)))
        self.n = max(1, len(documents))
        self.df = df

    def idf(self, term: str) -> float:
        return math.log((1 + self.n) / (1 + self.df.get(term, 0))) + 1.0

    def recall(self, point_text: str, answer_terms: set[str]) -> float:
        """Idf-weighted share of the point's distinct terms that the answer uses."""
        mine = set(terms(point_text))
        if not mine:
            return 0.0
        total = sum(self.idf(t) for t in mine)
        return sum(self.idf(t) for t in mine if t in answer_terms) / total


@dataclass(frozen=True)
class RubricTexts:
    """One rubric's matchable texts and their vectors, grouped by key point and by pitfall."""

    point_ids: list[str]
    point_texts: dict[str, list[str]]  # kp id -> [zh, en, variant...]
    point_main: dict[str, int]  # kp id -> how many of its texts are the point's own (zh, en); the rest are variants
    point_vecs: dict[str, np.ndarray]  # kp id -> (texts x dim)
    point_base: dict[str, np.ndarray]  # kp id -> negative baseline per text
    pitfall_vecs: dict[int, np.ndarray]
    pitfall_base: dict[int, np.ndarray]
    contrast_texts: dict[str, list[str]] = field(default_factory=dict)  # kp id -> its contrasts (may be absent)
    contrast_vecs: dict[str, np.ndarray] = field(default_factory=dict)
    contrast_base: dict[str, np.ndarray] = field(default_factory=dict)

    def pitfall_point(self, i: int) -> str:
        """The key point pitfall `i` gets wrong: the one whose texts are closest to the pitfall's (the highest
        cosine between any two). A pitfall is a near-miss of the point it contradicts."""
        return max(self.point_ids, key=lambda k: float((self.pitfall_vecs[i] @ self.point_vecs[k].T).max()))


def point_features(units: list[str], unit_vecs: np.ndarray, rubric: RubricTexts, index: TermIndex, answer: str,
                   quotable: int | None = None
                   ) -> tuple[dict[str, np.ndarray], dict[str, int], dict[int, tuple[float, int, int]], dict[str, int],
                              list[str]]:
    """({kp id: feature vector in FEATURES order}, {kp id: best unit}, {pitfall: (margin, unit, unit to quote)},
    {kp id: the unit to quote back}, [per unit: the kp id it fits best]). A quote is the best of the first
    `quotable` units (the sentences and clauses the candidate wrote, not the neighbour pairs composed after them),
    so that asking about one point quotes what was said about that point rather than two sentences that cover
    several."""
    answer_terms = set(terms(answer))
    margins: dict[str, np.ndarray] = {}  # kp id -> units x texts
    for kid in rubric.point_ids:
        margins[kid] = unit_vecs @ rubric.point_vecs[kid].T - rubric.point_base[kid]
    per_unit = {kid: m.max(axis=1) for kid, m in margins.items()}  # kp id -> best margin per unit
    pit_unit: dict[int, np.ndarray] = {
        i: (unit_vecs @ v.T - rubric.pitfall_base[i]).max(axis=1) for i, v in rubric.pitfall_vecs.items()
    }
    feats: dict[str, np.ndarray] = {}
    best: dict[str, int] = {}
    quote: dict[str, int] = {}
    for kid in rubric.point_ids:
        m = margins[kid]
        n_main = rubric.point_main[kid]
        main = m[:, :n_main].max(axis=1)
        variant = m[:, n_main:].max(axis=1) if m.shape[1] > n_main else main
        combined = per_unit[kid]
        u = int(combined.argmax())
        order = np.sort(combined)[::-1]
        others = [per_unit[o][u] for o in rubric.point_ids if o != kid]
        rivals = np.max(np.vstack([per_unit[o] for o in rubric.point_ids if o != kid]), axis=0) \
            if len(rubric.point_ids) > 1 else combined - 0.1
        near = combined >= combined.max() - NEAR_BEST
        pit = max((p[u] for p in pit_unit.values()), default=-0.2)
        cos = float((unit_vecs @ rubric.point_vecs[kid].T).max())
        term_recall = max(index.recall(t, answer_terms) for t in rubric.point_texts[kid])
        closest_text = rubric.point_texts[kid][int(m[u].argmax())]
        flip = float(negated(units[u]) != negated(closest_text))
        against = float((rubric.contrast_vecs[kid] @ unit_vecs[u] - rubric.contrast_base[kid]).max()) \
            if kid in rubric.contrast_vecs else NO_CONTRAST
        feats[kid] = np.array([
            float(main.max()), float(variant.max()), cos, float(order[1] if len(order) > 1 else order[0]),
            term_recall, float(combined[u] - max(others, default=combined[u] - 0.1)),
            float(pit - combined[u]), flip, float((combined - rivals)[near].max()),
            float(against - combined[u]),
            contrast_terms(units[u], rubric.point_texts[kid][:rubric.point_main[kid]], rubric.contrast_texts.get(kid, []),
                           index),
        ], dtype=np.float64)
        best[kid] = u
        quote[kid] = int(combined[:quotable or len(units)].argmax())
    pitfalls: dict[int, tuple[float, int]] = {}
    kp_on_unit = np.max(np.vstack(list(per_unit.values())), axis=0) if per_unit else None
    for i, p in pit_unit.items():
        u = int(p.argmax())
        if kp_on_unit is None or p[u] > kp_on_unit[u]:
            pitfalls[i] = (float(p[u]), u, int(p[:quotable or len(units)].argmax()))
    ids = list(rubric.point_ids)
    owner = [ids[int(j)] for j in np.vstack([per_unit[k] for k in ids]).argmax(axis=0)] if ids else []
    return feats, best, pitfalls, quote, owner


def contrast_terms(unit: str, point_texts: list[str], contrasts: list[str], index: TermIndex) -> float:
    """On one unit, the best contrast's case: the idf-weighted share of the terms only that contrast has (the
    flipped words) that the unit uses, minus the share of the terms only the point has that it uses. Near 1:
    the unit says the contrast's words instead of the point's; negative: it keeps the point's own words."""
    said = set(terms(unit))
    mine = set().union(*(set(terms(t)) for t in point_texts)) if point_texts else set()

    def share(ts: set[str]) -> float:
        total = sum(index.idf(t) for t in ts)
        return sum(index.idf(t) for t in ts if t in said) / total if total else 0.0

    best = -1.0 if contrasts else 0.0
    for c in contrasts:
        theirs = set(terms(c))
        if theirs - mine:
            best = max(best, share(theirs - mine) - share(mine - theirs))
    return float(best)


def compose(vecs: np.ndarray, tokens: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Vectors of joined texts from their parts' vectors: the token-weighted mean, normalised. e5 pools
    by the mean over tokens, so this is close to embedding the joined text (cosine 0.99 on the blind
    set's neighbouring sentences) and costs nothing."""
    if not pairs:
        return np.zeros((0, vecs.shape[1]), dtype=np.float32)
    i, j = np.array(pairs).T
    out = tokens[i, None] * vecs[i] + tokens[j, None] * vecs[j]
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


_SUPPOSES = re.compile(r"^\W*(如果|假如|假设|要是|若是|万一|(if|suppose|assuming|whether)\b)|(吗|呢|么)[？?。]?$|[？?]$",
                       re.IGNORECASE)


def asserts(unit: str) -> bool:
    """Does the unit state something? A question ("直接相减行不行？") or a supposition ("如果直接用 reward 相减作为
    loss，") sets a claim up to knock it down; it asserts nothing."""
    return not _SUPPOSES.search(unit.strip())


CLAIM_SHARE = 0.4  # the share of the pitfall's own claim a sentence must use (2026-12-04, on the training data: false
# confirmations on competent answers 7 -> 2, confirmations on wrong answers 79 -> 45)


# characters of comparison and appraisal ("更友好", "比…大", "很好"): a bigram of two of them names no fact, so a
# sentence that shares only such a bigram with a pitfall ("FP8 对 outlier 更友好" against "outlier 通道用 INT8
# 更友好") has not said the pitfall's claim; its subject may be the other one
_APPRAISAL = frozenset("更较比很最太好友强弱大小高低多少快慢的了是会能要就也都还对用在得地着过而且并")


def claim_terms(text: str) -> list[str]:
    """`terms` without the CJK bigrams made only of comparison and appraisal characters."""
    return [t for t in terms(text) if not (len(t) == 2 and t[0] in _APPRAISAL and t[1] in _APPRAISAL)]


def _clauses(text: str) -> list[str]:
    return [c for sentence in split_sentences(text) for c in clauses(sentence)]


def negates_where_they_meet(unit: str, pitfall_texts: list[str], asked: set[str], weight) -> bool:
    """Does the unit negate the pitfall in the clause where the two meet? Of every clause of the unit and every
    clause of each of the pitfall's wordings (`knowledge.text.clauses`), the pair sharing the most idf-weighted terms
    not taken from the question decides: one negated and the other not is a denial. A whole-sentence test reads a
    negation anywhere in either: "它重新引入了 critic，用 value model 代替组内均值做 baseline" says a wording of the pitfall
    "CISPO 必须配一个 value model 用 GAE 算 advantage，不能用组内归一化" word for word, but only the first wording has
    "不能", in a clause the sentence does not touch (2026-12-07, on the training answers' cached candidates:
    confirmations gold lists 375 -> 438, on one-central-error answers 62 -> 76 of 386, and still none gold does not
    list in 3,744 competent answers)."""
    best, pair = 0.0, None
    for mine in _clauses(unit):
        said = set(claim_terms(mine)) - asked
        for text in pitfall_texts:
            for theirs in _clauses(text):
                shared = sum(weight(t) for t in said & set(claim_terms(theirs)))
                if shared > best:
                    best, pair = shared, (mine, theirs)
    return pair is not None and negated(pair[0]) != negated(pair[1])


def contradiction_confirmed(unit: str, pitfall_texts: list[str], point_texts: list[str],
                            question_texts: list[str] = (), index: TermIndex | None = None) -> bool:
    """Is a sentence that resembles a pitfall really asserting it? Not when it only asks or supposes it, not
    when it negates what the pitfall asserts ("不是为了让梯度更大" against "取 min 是为了让梯度更大"), and not
    unless it uses more of the pitfall's own claim than of the correct point's (a pitfall is a near-miss of
    the truth). The pitfall's own claim is its terms that are neither the point's nor the question's: naming
    the subject ("Dr.GRPO 是对 GRPO 的改进") says nothing of "加了一个 critic". And the sentence must say a good
    part of that claim (CLAIM_SHARE, idf-weighted, in one of the pitfall's wordings): "动作空间是所有可能的序列"
    shares words with "动作空间是所有可能的完整回答，所以是连续的" but never says "连续"."""
    if not asserts(unit):
        return False
    said = set(claim_terms(unit))

    def bag(texts) -> set[str]:
        return set().union(*(set(claim_terms(t)) for t in texts)) if texts else set()

    pit, point, asked = bag(pitfall_texts), bag(point_texts), bag(question_texts)
    if len(said & (pit - point - asked)) <= len(said & (point - pit)):
        return False
    weight = index.idf if index else (lambda term: 1.0)
    if negates_where_they_meet(unit, pitfall_texts, asked, weight):
        return False

    def share(text: str) -> float:
        own = set(claim_terms(text)) - point - asked
        total = sum(weight(t) for t in own)
        return sum(weight(t) for t in own if t in said) / total if total else 0.0

    return max(map(share, pitfall_texts)) >= CLAIM_SHARE


# -- the answer around a point ------------------------------------------------------------
# Whether one sentence states a point depends on the answer around it: a wholly wrong answer resembles
# every point a little and states none, a terse one states a few with little text. These features of the
# answer (the same on every point's row) and of the point's place in it join the per-point features.
CONTEXT = tuple(f"{agg}_{f}" for agg in ("mean", "max", "min") for f in FEATURES) + (
    "units", "chars", "listed", "rank", "below_best", "weight", "english", "points", "shared", "unit_len", "len_ratio")
ALL_FEATURES = FEATURES + CONTEXT
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
_HAN = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class AnswerShape:
    """What the context features read besides the per-point features."""

    text: str  # the graded answer (after screening)
    units: list[str]  # the evidence units the features came from
    has_listed: bool  # the answer has sentences that only list terms
    point_weights: list[float]  # per key point: 3 essential, 2 important, 1 optional
    point_lengths: list[int]  # per key point: characters of its Chinese text


def with_context(x: np.ndarray, best: list[int | None], shape: AnswerShape) -> np.ndarray:
    """Rows of per-point features (FEATURES, one row per key point, in rubric order) extended with CONTEXT.
    `best`: each point's best unit (None when the answer has no unit)."""
    n = len(x)
    m = np.maximum(x[:, FEATURES.index("margin_main")], x[:, FEATURES.index("margin_variant")])
    latin, han = len(_LATIN_WORD.findall(shape.text)), len(_HAN.findall(shape.text))
    unit_len = np.array([len(shape.units[b]) if b is not None else 0 for b in best], dtype=np.float64)
    answer = np.r_[x.mean(axis=0), x.max(axis=0), x.min(axis=0),
                   math.log1p(len(shape.units)), math.log1p(len(shape.text)), float(shape.has_listed)]
    point = np.c_[
        (m[:, None] < m[None, :]).sum(axis=1) / max(1, n - 1),  # rank: the share of points that match better
        m - m.max(),
        shape.point_weights,
        np.full(n, float(latin > 1.5 * han)),
        np.full(n, float(n)),
        [sum(b is not None and b == o for o in best) - 1 for b in best],  # other points with the same best unit
        np.log1p(unit_len),
        np.log1p(unit_len) - np.log1p(np.array(shape.point_lengths, dtype=np.float64)),
    ]
    return np.hstack([x, np.tile(answer, (n, 1)), point])
