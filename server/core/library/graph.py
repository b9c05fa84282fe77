"""The merger: the graph's only writer logic, deterministic and pure (seed §6).

Ledger lines fold into propositions and chains (`fold_nodes`, `fold_chains`); an extraction job's
findings and the auditor's identity links become the lines to append (`plan_merge`), followed by
chain simplification (`server.core.library.simplify`: `simplify`, `restorable`, `ChainIndex`),
which drops provably redundant chains.
"""

from __future__ import annotations

import hashlib
import sys
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    Findings,
    NodeLine,
    Proposition,
    Provenance,
    Verdicts,
    VersionLine,
)
from server.core.library.simplify import ChainIndex, chain_key, simplify

L = TypeVar("L", NodeLine, ChainLine)
M = TypeVar("M", Proposition, Chain)

NODE_PREFIX = "n_"
CHAIN_PREFIX = "arg_"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def node_id(source: str, job: str, local_id: str) -> str:
    """A new proposition's id, derived from (source, job, local id). A job id carries its run's
    nonce, so two runs never share ids; `plan_merge` still never lets a minted id land on an
    existing one (that would be a link nobody audited)."""
    return NODE_PREFIX + _digest(f"{source}|{job}|{local_id}")


def chain_id(premises: Iterable[str], conclusion: str) -> str:
    """A chain's id, deterministic in (sorted premises, conclusion)."""
    key = chain_key(premises, conclusion)
    return CHAIN_PREFIX + _digest("|".join(key[0]) + "=>" + key[1])


# -- folding ledgers -----------------------------------------------------------------------------
_PROPOSITION_FIELDS = set(Proposition.model_fields)
_CHAIN_FIELDS = set(Chain.model_fields)
"""The fields-set every folded proposition (chain) shares: pydantic gives each model its own set
(728 bytes for six names, more than the rest of a short proposition); every field of a folded one
is set, and setting one again adds nothing (issue 28 item 3: the 100k graph's memory)."""
_intern = sys.intern
"""Ids, sources and timestamps repeat across lines (a chain's members are propositions' ids; a
source's propositions share its id and often their time): one string object each, not one per line."""


def _shared(model: M) -> M:
    """`model` with the shared fields-set of its kind (`model_copy` gives a copy a set of its own)."""
    object.__setattr__(
        model,
        "__pydantic_fields_set__",
        _PROPOSITION_FIELDS if isinstance(model, Proposition) else _CHAIN_FIELDS,
    )
    return model


def fold_nodes(
    lines: Iterable[NodeLine], into: Mapping[str, Proposition] | None = None
) -> dict[str, Proposition]:
    """Merged propositions: the first line of an id stands; later lines add aliases and sources.

    Args:
        lines: ledger lines in ledger order (any iterable: read once, so a stream of a ledger
            never holds every line at once).
        into: an earlier fold to continue (not mutated: a touched proposition is copied).

    Memory: the folded propositions share one fields-set and intern their id, sources and time
    (`_PROPOSITION_FIELDS`, `_intern`); ~0.5 KB each beyond their text (1.3 KB before).
    """
    out: dict[str, Proposition] = dict(into) if into else {}
    fresh: set[str] = set()
    for line in lines:
        existing = out.get(line.id)
        if existing is not None and line.id not in fresh and into is not None and line.id in into:
            existing = _shared(
                existing.model_copy(
                    update={"aliases": list(existing.aliases), "sources": list(existing.sources)}
                )
            )
            out[line.id] = existing
            fresh.add(line.id)
        if existing is None:
            nid = _intern(line.id)
            out[nid] = Proposition.model_construct(  # the line was validated when read
                _fields_set=_PROPOSITION_FIELDS,
                id=nid,
                name=line.name,
                statement=line.statement,
                aliases=list(dict.fromkeys(a for a in line.aliases if a != line.name)),
                sources=[_intern(line.provenance.source)],
                created_at=_intern(line.at),
            )
            fresh.add(nid)
            continue
        for alias in [line.name, *line.aliases]:
            if alias and alias != existing.name and alias not in existing.aliases:
                existing.aliases.append(alias)
        if line.provenance.source not in existing.sources:
            existing.sources.append(_intern(line.provenance.source))
    return out


