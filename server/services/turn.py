"""THE turn composition root: one lesson turn from request to persisted reply (seed §5).

In order: validate -> load the record (404) -> claim liveness (409) -> resolve the model (503)
-> write-ahead save of the learner's message -> stream the agent's reply, folding it into the
assistant message -> persist the reply (also when the turn is aborted or fails) -> release
liveness (always last). A model that fails before any content answers 503 instead of a stream.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from server.agent.lesson import build_teacher, stream_turn
from server.core.contracts.chat import ChatRecord, ChatRequest
from server.core.ports import ChatStore
from server.core.turns import (
    TurnRejected,
    accept_learner_message,
    learner_message,
    title_after,
    upsert_message,
)
from server.core.ui_stream import AssistantMessageFold
from server.services.chats import utc_now
from server.services.liveness import TurnRegistry
from server.services.models import ModelService

log = logging.getLogger("lh.turn")

STREAM_HEADERS = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Headers of the AI SDK UI message stream (SSE)."""

OFFLINE_MAX_TOKENS = 400
"""Reply cap for the offline demo model, in tokens (it otherwise fills its context)."""

_PREAMBLE_TYPES = {"start", "start-step", "message-metadata"}


@dataclass
class TurnStream:
    """An accepted turn: SSE-encoded lines to send (`data: {...}\\n\\n`, then `data: [DONE]\\n\\n`)."""

    chat_id: str
    lines: AsyncIterator[str]
    headers: dict[str, str]


def parse_request(body: bytes) -> ChatRequest:
    """Raises TurnRejected(400) naming the first problems of a malformed body."""
    try:
        return ChatRequest.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in exc.errors()[:3]
        )
        raise TurnRejected(400, "bad_request", f"malformed chat request ({problems})") from exc


def sse(chunk: dict[str, Any]) -> str:
    return "data: " + orjson.dumps(chunk).decode() + "\n\n"


class TurnService:
    """Runs lesson turns.

    Args:
        chats: the session store port (canonical writes).
        models: resolves the session's model.
        registry: the liveness registry.
        clock: ISO timestamp source.
        new_id: reply id source.
    """

    def __init__(
        self,
        chats: ChatStore,
        models: ModelService,
        registry: TurnRegistry,
        clock: Callable[[], str] = utc_now,
        new_id: Callable[[], str] = lambda: "m_" + secrets.token_hex(8),
    ) -> None:
        self.chats = chats
        self.models = models
        self.registry = registry
        self.clock = clock
        self.new_id = new_id
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, body: bytes) -> TurnStream:
        """Accept a turn, or raise TurnRejected with nothing written (400/404/409/503).

        A failed write-ahead save raises OSError (the API answers 500): the model never starts.
        """
        request = parse_request(body)
        message = learner_message(request)
        record = self.chats.get(request.id)
        if record is None:
            raise TurnRejected(
                404, "chat_not_found", f"no session {request.id!r}; start a new lesson from the list"
            )
        if not self.registry.begin(record.id):
            raise TurnRejected(
                409, "turn_running", "a turn is already running in this session; wait for it to finish"
            )
        try:
            resolved, model = await self.models.model_for(record.model)
            record = self._accept(record, message, regenerate=request.trigger == "regenerate-message")
            reply_id = self.new_id()
            teacher = build_teacher(model, max_tokens=OFFLINE_MAX_TOKENS if resolved.offline else None)
            chunks = stream_turn(teacher, chat_id=record.id, messages=record.messages, reply_id=reply_id)
            fold = AssistantMessageFold(reply_id)
            preamble = await self._prime(chunks, fold)
        except BaseException:
            self.registry.end(record.id)
            raise
        return TurnStream(record.id, self._run(record.id, preamble, chunks, fold), dict(STREAM_HEADERS))

    def _accept(self, record: ChatRecord, message: dict[str, Any], *, regenerate: bool) -> ChatRecord:
        """Write-ahead: the learner's message is durable before the model starts."""
        messages = accept_learner_message(record.messages, message, regenerate=regenerate)
        record = record.model_copy(
            update={
                "messages": messages,
                "updated_at": self.clock(),
                "title": title_after(record.title, messages),
            }
        )
        self.chats.save(record)
        return record

    async def _prime(
        self, chunks: AsyncIterator[dict[str, Any]], fold: AssistantMessageFold
    ) -> list[dict[str, Any]]:
        """Read up to the first content chunk. A model error before any content is a 503, not a stream."""
        preamble: list[dict[str, Any]] = []
        async for chunk in chunks:
            fold.add(chunk)
            preamble.append(chunk)
            if chunk.get("type") == "error":
                await _close(chunks)
                raise TurnRejected(
                    503,
                    "model_unreachable",
                    f"the model failed before replying: {chunk.get('errorText')}. "
                    "Check the model server or your key in Settings, then send again.",
                )
            if chunk.get("type") not in _PREAMBLE_TYPES:
                break
        return preamble

    def _run(
        self,
        chat_id: str,
        preamble: list[dict[str, Any]],
        chunks: AsyncIterator[dict[str, Any]],
        fold: AssistantMessageFold,
    ) -> AsyncIterator[str]:
        """Run the rest of the turn as its own task; the returned lines follow it.

        The turn is decoupled from the HTTP response: if the response never starts, the turn still
        finishes and persists. Closing the lines early (the client aborted) cancels the turn, which
        persists what streamed so far.
        """
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        async def run() -> None:
            try:
                for chunk in preamble:
                    queue.put_nowait(sse(chunk))
                async for chunk in chunks:
                    fold.add(chunk)
                    queue.put_nowait(sse(chunk))
                try:
                    self._persist_reply(chat_id, fold)
                except Exception as exc:
                    # Settlement failure is reported before [DONE], never swallowed (seed §5).
                    log.exception("saving the reply of session %s failed", chat_id)
                    queue.put_nowait(
                        sse({"type": "error", "errorText": f"the reply could not be saved: {exc}"})
                    )
                queue.put_nowait("data: [DONE]\n\n")
            finally:
                try:
                    if not fold.saved:  # aborted or failed: keep what streamed
                        self._persist_reply(chat_id, fold)
                except Exception:
                    log.exception("saving the partial reply of session %s failed", chat_id)
                finally:
                    await _close(chunks)
                    self.registry.end(chat_id)
                    queue.put_nowait(None)

        task = asyncio.get_running_loop().create_task(run(), name=f"turn {chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

        async def lines() -> AsyncIterator[str]:
            try:
                while (line := await queue.get()) is not None:
                    yield line
            finally:
                if not task.done():
                    task.cancel()

        return lines()

    async def shutdown(self) -> None:
        """Cancel running turns (server exit); each persists what streamed."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _persist_reply(self, chat_id: str, fold: AssistantMessageFold) -> None:
        """Canonical write of the reply; raises loudly (OSError, StoreCorrupt) when it fails."""
        fold.saved = True
        reply = fold.message()
        if reply is None:
            return
        record = self.chats.get(chat_id)
        if record is None:  # the session was deleted mid-turn; nothing to attach the reply to
            log.warning("session %s vanished during its turn; reply dropped", chat_id)
            return
        record = record.model_copy(
            update={
                "messages": upsert_message(record.messages, reply),
                "updated_at": self.clock(),
            }
        )
        self.chats.save(record)


async def _close(chunks: AsyncIterator[dict[str, Any]]) -> None:
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # closing a finished or failed generator must not mask the real outcome
            log.debug("closing the chunk stream failed", exc_info=True)
