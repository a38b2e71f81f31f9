"""Splitting answers and reference texts into the sentences the grader compares, and telling whether
a follow-up probe states the key point it should ask for."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=[.])\s+|\n+")
_CLAUSE = re.compile(r"(?<=[，,：:])")
MAX_SENTENCE = 160  # characters; longer runs are cut at commas so one claim stays one unit


def split_sentences(text: str, limit: int = 400) -> list[str]:
    """Sentences of `text`, long ones cut at clause boundaries; at most `limit` pieces."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip(" \t-•*#>")
        if not sentence:
            continue
        if len(sentence) <= MAX_SENTENCE:
            pieces.append(sentence)
            continue
        chunk = ""
        for clause in _CLAUSE.split(sentence):
            if chunk and len(chunk) + len(clause) > MAX_SENTENCE:
                pieces.append(chunk)
                chunk = ""
            chunk += clause
        while len(chunk) > MAX_SENTENCE:  # no commas at all: cut hard
            pieces.append(chunk[:MAX_SENTENCE])
            chunk = chunk[MAX_SENTENCE:]
        if chunk.strip():
            pieces.append(chunk.strip())
    return [p for p in pieces if len(p) >= 2][:limit]


def windows(sentences: list[str]) -> list[str]:
    """Each sentence, plus each pair of neighbours: a claim often spans two sentences."""
    pairs = [a + b for a, b in zip(sentences, sentences[1:]) if len(a) + len(b) <= 2 * MAX_SENTENCE]
    return sentences + pairs


_CLAUSE_BREAK = re.compile(r"(?<=[，,；;：:])|(?<=、)(?=[^、]{6,})")
MIN_CLAUSE = 6  # characters: shorter pieces ("比如", "第一") are glued to the next one
SEPARATORS = " ，,；;：:、"  # what a clause or enumeration item is cut at (and may still end with)


def clauses(sentence: str) -> list[str]:
    """The clauses of one sentence: cut at commas, colons and semicolons, and at enumeration
    commas (、) between items long enough to be claims of their own ("原因有 A、B、C")."""
    out: list[str] = []
    carry = ""
    for piece in _CLAUSE_BREAK.split(sentence):
        piece = carry + piece
        if len(piece.strip(SEPARATORS)) < MIN_CLAUSE:
            carry = piece
            continue
        out.append(piece.strip())
        carry = ""
    if carry.strip(SEPARATORS):
        if out:
            out[-1] += carry
        else:
            out.append(carry.strip())
    return out


def evidence_plan(sentences: list[str], limit: int = 400) -> tuple[list[str], list[tuple[int, int]]]:
    """What the grader compares with the rubric, as (units, pairs).

    units: each sentence and each clause of a multi-clause sentence, deduplicated, in order; these
    are embedded. pairs: (i, j), indices into units of neighbouring sentences; a claim often spans two
    sentences, and the pair's vector is composed from the two (`evidence.compose`) instead of being
    embedded again, which halves the cost of grading an answer."""
    units = list(sentences)
    for s in sentences:
        parts = clauses(s)
        if len(parts) > 1:
            units += parts
    units = list(dict.fromkeys(u for u in units if len(u) >= 2))[:limit]
    where = {u: i for i, u in enumerate(units)}
    pairs = [(where[a], where[b]) for a, b in zip(sentences, sentences[1:])
             if a in where and b in where and len(a) + len(b) <= 2 * MAX_SENTENCE and a + b not in where]
    return units, list(dict.fromkeys(pairs))


def evidence_units(text: str, limit: int = 400) -> list[str]:
    """The texts of all evidence units of `text`: `evidence_plan`'s units, then its neighbour pairs."""
    units, pairs = evidence_plan(split_sentences(text), limit)
    return units + [units[i] + units[j] for i, j in pairs]


_NON_CJK = re.compile(r"[A-Za-z0-9_\s\-./]+")


def leaks(probe: str, key_point: str, min_chars: int = 8) -> bool:
    """Does a probe state its key point? Either it repeats it (a run of >= 8 shared Chinese characters,
    technical terms aside) or it clearly asserts the point's claim (`stated_claim`, strong)."""
    a, b = _NON_CJK.sub("·", probe), _NON_CJK.sub("·", key_point)
    if difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match().size >= min_chars:
        return True
    claim = stated_claim(probe, key_point)
    return claim is not None and claim.strong