def fold_chains(lines: Iterable[ChainLine], into: Mapping[str, Chain] | None = None) -> dict[str, Chain]:
    """Merged chains by id; lines with the same (sorted premises, conclusion) are one chain:
    the first line's id and time stand, sources union.

    Args:
        lines: ledger lines in ledger order.
        into: an earlier fold to continue (not mutated: a touched chain is copied).
    """
    by_key: dict[tuple[tuple[str, ...], str], Chain] = {
        chain_key(c.premises, c.conclusion): c for c in (into or {}).values()
    }
    fresh: set[tuple[tuple[str, ...], str]] = set()
    for line in lines:
        key = chain_key(line.premises, line.conclusion)
        existing = by_key.get(key)
        if existing is not None and key not in fresh and into is not None:
            existing = _shared(existing.model_copy(update={"sources": list(existing.sources)}))
            by_key[key] = existing
            fresh.add(key)
        if existing is None:
            by_key[key] = Chain.model_construct(  # the line was validated when read
                _fields_set=_CHAIN_FIELDS,
                id=_intern(line.id),
                premises=[_intern(p) for p in key[0]],
                conclusion=_intern(line.conclusion),
                sources=[_intern(line.provenance.source)],
                created_at=_intern(line.at),
            )
            fresh.add(key)
        elif line.provenance.source not in existing.sources:
            existing.sources.append(_intern(line.provenance.source))
    return {chain.id: chain for chain in by_key.values()}


# -- what a read counts: retirement and deletion (docs/decisions/0010-...) -----------------------
def live_lines(lines: Iterable[L], retired: Collection[str], deleted: Collection[str]) -> Iterator[L]:
    """The lines a fold counts: not from a retired job, not of a deleted id."""
    for line in lines:
        if line.provenance.job not in retired and line.id not in deleted:
            yield line


def live_coverage(lines: Iterable[CoverageLine], retired: Collection[str]) -> Iterator[CoverageLine]:
    """Coverage a retired job recorded no longer covers anything (its content must run again)."""
    return (line for line in lines if line.job not in retired)


def without_dangling(nodes: Mapping[str, Proposition], chains: Mapping[str, Chain]) -> dict[str, Chain]:
    """The chains whose every member is a proposition of `nodes`."""
    return {
        cid: c for cid, c in chains.items() if c.conclusion in nodes and all(p in nodes for p in c.premises)
    }


def version_jobs(coverage: Iterable[CoverageLine], version: Mapping[str, str]) -> set[str]:
    """The jobs that merged parts of a source version and nothing else: every (key, fingerprint)
    pair a job's coverage lines name is one of the version's.

    A notes job covers one chunk, so this is "the jobs that merged a chunk of the new file". A
    lesson job covers a batch of messages: when one of them was edited or regenerated (its
    fingerprint changed, or the message is gone), the job is no longer the version's, its
    still-current messages count as uncovered and run again, and the job is retired when the run
    that re-read them merged (docs/decisions/0010-...). A job with no coverage line (a crash
    between its run line and its coverage) is no version's job."""
    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for line in coverage:
        pairs[line.job].append((line.message, line.fingerprint))
    return {job for job, named in pairs.items() if all(version.get(key) == fp for key, fp in named)}


def covered_by(coverage: Iterable[CoverageLine], jobs: Collection[str]) -> dict[str, set[str]]:
    """key -> fingerprints that these jobs' coverage lines record (what `uncovered` diffs against)."""
    out: dict[str, set[str]] = defaultdict(set)
    for line in coverage:
        if line.job in jobs:
            out[line.message].add(line.fingerprint)
    return dict(out)


