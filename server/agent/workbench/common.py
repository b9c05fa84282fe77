"""What every Workbench worker shares: its failure (`WorkerFailed`), its usage in the job record's
shape, and how a failed agent run becomes one plain sentence."""

from __future__ import annotations

import logging

from pydantic_ai import exceptions as pe
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from server.agent.model_guard import classify
from server.core.contracts.jobs import WorkerUsage

log = logging.getLogger("lh.job")


class WorkerFailed(Exception):
    """A worker could not deliver; `str()` is one plain sentence without its final full stop (the
    steer message adds it), `.usage` what it spent."""

    def __init__(self, message: str, usage: WorkerUsage | None = None) -> None:
        super().__init__(message.rstrip().rstrip("."))
        self.usage = usage or WorkerUsage()


def worker_usage(usage: RunUsage) -> WorkerUsage:
    """The job record's usage: tokens None when the provider reported none (unknown, never zero);
    cost unknown (None)."""
    reported = bool(usage.input_tokens or usage.output_tokens)
    return WorkerUsage(
        input_tokens=usage.input_tokens if reported else None,
        output_tokens=usage.output_tokens if reported else None,
        requests=usage.requests,
        cost_usd=None,
    )


def failure_sentence(exc: Exception, model: Model, *, what: str, last_problem: str | None) -> str:
    """One plain sentence for an agent run that raised `exc` (never a provider's raw body)."""
    if isinstance(exc, pe.UsageLimitExceeded):
        return f"The {what} used its budget of model requests without finishing."
    if isinstance(exc, pe.UnexpectedModelBehavior) and last_problem:
        return f"The {what} still failed its check after its last attempt: {last_problem}"
    failure = classify(exc, model.model_name)
    if failure is not None:
        return str(failure)
    log.warning("the %s failed: %s", what, exc, exc_info=exc)
    return f"The {what} failed unexpectedly ({type(exc).__name__})."
