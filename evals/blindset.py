"""`python -m evals.blindset`: make a new blind answer set, the way every set in `evals/blind/` was made.

    python -m evals.blindset writers DIR --seed N           # DIR/w1..w8/prompt.md: question texts only, no rubric
    python -m evals.blindset assemble DIR --seed N --prefix m   # check DIR/w*/answers.jsonl, number them: DIR/all.jsonl
    python -m evals.blindset graders DIR --seed N           # DIR/g1..g10 and DIR/s1, s2: rubric + answers, persona hidden
    python -m evals.blindset merge DIR --out evals/blind    # check DIR/*/gold.jsonl, write next.jsonl and its second gold

Each step's prompt is the instructions in `evals/blind/README.md`, unchanged but for the file paths, so a set
made with it is made the way the README says. Give each writer and each grader only its own `prompt.md`. `merge`
checks the labels' format and prints no label: a new set is read by nothing until it becomes the reported set.
"""

import argparse
import json
import random
import re
import sys
from pathlib import Path

from knowledge.bank import BankError, load_bank
from knowledge.schema import Question

README = Path(__file__).resolve().parent / "blind" / "README.md"
PERSONAS = ("strong", "campus", "terse", "confident_wrong", "english", "mixed", "adversarial")
TIERS = {"excellent", "good", "terse_correct", "partial", "weak", "confidently_wrong", "fluent_central_error",
         "keyword_stuffed", "injection", "off_topic"}
WRITERS = 8
GRADER_SHARES = (8, 8, 8, 8, 8, 8, 7, 7, 7, 7)  # questions per gold grader: 76 in all


class SetError(Exception):
    """What is wrong with a set's files, every problem listed."""


