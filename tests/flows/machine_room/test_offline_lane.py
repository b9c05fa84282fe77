"""The offline model answers one request at a time (llama.cpp's server, one slot), so the Library
sends it one at a time (`ExtractionService.offline_lane`): a new-user trial imported two notes on it,
four parts ran at once, queued inside the model, and two waited past the 2-minute first-token
deadline. A keyed model still gets parallel calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.core.contracts.models import ResolvedModel
from tests.flows.graph_pipeline import Pipeline

NOTES = {f"note{i}.md": f"# Topic {i} alpha\n# Topic {i} beta\n" for i in range(4)}


def _tracked(pipe: Pipeline, offline: bool) -> list[int]:
    """Route the pipeline's calls through a model that records how many are in flight at each
    call (each call holds the model for 50 ms, as a slow local model would)."""
    inflight = [0]
    seen: list[int] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> Any:
        inflight[0] += 1
        seen.append(inflight[0])
        try:
            await asyncio.sleep(0.05)
            return await pipe.script.model(messages, info)
        finally:
            inflight[0] -= 1

    resolved = (
        ResolvedModel(provider="local", model="SmolLM2-135M-Instruct", offline=True)
        if offline
        else ResolvedModel(provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1")
    )
    scripted = FunctionModel(function=model)

    async def model_for() -> tuple[ResolvedModel, FunctionModel]:
        return resolved, scripted

    pipe.extraction.model_for = model_for
    pipe.extraction.pack_budget = None  # one call per note (small notes would share one pack)
    return seen


@pytest.mark.parametrize("offline", [True, False])
def test_the_offline_model_gets_one_request_at_a_time(tmp_path: Path, offline: bool) -> None:
    pipe = Pipeline(tmp_path / "graph")
    seen = _tracked(pipe, offline)

    async def run() -> None:
        results = pipe.library.import_files([(name, text.encode()) for name, text in NOTES.items()])
        await asyncio.gather(*(pipe.extraction.wait(r.source) for r in results if r.source))

    asyncio.run(run())
    assert len(seen) >= len(NOTES)  # every note reached the model
    rows = [r for r in pipe.extraction.activity() if r.get("kind") != "import"]
    assert rows and all(r["phase"] == "done" for r in rows), rows
    if offline:
        assert max(seen) == 1, seen
    else:
        assert max(seen) > 1, seen  # the lane is the offline model's only
