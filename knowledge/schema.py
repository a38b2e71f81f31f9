"""The question bank's schema: every data file is validated against these models.

`extra="forbid"` everywhere, so a typo in a field name fails loudly instead of being
silently dropped (simonw/llm templates.py does the same).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Section = Literal["algorithm", "infra", "scenario", "meta"]
Weight = Literal["essential", "important", "optional"]
ProbePattern = Literal[
    "why",  # why is it done this way
    "counterfactual",  # what breaks without it
    "successor",  # contrast with a newer method
    "failure_mitigation",  # how does it fail, how do you mitigate
    "quantitative",  # numbers: how much, how many, typical values
    "formula",  # write the formula / precise definition
    "implementation",  # a code-level or framework-level detail
    "jump_infra",  # from the algorithm to the system behind it
    "jump_algorithm",  # from the system to the algorithm it serves
    "scenario",  # apply it to a concrete situation
    "agentic",  # what changes in an agent / multi-turn setting
    "hint",  # an easier adjacent angle after "I don't know"
]

WEIGHT_VALUES: dict[str, float] = {"essential": 3.0, "important": 2.0, "optional": 1.0}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(Strict):
    """The same content in Chinese and in English."""

    zh: str = Field(min_length=1)
    en: str = Field(min_length=1)


class Provenance(Strict):
    """The exact span of a source document that a question comes from."""

    source: str  # file name under knowledge/data/seeds/
    start: int = Field(ge=0)  # offset in characters (Python str index) of the decoded text
    end: int = Field(gt=0)
    quote: str = Field(min_length=1)  # verbatim text[start:end]

    @model_validator(mode="after")
    def _span_length(self) -> "Provenance":
        if self.end - self.start != len(self.quote):
            raise ValueError(f"span {self.start}:{self.end} does not match the quote's length {len(self.quote)}")
        return self


class KeyPoint(Strict):
    """One atomic, checkable claim a good answer makes, written as a candidate would say it."""

    id: str = Field(pattern=r"^kp\d+$")
    weight: Weight
    zh: str = Field(min_length=4)
    en: str = Field(min_length=4)
    # other ways a candidate says the same claim (terse, colloquial zh with English terms, a formula,
    # English), written from the point's meaning: the embedding grader matches against these too
    variants: list[str] = Field(default_factory=list)
    # near-miss false versions of the claim (a flipped direction, a swapped pair, the wrong reason), in the
    # point's own vocabulary: what a fluent but wrong candidate says instead. The embedding grader's negative
    # evidence: a sentence closer to one of these than to the point does not state the point
    contrasts: list[str] = Field(default_factory=list)


class Pitfall(Strict):
    """A common wrong claim, written as a candidate would say it, and why it is wrong."""

    zh: str = Field(min_length=4)
    en: str = Field(min_length=4)
    why: str = Field(min_length=4)  # English explanation for the report
    variants: list[str] = Field(default_factory=list)  # the same wrong claim in other words
    checked: str | None = None  # what `why` was checked against (paper, docs or code, with version), and what was not
    # correct sentences in the pitfall's own words (the swapped pair the right way round, the fact it confuses):
    # their terms are not the pitfall's own claim, so a candidate who says one is not accused of the pitfall
    truths: list[str] = Field(default_factory=list)


class Probe(Strict):
    """A follow-up question an interviewer asks, keyed by its pattern."""

    pattern: ProbePattern
    zh: str = Field(min_length=4)
    en: str = Field(min_length=4)
    targets: list[str] = Field(default_factory=list)  # key point ids it probes
    to_question: str | None = None  # the bank question it leads to (jumps), if any


class Reference(Strict):
    title: str
    year: int | None = None
    venue: str | None = None  # e.g. "NeurIPS 2022", "arXiv", "official documentation"
    url: str | None = None
    verified: bool  # checked against the paper or the official documentation
    note: str | None = None


class Rubric(Strict):
    key_points: list[KeyPoint] = Field(min_length=3, max_length=8)
    pitfalls: list[Pitfall] = Field(default_factory=list)
    strong_answer: Text  # what a strong answer adds beyond the key points
    probes: list[Probe] = Field(min_length=1)
    reference_answer: Text
    references: list[Reference] = Field(default_factory=list)
    premise_note: Text | None = None  # set when the question's premise is shaky

    @model_validator(mode="after")
    def _consistent(self) -> "Rubric":
        ids = [kp.id for kp in self.key_points]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate key point ids: {ids}")
        if not any(kp.weight == "essential" for kp in self.key_points):
            raise ValueError("a rubric needs at least one essential key point")
        for probe in self.probes:
            unknown = set(probe.targets) - set(ids)
            if unknown:
                raise ValueError(f"probe targets unknown key points {sorted(unknown)}")
        return self

    def key_point(self, kp_id: str) -> KeyPoint:
        return next(kp for kp in self.key_points if kp.id == kp_id)


class Review(Strict):
    """One review of a question's rubric: who (a role, never a name), when, and what it changed."""

    role: str = Field(min_length=3)  # e.g. "rubric author's cross-check", "outside LLM-RL reviewer"
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    verdict: Literal["ok", "minor", "major"]
    changes: list[str] = Field(default_factory=list)  # what was changed because of it


class Question(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    zh: str = Field(min_length=2)
    en: str = Field(min_length=2)
    section: Section
    difficulty: int = Field(ge=1, le=5)
    tags: list[str] = Field(min_length=1)
    related: list[str] = Field(default_factory=list)
    sub_questions: list[Text] = Field(default_factory=list)
    provenance: list[Provenance] = Field(min_length=1)
    notes: list[str] = Field(default_factory=list)  # typo fixes, merges, premise remarks
    shaky_premise: bool = False
    rubric: Rubric | None = None
    reviews: list[Review] = Field(default_factory=list)

    @field_validator("tags")
    @classmethod
    def _lower_tags(cls, tags: list[str]) -> list[str]:
        return [t.strip().lower() for t in tags]

    @model_validator(mode="after")
    def _premise(self) -> "Question":
        if self.shaky_premise and self.rubric is not None and self.rubric.premise_note is None:
            raise ValueError("a question flagged shaky_premise needs rubric.premise_note")
        return self

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


class Chain(Strict):
    """A run of questions on one topic that an interviewer asks in sequence."""

    id: str
    title: Text
    questions: list[str] = Field(min_length=2)