def instructions(heading: str) -> str:
    """The fenced instructions under `## <heading>` in the blind README."""
    m = re.search(rf"## {re.escape(heading)}\n\n```text\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    if m is None:
        raise SetError(f"{README} has no fenced block under '## {heading}'")
    return m.group(1)


def writer_prompts(questions: list[Question], seed: int, out: Path) -> dict[str, list[str]]:
    """One prompt per writer, each with the question texts of its share (and nothing of the rubric)."""
    text = instructions("The writers' instructions")
    qs = sorted(questions, key=lambda q: f"{q.id}.json")  # in file order, as for every earlier set
    random.Random(seed).shuffle(qs)
    shares = {}
    for i in range(WRITERS):
        d = out / f"w{i + 1}"
        d.mkdir(parents=True, exist_ok=True)
        target = d / "answers.jsonl"
        body = (text.replace("exactly one file: answers.jsonl", f"exactly one file: {target}")
                .replace("open('answers.jsonl')", f"open('{target}')"))
        share = qs[i::WRITERS]
        lines = [f"- id: `{q.id}`\n  - zh: {q.zh}\n  - en: {q.en}" for q in share]
        (d / "prompt.md").write_text(body + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
        shares[d.name] = [q.id for q in share]
    return shares


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _cjk(s: str) -> int:
    return sum("\u4e00" <= ch <= "\u9fff" for ch in s)


def assemble(out: Path, seed: int, prefix: str) -> list[dict]:
    """Every writer's answers checked (seven personas per question, none empty), shuffled within each question and
    numbered `<prefix>000`...; `lang` is en for the English persona and an injection with under 5 CJK characters."""
    problems, by_question = [], {}
    for d in sorted(out.glob("w*/"), key=lambda p: int(p.name[1:])):
        share = re.findall(r"- id: `([^`]+)`", (d / "prompt.md").read_text(encoding="utf-8"))
        got = _jsonl(d / "answers.jsonl")
        for qid in share:
            mine = [r for r in got if r.get("question_id") == qid]
            personas = sorted(str(r.get("persona")) for r in mine)
            if personas != sorted(PERSONAS) or any(not str(r.get("answer", "")).strip() for r in mine):
                problems.append(f"{d.name} {qid}: personas {personas}, expected one each of {', '.join(PERSONAS)}")
            by_question[qid] = mine
        stray = sorted({str(r.get("question_id")) for r in got} - set(share))
        if stray:
            problems.append(f"{d.name}: answers to questions not in its share: {stray}")
    if not by_question:
        problems.append(f"no writer prompts under {out} (run `writers` first)")
    if problems:
        raise SetError("\n".join(problems))
    rng, rows = random.Random(seed), []
    for qid in sorted(by_question):
        mine = list(by_question[qid])
        rng.shuffle(mine)
        for r in mine:
            english = r["persona"] == "english" or (r["persona"] == "adversarial" and _cjk(r["answer"]) < 5)
            rows.append({"question_id": qid, "answer": r["answer"].strip(), "persona": r["persona"],
                         "lang": "en" if english else "zh"})
    for n, r in enumerate(rows):
        r["id"] = f"{prefix}{n:03d}"
    _write_jsonl(out / "all.jsonl", rows)
    return rows


def render_rubric(q: Question) -> list[str]:
    r = q.rubric
    out = [f"## Question `{q.id}`", "", f"- zh: {q.zh}", f"- en: {q.en}", "", "### Key points"]
    out += [f"- **{k.id}** ({k.weight}): {k.zh} / {k.en}" for k in r.key_points]
    out += ["", "### Pitfalls (index: wrong claim -- why it is wrong)"]
    out += [f"- **{i}**: {p.zh} / {p.en} -- {p.why}" for i, p in enumerate(r.pitfalls)]
    out += ["", "### Reference answer", r.reference_answer.zh, "", r.reference_answer.en,
            "", "### What a strong answer adds", r.strong_answer.zh, ""]
    return out


def grader_shares(qids: list[str], seed: int) -> tuple[random.Random, dict[str, list[str]]]:
    """Ten first graders' shares, then two second graders on 12 questions: one from each share, two more from the
    first two shares."""
    rng = random.Random(seed)
    qids = sorted(qids)
    rng.shuffle(qids)
    shares, start = {}, 0
    for i, n in enumerate(GRADER_SHARES):
        shares[f"g{i + 1}"] = qids[start:start + n]
        start += n
    if start != len(qids):
        raise SetError(f"the grader shares hold {start} questions, the set has {len(qids)}")
    second = [s[rng.randrange(len(s))] for s in shares.values()]
    for s in list(shares.values())[:2]:
        second.append(rng.choice([q for q in s if q not in second]))
    shares["s1"], shares["s2"] = second[:6], second[6:]
    return rng, shares


def grader_packets(out: Path, seed: int, bank: dict[str, Question]) -> dict[str, list[str]]:
    """Each grader's packet: the rubric of each question in its share, then every answer to it shuffled, with its
    id only (no persona, no writer)."""
    text = instructions("The gold graders' instructions")
    answers = _jsonl(out / "all.jsonl")
    if not answers:
        raise SetError(f"{out / 'all.jsonl'} is missing or empty (run `assemble` first)")
    rng, shares = grader_shares(sorted({a["question_id"] for a in answers}), seed)
    for name, qids in shares.items():
        lines = []
        for qid in qids:
            lines += render_rubric(bank[qid])
            mine = [a for a in answers if a["question_id"] == qid]
            rng.shuffle(mine)
            lines.append(f"### Answers to `{qid}` ({len(mine)})")
            for a in mine:
                lines += ["", f"#### id `{a['id']}`", "", a["answer"]]
            lines.append("\n---\n")
        d = out / name
        d.mkdir(exist_ok=True)
        (d / "packet.md").write_text("\n".join(lines), encoding="utf-8")
        prompt = (text.replace("Read exactly one file: packet.md.", f"Read exactly one file: {d / 'packet.md'}.")
                  .replace("to gold.jsonl (JSON Lines", f"to {d / 'gold.jsonl'} (JSON Lines")
                  .replace("open('gold.jsonl')", f"open('{d / 'gold.jsonl'}')"))
        (d / "prompt.md").write_text(prompt, encoding="utf-8")
    return shares


def _label_problems(g: dict, answer: dict | None, bank: dict[str, Question]) -> str | None:
    if answer is None or answer["question_id"] != g.get("question_id"):
        return "no such answer to that question"
    rubric = bank[answer["question_id"]].rubric
    kps = {k.id for k in rubric.key_points}
    try:
        covered, partial, mis = set(g["covered"]), set(g["partial"]), list(g["misconceptions"])
        if not (covered | partial) <= kps or covered & partial:
            return f"key points must be among {sorted(kps)} and not both covered and partial"
        if not all(m.startswith("other:") or (m.isdigit() and int(m) < len(rubric.pitfalls)) for m in mis):
            return "misconceptions must be a pitfall index or 'other: ...'"
        if not (0 <= g["gold"] <= 10) or g["tier"] not in TIERS or not isinstance(g.get("note", ""), str):
            return f"gold must be 0-10, tier one of {sorted(TIERS)} and note a string"
    except (KeyError, TypeError, AttributeError) as exc:
        return f"malformed label ({exc!r})"
    return None


def read_labels(out: Path, names: list[str], answers: dict[str, dict], bank: dict[str, Question]) -> dict[str, dict]:
    labels, problems = {}, []
    for name in names:
        for n, g in enumerate(_jsonl(out / name / "gold.jsonl"), 1):
            why = _label_problems(g, answers.get(g.get("id")), bank)
            if why is None and g["id"] in labels:
                why = "labelled twice"
            if why:
                problems.append(f"{name}/gold.jsonl line {n} ({g.get('id')}): {why}")
            else:
                labels[g["id"]] = g
    if problems:
        raise SetError("\n".join(problems))
    return labels


def merge(out: Path, dest: Path, bank: dict[str, Question]) -> tuple[int, int]:
    """next.jsonl (every answer, the first gold) and next_second_grader.jsonl, written only if every answer has
    exactly one valid first label and every second label is valid."""
    answers = {a["id"]: a for a in _jsonl(out / "all.jsonl")}
    if not answers:
        raise SetError(f"{out / 'all.jsonl'} is missing or empty (run `assemble` first)")
    first = read_labels(out, [f"g{i + 1}" for i in range(len(GRADER_SHARES))], answers, bank)
    second = read_labels(out, ["s1", "s2"], answers, bank)
    if missing := sorted(set(answers) - set(first)):
        raise SetError(f"{len(missing)} answers have no first gold, e.g. {missing[:5]}")
    def rows(labels):
        return [{**{k: answers[i][k] for k in ("id", "question_id", "answer")}, "gold": labels[i]["gold"],
                 "tier": labels[i]["tier"], "lang": answers[i]["lang"], "persona": answers[i]["persona"],
                 "note": labels[i].get("note", ""),
                 **{k: labels[i][k] for k in ("covered", "partial", "misconceptions")}} for i in sorted(labels)]

    for name, labels in (("next.jsonl", first), ("next_second_grader.jsonl", second)):
        _write_jsonl(dest / name, rows(labels))
    return len(first), len(second)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.blindset", description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("writers", "assemble", "graders", "merge"))
    p.add_argument("dir", type=Path, help="the working folder of the new set (outside the repository)")
    p.add_argument("--seed", type=int, help="`writers`, `assemble`, `graders`: how questions are split and answers "
                   "shuffled (record it in evals/blind/README.md)")
    p.add_argument("--prefix", default="", help="`assemble`: the ids' letter, one no other set uses")
    p.add_argument("--out", type=Path, help="`merge`: where next.jsonl goes (e.g. evals/blind)")
    args = p.parse_args(argv)
    if args.step != "merge" and args.seed is None:
        print(f"error: `{args.step}` needs --seed", file=sys.stderr)
        return 2
    try:
        bank = load_bank().questions
        if args.step == "writers":
            for name, qids in writer_prompts(list(bank.values()), args.seed, args.dir).items():
                print(f"{args.dir / name / 'prompt.md'}: {len(qids)} questions")
        elif args.step == "assemble":
            if not re.fullmatch(r"[a-z]", args.prefix):
                raise SetError("--prefix must be one lower-case letter that no other set's ids start with")
            rows = assemble(args.dir, args.seed, args.prefix)
            print(f"{args.dir / 'all.jsonl'}: {len(rows)} answers, {sum(r['lang'] == 'en' for r in rows)} in English")
        elif args.step == "graders":
            for name, qids in grader_packets(args.dir, args.seed, bank).items():
                print(f"{args.dir / name / 'prompt.md'}: {len(qids)} questions")
        else:
            if args.out is None:
                raise SetError("merge needs --out, the folder next.jsonl goes to")
            n1, n2 = merge(args.dir, args.out, bank)
            print(f"{args.out / 'next.jsonl'}: {n1} answers; {args.out / 'next_second_grader.jsonl'}: {n2}")
        return 0
    except (SetError, BankError, OSError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
