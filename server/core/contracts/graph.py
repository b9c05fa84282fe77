"""The knowledge graph: propositions and reasoning chains, as ledger lines and as merged views
(seed §6). Ledgers live in `data/graph/*.jsonl`; the extraction pipeline is their sole writer.

Ids: propositions `n_<16 hex>`, chains `arg_<16 hex>`, sources `src_<16 hex>` (notes, from the
path) or the chat id (lessons), jobs `job_<...>`.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from server.core.contracts.limits import Text300, Text2000

SourceKind = Literal["chat", "notes"]
"""What a source is: a lesson (`chat`: its teacher prose) or a notes file. The one word the
import path carries (the sources ledger's `kind`, a job row's `kind`, and the extractor's
instructions: `agent.library.extraction.INSTRUCTIONS`)."""


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- what the extractor submits (model-facing) ---------------------------------------------------
class FindingProposition(Wire):
    """A proposition as the extractor submits it.

    Attributes:
        id: a job-local id the chains refer to (e.g. "p1"); fresh per submit.
        name: a short name (a few words).
        statement: the proposition as one true, self-contained, world-facing sentence.
        aliases: other names for it.
    """

    id: str = Field(min_length=1)
    name: Text300
    statement: Text2000
    aliases: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _short_id(cls, value: str) -> str:
        if len(value) > 64:
            raise ValueError("ids are short labels like 'p1' (at most 64 characters)")
        return value


class FindingChain(Wire):
    """A reasoning chain: premises that jointly entail a conclusion.

    Attributes:
        premises: ids of the premises (at least one): submitted ids, or existing `n_` ids.
        conclusion: id of the conclusion: a submitted id, or an existing `n_` id.
    """

    premises: list[str] = Field(min_length=1)
    conclusion: str = Field(min_length=1)


def _heal_stringified(data: Any, fields: tuple[str, ...]) -> Any:
    """Models sometimes send a list field as a JSON string; parse it back (seed §6: the
    prepareArguments heal). Anything else is left for validation to refuse."""
    if isinstance(data, dict):
        for name in fields:
            value = data.get(name)
            if isinstance(value, str):
                with contextlib.suppress(ValueError):
                    data = {**data, name: json.loads(value)}
    return data


class Findings(Wire):
    """The extractor's submit: both fields are required, even when empty."""

    propositions: list[FindingProposition]
    chains: list[FindingChain]

    @model_validator(mode="before")
    @classmethod
    def _heal(cls, data: Any) -> Any:
        return _heal_stringified(data, ("propositions", "chains"))


class PackedProposition(FindingProposition):
    """A proposition of a packed submit (several notes in one call, decision 0023).

    Attributes:
        note: the id of the note (a `<note id="...">` section) it comes from.
    """

    note: str = Field(min_length=1)


class PackedChain(FindingChain):
    """A chain of a packed submit; all its members come from `note` (or are existing `n_` ids).

    Attributes:
        note: the id of the note the chain comes from.
    """

    note: str = Field(min_length=1)


class PackedFindings(Wire):
    """The extractor's submit for a pack of small notes: every proposition and chain names its
    note; ids are unique across the whole submit. Both lists are required, even when empty."""

    propositions: list[PackedProposition]
    chains: list[PackedChain]

    @model_validator(mode="before")
    @classmethod
    def _heal(cls, data: Any) -> Any:
        return _heal_stringified(data, ("propositions", "chains"))


class IdentityLink(Wire):
    """The auditor's verdict that a submitted proposition IS an existing node."""

    finding: str = Field(min_length=1, description="the submitted proposition's id")
    node: str = Field(min_length=1, description="the existing node's n_ id")


class Verdicts(Wire):
    """The auditor's submit: identity links only (required, even when empty)."""

    links: list[IdentityLink]

    @model_validator(mode="before")
    @classmethod
    def _heal(cls, data: Any) -> Any:
        return _heal_stringified(data, ("links",))


# -- ledger lines (store shape) -------------------------------------------------------------------
class Provenance(Wire):
    """Where a line came from: the source and the job (and for chats, the messages)."""

    source: str
    job: str
    messages: list[str] = Field(default_factory=list)


class NodeLine(Wire):
    """`nodes.jsonl`: the first line of an id creates the proposition; later lines with the same id
    are identity links (another phrasing: an alias, more provenance)."""

    id: str
    name: str
    statement: str
    aliases: list[str] = Field(default_factory=list)
    provenance: Provenance
    at: str


class ChainLine(Wire):
    """`chains.jsonl`: a stored reasoning chain. Lines with the same (sorted premises, conclusion)
    are one logical chain: the first line's id and time stand, provenance unions."""

    id: str
    premises: list[str]
    conclusion: str
    provenance: Provenance
    at: str


class CoverageLine(Wire):
    """`coverage.jsonl`: a run committed on this message's content (its view's fingerprint)."""

    source: str
    message: str
    fingerprint: str
    job: str
    at: str


class RunLine(Wire):
    """`sessions.jsonl`: a merged job (the coarse per-run checkpoint), with its counts."""

    source: str
    job: str
    label: str
    added_nodes: int = Field(alias="addedNodes")
    linked_nodes: int = Field(alias="linkedNodes")
    added_chains: int = Field(alias="addedChains")
    dropped_chains: int = Field(alias="droppedChains")
    at: str
    pending: bool | None = None
    """True for a job of a run that replaces its source's earlier contribution: its lines count
    only once a `VersionLine` accepts it (the whole new version merged), never beside the old
    version (docs/decisions/0010-...). Absent (None) on every other run line."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SourceLine(Wire):
    """`sources.jsonl`: a source's identity and, for notes, its content fingerprint once every
    chunk merged (an unchanged re-import is then a no-op)."""

    id: str
    kind: SourceKind
    title: str
    path: str | None = None
    fingerprint: str | None = None
    at: str


class RetireLine(Wire):
    """`retired.jsonl` (written before `VersionLine` took its place; still read): a job's
    contribution is withdrawn (its source's content changed and the new version merged whole).
    Reads fold every node, chain and coverage line of a retired job away;
    nothing is rewritten (docs/decisions/0010-a-changed-source-replaces-its-contribution.md)."""

    source: str
    job: str
    reason: str = "replaced"
    at: str


class VersionLine(Wire):
    """`versions.jsonl`: a source's new version merged whole and replaced the old one, in one line
    (the swap: no reader sees both versions, a crash leaves one or the other). From this line on
    the `accepted` (pending) jobs count and the `retired` jobs do not: reads fold every node, chain
    and coverage line of a retired job away; nothing is rewritten
    (docs/decisions/0010-a-changed-source-replaces-its-contribution.md)."""

    source: str
    accepted: list[str]
    retired: list[str]
    at: str


class DeletionLine(Wire):
    """`deleted.jsonl`: ids deleted by the learner (full death). Reads never show a line of these
    ids again, whatever a merge planned before the deletion wrote afterwards."""

    ids: list[str]
    at: str


# -- merged views (read side) ---------------------------------------------------------------------
class Proposition(BaseModel):
    """A merged proposition: its first line, plus every later line's aliases and provenance."""

    id: str
    name: str
    statement: str
    aliases: list[str]
    sources: list[str]
    created_at: str = Field(alias="createdAt")

    model_config = ConfigDict(populate_by_name=True)


class Chain(BaseModel):
    """A merged reasoning chain (one per (sorted premises, conclusion))."""

    id: str
    premises: list[str]
    conclusion: str
    sources: list[str]
    created_at: str = Field(alias="createdAt")

    model_config = ConfigDict(populate_by_name=True)
