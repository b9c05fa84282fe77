"""A scripted partitioner, generator and grader (pydantic-ai FunctionModel), told apart by their
prompts, deterministic in their input, with switches that make them misbehave the ways a real
model does (issue 13, bad input).

Partitioner: one group per chain, in the listed order; `partition_first` makes its first submit
duplicate a chain ("duplicate") or drop one ("drop"), so the partition law sends it back;
`partition_always` makes every submit do so (the run fails after 4 turns); `partition_gate`, when
set, is awaited before it answers.
Generator: echoes its target; `echo_first_wrong` makes the first submit echo one id too many;
`rubric_first_missing` makes the first submit leave the rubric out (the schema sends it back);
a target whose chains mention a proposition named in `fail_names` raises (that problem errors).
Grader: `grade_first` is submitted first (e.g. "8/10" or 11: refused by the schema), then
`score`; its first `grade_prose` turns are prose with no submit at all (a large number: it never
submits). `gate` / `gen_gate`, when set, are awaited before a grader / generator answers.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from tests.flows.graph_script import _prompt as prompt_of


def retried(messages: list[ModelMessage]) -> bool:
    """Whether a submit of this conversation was already refused (sent back to the model)."""
    return any(
        isinstance(p, RetryPromptPart) or (isinstance(p, ToolReturnPart) and p.outcome == "retried")
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
    )


def turns(messages: list[ModelMessage]) -> int:
    """Which model turn of its conversation this request is (1 for the first)."""
    return sum(isinstance(m, ModelRequest) for m in messages)


def is_practice(prompt: str) -> bool:
    return prompt.startswith(("THE LEVELS OF THIS SET:", "THE PROBLEM:"))


def _ids(section: str) -> list[str]:
    return re.findall(r"^- ((?:arg|single)_[A-Za-z0-9_]+):", section, re.M)


@dataclass
class PracticeScript:
    partition_first: str | None = None
    partition_always: str | None = None
    partition_gate: asyncio.Event | None = None
    echo_first_wrong: bool = False
    rubric_first_missing: bool = False
    fail_names: set[str] = field(default_factory=set)
    grade_first: Any = None
    grade_prose: int = 0
    score: int = 8
    gate: asyncio.Event | None = None
    gen_gate: asyncio.Event | None = None
    prompts: list[str] = field(default_factory=list)

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = prompt_of(messages)
        self.prompts.append(prompt)
        if prompt.startswith("THE PROBLEM:"):
            if self.gate is not None:
                await self.gate.wait()
            if turns(messages) <= self.grade_prose:
                return ModelResponse(parts=[TextPart("I would give this answer a solid 7 out of 10.")])
            value = self.grade_first if self.grade_first is not None and not retried(messages) else self.score
            return submit(
                {"score": value, "comment": "You used the right proposition; one step lacked its reason."}
            )
        if "YOUR TARGET" in prompt:
            target_section = prompt.split("YOUR TARGET", 1)[1].split("THE FULL SET", 1)[0]
            target = _ids(target_section)
            if self.gen_gate is not None:
                await self.gen_gate.wait()
            if any(name in target_section for name in self.fail_names):
                raise RuntimeError("the model broke down on this problem")
            ids = list(target)
            if self.echo_first_wrong and not retried(messages):
                ids = [*ids, "arg_not_yours"]
            problem = {
                "chainIds": ids,
                "title": f"Problem on {len(target)} chain(s)",
                "statement": "A binary heap holds $n$ keys. Which key sits at the root, and why?",
                "solution": "Heap order puts every parent at most its children: the minimum is the root.",
                "rubric": "- names the heap order\n- concludes the minimum is at the root",
            }
            if self.rubric_first_missing and not retried(messages):
                del problem["rubric"]
            return submit(problem)
        if self.partition_gate is not None:
            await self.partition_gate.wait()
        chains = _ids(prompt.split("THE CHAINS", 1)[1].split("THE PROPOSITIONS", 1)[0])
        groups = [[c] for c in chains]
        mistake = self.partition_always or (None if retried(messages) else self.partition_first)
        if mistake == "duplicate" and len(chains) > 1:
            groups[0] = [chains[0], chains[1]]
        if mistake == "drop" and len(chains) > 1:
            groups = groups[1:]
        return submit({"groups": [{"chainIds": g, "title": f"Group {i}"} for i, g in enumerate(groups, 1)]})


def submit(args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("submit", json.dumps(args))])
