"""The `tool_choice` the offline model's chat format accepts (trial finding 1): llama-cpp-python's
`chatml-function-calling` asserts "auto" (or "none", or one named function) and answered HTTP 500 to
the "required" pydantic-ai sends for structured output, so every note import failed."""

from __future__ import annotations

from typing import Any

import httpx2
import orjson
import pytest

from server.agent.machine_room.engine import LlamaCppCompatTransport, llama_tool_choice
from server.core.contracts.models import ModelCallSettings


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def named(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


@pytest.mark.parametrize(
    ("choice", "tools", "wire"),
    [
        # structured output with one output tool (extraction's submit, the auditor, practice,
        # naming, summaries): "must call a tool" is that tool, named
        ("required", [tool("final_result")], named("final_result")),
        # output tool beside function tools: the format cannot force "some tool"; the model chooses
        ("required", [tool("read_note"), tool("final_result")], "auto"),
        # the lesson's forced tool (OfflineTuning.force_tool) is already named: unchanged
        (named("ask_user_question"), [tool("ask_user_question"), tool("quiz")], named("ask_user_question")),
        # OpenAI's allowed_tools form: one allowed tool is named, several become "auto"
        (
            {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [named("quiz")]}},
            [tool("quiz"), tool("probe_done")],
            named("quiz"),
        ),
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "required", "tools": [named("a"), named("b")]},
            },
            [tool("a"), tool("b"), tool("c")],
            "auto",
        ),
        ("auto", [tool("a")], "auto"),
        ("none", [tool("a")], "none"),
    ],
)
def test_the_wire_tool_choice_per_role(choice: Any, tools: list[Any], wire: Any) -> None:
    assert llama_tool_choice(choice, tools) == wire


def test_the_transport_rewrites_the_body() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [tool("submit")],
            "tool_choice": "required"}  # fmt: skip
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions", content=orjson.dumps(body))
    sent = orjson.loads(LlamaCppCompatTransport(ModelCallSettings()).prepare(request).read())
    assert sent["tool_choice"] == named("submit")
    assert sent["tools"] == body["tools"] and sent["messages"] == body["messages"]
    plain = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions", content=orjson.dumps(plain))
    assert "tool_choice" not in orjson.loads(
        LlamaCppCompatTransport(ModelCallSettings()).prepare(request).read()
    )
