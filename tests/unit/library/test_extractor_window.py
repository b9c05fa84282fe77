"""A windowed model's extractor requests stay in its window (offline model: notes import).

The offline SmolLM2 reads 4,096 tokens. pydantic-ai re-sends the whole run on a retry, and a
small model's refused submits run to a thousand tokens each, so a chunk's third or fourth
request outgrew the window. With a known window the extractor keeps the first request, only the
last failed answer (cut) and its retry prompt, and lowers the answer cap to what is left; THE
GRAPH SO FAR is cut to what the first request leaves. Keyed models keep their answer caps; their
retries carry only the last refused answer too (issue 28, `agent.library.retries`).
"""

from __future__ import annotations

import json

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from server.agent.library.extraction import (
    build_extractor,
    extractor_overhead_tokens,
    extractor_prompt,
    run_extractor,
    windowed_prompt,
)
from server.agent.library.window import (
    RETRY_ANSWER_TOKENS,
    Window,
    bounded_digest,
    fit_retry_history,
    messages_tokens,
)
from server.core.tokens import estimate_tokens
from server.services.library.jobs import OFFLINE_MAX_TOKENS, offline_window
from server.services.machine_room.offline_model import CONTEXT_TOKENS, TOKENS_PER_ESTIMATE

BAD_ANSWER = json.dumps({"propositions": [{"bogus": "word " * 1360}], "chains": []})
"""A refused submit of ≈ 1,700 estimated tokens (the 135M model's invalid answers run that long)."""
GOOD_ANSWER = json.dumps(
    {
        "propositions": [{"id": "p1", "name": "Entropy", "statement": "Entropy never decreases."}],
        "chains": [],
    }
)


def _scripted(sent: list[tuple[int, int | None]], bad: int = 2) -> FunctionModel:
    """Answers `bad` refused submits, then a valid one; records each request's estimated tokens
    (its messages) and its answer cap."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        settings = info.model_settings or {}
        sent.append((messages_tokens(messages), settings.get("max_tokens")))
        args = BAD_ANSWER if len(sent) <= bad else GOOD_ANSWER
        return ModelResponse(parts=[ToolCallPart("submit", args, tool_call_id=f"call{len(sent)}")])

    return FunctionModel(answer)


async def _run(window: Window | None, sent: list[tuple[int, int | None]], prompt: str) -> None:
    model = _scripted(sent)
    cap = OFFLINE_MAX_TOKENS if window is not None else None
    extractor = build_extractor(model, kind="notes", existing={}, max_tokens=cap, window=window)
    findings = await run_extractor(extractor, prompt, RunUsage())
    assert [p.name for p in findings.propositions] == ["Entropy"]


def _chunk(tokens: int) -> str:
    return ("Heat flows from hot to cold. " * 200)[: tokens * 4]


async def test_windowed_retries_carry_one_failed_answer_and_fit_the_window() -> None:
    window = offline_window()
    chunk = extractor_prompt(_chunk(760), "")
    sent: list[tuple[int, int | None]] = []
    await _run(window, sent, chunk)
    sizes = [s for s, _ in sent]
    print("windowed request sizes (estimated tokens of messages):", sent)
    assert len(sent) == 3
    first = sizes[0]
    # the 3rd request is no bigger than the 2nd: one failed answer and its retry prompt at most
    assert sizes[2] <= sizes[1] + 50
    assert sizes[2] - first <= estimate_tokens(BAD_ANSWER)
    for size, max_tokens in sent:
        assert max_tokens is not None and max_tokens >= 1
        used = (extractor_overhead_tokens() + size) * TOKENS_PER_ESTIMATE
        assert used + max_tokens <= CONTEXT_TOKENS
    # a retry leaves its answer the retry room
    assert all(m is not None and m >= RETRY_ANSWER_TOKENS for _, m in sent[1:])


async def test_keyed_retries_resend_only_the_last_refused_answer() -> None:
    """Issue 28 item 7: a keyed model's retry carries the last refused answer and its refusal,
    not every earlier one (`agent.library.retries`); its answer cap is left alone."""
    chunk = extractor_prompt(_chunk(760), "")
    sent: list[tuple[int, int | None]] = []
    await _run(None, sent, chunk)
    sizes = [s for s, _ in sent]
    print("keyed request sizes (estimated tokens of messages):", sent)
    assert sizes[1] - sizes[0] >= estimate_tokens(BAD_ANSWER)  # short enough to go back whole
    assert sizes[2] <= sizes[1] + 50  # one refused answer, not two
    assert all(m is None for _, m in sent)


def test_a_first_request_and_a_short_retry_pass_unchanged() -> None:
    window = offline_window()
    first = ModelRequest.user_text_prompt("THE SOURCE:\nshort")
    assert fit_retry_history([first], window) == [first]


def test_bounded_digest_keeps_the_heading_and_the_last_lines_that_fit() -> None:
    lines = [f"- nod_{i}: name {i} — statement {i} " + "x" * 40 for i in range(100)]
    text = "\n".join(["THE GRAPH SO FAR (…):", *lines])
    cut = bounded_digest(text, 200)
    assert estimate_tokens(cut) <= 200
    kept = cut.split("\n")
    assert kept[0] == "THE GRAPH SO FAR (…):"
    assert kept[-1] == lines[-1] and len(kept) > 2
    assert bounded_digest(text, 10_000) == text
    assert bounded_digest(text, 5) == ""


def test_the_graph_so_far_is_cut_to_what_the_first_request_leaves() -> None:
    window = offline_window()
    so_far = "\n".join(["THE GRAPH SO FAR:", *(f"- nod_{i}: n — s " + "y" * 60 for i in range(200))])
    source = _chunk(600)
    prompt = windowed_prompt(source, so_far, window)
    fits = int((CONTEXT_TOKENS - OFFLINE_MAX_TOKENS) / TOKENS_PER_ESTIMATE) - extractor_overhead_tokens()
    assert estimate_tokens(prompt) <= fits
    assert "THE GRAPH SO FAR" in prompt and prompt.endswith(source)
    # keyed models: whole
    assert windowed_prompt(source, so_far, None) == extractor_prompt(source, so_far)


def test_keyed_extractors_get_no_window_capability() -> None:
    model = _scripted([])
    keyed = build_extractor(model, kind="notes", existing={})
    windowed = build_extractor(model, kind="notes", existing={}, max_tokens=1024, window=offline_window())
    assert isinstance(keyed.agent, Agent) and keyed.agent is not windowed.agent
