"""Plan tree: a deterministic mermaid-subset parser, DAG validation, and derived statuses (seed §5).

The subset (one statement per line; blank lines and `%%` comments ignored):

    graph TD            (or: graph LR|TB|BT|RL, flowchart TD|...)  -- required first statement
    id[Label]           a node; also id["Label"], id(Label), id((Label)), id{Label}
    a --> b             an edge, prerequisite -> dependent; either side may define its label
    a --> b --> c       a chain
    a & b --> c         several sources (or targets) at once

Ids are letters, digits and `_` (starting with a letter or `_`), at most 64 chars. Every error
names its line. Statuses are never stored: `derive_statuses` folds them from the tagged quiz
calls of the transcript. Mirrored for the browser by `frontend/src/core/plan.ts`
(`tests/vectors/plan.json`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import networkx as nx

from server.core.contracts.plan import PlanNode, PlanStatus, PlanTree

MAX_NODES = 40
_HEADER = re.compile(r"^(graph|flowchart)\s+(TD|TB|LR|RL|BT)\s*;?$", re.IGNORECASE)
_ID = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
_NODE = re.compile(
    rf"^(?P<id>{_ID})\s*(?:"
    r"\[\"(?P<q>[^\"]*)\"\]|\[(?P<sq>[^\[\]\"]*)\]|\(\((?P<dp>[^()]*)\)\)|\((?P<p>[^()]*)\)|\{(?P<b>[^{}]*)\}"
    r")?$"
)
_ARROW = re.compile(r"\s*-->\s*")


class PlanError(ValueError):
    """An unparseable or invalid plan; the message names the line and the fix."""


def _node(text: str, line_no: int) -> tuple[str, str | None]:
    match = _NODE.match(text.strip())
    if not match:
        raise PlanError(
            f"line {line_no}: '{text.strip()}' is not a node; write id[Label] with an id of letters, "
            "digits or _ (e.g. deriv[Derivative])"
        )
    label = next((match.group(g) for g in ("q", "sq", "dp", "p", "b") if match.group(g) is not None), None)
    if label is not None:
        label = label.strip()
        if not label:
            raise PlanError(f"line {line_no}: node '{match.group('id')}' has an empty label")
    return match.group("id"), label


def parse_plan(title: str, source: str) -> PlanTree:
    """Parse and validate a plan.

    Args:
        title: the plan's title.
        source: the mermaid-subset text.

    Returns:
        The PlanTree (nodes in order of first appearance, edges deduplicated).

    Raises:
        PlanError: a line that does not parse, a node labelled twice differently, no nodes,
            more than 40 nodes, a self-loop, or a cycle (the message names the cycle).
    """
    labels: dict[str, str | None] = {}
    order: list[str] = []
    edges: list[tuple[str, str]] = []
    header_seen = False

    def declare(node_id: str, label: str | None, line_no: int) -> None:
        if node_id not in labels:
            order.append(node_id)
            labels[node_id] = label
        elif label is not None:
            if labels[node_id] is not None and labels[node_id] != label:
                raise PlanError(
                    f"line {line_no}: node '{node_id}' is labelled '{label}' here but "
                    f"'{labels[node_id]}' before; give each node one label"
                )
            labels[node_id] = label

    for line_no, raw in enumerate(source.splitlines(), start=1):
        line = raw.split("%%", 1)[0].strip().rstrip(";").strip()
        if not line:
            continue
        if not header_seen:
            if not _HEADER.match(line):
                raise PlanError(f"line {line_no}: a plan starts with 'graph TD' (or LR/BT/RL), got '{line}'")
            header_seen = True
            continue
        if "-->" in line:
            groups = _ARROW.split(line)
            if any(not g.strip() for g in groups):
                raise PlanError(f"line {line_no}: an arrow needs a node on both sides ('a --> b')")
            parsed: list[list[str]] = []
            for group in groups:
                ids = []
                for part in group.split("&"):
                    node_id, label = _node(part, line_no)
                    declare(node_id, label, line_no)
                    ids.append(node_id)
                parsed.append(ids)
            for sources, targets in itertools.pairwise(parsed):
                for a in sources:
                    for b in targets:
                        if a == b:
                            raise PlanError(f"line {line_no}: '{a} --> {a}' points a node at itself")
                        if (a, b) not in edges:
                            edges.append((a, b))
        elif "--" in line or "->" in line:
            raise PlanError(f"line {line_no}: only '-->' arrows are supported, got '{line}'")
        else:
            node_id, label = _node(line, line_no)
            declare(node_id, label, line_no)

    if not header_seen:
        raise PlanError("line 1: the plan is empty; start with 'graph TD' and list its nodes")
    if not order:
        raise PlanError("the plan has no nodes; add at least one, e.g. 'deriv[Derivative]'")
    if len(order) > MAX_NODES:
        raise PlanError(f"the plan has {len(order)} nodes; keep it to at most {MAX_NODES}")
    graph = nx.DiGraph()
    graph.add_nodes_from(order)
    graph.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = [a for a, _ in nx.find_cycle(graph)]
        raise PlanError(
            "the plan has a cycle: " + " --> ".join([*cycle, cycle[0]]) + "; a plan must be acyclic"
        )
    nodes = [PlanNode(id=n, label=labels[n] or n) for n in order]
    return PlanTree(title=title.strip(), nodes=nodes, edges=edges)


def _tool_parts(messages: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [
        part
        for message in messages
        if message.get("role") == "assistant"
        for part in message.get("parts", [])
        if part.get("type") == f"tool-{tool}"
    ]


def plan_of(messages: list[dict[str, Any]]) -> PlanTree | None:
    """The session's plan: the first successful `plan_init` result in the transcript, or None."""
    for part in _tool_parts(messages, "plan_init"):
        output = part.get("output")
        if part.get("state") == "output-available" and isinstance(output, dict) and "plan" in output:
            try:
                return PlanTree.model_validate(output["plan"])
            except ValueError:
                continue
    return None


def derive_statuses(plan: PlanTree, messages: list[dict[str, Any]]) -> dict[str, PlanStatus]:
    """Node statuses from the tagged quiz calls (never stored).

    The node of the latest quiz call tagged with a plan node is `current`; every other node that
    a tagged quiz has touched is `visited`; the rest are `upcoming`. Tags that name no plan node
    are ignored.
    """
    known = {node.id for node in plan.nodes}
    touched: list[str] = []
    for part in _tool_parts(messages, "quiz"):
        node = part.get("input", {}).get("node") if isinstance(part.get("input"), dict) else None
        if isinstance(node, str) and node in known:
            touched.append(node)
    statuses: dict[str, PlanStatus] = {node.id: "upcoming" for node in plan.nodes}
    for node in touched:
        statuses[node] = "visited"
    if touched:
        statuses[touched[-1]] = "current"
    return statuses
