"""Load and validate the question bank from `knowledge/data/`.

Every error names the file and, where known, the question id, so a broken data file is
fixed in one look.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from knowledge.schema import Chain, Question

DATA_DIR = Path(__file__).resolve().parent / "data"


class BankError(ValueError):
    """A data file of the question bank is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class Bank:
    questions: dict[str, Question]
    chains: tuple[Chain, ...]
    sources: dict[str, dict]
    fingerprint: str

    def get(self, qid: str) -> Question:
        try:
            return self.questions[qid]
        except KeyError:
            raise BankError(f"unknown question id {qid!r}") from None

    def with_rubric(self) -> list[Question]:
        return [q for q in self.questions.values() if q.rubric is not None]

    def chain_of(self, qid: str) -> Chain | None:
        return next((c for c in self.chains if qid in c.questions), None)


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BankError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise BankError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise BankError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _load_question(path: Path) -> Question:
    raw = _read_json(path)
    qid = raw.get("id", "?") if isinstance(raw, dict) else "?"
    try:
        question = Question.model_validate(raw)
    except ValidationError as exc:
        raise BankError(f"{path} (question {qid}): {_describe(exc)}") from None
    if path.stem != question.id:
        raise BankError(f"{path}: file name must be the question id {question.id!r}")
    return question


def _check_provenance(question: Question, documents: dict[str, str], path: Path) -> None:
    for span in question.provenance:
        text = documents.get(span.source)
        if text is None:
            raise BankError(f"{path} (question {question.id}): unknown source document {span.source!r}")
        if text[span.start : span.end] != span.quote:
            raise BankError(
                f"{path} (question {question.id}): the quote is not at {span.source}[{span.start}:{span.end}]"
            )


def _check_links(questions: dict[str, Question], chains: list[Chain], data_dir: Path) -> None:
    for q in questions.values():
        where = f"{data_dir / 'questions' / (q.id + '.json')} (question {q.id})"
        for rel in q.related:
            if rel not in questions:
                raise BankError(f"{where}: related id {rel!r} does not exist")
        for probe in q.rubric.probes if q.rubric else ():
            if probe.to_question and probe.to_question not in questions:
                raise BankError(f"{where}: probe leads to unknown question {probe.to_question!r}")
    for chain in chains:
        for qid in chain.questions:
            if qid not in questions:
                raise BankError(f"{data_dir / 'chains.json'} (chain {chain.id}): unknown question {qid!r}")


def _fingerprint(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def load_bank(data_dir: Path | str = DATA_DIR) -> Bank:
    data_dir = Path(data_dir)
    seeds = sorted((data_dir / "seeds").glob("*.txt"))
    documents = {p.name: p.read_text(encoding="utf-8") for p in seeds}
    files = sorted((data_dir / "questions").glob("*.json"))
    if not files:
        raise BankError(f"{data_dir / 'questions'}: no question files")
    questions: dict[str, Question] = {}
    for path in files:
        question = _load_question(path)
        _check_provenance(question, documents, path)
        questions[question.id] = question
    chains_raw = _read_json(data_dir / "chains.json")
    try:
        chains = [Chain.model_validate(c) for c in chains_raw]
    except (ValidationError, TypeError) as exc:
        detail = _describe(exc) if isinstance(exc, ValidationError) else str(exc)
        raise BankError(f"{data_dir / 'chains.json'}: {detail}") from None
    _check_links(questions, chains, data_dir)
    sources = _read_json(data_dir / "sources.json")
    fingerprint = _fingerprint(files + seeds + [data_dir / "chains.json", data_dir / "sources.json"])
    return Bank(questions, tuple(chains), sources, fingerprint)


@lru_cache(maxsize=1)
def default_bank() -> Bank:
    """The packaged bank, loaded once per process."""
    return load_bank()
