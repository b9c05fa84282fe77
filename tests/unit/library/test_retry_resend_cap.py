"""Issue 28 item 7: a refused pack's retries grew to 1.27 MB per request. pydantic-ai re-sends the
whole run on a retry: every earlier refused submit, and every earlier refusal, which for a pack
whose submit misnames its notes lists each misnamed finding with all the pack's note ids. A keyed
extractor's retry now resends the first request whole plus only the last refused answer and its
refusal, cut to `RETRY_RESEND_TOKENS` together (`agent.library.retries`).

The pack agent is the real one (`build_pack_extractor`), its model a scripted FunctionModel that
misnames every finding's note on every turn, as a confused model did; each request's size is the
JSON pydantic-ai would serialise for it.
"""

from __future__ import annotations

import json

import pytest
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from server.agent.library.extraction import EXTRACTOR_TURNS, build_pack_extractor, run_pack_extractor
from server.agent.library.retries import RETRY_RESEND_TOKENS, bound_retry_history
from server.agent.library.window import CUT_NOTE, messages_tokens
from server.core.contracts.graph import PackedFindings
from server.core.library.packing import PACK_MAX_NOTES, PackNote, pack_problems, pack_prompt

IDS = [f"src_{i:012x}" for i in range(PACK_MAX_NOTES)]


def _notes() -> list[PackNote]:
    """A full pack of small notes (made per test: no module holds a pack's objects, which
    `test_finished_packs_leave_nothing_of_theirs_held` looks for)."""
    return [
        PackNote(src, f"note {i}.md", "\n".join(f"Line {j} of note {i} is a fact." for j in range(12)))
        for i, src in enumerate(IDS)
    ]


def _misnamed_submit() -> dict[str, object]:
    """Every line of every note a proposition, each naming a note that was not given."""
    props = [
        {
            "id": f"p{i}_{j}",
            "name": f"Fact {i}.{j}",
            "statement": f"Line {j} of note {i} is a fact.",
            "note": "src_x",
        }
        for i in range(len(IDS))
        for j in range(12)
    ]
    return {"propositions": props, "chains": []}


def _size(messages: list[ModelMessage]) -> int:
    return len(ModelMessagesTypeAdapter.dump_json(messages))


async def test_a_refused_packs_retries_resend_at_most_the_cap() -> None:
    prompt_text = pack_prompt(_notes())
    sent: list[list[ModelMessage]] = []
    submit = json.dumps(_misnamed_submit())

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(list(messages))
        return ModelResponse(parts=[ToolCallPart("submit", submit, tool_call_id=f"call{len(sent)}")])

    extractor = build_pack_extractor(FunctionModel(answer), notes=IDS, existing={})
    with pytest.raises(UnexpectedModelBehavior):  # refused on every turn: the pack fails
        await run_pack_extractor(extractor, prompt_text, RunUsage())
    assert len(sent) == EXTRACTOR_TURNS

    # what each refusal would have carried: the scenario is the one seen (about a megabyte)
    refusal = "; ".join(pack_problems(PackedFindings.model_validate_json(submit), IDS, {}))
    unbounded = (EXTRACTOR_TURNS - 1) * (len(refusal) + len(submit))
    sizes = [_size(m) for m in sent]
    print("pack request sizes (bytes):", sizes, "unbounded last:", sizes[0] + unbounded)
    assert unbounded > 1_000_000

    first = messages_tokens(sent[0])
    for messages in sent[1:]:
        assert messages_tokens(messages) - first <= RETRY_RESEND_TOKENS
    # in bytes on the wire (JSON escapes, the instructions each request carries): ~2 % of before
    assert max(sizes) <= sizes[0] + 2 * 4 * RETRY_RESEND_TOKENS < (sizes[0] + unbounded) / 10
    assert sizes[-1] <= sizes[1] + 200  # no growth turn to turn
    # each retry still holds the notes whole, and says why it was refused
    for messages in sent[1:]:
        prompt = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]
        assert [p.content for p in prompt] == [prompt_text]
        [retry] = messages[-1].parts  # the refusal (a retried tool return, or a retry prompt)
        assert isinstance(retry, RetryPromptPart | ToolReturnPart)
        text = retry.model_response() if isinstance(retry, RetryPromptPart) else str(retry.content)
        assert "which is not one of the notes given" in text
        assert CUT_NOTE in text  # the long refusal was cut, and says so


def _request(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(text)])


def test_bound_retry_history_keeps_the_first_request_and_the_last_refusal_only() -> None:
    first = _request("THE SOURCE:\n" + "words " * 2000)
    history: list[ModelMessage] = [first]
    for turn in range(3):
        history.append(
            ModelResponse(parts=[ToolCallPart("submit", {"x": f"{turn} " * 50_000}, tool_call_id=f"c{turn}")])
        )
        history.append(
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        "submit",
                        f"refused {turn}: " + "why " * 80_000,
                        tool_call_id=f"c{turn}",
                        outcome="retried",
                    )
                ]
            )
        )
    kept = bound_retry_history(history)
    assert kept[0] is first and len(kept) == 3
    assert messages_tokens(kept) - messages_tokens([first]) <= RETRY_RESEND_TOKENS
    [part] = kept[-1].parts
    assert isinstance(part, ToolReturnPart) and str(part.content).startswith("refused 2:")
    assert str(part.content).endswith(CUT_NOTE)
    [call] = kept[1].parts
    assert isinstance(call, ToolCallPart) and call.tool_call_id == "c2"  # the pair still matches
    # short histories pass unchanged
    assert bound_retry_history([first]) == [first]
    small: list[ModelMessage] = [
        first,
        ModelResponse(parts=[ToolCallPart("submit", {"x": 1}, tool_call_id="c")]),
        _request("again"),
    ]
    assert bound_retry_history(small) == small
