"""Model engines: a resolved slot becomes a pydantic-ai model over the openai SDK (seed §3).

Every provider, the offline model included, goes through the same OpenAI-compatible path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import cached_property
from typing import Any

import httpx2
import orjson
from openai import AsyncOpenAI
from openai.resources.chat import AsyncChat
from openai.resources.chat.completions import AsyncCompletions
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import CompletedStreamedResponse, Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel, OpenAIResponsesModelSettings
from pydantic_ai.models.openrouter import OpenRouterModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.providers.openrouter import OpenRouterProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from server.agent.machine_room.guarded_transport import GuardedTransport, guarded_client
from server.agent.machine_room.model_guard import GuardedModel
from server.agent.machine_room.subscription_clients import COPILOT_HEADERS
from server.config import PROVIDER_BASE_URLS
from server.core.contracts.models import ModelCallSettings, ResolvedModel
from server.core.machine_room.latex_escapes import heal_json_escapes, heal_latex_in
from server.core.machine_room.subscriptions import ScopedAuth, refused_sentence

COPILOT_DEFAULT_API = "https://api.githubcopilot.com"
"""Copilot's chat endpoint when the token names none (`endpoints.api`)."""

KEYLESS_PLACEHOLDER = "not-needed"
"""Sent as the API key to local OpenAI-compatible servers that need none (the SDK requires one)."""


class WholeResponseModel(WrapperModel):
    """Serves streamed requests with whole (non-streamed) requests, replayed as a stream.

    For llama.cpp's `chatml-function-calling` handler, which refuses to stream when the model
    may choose a tool ("Automatic streaming tool choice is not supported"): every lesson turn
    offers tools, so the offline model answers each model request whole, and the UI stream still
    carries its text and tool calls as chunks. (docs/decisions/0005-offline-model-whole-responses.md)
    """

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        return healed_tool_args(
            await self.wrapped.request(messages, model_settings, model_request_parameters)
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        response = healed_tool_args(
            await self.wrapped.request(messages, model_settings, model_request_parameters)
        )
        yield CompletedStreamedResponse(
            response, model_request_parameters=model_request_parameters, replay_events=True
        )


def llama_tool_choice(choice: Any, tools: list[Any]) -> Any:
    """The `tool_choice` llama-cpp-python's `chatml-function-calling` handler accepts for `choice`.

    That handler takes only "auto", "none" or one named function
    (`{"type": "function", "function": {"name": ...}}`); anything else fails its
    `assert tool_choice == "auto"` and the server answers HTTP 500 on every attempt (trial finding 1:
    every note import failed). pydantic-ai sends "required" for structured output (the
    extraction, auditor, practice, naming and summary calls' output tools) and OpenAI's
    `allowed_tools` form for a forced choice among several. With exactly one tool offered, "must call
    a tool" is that tool, named; otherwise "auto" (the model may answer in text, which the agent
    retries as for any model). Pure: `choice` and `tools` as on the wire; returns the wire value.
    """
    if choice in ("auto", "none") or (isinstance(choice, dict) and choice.get("type") == "function"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        tools = choice.get("allowed_tools", {}).get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)]
    if len(names) == 1 and names[0]:
        return {"type": "function", "function": {"name": names[0]}}
    return "auto"


def healed_tool_args(response: ModelResponse) -> ModelResponse:
    """The offline model's response with LaTeX in its tool-call arguments healed
    (`server.core.machine_room.latex_escapes`, trial finding 2): invalid escapes (`\\infty`)
    doubled so the JSON parses, and control characters decoded from `\\frac`, `\\text` put back.
    Arguments that still do not parse are left for the agent to report."""
    parts: list[Any] = []
    for part in response.parts:
        if isinstance(part, ToolCallPart) and isinstance(part.args, str):
            try:
                args = orjson.loads(heal_json_escapes(part.args))
            except orjson.JSONDecodeError:
                args = None
            if isinstance(args, dict):
                part = dataclasses.replace(part, args=orjson.dumps(heal_latex_in(args)).decode())
        parts.append(part)
    return dataclasses.replace(response, parts=parts)


