"""Workbench contracts (seed §4, §5.1): job records, worker results, and the steer message.

`data/jobs/<id>.json` holds one `JobRecord`, written only by the job runner. A worker's outcome
and its pending delivery are saved in one update; delivery completes only when the steer message
(id `steer_id(job_id, kind)`) is in the saved lesson record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, HttpUrl

from server.core.contracts.models import (  # re-exported: the research settings
    SEARCH_PROVIDERS,
    Camel,
    ResearchSettings,
    SearchProviderName,
)

__all__ = ["SEARCH_PROVIDERS", "ResearchSettings", "SearchProviderName"]

JobKind = Literal["research", "demo", "visual"]
JOB_KINDS: tuple[JobKind, ...] = ("research", "demo", "visual")
WorkerStatus = Literal["running", "done", "error", "aborted"]
DeliveryKind = Literal["result", "abort"]
DeliveryStatus = Literal["pending", "delivered"]

ARTIFACT_PART = "data-subagent-artifact"
"""The UI part of a steer message: `{"type": ARTIFACT_PART, "id": steer id, "data": Artifact}`."""

MAX_REQUEST = 2_000
"""Characters of a job tool's request text."""
MAX_HTML = 200_000
"""Characters of a demo's HTML."""
MAX_SVG = 300_000
"""Characters of a visual's SVG."""


class ResearchInput(Camel):
    """`research` tool input: a question the researcher answers with cited sources."""

    question: str = Field(min_length=3, max_length=MAX_REQUEST, description="what to find out, one question")


class DemoInput(Camel):
    """`demo` tool input: what the interactive HTML demo should show."""

    request: str = Field(
        min_length=3, max_length=MAX_REQUEST, description="what the demo shows and lets the learner do"
    )


class VisualInput(Camel):
    """`visual` tool input: what the SVG picture should show."""

    request: str = Field(min_length=3, max_length=MAX_REQUEST, description="what the picture shows")


class Source(Camel):
    """One cited page of a research result."""

    title: str = Field(max_length=300)
    url: HttpUrl


class ResearchArtifact(Camel):
    """What the researcher delivers: a cited summary (`[1]` refers to `sources[0]`)."""

    kind: Literal["research"] = "research"
    question: str
    summary: str = Field(min_length=1, max_length=20_000)
    sources: list[Source] = Field(min_length=1, max_length=12)


class DemoArtifact(Camel):
    """A self-contained HTML demo, verified in headless Chromium before delivery."""

    kind: Literal["demo"] = "demo"
    title: str = Field(min_length=1, max_length=200)
    html: str = Field(min_length=1, max_length=MAX_HTML)
    checks: list[str] = Field(default_factory=list, description="what the verification observed")


class VisualArtifact(Camel):
    """A sanitized SVG, rendered in headless Chromium; `looked_at` says whether a vision model judged it."""

    kind: Literal["visual"] = "visual"
    title: str = Field(min_length=1, max_length=200)
    svg: str = Field(min_length=1, max_length=MAX_SVG)
    looked_at: bool
    checks: list[str] = Field(default_factory=list)


Artifact = ResearchArtifact | DemoArtifact | VisualArtifact


class WorkerUsage(Camel):
    """A worker's model usage; None is unknown, never zero.

    `model`: the model id its role ran (issue 30 item 2; None in records written before);
    `vision_model`: the picture checker's, when a visual was looked at."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    requests: int = 0
    cost_usd: float | None = None
    model: str | None = None
    vision_model: str | None = None


class WorkerResult(Camel):
    """A worker's successful outcome: model-facing text and the UI artifact."""

    text: str = Field(min_length=1, description="what the teacher reads in the steer message")
    artifact: ResearchArtifact | DemoArtifact | VisualArtifact = Field(discriminator="kind")


class Delivery(Camel):
    """The delivery obligation of a finished or aborted job (seed §5.1)."""

    kind: DeliveryKind
    status: DeliveryStatus = "pending"
    steer_id: str
    delivered_at: str | None = None


class JobRecord(Camel):
    """`data/jobs/<id>.json`: the tool input is saved before the worker starts."""

    id: str = Field(pattern=r"^job_[A-Za-z0-9_-]{1,80}$")
    chat_id: str
    tool_call_id: str
    kind: JobKind
    input: dict[str, Any]
    status: WorkerStatus = "running"
    created_at: str
    finished_at: str | None = None
    result: WorkerResult | None = None
    error: str | None = None
    usage: WorkerUsage = Field(default_factory=WorkerUsage)
    delivery: Delivery | None = None


def steer_id(job_id: str, kind: DeliveryKind) -> str:
    """The deterministic id of a job's steer message: at most one per (job, delivery kind) in a
    lesson record, ever (seed §5.1)."""
    return f"steer_{job_id}_{kind}"


def steer_message(job: JobRecord) -> dict[str, Any]:
    """The steer message (a user-role UIMessage) delivering a job's outcome.

    Its text part is what the model reads; its `data-subagent-artifact` part is what the UI draws
    (`{"jobId", "kind", "status", "toolCallId", "artifact"|None, "error"|None}`).
    Raises ValueError when the job has no delivery obligation.
    """
    if job.delivery is None:
        raise ValueError(f"job {job.id} has nothing to deliver")
    if job.delivery.kind == "abort":
        text = (
            f"[background {job.kind} {job.id}] The learner stopped this {job.kind} job before it "
            "finished; nothing was produced. Carry on without it unless they ask again."
        )
    elif job.status == "done" and job.result is not None:
        text = f"[background {job.kind} {job.id} finished] {job.result.text}"
    else:
        text = (
            f"[background {job.kind} {job.id} failed] {job.error or 'the worker gave no reason'}. "
            "Tell the learner briefly and carry on teaching."
        )
    data = {
        "jobId": job.id,
        "kind": job.kind,
        "status": "aborted" if job.delivery.kind == "abort" else job.status,
        "toolCallId": job.tool_call_id,
        "artifact": job.result.artifact.model_dump(mode="json", by_alias=True) if job.result else None,
        "error": job.error,
    }
    return {
        "id": job.delivery.steer_id,
        "role": "user",
        "metadata": {"steer": True, "jobId": job.id},
        "parts": [
            {"type": "text", "text": text},
            {"type": ARTIFACT_PART, "id": job.delivery.steer_id, "data": data},
        ],
    }


def is_steer(message: dict[str, Any]) -> bool:
    """Whether a record message is a steer (a user-role message carrying an artifact part)."""
    return message.get("role") == "user" and any(
        isinstance(p, dict) and p.get("type") == ARTIFACT_PART for p in message.get("parts", [])
    )
