"""What a scripted model sees and says, and its two servings: in-process and over HTTP.

A script is written once, as a function of an `Ask` (what the request shows: the instructions,
the tools offered, the learner's or the service's prompt, the tool results so far) returning a
`Reply` (some text, then at most one tool call; or a provider's refusal). It may be a coroutine
function (a script that waits on a gate) and may raise (a model that breaks down).

- In-process: `whole(script)` / `streamed(script)` are pydantic-ai `FunctionModel` functions
  (`FunctionModel(function=whole(s), stream_function=streamed(s))`); `ask_of_messages` reads the
  pydantic-ai history, `response(reply)` is a reply as one whole answer.
- Over HTTP: `over_http(script)` is the body -> `Reply` callable `tests/stub_openai.py: create_stub`
  serves as OpenAI chat-completions JSON or SSE; `ask_of_body` reads the request body.

The two readings agree on what a script looks at; where the wire says less than the history (a
tool result's outcome), `ask_of_body` reads it from the text as a model would.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall


@dataclass
class Reply:
    """What the scripted model says: some text, then optionally one tool call (name, args, id)."""

    text: str = ""
    tool: tuple[str, dict[str, Any], str] | None = None
    status: int | None = None
    """When set, the request is refused with this HTTP status (over HTTP: a provider's error body;
    in-process: pydantic-ai's `ModelHTTPError`, what its OpenAI model raises for one)."""
    usage: bool = True
    """False: the stream carries no usage (providers that do not report tokens; HTTP only, an
    in-process `FunctionModel` always estimates its usage)."""


@dataclass(frozen=True)
class Result:
    """One tool result the request's history holds: the tool's name ("" for a retry prompt not
    tied to a tool), its content (in-process: as returned; over HTTP: the message text) and its
    outcome: "success", "retried" (sent back to the model), "failed", "interrupted" or "denied"."""

    tool: str
    content: Any
    outcome: str


@dataclass(frozen=True)
class Ask:
    """What one request to the model shows.

    instructions: the system instructions (system messages), joined.
    tools: the names of every tool offered (function and output tools).
    prompt: the user prompts' texts, joined by newlines (extraction and practice send one).
    results: the tool results of the history, in order.
    turn: which model request of its conversation this is (1 for the first).
    """

    instructions: str
    tools: frozenset[str]
    prompt: str
    results: tuple[Result, ...]
    turn: int

    def answers(self, tool: str) -> list[Any]:
        """The contents of `tool`'s successful results, in order."""
        return [r.content for r in self.results if r.tool == tool and r.outcome == "success"]

    def answered(self, tool: str) -> bool:
        return bool(self.answers(tool))

    def sent_back(self, tool: str | None = None) -> bool:
        """Whether a call (of `tool`; None: of anything) came back without success."""
        return any(r.outcome != "success" and (tool is None or r.tool == tool) for r in self.results)


Script = Callable[[Ask], Reply | Awaitable[Reply]]
R = TypeVar("R", Reply, Reply | Awaitable[Reply])


async def answer(script: Script, ask: Ask) -> Reply:
    said = script(ask)
    if inspect.isawaitable(said):
        said = await said
    return said


# --- in-process: pydantic-ai FunctionModel -------------------------------------------------------


def ask_of_messages(messages: list[ModelMessage], info: AgentInfo) -> Ask:
    results: list[Result] = []
    prompts: list[str] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                prompts.append(str(part.content))
            elif isinstance(part, ToolReturnPart):
                results.append(Result(part.tool_name, part.content, part.outcome))
            elif isinstance(part, RetryPromptPart):
                results.append(Result(part.tool_name or "", part.content, "retried"))
    tools = [t.name for t in info.function_tools] + [t.name for t in info.output_tools]
    return Ask(
        instructions=info.instructions or "",
        tools=frozenset(tools),
        prompt="\n".join(prompts),
        results=tuple(results),
        turn=sum(isinstance(m, ModelRequest) for m in messages),
    )


def _refuse_in_process(said: Reply) -> None:
    if said.status is not None:
        raise ModelHTTPError(said.status, "scripted", {"message": f"scripted failure {said.status}"})


def response(said: Reply) -> ModelResponse:
    """`said` as one whole pydantic-ai answer (its text, then its call)."""
    _refuse_in_process(said)
    parts: list[ModelResponsePart] = [TextPart(said.text)] if said.text else []
    if said.tool:
        name, args, call_id = said.tool
        parts.append(ToolCallPart(name, json.dumps(args), tool_call_id=call_id))
    return ModelResponse(parts=parts)


def whole(script: Callable[[Ask], Reply]) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """`script` as a `FunctionModel(function=...)`: the whole answer at once."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return response(script(ask_of_messages(messages, info)))

    return model


def streamed(
    script: Script,
) -> Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | dict[int, DeltaToolCall]]]:
    """`script` as a `FunctionModel(stream_function=...)`: its text as one delta, then its call."""

    async def model(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        said = await answer(script, ask_of_messages(messages, info))
        _refuse_in_process(said)
        if said.text:
            yield said.text
        if said.tool:
            name, args, call_id = said.tool
            yield {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}

    return model


# --- over HTTP: the OpenAI chat-completions body -------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else json.dumps(content)


def _outcome(text: str) -> str:
    """A tool message's outcome, read from its text as a model would: the server marks a question
    cut short INTERRUPTED; a refused or failed call says it failed (the wire does not tell the two
    apart: "retried")."""
    if "INTERRUPTED" in text:
        return "interrupted"
    if "failed" in text:
        return "retried"
    return "success"


def ask_of_body(body: dict[str, Any]) -> Ask:
    names: dict[str, str] = {}
    results: list[Result] = []
    prompts: list[str] = []
    system: list[str] = []
    for message in body.get("messages", []):
        role = message.get("role")
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        if role == "tool":
            text = _text(message.get("content"))
            results.append(Result(names.get(message.get("tool_call_id", ""), "?"), text, _outcome(text)))
        elif role == "user":
            prompts.append(_text(message.get("content", "")))
        elif role == "system":
            system.append(str(message.get("content")))
    return Ask(
        instructions=" ".join(system),
        tools=frozenset(t["function"]["name"] for t in body.get("tools", [])),
        prompt="\n".join(prompts),
        results=tuple(results),
        turn=1 + sum(m.get("role") == "assistant" for m in body.get("messages", [])),
    )


def over_http(script: Callable[[Ask], R]) -> Callable[[dict[str, Any]], R]:
    """`script` as the reply callable of `tests/stub_openai.py: create_stub` (a body -> `Reply`;
    a coroutine when the script's answer is one, which the stub awaits)."""

    def reply(body: dict[str, Any]) -> R:
        return script(ask_of_body(body))

    return reply