# A probe also gives its point away when it presupposes it instead of asking for it:
#   "Why does GRPO put the KL in the loss rather than in the reward?"  asserts where the KL goes;
#   "Fixing the number of splits or the split size: which is batch invariant?"  offers the answer;
#   "Which of the two bounds is changed, and why not the other one?"  says exactly one changes;
#   "Dynamic sampling makes generation per step variable. What does that cost?"  states the cost.
# `stated_claim` finds the parts of a probe that assert something (why-clauses, offered alternatives,
# declarative sentences) and measures how much of each is made of the key point's own content terms,
# leaving out the terms the interview question itself already gives.

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_WORD_SPLIT = re.compile(r"[^\w\-+<>=/.·‖|^']+")
_FUNCTION_ZH = frozenset("的了是在和与把被就也都要会能这那个一些吗呢吧啊么哪什怎为何谁几多少还或及并其该此它他们我你您"
                         "让给对从到里上下中时后前再又而得地着过")
_STOP_EN = frozenset("""a an the of to in on for with and or but if then than so as at by from into onto over under about
is are was were be been being do does did done can could would should will shall may might must has have had having
it its this that these those there here what which who whom whose why how when where whether you your we our they their
them he she his her i me my not no yes any some each every all both either neither one two first more most less very just
only also still too again already once now up out off such own same get gets got make makes made use used uses using say
says said take takes put puts go goes add adds added exactly really roughly concretely briefly overall instead rather
other else way ways thing things""".split())
_ASK_ZH = re.compile(r"为什么|为何|凭什么|什么|怎么|怎样|如何|哪|吗|多少|几|是否|有没有|会不会|能不能|要不要|是不是|还是|[？?]")
_ASK_EN = re.compile(r"\?|\b(what|which|how|why|where|who|whether)\b|^\W*(is|are|was|were|does|do|did|can|could"
                     r"|should|would|will|must|has|have)\b", re.IGNORECASE)
_WHY = re.compile(r"为什么|为何|凭什么|\bwhy\b", re.IGNORECASE)
_WHY_LEAD = re.compile(r"^\W*(and|but|so)?\W*(do|does|did|is|are|was|were|can|could|should|would|must|has|have)?\b",
                       re.IGNORECASE)
_YES_NO = re.compile(r"^\W*(is|are|was|were|does|do|did|can|could|should|would|will|must|has|have)\b", re.IGNORECASE)
_WHICH = re.compile(r"哪一个|哪个|哪种|哪一种|哪一边|\bwhich\b", re.IGNORECASE)
_CONTRAST = re.compile(r"区别|不同|\bdifference\b|\bbetween\b", re.IGNORECASE)
_OTHER = re.compile(r"另一个|另一边|另外一个|另一项|\bthe other( one)?\b", re.IGNORECASE)
_CONDITION = re.compile(r"^\W*(如果|假如|假设|要是|若|当|一旦|比如|例如|以|用|给|对于|在|同一|每|拿|除了|换到|换成)"
                        r"|(时|中|里|后|下|的话)\W*$"
                        r"|^\W*(if|suppose|assume|say|when|with|without|for|in|on|during|after|before|given|take|at"
                        r"|under|once|besides|apart|switch|consider|imagine|\w+ing)\b", re.IGNORECASE)
_IMPERATIVE = re.compile(r"^\W*(写|说|举|算|估|推|比|解释|画|描述|列|给出|讲|先|想|试|请|write|explain|derive|estimate"
                         r"|compute|work|give|name|describe|compare|sketch|walk|list|show|prove|state|define|first"
                         r"|think|start|recall)", re.IGNORECASE)
_TOPIC_BACK = re.compile(r"^\W*(它|这|那|其|\b(it|its|this|that|these|they)\b)", re.IGNORECASE)
_PROBE_SENTENCE = re.compile(r"(?<=[？?！!。；;])\s*|(?<=\.)\s+(?=[A-Z(])")
_PROBE_CLAUSE = re.compile(r"(?<=[，,：:])\s*|\s+(?=and why\b)", re.IGNORECASE)


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str) -> set[str]:
    """What a text is about: stemmed English and technical terms without stop words, plus the Chinese
    character bigrams of its runs of Chinese (without question words and pairs of function characters)."""
    terms = set()
    for raw in _WORD_SPLIT.split(_CJK_RUN.sub(" ", text.lower())):
        word = raw.strip(".'-")
        if not word or word in _STOP_EN or (len(word) < 2 and word.isascii()) or (word.isdigit() and len(word) < 2):
            continue
        terms.add(_stem(word))
    for run in _CJK_RUN.findall(text):
        for a, b in zip(run, run[1:]):
            if not (a in _FUNCTION_ZH and b in _FUNCTION_ZH) and not _ASK_ZH.search(a + b):
                terms.add(a + b)
    return terms


