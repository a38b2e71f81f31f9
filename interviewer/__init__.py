"""A mock interviewer for LLM reinforcement-learning jobs."""

__version__ = "0.1.0"