class LlamaCppCompatTransport(GuardedTransport):
    """Rewrites chat-completion requests into the shape llama-cpp-python's server accepts.

    Its request schema requires an assistant message's `content` to be a string, while the
    OpenAI wire (and pydantic-ai) sends `null` for a message that only calls tools; the server
    then answers 500 and the turn dies on its first tool retry. `null` becomes `""`. A `tool_choice`
    its chat format rejects becomes one it accepts (`llama_tool_choice`). Deadlines and retries are
    the guarded transport's.
    """

    def prepare(self, request: httpx2.Request) -> httpx2.Request:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            body = orjson.loads(request.read())
            for message in body.get("messages", []):
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
            if "tool_choice" in body:
                body["tool_choice"] = llama_tool_choice(body["tool_choice"], body.get("tools") or [])
            content = orjson.dumps(body)
            headers = dict(request.headers)
            headers["content-length"] = str(len(content))
            request = httpx2.Request(
                request.method, request.url, headers=headers, content=content, extensions=request.extensions
            )
        return request


class _PlainMessagesCompletions(AsyncCompletions):
    """Chat completions whose `messages` skip the SDK's request transform (issue 15).

    The SDK walks every request argument against its TypedDict annotations (`async_maybe_transform`)
    to apply aliases and formats; the chat message params declare none, so for the plain dicts and
    lists pydantic-ai builds the walk changes nothing, yet it cost 45-80 % of a long lesson's turn
    (tens of thousands of recursive calls per request). The messages are handed over as they are,
    through `extra_body`, which the SDK merges into the JSON body untransformed: the same bytes
    go over the wire (tests/unit/machine_room/test_engine_wire.py)."""

    async def create(self, *, messages: Iterable[Any], extra_body: Any = None, **kwargs: Any) -> Any:
        body = {**(extra_body or {}), "messages": messages if isinstance(messages, list) else list(messages)}
        return await super().create(messages=[], extra_body=body, **kwargs)


class _PlainMessagesChat(AsyncChat):
    @cached_property
    def completions(self) -> AsyncCompletions:
        return _PlainMessagesCompletions(self._client)


class _OpenAIClient(AsyncOpenAI):
    """`AsyncOpenAI` whose chat completions send `messages` untransformed (see above); its
    copies (`with_options`) are of this class too."""

    @cached_property
    def chat(self) -> AsyncChat:
        return _PlainMessagesChat(self)


def _openai_client(base_url: str, api_key: str, client: httpx2.AsyncClient) -> AsyncOpenAI:
    """The SDK client with its own retries off: the guarded transport retries (honouring
    `Retry-After`) and its deadlines are the only timeouts."""
    return _OpenAIClient(base_url=base_url, api_key=api_key, http_client=client, max_retries=0)