def completion(
    source: str,
    written: Iterable[str],
    coverage: Iterable[CoverageLine],
    version: Mapping[str, str],
    pending: Collection[str],
    at: str,
) -> VersionLine | None:
    """The swap that completes a source's version (one `versions.jsonl` line), or None when there
    is nothing to swap.

    Args:
        written: the source's jobs that wrote lines and are not retired (counted or pending).
        coverage: the source's coverage lines that count.
        version: the new version (coverage key -> fingerprint).
        pending: jobs whose run line is pending and not yet accepted.

    The version's pending jobs (`version_jobs`) are accepted; every other job of `source` is
    retired. A pending job that read content a counted job of the version also covers (a lesson
    whose edited message was edited back) is retired too: accepting it would say that content
    twice, and what else it read counts as unread and is read again. Lines other sources wrote
    (their links to the same nodes, their assertions of the same chains) are untouched, so such
    nodes and chains keep those provenances."""
    lines = list(coverage)
    written, pending = set(written), set(pending)
    keep = version_jobs(lines, version)
    counted = {(c.message, c.fingerprint) for c in lines if c.job in keep and c.job not in pending}
    doubled = {c.job for c in lines if c.job in keep & pending and (c.message, c.fingerprint) in counted}
    accepted = sorted(written & keep & pending - doubled)
    retired = sorted(written - (keep - doubled))
    if not accepted and not retired:
        return None
    return VersionLine(source=source, accepted=accepted, retired=retired, at=at)


# -- validating the extractor's submit -----------------------------------------------------------
def findings_problems(findings: Findings, existing: Mapping[str, object]) -> list[str]:
    """What is wrong with a submit, as sentences the extractor can act on (empty: acceptable).

    Laws: submitted ids are unique; every premise and conclusion resolves to a submitted id or an
    existing `n_` id; a chain does not use its conclusion as a premise.
    """
    problems: list[str] = []
    ids = [p.id for p in findings.propositions]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"proposition ids must be unique; repeated: {', '.join(dupes)}")
    known = set(ids)
    for index, chain in enumerate(findings.chains):
        unknown = [e for e in [*chain.premises, chain.conclusion] if e not in known and e not in existing]
        if unknown:
            problems.append(
                f"chains[{index}] refers to {', '.join(sorted(set(unknown)))}, which is neither a submitted "
                "proposition id nor an existing node id; submit that proposition or fix the id"
            )
        if chain.conclusion in chain.premises:
            problems.append(f"chains[{index}] uses its conclusion {chain.conclusion} as a premise")
    return problems


# -- planning a merge ----------------------------------------------------------------------------
@dataclass
class MergePlan:
    """What one job's merge writes.

    Attributes:
        node_lines: `nodes.jsonl` lines to append (new propositions and identity links).
        chain_lines: `chains.jsonl` lines to append (new chains and re-asserted ones).
        dropped_chains: chain ids simplification removes (the ledger is rewritten without them).
        added_nodes / linked_nodes / added_chains: counts for the run checkpoint.
        skipped_chains: chains whose endpoints no longer resolve (e.g. a node deleted meanwhile).
    """

    node_lines: list[NodeLine] = field(default_factory=list)
    chain_lines: list[ChainLine] = field(default_factory=list)
    dropped_chains: set[str] = field(default_factory=set)
    added_nodes: int = 0
    linked_nodes: int = 0
    added_chains: int = 0
    skipped_chains: int = 0


