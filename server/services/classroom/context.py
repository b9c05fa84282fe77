"""The model's bounded view of a lesson, and the running summary behind it (issue 15; seed §5:
the record is the only truth, agents rebuild from it each turn).

`view` is on every turn's path and costs what is new: message sizes are cached per session (a
prefix whose last id is unchanged is reused), the summary is a cached read, and only the view's
messages are converted for the model. `settled` runs after a turn, in the background: when the
messages left out of view and not yet summarized grow past a chunk (or an edit made the summary
stale), the cheap slot extends the summary, chunk by chunk, under the background-model permits.
A failed summary call changes nothing: the view shows fewer messages and says so.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import operator
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.models import Model

from server.agent.classroom.summarizer import summarize
from server.core.classroom.context import (
    DEFAULT_CONTEXT_TOKENS,
    ModelView,
    SummaryCover,
    fingerprint,
    message_tokens,
    model_view,
    plan_text,
    summary_due,
)
from server.core.contracts.chat import ChatRecord
from server.core.contracts.models import ResolvedModel
from server.core.ports import SettingsStore, SummaryCache

log = logging.getLogger("lh.context")

OFFLINE_CONTEXT_TOKENS = 2_500
"""The offline model's view of a lesson (its context is 4,096 tokens, with instructions, tool
schemas and the reply to fit beside it)."""
SUMMARY_INPUT_TOKENS = 12_000
"""The most of the transcript one summary call reads (a long backlog is summarized in steps)."""


class ContextService:
    """Args:
    summaries: the summary cache port.
    settings: for `agent.contextTokens`.
    cheap_model: the cheap slot's model (summaries are background work).
    permits: the shared background-model pool.
    """

    def __init__(
        self,
        summaries: SummaryCache,
        settings: SettingsStore,
        cheap_model: Callable[[], Awaitable[tuple[ResolvedModel, Model]]],
        permits: asyncio.Semaphore,
    ) -> None:
        self.summaries = summaries
        self.settings = settings
        self.cheap_model = cheap_model
        self.permits = permits
        self._sizes: dict[str, tuple[list[str], list[int]]] = {}
        self._plans: dict[str, tuple[str | None, int, dict[str, Any] | None]] = {}
        self.refreshing: dict[str, asyncio.Task[SummaryCover | None]] = {}
        self._matched: dict[str, tuple[SummaryCover, list[dict[str, Any]]]] = {}
        """Per lesson: the summary last found to match its messages, and those messages (the very
        objects; records are immutable values, so the same objects are the same messages)."""

    def _matches(self, chat_id: str, messages: list[dict[str, Any]], cover: SummaryCover | None) -> bool:
        """Whether `cover` is known to match `messages[:cover.count]` without its fingerprint: it
        was found to match these very message objects before (an identity walk, ~30x cheaper
        than the fingerprint's hashing; issue 15)."""
        known = self._matched.get(chat_id)
        if cover is None or known is None or known[0] != cover or len(messages) < cover.count:
            return False
        return all(map(operator.is_, known[1], itertools.islice(messages, cover.count)))

    def _matched_now(self, chat_id: str, messages: list[dict[str, Any]], cover: SummaryCover) -> None:
        self._matched[chat_id] = (cover, messages[: cover.count])

    def budget(self, offline: bool) -> int:
        try:
            budget = self.settings.load().agent.context_tokens
        except Exception:  # unreadable settings: the settings page says so; the default holds
            budget = DEFAULT_CONTEXT_TOKENS
        return min(budget, OFFLINE_CONTEXT_TOKENS) if offline else budget

    def sizes(self, chat_id: str, messages: list[dict[str, Any]]) -> list[int]:
        """Each message's estimated tokens, computed once per message: the cached prefix is
        reused while its last id still sits at the same place; the last two are always
        recomputed (a reply grows, answers are applied). The cache is updated in place, so a
        turn costs what is new; the list returned is the cache's (read it, never change it)."""
        ids, sizes = self._sizes.setdefault(chat_id, ([], []))
        keep = len(ids) - 2
        if keep <= 0 or len(messages) < len(ids) or messages[keep - 1].get("id") != ids[keep - 1]:
            keep = 0
        del ids[keep:], sizes[keep:]
        ids.extend(str(m.get("id")) for m in messages[keep:])
        sizes.extend(message_tokens(m) for m in messages[keep:])
        return sizes

    def plan(self, chat_id: str, messages: list[dict[str, Any]]) -> str | None:
        """`plan_text` of the transcript, read once per message: a lesson without a plan (yet)
        is scanned from where the last scan ended (less its last two messages, which a reply or
        an answer replaces), while the message there is still the one scanned."""
        found, scanned, last = self._plans.get(chat_id, (None, 0, None))
        if found is not None and scanned <= len(messages) and messages[scanned - 1] is last:
            return found
        start = max(scanned - 2, 0) if 0 < scanned <= len(messages) and messages[scanned - 1] is last else 0
        if found is not None:
            start = 0
        text = plan_text(messages[start:])
        at = len(messages)
        if text is not None:  # remembered with the message that holds it
            at = next(i for i in range(start, len(messages)) if plan_text([messages[i]]) is not None) + 1
        self._plans[chat_id] = (text, at, messages[at - 1] if at else None)
        return text

    def view(self, chat_id: str, messages: list[dict[str, Any]], *, offline: bool = False) -> ModelView:
        """What the model reads of this transcript now."""
        return model_view(
            messages,
            budget=self.budget(offline),
            plan=self.plan(chat_id, messages),
            summary=self._cached(chat_id),
            sizes=self.sizes(chat_id, messages),
        )

    def _cached(self, chat_id: str) -> SummaryCover | None:
        try:
            return self.summaries.get(chat_id)
        except Exception:
            log.warning("reading the summary of %s failed", chat_id, exc_info=True)
            return None

    # -- the running summary ------------------------------------------------------------------------
    def settled(self, record: ChatRecord) -> None:
        """After a turn: extend the summary in the background when it is due."""
        running = self.refreshing.get(record.id)
        if running is not None and not running.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.refreshing[record.id] = loop.create_task(self.refresh(record.id, record.messages))

    async def refresh(self, chat_id: str, messages: list[dict[str, Any]]) -> SummaryCover | None:
        """Bring the summary up to where the view's verbatim window begins, in steps of at most
        `SUMMARY_INPUT_TOKENS`. Returns the summary saved last (None when nothing was due or the
        first call failed)."""
        view = self.view(chat_id, messages)
        cover = self._cached(chat_id)
        if self._matches(chat_id, messages, cover):  # the usual turn: no fingerprint, no thread
            due = summary_due(messages, view, cover, matches=True)
            matched = True
        else:
            due = await asyncio.to_thread(summary_due, messages, view, cover)
            matched = False
            if due is None and cover is not None and view.recent:  # not stale, so it matches
                self._matched_now(chat_id, messages, cover)
        if due is None:
            return None
        sizes = list(self.sizes(chat_id, messages))  # its own: the cache changes with later turns
        fresh = cover is not None and cover.count <= due
        if fresh and not matched and cover is not None:
            fresh = cover.fingerprint == await asyncio.to_thread(fingerprint, messages[: cover.count])
        covered, text = (cover.count, cover.text) if fresh and cover is not None else (0, None)
        saved: SummaryCover | None = None
        try:
            _, model = await self.cheap_model()
            while covered < due:
                end, total = covered, 0
                while end < due and (end == covered or total + sizes[end] <= SUMMARY_INPUT_TOKENS):
                    total += sizes[end]
                    end += 1
                async with self.permits:
                    text, _usage = await summarize(model, text, messages[covered:end])
                saved = SummaryCover(
                    count=end,
                    fingerprint=await asyncio.to_thread(fingerprint, messages[:end]),
                    last_id=str(messages[end - 1].get("id")),
                    text=text,
                )
                self.summaries.put(chat_id, saved)
                self._matched_now(chat_id, messages, saved)
                covered = end
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the old summary stays; the view shows fewer messages, says so
            log.warning("summarizing lesson %s failed: %s", chat_id, exc)
        return saved

    def forget(self, chat_id: str) -> None:
        self._sizes.pop(chat_id, None)
        self._matched.pop(chat_id, None)
        self._plans.pop(chat_id, None)
        task = self.refreshing.pop(chat_id, None)
        if task is not None:
            task.cancel()
        try:
            self.summaries.delete(chat_id)
        except Exception:
            log.warning("deleting the summary of %s failed", chat_id, exc_info=True)

    async def shutdown(self) -> None:
        tasks = [t for t in self.refreshing.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