def build_model(
    resolved: ResolvedModel,
    *,
    api_key: str | None,
    base_url: str | None = None,
    limits: ModelCallSettings | None = None,
) -> Model:
    """A pydantic-ai chat model for a resolved slot, guarded: deadlines, retries and plain-words
    failures (`server.agent.machine_room.guarded_transport`, `model_guard`).

    Args:
        resolved: provider and model id (from core.model_slots).
        api_key: the provider key (from env or keychain); None for keyless local servers.
        base_url: overrides the endpoint (the offline model's loopback URL, known once it runs).
        limits: deadlines and retries (settings' `modelCalls`; defaults when None).

    Raises:
        ValueError: a keyed provider without a key, or an OpenAI-compatible provider without a URL.
    """
    limits = limits or ModelCallSettings()
    if resolved.provider == "openrouter":
        if not api_key:
            raise ValueError("openrouter needs an API key")
        url = base_url or PROVIDER_BASE_URLS["openrouter"]
        router = OpenRouterProvider(openai_client=_openai_client(url, api_key, guarded_client(limits)))
        return GuardedModel(OpenRouterModel(resolved.model, provider=router), _where(url), [api_key])
    if resolved.provider == "openai":
        if not api_key:
            raise ValueError("openai needs an API key")
        url = base_url or PROVIDER_BASE_URLS["openai"]
        provider = OpenAIProvider(openai_client=_openai_client(url, api_key, guarded_client(limits)))
        return GuardedModel(OpenAIChatModel(resolved.model, provider=provider), _where(url), [api_key])
    compatible_url = base_url or resolved.base_url
    if not compatible_url:
        raise ValueError(f"{resolved.provider} needs a base URL")
    if resolved.offline:
        client = guarded_client(limits, LlamaCppCompatTransport(limits))
        provider = OpenAIProvider(openai_client=_openai_client(compatible_url, KEYLESS_PLACEHOLDER, client))
        guarded = GuardedModel(
            OpenAIChatModel(resolved.model, provider=provider), _where(compatible_url), offline=True
        )
        return WholeResponseModel(guarded)
    sdk = _openai_client(compatible_url, api_key or KEYLESS_PLACEHOLDER, guarded_client(limits))
    model = OpenAIChatModel(resolved.model, provider=OpenAIProvider(openai_client=sdk))
    return GuardedModel(model, _where(compatible_url), [api_key])


def _where(url: str) -> str:
    """host:port of a base URL, for connection failures."""
    parsed = httpx2.URL(url)
    return f"{parsed.host}:{parsed.port}" if parsed.port else str(parsed.host)


def build_subscription_model(
    resolved: ResolvedModel,
    auth: ScopedAuth,
    *,
    api_bases: Mapping[str, str],
    limits: ModelCallSettings | None = None,
) -> Model:
    """A model on a subscription route, with the login's scoped auth (issue 19 item 2; seed §8.1).

    - chatgpt: the Responses API at `api_bases["chatgpt_api"]` (`LH_CHATGPT_API_BASE`) with
      `Authorization: Bearer <access>` and `chatgpt-account-id: <account>`; nothing stored.
    - github-copilot-subscription: chat completions at the token's `endpoints.api` (the Copilot
      editor headers).
    - xai-subscription: chat completions at `api_bases["xai_api"]` (`LH_XAI_API_BASE`).

    A refused credential says "connect it again in Settings", never "check the key".

    Raises:
        ValueError: not a subscription provider.
    """
    limits = limits or ModelCallSettings()
    refused = refused_sentence(resolved.provider)
    headers: dict[str, str]
    if resolved.provider == "chatgpt":
        url = api_bases["chatgpt_api"]
        account = {"chatgpt-account-id": auth.account_id} if auth.account_id else {}
        headers = {**account, "originator": "learning_harness"}
    elif resolved.provider == "github-copilot-subscription":
        url = auth.base_url or COPILOT_DEFAULT_API
        headers = {**COPILOT_HEADERS, "Openai-Intent": "conversation-panel"}
    elif resolved.provider == "xai-subscription":
        url = api_bases["xai_api"]
        headers = {}
    else:
        raise ValueError(f"{resolved.provider} is not a subscription provider")
    sdk = _OpenAIClient(
        base_url=url,
        api_key=auth.access_token,
        http_client=guarded_client(limits),
        max_retries=0,
        default_headers=headers,
    )
    model: Model
    if resolved.provider == "chatgpt":
        model = OpenAIResponsesModel(
            resolved.model,
            provider=OpenAIProvider(openai_client=sdk),
            settings=OpenAIResponsesModelSettings(openai_store=False),
        )
    else:
        model = OpenAIChatModel(resolved.model, provider=OpenAIProvider(openai_client=sdk))
    return GuardedModel(model, _where(url), [auth.access_token], auth_sentence=refused)
