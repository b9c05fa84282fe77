"""The model's bounded view of a long lesson (issue 15): the plan, a running summary, the recent
messages verbatim, within the budget; the summary a cache that can be lost and is rebuilt."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from server.core.classroom.context import (
    CONTEXT_MESSAGE_ID,
    FILE_PART_TOKENS,
    RECENT_TURNS,
    SUMMARY_STEP_TURNS,
    SummaryCover,
    fingerprint,
    message_tokens,
    model_view,
    plan_text,
    recent_start,
    summary_due,
)
from server.core.contracts.models import ResolvedModel, Settings
from server.services.classroom.context import ContextService
from tests.fakes import FakeSettingsStore
from tests.fakes.summaries import FakeSummaryCache

LEARNER = "Why does the derivative of x squared equal two x, exactly?"  # ~60 characters
TEACHER = (
    "Take the difference quotient: ((x+h)^2 - x^2)/h = (2xh + h^2)/h = 2x + h. As h shrinks to "
    "zero the h term vanishes and only 2x is left, so the slope of the tangent at x is 2x. Try it "
    "at x = 3: secants through (3, 9) and (3.1, 9.61) have slope 6.1, through (3.01, 9.0601) "
    "slope 6.01; they close in on 6, which is 2 times 3. That is the power rule at work here."
)  # ~380 characters
PLAN = {"title": "Derivatives", "mermaid": "graph TD\n limits[Limits] --> deriv[Derivative]"}


def lesson(n: int) -> list[dict[str, Any]]:
    """A lesson of `n` messages: a plan first, then learner and teacher lines alternating."""
    plan_part = {
        "type": "tool-plan_init",
        "toolCallId": "call_plan",
        "state": "output-available",
        "input": PLAN,
        "output": {"ok": True, "plan": {}},
    }
    out: list[dict[str, Any]] = [
        {"id": "m0", "role": "user", "parts": [{"type": "text", "text": "Teach me derivatives"}]},
        {"id": "m1", "role": "assistant", "parts": [plan_part]},
    ]
    for i in range(2, n):
        role = "user" if i % 2 == 0 else "assistant"
        out.append(
            {
                "id": f"m{i}",
                "role": role,
                "parts": [{"type": "text", "text": LEARNER if role == "user" else TEACHER}],
            }
        )
    return out


def tokens(messages: list[dict[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages)


def test_a_short_lesson_is_shown_whole() -> None:
    messages = lesson(10)
    view = model_view(messages, budget=24_000)
    assert view.messages == messages and view.start == 0 and view.hidden == 0


def test_a_10000_message_lesson_fits_the_budget_with_the_plan_and_the_newest_messages() -> None:
    messages = lesson(10_000)
    assert tokens(messages) > 500_000  # the whole lesson is ~25x the budget
    view = model_view(messages, budget=24_000, plan=plan_text(messages))
    assert view.tokens <= 24_000 and tokens(view.messages) == view.tokens
    assert view.messages[-1] is messages[-1]  # the newest message is always shown
    assert view.messages[0]["id"] == CONTEXT_MESSAGE_ID
    assert messages[view.start]["role"] == "user"  # the window opens with the learner speaking
    context = view.messages[0]["parts"][0]["text"]
    assert "graph TD" in context and f"{view.start} earlier messages are not shown" in context
    assert "nothing is lost" in context


def test_a_matching_summary_stands_for_the_older_messages() -> None:
    messages = lesson(2_000)
    first = model_view(messages, budget=24_000)
    cover = SummaryCover(
        count=first.start,
        fingerprint=fingerprint(messages[: first.start]),
        last_id=messages[first.start - 1]["id"],
        text="We derived the power rule.",
    )
    view = model_view(messages, budget=24_000, summary=cover)
    assert view.summarized == first.start and view.hidden == 0
    assert "We derived the power rule." in view.messages[0]["parts"][0]["text"]
    stale = SummaryCover(cover.count, cover.fingerprint, "m-other", cover.text)
    assert model_view(messages, budget=24_000, summary=stale).summarized == 0  # not used


def learner_turns(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m["role"] == "user" and not (m.get("metadata") or {}).get("steer"))


def test_a_lesson_longer_than_the_recent_turns_shows_them_verbatim_and_says_the_rest_is_kept() -> None:
    """Decision 0014: a window bounded by learner turns as well as tokens (a 200-message lesson
    is ~12,000 tokens, within the budget, and still shows only its last RECENT_TURNS turns)."""
    messages = lesson(200)
    assert tokens(messages) < 24_000
    view = model_view(messages, budget=24_000)
    assert view.start == view.recent > 0 and view.hidden == view.start
    assert messages[view.start]["role"] == "user" and learner_turns(messages[view.start :]) == RECENT_TURNS
    assert view.messages[1:] == messages[view.start :]
    short = lesson(2 * RECENT_TURNS + 2)  # the plan turn and RECENT_TURNS learner turns: whole
    assert learner_turns(short) == RECENT_TURNS + 1 and model_view(short).start > 0
    assert model_view(short[:-2]).start == 0


def test_steers_are_not_learner_turns() -> None:
    messages = lesson(100)
    steer = {"role": "user", "metadata": {"steer": True}, "parts": [{"type": "text", "text": "[job done]"}]}
    with_steers = [*messages[:60], *({**steer, "id": f"s{i}"} for i in range(10)), *messages[60:]]
    view = model_view(with_steers, budget=24_000)
    assert learner_turns(with_steers[view.start :]) == RECENT_TURNS
    assert sum(1 for m in with_steers[view.start :] if m.get("metadata")) == 10


def test_the_window_reaches_back_to_the_summary_for_up_to_twice_the_recent_turns() -> None:
    """While the summary catches up, nothing is hidden: the window opens where the summary ends,
    as long as that is at most 2 * RECENT_TURNS turns back; past that, the gap is said."""
    messages = lesson(400)
    first = model_view(messages, budget=24_000)
    cover = SummaryCover(
        first.start, fingerprint(messages[: first.start]), messages[first.start - 1]["id"], "s"
    )
    for extra in (1, SUMMARY_STEP_TURNS, RECENT_TURNS):  # learner turns (and replies) since
        longer = lesson(400 + 2 * extra)
        view = model_view(longer, budget=24_000, summary=cover)
        assert view.start == cover.count and view.summarized == cover.count and view.hidden == 0
        assert learner_turns(longer[view.start :]) == RECENT_TURNS + extra
        assert view.recent > view.start and learner_turns(longer[view.recent :]) == RECENT_TURNS
        due = summary_due(longer, view, cover)
        assert due == (view.recent if extra >= SUMMARY_STEP_TURNS else None)  # extended every 10 turns
    beyond = lesson(400 + 2 * (RECENT_TURNS + 1))
    view = model_view(beyond, budget=24_000, summary=cover)
    assert view.start == view.recent and view.summarized == cover.count
    assert view.hidden == view.start - cover.count > 0
    assert "Summary of the first" in view.messages[0]["parts"][0]["text"]
    assert f"{view.hidden} earlier messages are not shown" in view.messages[0]["parts"][0]["text"]


def test_the_newest_message_is_shown_even_when_it_alone_is_over_budget() -> None:
    messages = [*lesson(20), {"id": "big", "role": "user", "parts": [{"type": "text", "text": "x" * 40_000}]}]
    assert recent_start(messages, 2_000) == len(messages) - 1
    view = model_view(messages, budget=2_000)
    assert view.messages[-1]["id"] == "big"


def test_a_summary_is_due_when_the_unshown_part_grows_or_an_edit_made_it_stale() -> None:
    messages = lesson(3_000)
    view = model_view(messages, budget=24_000)
    assert summary_due(messages, view, None) == view.start
    assert summary_due(lesson(10), model_view(lesson(10)), None) is None
    cover = SummaryCover(view.start, fingerprint(messages[: view.start]), messages[view.start - 1]["id"], "s")
    assert summary_due(messages, view, cover) is None
    edited = [dict(m) for m in messages]
    edited[5] = {**edited[5], "parts": [{"type": "text", "text": "edited"}]}
    assert summary_due(edited, model_view(edited, budget=24_000), cover) == view.start


class Summarizer:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail = False

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.fail:
            raise RuntimeError("503 from the cheap model")
        self.calls.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart(f"summary #{len(self.calls)}")])


def service(cache: FakeSummaryCache, summarizer: Summarizer, budget: int = 24_000) -> ContextService:
    settings = Settings()
    settings.agent.context_tokens = budget
    model = FunctionModel(function=summarizer)

    async def cheap() -> tuple[ResolvedModel, Any]:
        return ResolvedModel(provider="openai-compatible", model="cheap", base_url="http://x"), model

    return ContextService(cache, FakeSettingsStore(settings), cheap, asyncio.Semaphore(3))


async def test_the_summary_is_built_in_steps_cached_and_rebuilt_after_deletion() -> None:
    cache, summarizer = FakeSummaryCache(), Summarizer()
    context = service(cache, summarizer)
    messages = lesson(1_000)
    saved = await context.refresh("c", messages)
    view = context.view("c", messages)
    assert saved is not None and saved.count == view.start and view.hidden == 0
    assert len(summarizer.calls) >= 2  # ~45k tokens of backlog, read in steps of at most 12k
    assert "THE SUMMARY SO FAR:\n(none yet)" in summarizer.calls[0]
    assert "summary #1" in summarizer.calls[1]  # each step extends the previous summary
    calls = len(summarizer.calls)
    assert await context.refresh("c", messages) is None and len(summarizer.calls) == calls  # cached
    cache.delete("c")  # a cache: deleting it loses nothing
    assert context.view("c", messages).hidden == view.start
    rebuilt = await context.refresh("c", messages)
    assert rebuilt is not None and rebuilt.count == view.start


async def test_a_failed_summary_call_leaves_a_shorter_view_that_says_so() -> None:
    cache, summarizer = FakeSummaryCache(), Summarizer()
    summarizer.fail = True
    context = service(cache, summarizer)
    messages = lesson(1_000)
    assert await context.refresh("c", messages) is None
    view = context.view("c", messages)
    assert view.tokens <= 24_000 and view.hidden == view.start
    assert "not shown" in view.messages[0]["parts"][0]["text"]


async def test_a_summary_that_matched_these_messages_is_not_fingerprinted_again(monkeypatch) -> None:
    """The running summary's staleness check after each turn walks the covered messages by
    identity once they were found to match (the fingerprint hashes each of them: ~10 ms at
    10,000 messages), and still finds an edit (issue 15)."""
    import server.core.classroom.context as core_context
    import server.services.classroom.context as service_context

    cache, summarizer = FakeSummaryCache(), Summarizer()
    context = service(cache, summarizer)
    messages = lesson(1_000)
    assert await context.refresh("c", messages) is not None
    calls = len(summarizer.calls)
    hashed: list[int] = []
    real = core_context.fingerprint

    def counting(covered: list[dict[str, Any]]) -> str:
        hashed.append(len(covered))
        return real(covered)

    monkeypatch.setattr(core_context, "fingerprint", counting)
    monkeypatch.setattr(service_context, "fingerprint", counting)
    longer = [*messages, *lesson(1_004)[1_000:]]  # two more turns: the same objects before them
    assert await context.refresh("c", longer) is None and hashed == []  # not due, not hashed
    copied = [dict(m) for m in longer]  # equal messages, other objects: fingerprinted once
    assert await context.refresh("c", copied) is None and len(hashed) == 1
    assert await context.refresh("c", copied) is None and len(hashed) == 1  # then known
    assert len(summarizer.calls) == calls
    edited = list(copied)
    edited[5] = {**copied[5], "parts": [{"type": "text", "text": "An edited, longer line."}]}
    rebuilt = await context.refresh("c", edited)  # stale: made again from the start
    assert rebuilt is not None and rebuilt.fingerprint == real(edited[: rebuilt.count])
    assert "THE SUMMARY SO FAR:\n(none yet)" in summarizer.calls[calls]


def test_message_sizes_are_computed_once_per_message() -> None:
    context = service(FakeSummaryCache(), Summarizer())
    messages = lesson(500)
    first = list(context.sizes("c", messages))  # the cache is updated in place
    longer = [*messages, {"id": "new", "role": "user", "parts": [{"type": "text", "text": "more"}]}]
    assert context.sizes("c", longer) == [*first, message_tokens(longer[-1])]
    regenerated = [*messages[:100], {"id": "other", "role": "user", "parts": [{"type": "text", "text": "x"}]}]
    assert context.sizes("c", regenerated) == [message_tokens(m) for m in regenerated]  # a cut: recomputed


def test_teacher_prose_views_are_remade_only_for_new_or_replaced_messages() -> None:
    from server.core.library.coverage import ViewMemo, message_views
    from tests.flows.workbench.test_workbench import teaching_record

    messages = [*teaching_record("c"), *lesson(400)[2:]]
    memo = ViewMemo()
    first = message_views(messages, memo)
    assert first == message_views(messages)  # the memo never changes the answer
    again = message_views(messages, memo)
    assert again == first
    assert all(v is w for v, w in zip(again, first, strict=True))  # reused, not remade
    edited = list(messages)
    edited[5] = {
        **messages[5],
        "parts": [{"type": "text", "text": "An edited reply."}],
    }  # same id, new object
    views = message_views(edited, memo)
    assert views == message_views(edited) and any(v.text == "An edited reply." for v in views)


def test_the_plan_is_read_once_per_message_and_found_when_it_comes_late() -> None:
    context = service(FakeSummaryCache(), Summarizer())
    messages = lesson(300)[2:]  # no plan yet
    assert context.plan("c", messages) is None
    planned = lesson(2)[1]
    steps = [
        [*messages, {"id": "n1", "role": "user", "parts": [{"type": "text", "text": "go"}]}],
        [*messages, {**planned, "id": "n1"}],  # the last message replaced by one that holds the plan
        [*messages, {**planned, "id": "n1"}, *lesson(10)[2:]],
        messages,  # cut back: no plan
    ]
    for step in steps:
        assert context.plan("c", step) == plan_text(step)
    assert plan_text(steps[2]) is not None


def test_a_file_part_costs_a_fixed_estimate_not_its_bytes() -> None:
    """Issue 26: a learner's 1 MB image counted as its base64 (~330,000 tokens) and pushed its
    message, the learner's words with it, out of the bounded view at once."""
    words = {"type": "text", "text": "What does this diagram show?"}
    image = {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64," + "A" * 1_400_000}
    alone = message_tokens({"id": "u1", "role": "user", "parts": [words]})
    both = message_tokens({"id": "u1", "role": "user", "parts": [words, image]})
    assert both == alone + FILE_PART_TOKENS
    two = message_tokens({"id": "u1", "role": "user", "parts": [words, image, image]})
    assert two == alone + 2 * FILE_PART_TOKENS
