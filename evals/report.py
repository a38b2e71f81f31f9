"""The eval report in Markdown: graders side by side, the weakest rubrics, follow-up quality."""

from __future__ import annotations

COLUMNS = [("spearman", "Spearman"), ("kendall", "Kendall"), ("pairwise_accuracy", "pairwise acc."),
           ("auroc_good_vs_bad", "AUROC good/bad"), ("key_point_macro_f1", "key-point F1"),
           ("exploit_rate", "exploit rate"), ("injection_lift", "injection lift"),
           ("length_spearman", "corr. with length"), ("length_partial", "length partial r (gold held fixed)"),
           ("length_given_score", "gold-length partial r (score held fixed)"), ("mean_abs_error", "MAE"), ("seconds_per_answer", "s/answer")]


def _f(v) -> str:
    return "-" if v is None or v != v else f"{v:.3f}" if isinstance(v, float) else str(v)


def recommend(results: dict) -> str:
    """Which grader to use with this model: the best Spearman among graders that clearly beat answer
    length (by 0.1) and resist adversarial answers (exploit rate at most 0.2)."""
    graders = {g: r["overall"] for g, r in results.items() if g not in ("followups", "length") and r.get("overall")}
    if "length" not in results:  # without the baseline there is nothing to beat: say so rather than compare with 0
        return ("**Recommendation:** none: the `length` baseline was not run (add it to `--graders`), so no grader "
                "can be shown to beat answer length.")
    floor = results["length"].get("overall", {}).get("spearman", 0.0)
    ok = {g: o for g, o in graders.items()
          if o.get("spearman", float("nan")) >= floor + 0.1 and o.get("exploit_rate", 1.0) <= 0.2}
    if not ok:
        ranks = {g: o for g, o in graders.items() if o.get("spearman", float("nan")) >= floor + 0.1}
        if not ranks:
            return (f"**Recommendation:** no grader beats answer length (Spearman {_f(floor)}) by 0.1: do not trust "
                    "these scores.")
        best = max(ranks, key=lambda g: ranks[g]["spearman"])  # it orders answers, but adversarial ones fool it
        return (f"**Recommendation:** no grader both beats answer length by 0.1 and keeps the exploit rate at 0.2 or "
                f"less. `{best}` orders answers best (Spearman {_f(ranks[best]['spearman'])} vs {_f(floor)} for answer "
                f"length), but {_f(ranks[best].get('exploit_rate'))} of the adversarial answers score 2 or more above "
                "gold: trust its ranking of honest answers, not its score of a fluent wrong one.")
    best = max(ok, key=lambda g: ok[g]["spearman"])
    return (f"**Recommendation:** grade with `{best}` (Spearman {_f(ok[best]['spearman'])} vs {_f(floor)} for answer "
            f"length, exploit rate {_f(ok[best]['exploit_rate'])}).")


SET_TITLES = {"ladders": "Answer ladders (written by the rubric authors: flattering)",
              "blind": "Held-out blind set (written without the rubrics; nothing was fitted or tuned on it)",
              "cases": "Cases"}


def to_markdown(results: dict, meta: dict, name: str = "cases", counts: dict | None = None) -> str:
    graders = [g for g in results if g != "followups"]
    counts = counts or {"cases": "?", "questions": "?"}
    out = [f"# Grader evaluation: {SET_TITLES.get(name, name)}", "",
           f"{counts['cases']} graded answers on {counts['questions']} questions; model: {meta['model'] or 'none'}; "
           f"concurrency {meta['concurrency']}; {meta['total_seconds']} s in all; bank {meta['bank_fingerprint']}.", "",
           "| grader | " + " | ".join(label for _, label in COLUMNS) + " | errors |",
           "|---" * (len(COLUMNS) + 2) + "|"]
    for g in graders:
        o = results[g]["overall"]
        out.append(f"| {g} | " + " | ".join(_f(o.get(k)) for k, _ in COLUMNS) + f" | {o.get('errors', 0)} |")
    out += ["", recommend(results), ""]
    a = meta.get("agreement")
    if name == "blind" and a:
        out += [f"Inter-annotator agreement (two independent gold graders, {a['n']} answers): Spearman "
                f"{_f(a['spearman'])}, mean absolute difference {_f(a['mean_abs_diff'])}. No grader can be held "
                "to more than that.", ""]
    # every grader's tiers: a model grader whose call failed on the only answer of a tier has no entry for it
    names = list(dict.fromkeys(t for g in graders for t in results[g]["overall"].get("tiers", {})))
    out += ["## Mean score by tier (gold in brackets)", "", "| grader | " + " | ".join(names) + " |",
            "|---" * (len(names) + 1) + "|"]
    for g in graders:
        tiers = results[g]["overall"].get("tiers", {})
        out.append(f"| {g} | " + " | ".join(f"{tiers[t]['score']:.1f} ({tiers[t]['gold']:.1f})" if t in tiers else "-"
                                             for t in names) + " |")
    out += ["", "Exploit rate: adversarial answers (keyword-stuffed, fluent with a central error, injection, "
            "off-topic, degenerate, confidently wrong) scored at least 2 above gold. Injection lift: mean "
            "(score - gold) on injection answers minus the same on honest answers.", ""]
    for g in graders:
        st = results[g]["overall"].get("stability", {})
        if st.get("repeats", 1) > 1:
            out.append(f"- {g}: over {st['repeats']} repeats, mean per-answer SD {_f(st['mean_sd'])}, "
                       f"Spearman run 1 vs 2 {_f(st['spearman_run1_run2'])}")
    if "embedding" in results:
        per = results["embedding"]["per_rubric"]
        worst = sorted(per.items(), key=lambda kv: (kv[1]["pairwise_accuracy"], kv[1]["spearman"]))[:8]
        out += ["", "## The rubrics that discriminate worst (embedding grader)", "",
                "| question | answers | Spearman | pairwise acc. | key-point F1 |", "|---|---|---|---|---|"]
        out += [f"| {q} | {m['n']} | {_f(m['spearman'])} | {_f(m['pairwise_accuracy'])} | {_f(m['key_point_macro_f1'])} |"
                for q, m in worst]
    f = results.get("followups", {})
    if f:
        out += ["", f"## Follow-up quality (policy fed with the {f['grader']} grader)", "",
                f"- partial answers that got a gap question: {f['partial_answers_with_gap_question']}; "
                f"it targeted a key point the candidate really missed in {_f(f['gap_hit_rate'])} of them",
                f"- repeated probes: {f['repeated_probes']}; probes that leak their key point: {f['rubric_leaks']}",
                f"- complete answers (gold >= 9): {f['complete_answers']}; unnecessary gap questions on them: "
                f"{f['unnecessary_followups']}",
                f"- competent answers (excellent, good, terse but right, partial): {f['competent_answers']}; the first "
                f"follow-up challenged a sentence gold does not call wrong on {_f(f['false_challenge_rate'])} of them; "
                f"{_f(f['redundant_gap_rate'])} of their {f['competent_gap_questions']} gap questions asked for a point "
                f"gold marks as stated; {f['clarifications']} began by asking to make an unclear sentence precise, "
                f"{f['clarified_stated']} of them about a point gold marks as fully stated; {f['deepens']} went deeper, "
                f"{f['deepen_stated']} of them with a probe whose main point gold marks as stated (its answer was given)"]
    if meta["notes"]:
        out += ["", "## Notes", ""] + [f"- {n}" for n in meta["notes"]]
    return "\n".join(out) + "\n"
