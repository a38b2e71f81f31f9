"""`python -m knowledge build|lint|stats|search`: build the Chroma store and check the bank."""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter

from knowledge.bank import BankError, load_bank
from knowledge.lint import lint


def _build(args) -> int:
    from knowledge.store import Store, default_store_path

    path = args.path or default_store_path()
    bank = load_bank()
    if args.export_vectors:
        from knowledge.store import SHIPPED_VECTORS, export_vectors

        print(f"exported {export_vectors(bank)} vectors to {SHIPPED_VECTORS}")
    store = Store.open(path, bank, rebuild=args.force)
    print(f"store {path}: {store.count()} entries, bank fingerprint {store.fingerprint}")
    return 0


def _lint(args) -> int:
    findings = lint(load_bank())
    for finding in findings:
        print(finding)
    errors = sum(f.level == "error" for f in findings)
    warnings = len(findings) - errors
    print(f"{errors} errors, {warnings} warnings")
    return 1 if errors or (args.strict and warnings) else 0


def _stats(args) -> int:
    bank = load_bank()
    qs = list(bank.questions.values())
    by_source = Counter(p.source for q in qs for p in q.provenance)
    print(f"{len(qs)} questions, {len(bank.with_rubric())} with a rubric, {len(bank.chains)} chains")
    print("by section:", dict(Counter(q.section for q in qs)))
    print("spans by source document:", dict(by_source))
    print("by difficulty:", dict(sorted(Counter(q.difficulty for q in qs).items())))
    rubrics = bank.with_rubric()
    reviews = Counter(len(q.reviews) for q in rubrics)
    print(f"rubrics reviewed at least twice: {sum(n for k, n in reviews.items() if k >= 2)} of {len(rubrics)}")
    print("rubrics by number of reviews:", dict(sorted(reviews.items())))
    return 0


def _search(args) -> int:
    from knowledge.store import Store

    store = Store.open(args.path)
    for hit in store.nearest_questions(args.text, k=args.k):
        print(f"{hit.score:.3f}  {hit.qid}  {hit.text}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m knowledge", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the Chroma store (skipped when nothing changed)")
    p.add_argument("--path", help="store folder (default: $RLI_HOME/chroma)")
    p.add_argument("--force", action="store_true", help="rebuild even if nothing changed")
    p.add_argument("--export-vectors", action="store_true",
                   help="write knowledge/data/vectors.npz (shipped, so a first build embeds only edited texts)")
    p.set_defaults(func=_build)
    p = sub.add_parser("lint", help="report vague, duplicate or incomplete rubric content")
    p.add_argument("--strict", action="store_true", help="fail on warnings too")
    p.set_defaults(func=_lint)
    sub.add_parser("stats", help="questions per document and section").set_defaults(func=_stats)
    p = sub.add_parser("search", help="nearest questions to a free text")
    p.add_argument("text")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--path")
    p.set_defaults(func=_search)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        return args.func(args)
    except BankError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