def _asks(text: str) -> bool:
    return bool(_ASK_ZH.search(text) or _ASK_EN.search(text) or _IMPERATIVE.search(text))


def _assertions(probe: str) -> list[tuple[str, str]]:
    """(kind, text) for each part of a probe that states something instead of asking it."""
    out = []
    sentences = [s.strip() for s in _PROBE_SENTENCE.split(probe) if s.strip()]
    for i, sentence in enumerate(sentences):
        clauses = [c.strip() for c in _PROBE_CLAUSE.split(sentence) if c.strip()]
        if _OTHER.search(sentence) and _WHY.search(sentence) and any(_WHICH.search(s) for s in sentences):
            out.append(("other-option", sentence))  # "which one ..., and why not the other": exactly one is right
        for clause in clauses:
            if _WHY.search(clause):  # "why X?" presupposes X
                out.append(("why", _WHY_LEAD.sub(" ", _WHY.sub(" ", clause))))
        if "还是" in sentence or (any(_YES_NO.search(c) for c in clauses) and re.search(r"\bor\b", sentence)):
            out.append(("choice", sentence))  # "A or B?": the answer is among the options offered
        elif _WHICH.search(sentence) and i > 0 and _CONTRAST.search(sentences[i - 1]):
            out.append(("choice", sentences[i - 1] + " " + sentence))
        if _CONDITION.search(sentence):
            continue  # a scenario ("if ...", "with ...") sets a condition, it does not assert the answer
        if not _asks(sentence):
            out.append(("statement", sentence))
        elif len(clauses) > 1:  # a clause the next one refers back to ("X, what is its ...") is a topic
            out += [("statement", c) for c, after in zip(clauses, clauses[1:])
                    if not _asks(c) and not _CONDITION.search(c) and not _TOPIC_BACK.search(after)]
    return out


@dataclass(frozen=True)
class Claim:
    """A part of a probe that asserts what a key point claims."""

    kind: str  # "why" (presupposed by a why-question), "choice" (offered as an option), "statement", "other-option"
    text: str
    shared: tuple[str, ...]  # content terms it shares with the key point
    share: float  # shared terms / the part's own content terms
    strong: bool  # clear enough to fail the lint


def stated_claim(probe: str, key_point: str, given: str = "", targeted: bool = True) -> Claim | None:
    """Does the probe assert the key point's claim (or offer it as an option) instead of asking for it?

    `given` is the interview question: terms it contains are common ground, not a leak. A part of the
    probe counts when at least half of its content terms are the key point's (weak) and strongly when
    60% are, with at least 2 shared English terms or 3 shared Chinese bigrams (one more for a key point
    the probe does not target). Declarative sentences are only ever weak, and need 75%: many set up a
    scenario."""
    given_terms = content_terms(given)
    point = content_terms(key_point) - given_terms
    best: Claim | None = None
    for kind, text in _assertions(probe):
        if kind == "other-option":
            return Claim(kind, text, (), 1.0, True)
        terms = content_terms(text) - given_terms
        if len(terms) < 2:
            continue
        shared = terms & point
        share = len(shared) / len(terms)
        need = (3 if _CJK_RUN.search(text) else 2) + (0 if targeted else 1)
        if kind == "statement":
            strong, weak = False, share >= 0.75 and len(shared) >= need + 1
        else:
            strong, weak = share >= 0.6 and len(shared) >= need, share >= 0.5 and len(shared) >= need
        if strong or weak:
            claim = Claim(kind, text.strip(), tuple(sorted(shared)), round(share, 2), strong)
            if best is None or (claim.strong, claim.share) > (best.strong, best.share):
                best = claim
    return best


def is_question(text: str) -> bool:
    """Does the text end by asking something (a question or a request), rather than by stating?"""
    sentences = [s.strip() for s in _PROBE_SENTENCE.split(text.strip()) if s.strip()]
    if not sentences:
        return False
    last = sentences[-1]
    return last.endswith(("?", "？")) or (not last.endswith(("。", ".", "！", "!")) and _asks(last)) \
        or bool(_IMPERATIVE.search(last))
