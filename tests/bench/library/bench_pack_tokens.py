"""Benchmark (issue 16 item 5, decision 0023): model tokens per source token of the synthetic
1,200-note vault (`bench_vault.write_vault`), in-process, with packing on and off.

Run: `.venv/bin/python -m tests.bench.library.bench_pack_tokens [notes] [pack budget, 0 = off]`.
The notes door, the pipeline and the ledgers are real (a tmp dir); the model is a pydantic-ai
FunctionModel answering what `tests/scripts/library.py` answers over HTTP (`PLAIN`). Each
request is counted as `bench_vault` counts it at the stub (characters / 4 over the instructions,
every message part and the tool schemas; plus the answer's tool call), approximately: the OpenAI
wire's envelope is not there. No embedder (the auditor's candidates are lexical only, so fewer
than with the server's embedder: `bench_vault` is the figure of record). Much cheaper than
`bench_vault` (no server, no HTTP, no embedder): minutes, not tens of minutes, on a loaded machine.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.core.contracts.models import ResolvedModel, Settings
from server.core.fanout import FanOut
from server.core.tokens import estimate_tokens
from server.services.library.extraction import ExtractionService
from server.services.library.library import LibraryService
from server.store.library.graph import FileGraphStore
from tests.bench.library.bench_vault import write_vault
from tests.fakes import FakeChatStore, FakeIntakeStore, FakeSettingsStore
from tests.scripts.library import PLAIN
from tests.scripts.serving import ask_of_messages


class Counter:
    def __init__(self) -> None:
        self.kinds: dict[str, list[int]] = {}
        self.answered = 0

    def model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = [
            {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
            for t in [*info.function_tools, *info.output_tools]
        ]
        parts: list[Any] = [info.instructions or ""]
        for message in messages:
            for part in message.parts:
                parts.append(getattr(part, "content", None) or getattr(part, "args", None))
        user = "\n".join(
            str(getattr(p, "content", "")) for m in messages if isinstance(m, ModelRequest) for p in m.parts
        )
        said = PLAIN(ask_of_messages(messages, info))
        assert said.tool is not None
        sent = estimate_tokens(json.dumps(parts, ensure_ascii=False, default=str))
        sent += estimate_tokens(json.dumps(tools, ensure_ascii=False))
        self.answered += estimate_tokens(json.dumps(said.tool[1]))
        audit = any(t.name == "find" for t in info.function_tools)
        kind = "audit" if audit else "pack" if '<note id="' in user else "extract"
        self.kinds.setdefault(kind, []).append(sent)
        return ModelResponse(parts=[ToolCallPart("submit", json.dumps(said.tool[1]))])


async def run(notes: int, pack_budget: int | None) -> None:
    counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        files, source_tokens = write_vault(vault, notes)
        graph = FileGraphStore(Path(tmp) / "graph")
        model = FunctionModel(function=counter.model)
        resolved = ResolvedModel(
            provider="openai-compatible", model="scripted", base_url="http://127.0.0.1:9/v1"
        )

        async def model_for() -> tuple[ResolvedModel, FunctionModel]:
            return resolved, model

        extraction = ExtractionService(graph, model_for, fanout=FanOut({}))
        if pack_budget is not None:
            extraction.pack_budget = pack_budget
        library = LibraryService(
            graph, extraction, FakeSettingsStore(Settings()), chats=FakeChatStore(), intake=FakeIntakeStore()
        )
        items = [(str(p.relative_to(vault)), p.read_bytes()) for p in sorted(vault.rglob("*.md"))]
        start = time.perf_counter()
        library.import_files(items)
        await extraction.wait_all()
        wall = time.perf_counter() - start
    sent = sum(sum(v) for v in counter.kinds.values())
    requests = sum(len(v) for v in counter.kinds.values())
    print(
        f"vault: {files:,} files, {source_tokens:,} source tokens; pack budget "
        f"{extraction.pack_budget:,}; {requests:,} requests in {wall:.0f} s"
    )
    print(
        f"{sent:,} tokens sent + {counter.answered:,} answered: "
        f"{(sent + counter.answered) / source_tokens:.2f} model tokens per source token"
    )
    for kind, sizes in sorted(counter.kinds.items()):
        print(
            f"  {kind}: {len(sizes):,} requests, {sum(sizes):,} tokens sent "
            f"(median {statistics.median(sizes):,.0f}, max {max(sizes):,})"
        )


if __name__ == "__main__":
    asyncio.run(
        run(
            int(sys.argv[1]) if len(sys.argv) > 1 else 1_200,
            int(sys.argv[2]) if len(sys.argv) > 2 else None,
        )
    )
