"""The errors the interviewer raises on purpose; each message says what to do."""


class InterviewerError(Exception):
    """Base class: a known failure with a message a candidate can act on."""


class EndpointError(InterviewerError):
    """The model endpoint is unreachable, timed out or answered with an error."""


class ModelOutputError(InterviewerError):
    """The model's output did not parse or validate after the allowed retries."""


class LocalModelError(InterviewerError):
    """The embedded model could not be assembled or started."""


class AnswerRejected(InterviewerError):
    """The candidate's input cannot be accepted as it is (empty, too long)."""


class SessionError(InterviewerError):
    """A session id is unknown, or the session cannot continue."""


class GraderError(InterviewerError):
    """The grader cannot run as configured (e.g. its fitted weights are missing or do not fit the code)."""


class VLLMError(InterviewerError):
    """vLLM is not installed, sees no GPU, or its server did not start."""
