"""A scripted extractor and auditor (pydantic-ai FunctionModel), deterministic in their input.

Extractor: names up to three propositions after the source's first headings or lines, chains them
`p1 ⟹ p2`, `p2 ⟹ p3` and the redundant `p1 ∧ p2 ⟹ p3` (simplification must drop it), and, from a
source's second stretch on, leans on the first existing id of THE GRAPH SO FAR. Its very first
submit in a conversation refers to a missing id, so the chain laws must send it back once.
Auditor: links a proposition to a candidate with exactly the same name.
"""

from __future__ import annotations

import json
import re

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo


def _prompt(messages: list[ModelMessage]) -> str:
    return "\n".join(
        str(p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )


def _retried(messages: list[ModelMessage]) -> bool:
    return any(
        isinstance(p, ToolReturnPart) and p.outcome == "retried"
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
    )


def _names(source: str) -> list[str]:
    lines = [re.sub(r"^[#>*\-\s]+", "", line).strip() for line in source.splitlines()]
    seen: list[str] = []
    for line in lines:
        name = line[:60]
        if len(name) > 3 and name not in seen:
            seen.append(name)
        if len(seen) == 3:
            break
    return seen


def extract(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = _prompt(messages)
    source = prompt.split("THE SOURCE:\n", 1)[-1]
    names = _names(source) or ["Untitled idea"]
    props = [
        {"id": f"p{i + 1}", "name": n, "statement": f"{n} is a claim of this source."}
        for i, n in enumerate(names)
    ]
    chains = []
    if len(props) >= 2:
        chains.append({"premises": ["p1"], "conclusion": "p2"})
    if len(props) >= 3:
        chains += [{"premises": ["p2"], "conclusion": "p3"}, {"premises": ["p1", "p2"], "conclusion": "p3"}]
    existing = re.search(r"^- (n_[0-9a-f]{16}):", prompt, re.M)
    if existing and len(props) >= 2:
        chains.append({"premises": [existing.group(1)], "conclusion": "p1"})
    if not _retried(messages):
        chains.append({"premises": ["p99"], "conclusion": "p1"})  # refused: p99 does not exist
    return ModelResponse(
        parts=[ToolCallPart("submit", json.dumps({"propositions": props, "chains": chains}))]
    )


def audit(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = _prompt(messages)
    links = []
    current = None
    for line in prompt.splitlines():
        head = re.match(r"^- (p\d+): (.*?) — ", line)
        if head:
            current = head.groups()
            continue
        cand = re.match(r"^\s+candidate (n_[0-9a-f]+): (.*?) — ", line)
        if (
            cand
            and current
            and cand.group(2) == current[1]
            and not any(link["finding"] == current[0] for link in links)
        ):
            links.append({"finding": current[0], "node": cand.group(1)})
    return ModelResponse(parts=[ToolCallPart("submit", json.dumps({"links": links}))])


def graph_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if any(t.name == "find" for t in info.function_tools):
        return audit(messages, info)
    return extract(messages, info)
