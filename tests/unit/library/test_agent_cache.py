"""Extraction agents are built once per model and shared (issue 16: building one cost ≈ 20 ms on
the event loop per job). A shared extractor still judges each run's submit against that run's own
graph (its deps), never another job's."""

from __future__ import annotations

import asyncio

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from server.agent.library.auditor import build_auditor
from server.agent.library.extraction import build_extractor, build_pack_extractor, run_extractor

SUBMIT = {
    "propositions": [{"id": "p1", "name": "Heap", "statement": "A heap keeps its minimum at the root."}],
    "chains": [{"premises": ["n_known"], "conclusion": "p1"}],
}


def test_an_agent_is_built_once_per_model_door_and_cap() -> None:
    model, other = TestModel(), TestModel()
    first = build_extractor(model, kind="notes", existing={})
    assert build_extractor(model, kind="notes", existing={"n_a": 1}).agent is first.agent
    assert build_extractor(model, kind="chat", existing={}).agent is not first.agent
    assert build_extractor(model, kind="notes", existing={}, max_tokens=512).agent is not first.agent
    assert build_extractor(other, kind="notes", existing={}).agent is not first.agent
    assert build_auditor(model) is build_auditor(model)
    pack = build_pack_extractor(model, notes=["src_a"], existing={})
    again = build_pack_extractor(model, notes=["src_b"], existing={"n_a": 1})
    assert again.agent is pack.agent and again.deps.notes == ["src_b"]  # the pack's own deps
    assert pack.agent is not first.agent
    assert build_pack_extractor(other, notes=["src_a"], existing={}).agent is not pack.agent
    assert build_auditor(model) is not build_auditor(other)


def test_a_shared_extractor_judges_each_run_against_its_own_graph() -> None:
    """Two concurrent runs of one agent: the run whose graph holds n_known accepts the submit at
    once; the run whose graph lacks it refuses it (the chain names an unknown id) every turn."""
    turns: dict[str, int] = {}

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
        turns[prompt] = turns.get(prompt, 0) + 1
        return ModelResponse(parts=[ToolCallPart("submit", SUBMIT)])

    model = FunctionModel(answer)

    async def run(existing: dict[str, object], prompt: str) -> object:
        try:
            return await run_extractor(
                build_extractor(model, kind="notes", existing=existing), prompt, RunUsage()
            )
        except Exception as exc:  # the refused run ends once its turns are spent
            return exc

    async def both() -> tuple[object, object]:
        return await asyncio.gather(run({"n_known": object()}, "knows"), run({}, "lacks"))

    knows, lacks = asyncio.run(both())
    assert not isinstance(knows, Exception), knows
    assert turns["knows"] == 1
    assert isinstance(lacks, Exception)
    assert turns["lacks"] > 1  # refused and asked again