def plan_merge(
    nodes: Mapping[str, Proposition],
    chains: Mapping[str, Chain],
    findings: Findings,
    verdicts: Verdicts,
    provenance: Provenance,
    at: str,
    reserved: Collection[str] = (),
    index: ChainIndex | None = None,
) -> MergePlan:
    """Join findings and verdicts into ledger lines, then simplify (seed §6, the merger).

    Links are validated: a link must name a submitted proposition and either an existing node or
    an *earlier* submitted proposition (a duplicate inside the batch; others are ignored). Linked
    propositions append a link line under the existing id (a batch duplicate under its earlier
    twin's id, new or linked); the rest become new nodes. Chains resolve through the job-local id
    map (existing `n_` ids pass through), dedupe by (sorted premises, conclusion) against the graph
    and within the job, and feed simplification.

    Args:
        nodes / chains: the merged graph as it stands (inside the audit→merge critical section).
        findings: the extractor's submit (already validated by `findings_problems`).
        verdicts: the auditor's identity links.
        provenance: source, job and (for chats) the covered message ids.
        at: ISO timestamp for every line.
        reserved: ids a new proposition must not take either (deleted ones).
        index: the `ChainIndex` of exactly `chains`, when the caller keeps one; it is read, not
            changed (the new chains are layered over it). Without it simplification indexes
            every chain first.

    A proposition the auditor did not link is always a new node: its minted id never equals an
    existing, reserved or already-minted id (a salt is added until it is free), so a rerun can
    never weld a new finding onto an old node.
    """
    plan = MergePlan()
    position = {p.id: i for i, p in enumerate(findings.propositions)}
    links: dict[str, str] = {}
    twins: dict[str, str] = {}  # finding -> an earlier finding of this batch it duplicates
    for link in verdicts.links:
        if link.finding not in position or link.finding in links or link.finding in twins:
            continue
        if link.node in nodes:
            links[link.finding] = link.node
        elif position.get(link.node, len(position)) < position[link.finding]:
            twins[link.finding] = link.node
    resolved: dict[str, str] = {}
    minted: set[str] = set()
    for prop in findings.propositions:
        if prop.id in twins:  # one node for both: the earlier twin's (new or linked)
            target = resolved[twins[prop.id]]
            plan.linked_nodes += 1
        elif prop.id in links:
            target = links[prop.id]
            plan.linked_nodes += 1
        else:
            target = node_id(provenance.source, provenance.job, prop.id)
            salt = 0
            while target in nodes or target in reserved or target in minted:
                salt += 1
                target = node_id(provenance.source, provenance.job, f"{prop.id}#{salt}")
            minted.add(target)
            plan.added_nodes += 1
        resolved[prop.id] = target
        plan.node_lines.append(
            NodeLine(
                id=target,
                name=prop.name,
                statement=prop.statement,
                aliases=prop.aliases,
                provenance=provenance,
                at=at,
            )
        )
    known = set(nodes) | set(resolved.values())
    keys: dict[tuple[tuple[str, ...], str], str] = {}  # this job's keys; the graph's are found by id
    new_chains: list[Chain] = []
    asserted: list[Chain] = []
    for finding in findings.chains:
        premises = [resolved.get(p, p) for p in finding.premises]
        conclusion = resolved.get(finding.conclusion, finding.conclusion)
        if any(e not in known for e in [*premises, conclusion]) or conclusion in premises:
            plan.skipped_chains += 1
            continue
        key = chain_key(premises, conclusion)
        cid = keys.get(key) or chain_id(*key)
        if key not in keys and cid not in chains:
            keys[key] = cid
            plan.added_chains += 1
            new_chains.append(
                Chain(
                    id=cid,
                    premises=list(key[0]),
                    conclusion=conclusion,
                    sources=[provenance.source],
                    createdAt=at,
                )
            )
        elif key not in keys:
            asserted.append(chains[cid])
        keys[key] = cid
        plan.chain_lines.append(
            ChainLine(id=cid, premises=list(key[0]), conclusion=conclusion, provenance=provenance, at=at)
        )
    if new_chains or asserted:
        # Re-checking the re-asserted chains too heals a simplification a crash interrupted.
        merged = {**chains, **{c.id: c for c in new_chains}}
        layered = index.over(new_chains) if index is not None else None
        plan.dropped_chains = simplify(merged, changed=[*new_chains, *asserted], index=layered)
    return plan
