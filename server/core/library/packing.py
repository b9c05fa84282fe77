"""Packing small notes into one extraction call (issue 16 item 5; decision 0023). Pure.

A notes file far below the chunk budget costs mostly instructions and tool schemas when it has
its own model call (≈ 720 tokens of them for a mean note of ≈ 205). Several such files queued
together share one extractor call: the prompt holds each note in its own `<note id="...">`
section, and every proposition and chain of the submit names the note it comes from. The
submit is then split into one `Findings` per note, and each note merges as if it had had its
own run (its own job id, provenance, coverage, run line, version swap and fingerprint).

Units: tokens are the server's estimate (`core/library/coverage.py: estimate_tokens`, characters / 4).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from server.core.contracts.graph import FindingChain, FindingProposition, Findings, PackedFindings
from server.core.library.graph import findings_problems
from server.core.library.note_blocks import note_blocks

PACK_BUDGET = 8_192
"""Note tokens one pack holds at most (the default chunk budget: the model reads, and answers for,
no more than it does for one ordinary chunk)."""
PACK_NOTE_TOKENS = 1_024
"""A note is packed only when it is this small or smaller ("far below the budget"): a larger one
pays its instructions well enough alone."""
PACK_MAX_NOTES = 40
"""Notes one pack holds at most (the model keeps the notes apart; an answer names each)."""


@dataclass(frozen=True)
class PackNote:
    """One member of a pack: its source id (`src_...`), its title and the text the model reads."""

    source: str
    title: str
    text: str


def packable(tokens: int, note_tokens: int = PACK_NOTE_TOKENS) -> bool:
    """Whether a one-chunk note of `tokens` tokens is small enough to share a call."""
    return 0 < tokens <= note_tokens


def take_pack(sizes: Iterable[int | None], budget: int = PACK_BUDGET, max_notes: int = PACK_MAX_NOTES) -> int:
    """How many of the queued runs, from the front, form one pack: the leading runs that are
    packable (`sizes`: each run's note tokens, None for a run that is not packable), while their
    tokens sum to at most `budget` and there are at most `max_notes` of them. Order is kept: the
    pack stops at the first run that is not packable or would overflow. Returns 0 when the first
    run is not packable, else at least 1 (a first run alone is never refused)."""
    taken = total = 0
    for size in sizes:
        if size is None or taken >= max_notes or (taken and total + size > budget):
            break
        taken += 1
        total += size
    return taken


def _neutral(text: str) -> str:
    """A note's text with any `<note` / `</note` of its own defused, so no note can open or
    close another's section."""
    return text.replace("</note", "<\u2215note").replace("<note", "\u2039note")


def _closed(text: str) -> str:
    """A note's text with a fenced code block it leaves open closed at its end (issue 28, item 9):
    an unclosed fence runs to the end of its note, never into the next note's section."""
    lines = text.rstrip("\n").split("\n")
    blocks = note_blocks(lines)
    if blocks and blocks[-1].kind == "code" and not blocks[-1].closed:
        return "\n".join([*lines, blocks[-1].closer])
    return text


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", " ")


def pack_prompt(notes: Sequence[PackNote]) -> str:
    """The extractor's user prompt for a pack: one `<note id="..." title="...">` section per
    note, in order; a code fence a note leaves open is closed inside its own section."""
    parts = ["THE NOTES (separate files; name each finding's note by its id):"]
    for note in notes:
        parts.append(
            f'<note id="{_attribute(note.source)}" title="{_attribute(note.title)}">\n'
            f"{_closed(_neutral(note.text).strip())}\n</note>"
        )
    return "\n\n".join(parts)


def pack_problems(
    packed: PackedFindings, notes: Collection[str], existing: Mapping[str, object]
) -> list[str]:
    """What is wrong with a packed submit, as sentences the extractor can act on (empty:
    acceptable). Laws: every proposition and chain names one of the pack's notes; ids are unique
    across the submit; a chain's premises and conclusion are propositions of its own note or
    existing `n_` ids; and each note's part obeys the chain laws (`findings_problems`)."""
    problems: list[str] = []
    known = sorted(notes)
    listed = ", ".join(known)
    named: list[tuple[str, int, str]] = [
        ("propositions", i, p.note) for i, p in enumerate(packed.propositions)
    ]
    named += [("chains", i, c.note) for i, c in enumerate(packed.chains)]
    for kind, index, note in named:
        if note not in notes:
            problems.append(
                f"{kind}[{index}] names note {note!r}, which is not one of the notes given "
                f"({listed}); use the id of the <note> section it comes from"
            )
    ids = [p.id for p in packed.propositions]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"proposition ids must be unique across all notes; repeated: {', '.join(dupes)}")
    note_of = {p.id: p.note for p in packed.propositions}
    for index, chain in enumerate(packed.chains):
        elsewhere = sorted(
            {e for e in [*chain.premises, chain.conclusion] if e in note_of and note_of[e] != chain.note}
        )
        if elsewhere:
            problems.append(
                f"chains[{index}] of note {chain.note} uses {', '.join(elsewhere)} from another note; "
                "a chain links propositions of one note only"
            )
    if problems:
        return problems
    for source, findings in split_pack(packed, known).items():
        problems += [f"note {source}: {p}" for p in findings_problems(findings, existing)]
    return problems


def split_pack(packed: PackedFindings, notes: Sequence[str]) -> dict[str, Findings]:
    """One `Findings` per note (every note of `notes`, in that order; a note the model said
    nothing about gets empty lists), each proposition and chain in its submitted order.
    Findings naming a note not in `notes` are left out (`pack_problems` refuses them first)."""
    split: dict[str, tuple[list[FindingProposition], list[FindingChain]]] = {n: ([], []) for n in notes}
    for prop in packed.propositions:
        if prop.note in split:
            split[prop.note][0].append(FindingProposition.model_validate(prop.model_dump(exclude={"note"})))
    for chain in packed.chains:
        if chain.note in split:
            split[chain.note][1].append(FindingChain.model_validate(chain.model_dump(exclude={"note"})))
    return {n: Findings(propositions=props, chains=chains) for n, (props, chains) in split.items()}


def shares(total: int, weights: Sequence[int]) -> list[int]:
    """`total` split in proportion to `weights` (largest remainder; the shares sum to `total`).
    A pack's usage is charged to its notes by their tokens. All-zero weights split evenly."""
    if not weights:
        return []
    weights = [max(0, w) for w in weights]
    if not any(weights):
        weights = [1] * len(weights)
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    out = [int(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out
