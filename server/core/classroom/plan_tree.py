"""Plan tree: a deterministic mermaid-subset parser, DAG validation, and derived statuses (seed §5).

The subset (one statement per line; blank lines and `%%` comments ignored):

    graph TD            (or: graph LR|TB|BT|RL, flowchart TD|...)  -- required first statement
    id[Label]           a node; also id["Label"], id(Label), id((Label)), id{Label}; a label
                        may hold `&`, `-->`, quotes, math and brackets that pair up
    a --> b             an edge, prerequisite -> dependent; either side may define its label
    a --> b --> c       a chain
    a & b --> c         several sources (or targets) at once

Ids are letters, digits and `_` (starting with a letter or `_`), at most 64 chars. Every error
names its line. Statuses are never stored: `derive_statuses` folds them from the transcript's
tagged quiz calls and the teacher's `plan_teach` calls (which name the node being taught).
Mirrored for the browser by `frontend/src/core/classroom/plan.ts`
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
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_SHAPES = (('["', '"]'), ("((", "))"), ("[", "]"), ("(", ")"), ("{", "}"))
"""Label delimiters, longest opener first: id["Label"], id((Label)), id[Label], id(Label), id{Label}."""


class PlanError(ValueError):
    """An unparseable or invalid plan; the message names the line and the fix."""


def _label_end(line: str, start: int, line_no: int) -> int:
    """Index just past the label that opens at `start` (an opener of `_SHAPES`). Inside a label
    anything goes (`&`, `-->`, quotes, math); bracketed labels nest, a quoted one ends at `"]`."""
    opener, closer = next((o, c) for o, c in _SHAPES if line.startswith(o, start))
    if opener == '["':
        end = line.find('"]', start + 2)
        if end < 0:
            raise PlanError(f'line {line_no}: a label opened with [" is not closed with "]')
        return end + 2
    single_open, single_close = opener[0], closer[0]
    depth, i = 0, start
    while i < len(line):
        if line[i] == single_open:
            depth += 1
        elif line[i] == single_close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise PlanError(f"line {line_no}: a label opened with {opener} is not closed with {closer}")


def _statement(line: str, line_no: int) -> list[list[str]]:
    """Split a statement at the `-->` and `&` outside labels: groups of node texts.

    Raises PlanError for an arrow other than `-->` outside a label."""
    groups: list[list[str]] = [[]]
    current = ""
    i = 0
    while i < len(line):
        if line[i] in "[({" and current.strip():
            end = _label_end(line, i, line_no)
            current += line[i:end]
            i = end
            continue
        if line.startswith("-->", i):
            groups[-1].append(current)
            groups.append([])
            current = ""
            i += 3
            continue
        if line.startswith("--", i) or line.startswith("->", i) or line.startswith("==>", i):
            raise PlanError(f"line {line_no}: only '-->' arrows are supported, got '{line}'")
        if line[i] == "&":
            groups[-1].append(current)
            current = ""
            i += 1
            continue
        current += line[i]
        i += 1
    groups[-1].append(current)
    return groups


def _node(text: str, line_no: int) -> tuple[str, str | None]:
    """(id, label or None) of a node text such as `deriv[Derivative]` or `b["f(x) = x^2"]`."""
    text = text.strip()
    match = _ID.match(text)
    rest = text[match.end() :].strip() if match else text
    label: str | None = None
    if match and rest:
        shape = next(((o, c) for o, c in _SHAPES if rest.startswith(o) and rest.endswith(c)), None)
        if shape is not None and len(rest) >= len(shape[0]) + len(shape[1]):
            label = rest[len(shape[0]) : len(rest) - len(shape[1])]
            rest = ""
    if not match or rest:
        raise PlanError(
            f"line {line_no}: '{text}' is not a node; write id[Label] with an id of letters, "
            "digits or _ (e.g. deriv[Derivative])"
        )
    if label is not None:
        label = label.strip()
        if not label:
            raise PlanError(f"line {line_no}: node '{match.group(0)}' has an empty label")
    return match.group(0), label


def _without_comment(raw: str) -> str:
    """The line without a `%%` comment (one outside labels), without a trailing `;`."""
    line = raw
    i = 0
    while i < len(line):
        if line.startswith("%%", i):
            line = line[:i]
            break
        if line[i] in "[({" and line[:i].strip() and not line[:i].rstrip().endswith(("-->", "&")):
            try:
                i = _label_end(line, i, 0)
                continue
            except PlanError:
                break
        i += 1
    return line.strip().rstrip(";").strip()


def parse_plan(title: str, source: str) -> PlanTree:
    """Parse and validate a plan.

    Args:
        title: the plan's title.
        source: the mermaid-subset text. A label may hold anything but its own closing delimiter
            (`&`, `-->`, quotes, brackets that pair up, math): `a[Limits & continuity]`,
            `b["f(x) = x^2"]`.

    Returns:
        The PlanTree (nodes in order of first appearance, edges deduplicated).

    Raises:
        PlanError: a line that does not parse, a node labelled twice differently, no nodes,
            more than 40 nodes (naming the line of the 41st), a self-loop, or a cycle (naming the
            cycle and the line of each of its arrows).
    """
    labels: dict[str, str | None] = {}
    order: list[str] = []
    declared_on: dict[str, int] = {}
    edges: list[tuple[str, str]] = []
    edge_line: dict[tuple[str, str], int] = {}
    header_seen = False

    def declare(node_id: str, label: str | None, line_no: int) -> None:
        if node_id not in labels:
            order.append(node_id)
            labels[node_id] = label
            declared_on[node_id] = line_no
        elif label is not None:
            if labels[node_id] is not None and labels[node_id] != label:
                raise PlanError(
                    f"line {line_no}: node '{node_id}' is labelled '{label}' here but "
                    f"'{labels[node_id]}' before; give each node one label"
                )
            labels[node_id] = label

    for line_no, raw in enumerate(source.splitlines(), start=1):
        line = _without_comment(raw)
        if not line:
            continue
        if not header_seen:
            if not _HEADER.match(line):
                raise PlanError(f"line {line_no}: a plan starts with 'graph TD' (or LR/BT/RL), got '{line}'")
            header_seen = True
            continue
        groups = _statement(line, line_no)
        if len(groups) > 1 and any(not part.strip() for group in groups for part in group):
            raise PlanError(f"line {line_no}: an arrow needs a node on both sides ('a --> b')")
        parsed: list[list[str]] = []
        for group in groups:
            ids = []
            for part in group:
                node_id, label = _node(part, line_no)
                declare(node_id, label, line_no)
                ids.append(node_id)
            parsed.append(ids)
        for sources, targets in itertools.pairwise(parsed):
            for a in sources:
                for b in targets:
                    if a == b:
                        raise PlanError(f"line {line_no}: '{a} --> {a}' points a node at itself")
                    if (a, b) not in edge_line:
                        edges.append((a, b))
                        edge_line[(a, b)] = line_no

    if not header_seen:
        raise PlanError("line 1: the plan is empty; start with 'graph TD' and list its nodes")
    if not order:
        raise PlanError("the plan has no nodes; add at least one, e.g. 'deriv[Derivative]'")
    if len(order) > MAX_NODES:
        extra = order[MAX_NODES]
        raise PlanError(
            f"line {declared_on[extra]}: node '{extra}' is node {MAX_NODES + 1}; the plan has "
            f"{len(order)} nodes, keep it to at most {MAX_NODES}"
        )
    graph = nx.DiGraph()
    graph.add_nodes_from(order)
    graph.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = list(nx.find_cycle(graph))
        lines = sorted({edge_line[(a, b)] for a, b in cycle})
        where = ", ".join(str(n) for n in lines)
        raise PlanError(
            f"line{'s' if len(lines) > 1 else ''} {where}: the plan has a cycle: "
            + " --> ".join([*(a for a, _ in cycle), cycle[0][0]])
            + "; a plan must be acyclic, remove one of these arrows"
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
    """Node statuses from the transcript's node tags (never stored).

    A tag is a quiz call's `node` (any state: asked counts) or a successful `plan_teach` call's
    `node` (the teacher saying which node it is teaching). The node of the latest tag is
    `current`; every other tagged node is `visited`; the rest are `upcoming`. Tags that name no
    plan node are ignored.
    """
    known = {node.id for node in plan.nodes}
    touched: list[str] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for part in message.get("parts", []):
            kind = part.get("type")
            if kind == "tool-plan_teach" and part.get("state") != "output-available":
                continue
            if kind not in ("tool-quiz", "tool-plan_teach"):
                continue
            node = part.get("input", {}).get("node") if isinstance(part.get("input"), dict) else None
            if isinstance(node, str) and node in known:
                touched.append(node)
    statuses: dict[str, PlanStatus] = {node.id: "upcoming" for node in plan.nodes}
    for node in touched:
        statuses[node] = "visited"
    if touched:
        statuses[touched[-1]] = "current"
    return statuses
