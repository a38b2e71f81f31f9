"""The fault suite's counts, filled in by the tests and printed at the end of the run (see conftest.py)."""

COUNTS: dict[str, object] = {}
