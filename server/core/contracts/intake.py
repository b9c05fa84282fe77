"""The accepted queue (`data/intake/queue.jsonl`): work the app answered for (a notes import's
202, a lesson's extraction trigger) and has not finished, so a restart after a crash resumes it
(issue 26, item 4). One append-only ledger of two line shapes: an `accepted` line holds a whole
batch's entries (one write, fsynced before the answer), a `settled` line the keys of entries that
ended (merged, failed, aborted by the learner, or found already merged).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IntakeKind = Literal["notes", "retire", "lesson"]
"""`notes`: a notes file's run (its chunks as accepted); `retire`: a folder import found the file
gone (its contribution is retired, no model call); `lesson`: a lesson's extraction trigger fired
(the lesson record holds the prose; its coverage says what is left)."""


class IntakeJob(BaseModel):
    """One accepted job: the text the extractor reads and the (coverage key, fingerprint) pairs it
    checkpoints when it merges (the idempotence key: a pair already in the source's coverage
    merged before the crash and does not run again)."""

    model_config = ConfigDict(extra="forbid")

    text: str
    coverage: list[tuple[str, str]]


class IntakeEntry(BaseModel):
    """One accepted run.

    Attributes:
        key: unique per entry (`ik_` + 16 hex); what a `settled` line names.
        kind: see `IntakeKind`.
        source: the source id (`src_…` for notes, the chat id for a lesson).
        label: the import's summary label (notes, retire); the lesson's title.
        import_id: the import the run belongs to (its summary row in the feed), if any.
        title: the notes file's title (its file name).
        path: the file's name or path as imported (the source line's `path`).
        fingerprint: the note's content fingerprint, stamped on its source once all merged.
        version: every (coverage key -> fingerprint) of the note's new content (`retire`: {}).
        jobs: the jobs still to run when it was accepted (chunks merged earlier are left out).
        at: ISO time it was accepted.
    """

    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=r"^ik_[0-9a-f]{16}$")
    kind: IntakeKind
    source: str = Field(min_length=1)
    label: str = ""
    import_id: str | None = None
    title: str = ""
    path: str | None = None
    fingerprint: str | None = None
    version: dict[str, str] | None = None
    jobs: list[IntakeJob] = Field(default_factory=list)
    at: str = ""


class IntakeLine(BaseModel):
    """One line of `queue.jsonl`: a batch `accepted`, or the keys `settled`."""

    model_config = ConfigDict(extra="forbid")

    accepted: list[IntakeEntry] | None = None
    settled: list[str] | None = None
