"""The engine's SDK client sends chat messages untransformed (issue 15): the request body is the
one the plain openai SDK sends, byte for byte, and a caller's `extra_body` is kept."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import orjson
from openai import AsyncOpenAI

from server.agent.machine_room.engine import _openai_client

COMPLETION = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You teach."},
    {"role": "user", "content": [{"type": "text", "text": "Teach me $x^2$"}]},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "and this"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "auto"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "quiz", "arguments": '{"q": "é\\n"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"kind": "quiz", "chosen": 1}'},
    {"role": "assistant", "content": "Right: ünïcødé, 2x."},
]
TOOLS = [
    {"type": "function", "function": {"name": "quiz", "parameters": {"type": "object", "properties": {}}}}
]


def sent_body(client_for: Any, **extra: Any) -> bytes:
    seen: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.read())
        return httpx2.Response(200, json=COMPLETION)

    async def go() -> None:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
            client = client_for(http)
            await client.chat.completions.create(
                model="m", messages=MESSAGES, tools=TOOLS, temperature=0.2, **extra
            )
            await client.with_options(max_retries=1).chat.completions.create(
                model="m", messages=iter(MESSAGES), tools=TOOLS, temperature=0.2, **extra
            )

    asyncio.run(go())
    assert len(seen) == 2 and seen[0] == seen[1]
    return seen[0]


def plain(http: httpx2.AsyncClient) -> AsyncOpenAI:
    return AsyncOpenAI(base_url="http://stub/v1", api_key="k", http_client=http, max_retries=0)


def ours(http: httpx2.AsyncClient) -> AsyncOpenAI:
    return _openai_client("http://stub/v1", "k", http)


def test_the_request_body_is_the_plain_sdks_byte_for_byte() -> None:
    body = sent_body(ours)
    assert body == sent_body(plain)
    assert orjson.loads(body)["messages"] == MESSAGES


def test_a_callers_extra_body_is_kept() -> None:
    body = sent_body(ours, extra_body={"thinking": False})
    assert body == sent_body(plain, extra_body={"thinking": False})
    assert orjson.loads(body)["thinking"] is False


def test_the_messages_skip_the_sdks_request_transform(monkeypatch) -> None:
    import openai.resources.chat.completions.completions as completions

    walked: list[Any] = []
    real = completions.async_maybe_transform

    async def recording(data: Any, *args: Any, **kwargs: Any) -> Any:
        walked.append(data.get("messages") if isinstance(data, dict) else data)
        return await real(data, *args, **kwargs)

    monkeypatch.setattr(completions, "async_maybe_transform", recording)
    sent_body(ours)
    assert walked and all(messages == [] for messages in walked)
    walked.clear()
    sent_body(plain)
    assert walked and all(messages for messages in walked)  # the plain SDK walks them
