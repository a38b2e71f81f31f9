"""Batch evals: how well the graders agree with careful gold scores, and how good the follow-ups are."""
