"""What every Workbench worker shares: its failure (`WorkerFailed`), its usage in the job record's
shape, and how a failed agent run becomes one plain sentence."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic_ai import Agent
from pydantic_ai import exceptions as pe
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage, UsageLimits

from server.agent.machine_room.model_guard import classify
from server.core.contracts.jobs import WorkerUsage

log = logging.getLogger("lh.job")
Out = TypeVar("Out")


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


async def run_checked(
    agent: Agent[Any, Out],
    prompt: str,
    *,
    deps: Any,
    model: Model,
    usage: RunUsage,
    request_limit: int,
    what: str,
    last_problem: Callable[[], str | None] = lambda: None,
    plain: Mapping[type[Exception], str] | None = None,
) -> Out:
    """Run a worker's agent to its verified output. Any failure becomes WorkerFailed carrying one
    plain sentence and the usage spent: an exception of a type in `plain` is told as that prefix
    followed by its own (already plain) message; any other through `failure_sentence`, naming the
    last check that failed (`last_problem`, read after the failure)."""
    try:
        result = await agent.run(
            prompt, deps=deps, usage=usage, usage_limits=UsageLimits(request_limit=request_limit)
        )
    except Exception as exc:
        for kind, prefix in (plain or {}).items():
            if isinstance(exc, kind):
                raise WorkerFailed(f"{prefix}{exc}", worker_usage(usage)) from exc
        sentence = failure_sentence(exc, model, what=what, last_problem=last_problem())
        raise WorkerFailed(sentence, worker_usage(usage)) from exc
    return result.output
