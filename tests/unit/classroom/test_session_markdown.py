"""A lesson as Markdown (issue 31, item 1): `core/classroom/session_markdown.py`.

The document is parsed back with markdown-it (CommonMark, as Obsidian and GitHub read it) and its
front matter with YAML: the structure survives any text a message holds."""

from __future__ import annotations

import base64
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from server.core.classroom.plan_tree import parse_plan
from server.core.classroom.questions import display_order
from server.core.classroom.session_markdown import lesson_markdown
from server.core.contracts.chat import ChatRecord, TurnUsage

PLAN_SOURCE = 'graph TD\n limits[Limits & $\\epsilon$] --> deriv[Derivative]\n deriv --> end[The "end"]'
QUIZ = {
    "question": "The derivative of $x^2$?",
    "options": ["$x$", "$2x$", "$x^2$"],
    "correct": 1,
    "explanation": "Power rule: $2x$.",
    "node": "deriv",
}
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle r="4"/></svg>'
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nxx").decode()


def chat(**fields: Any) -> ChatRecord:
    return ChatRecord.model_validate(fields)


def usage_row(**fields: Any) -> TurnUsage:
    return TurnUsage.model_validate(fields)


def text(message_id: str, role: str, body: str) -> dict[str, Any]:
    return {"id": message_id, "role": role, "parts": [{"type": "text", "text": body}]}


def steer(
    job: str, kind: str, status: str, artifact: dict[str, Any] | None, error: str | None = None
) -> dict[str, Any]:
    data = {
        "jobId": job,
        "kind": kind,
        "status": status,
        "toolCallId": f"call_{job}",
        "artifact": artifact,
        "error": error,
    }
    return {
        "id": f"steer_{job}_result",
        "role": "user",
        "metadata": {"steer": True, "jobId": job},
        "parts": [
            {"type": "text", "text": f"[background {kind} {job} finished] model-facing words"},
            {"type": "data-subagent-artifact", "id": f"steer_{job}_result", "data": data},
        ],
    }


def full_lesson() -> ChatRecord:
    plan = parse_plan("Derivatives", PLAN_SOURCE)
    messages = [
        {
            "id": "u0",
            "role": "user",
            "parts": [
                {"type": "text", "text": "Teach me $f'(x)$"},
                {"type": "file", "mediaType": "image/png", "url": PNG, "filename": "sketch.png"},
            ],
        },
        {
            "id": "a0",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "reasoning", "text": "SECRET THOUGHTS"},
                {
                    "type": "tool-list_sessions",
                    "toolCallId": "g1",
                    "state": "output-available",
                    "input": {},
                    "output": {"x": 1},
                },
                {
                    "type": "tool-plan_init",
                    "toolCallId": "p1",
                    "state": "output-available",
                    "input": {"title": "Derivatives", "mermaid": PLAN_SOURCE},
                    "output": {"ok": True, "plan": plan.model_dump()},
                },
                {
                    "type": "tool-plan_teach",
                    "toolCallId": "t1",
                    "state": "output-available",
                    "input": {"node": "deriv"},
                    "output": {"ok": True},
                },
                {"type": "text", "text": "The slope is $$\\lim_{h\\to 0} \\frac{f(x+h)-f(x)}{h}$$"},
                {
                    "type": "tool-quiz",
                    "toolCallId": "quiz_1",
                    "state": "output-available",
                    "input": QUIZ,
                    "output": {
                        "kind": "quiz",
                        "chosen": 0,
                        "chosenText": "$x$",
                        "correct": False,
                        "correctIndex": 1,
                        "correctText": "$2x$",
                    },
                },
            ],
        },
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-ask_user_question",
                    "toolCallId": "ask_1",
                    "state": "output-available",
                    "input": {"question": "What is your goal?", "options": ["Exams", "Fun"]},
                    "output": {"kind": "answer", "answer": "To pass my exam", "chosen": None},
                },
                {
                    "type": "tool-visual",
                    "toolCallId": "call_job_v",
                    "state": "output-available",
                    "input": {"request": "a tangent line"},
                    "output": {},
                },
                {
                    "type": "tool-quiz",
                    "toolCallId": "quiz_2",
                    "state": "input-available",
                    "input": {**QUIZ, "question": "Pending one?"},
                },
            ],
        },
        steer(
            "job_v",
            "visual",
            "done",
            {"kind": "visual", "title": "Tangent", "svg": SVG, "lookedAt": True, "checks": []},
        ),
        steer(
            "job_r",
            "research",
            "done",
            {
                "kind": "research",
                "question": "Who invented calculus?",
                "summary": "Newton and Leibniz [1].",
                "sources": [{"title": "History (of) [calculus]", "url": "https://example.org/a(b)"}],
            },
        ),
        steer(
            "job_d",
            "demo",
            "done",
            {"kind": "demo", "title": "Slider", "html": "<p>x</p>", "checks": ["the slider moves"]},
        ),
        steer("job_x", "research", "error", None, "the search provider refused"),
        text("u1", "user", "```python\nprint('never closed')"),
        text("a2", "assistant", "After the fence."),
    ]
    usage = [
        usage_row(
            messageId="a0",
            role="teacher",
            provider="openai",
            model="gpt-x",
            inputTokens=1200,
            outputTokens=300,
            requests=2,
            costUsd=0.01,
            at="2026-01-01T00:00:00Z",
        ),
        usage_row(
            messageId="a1",
            role="teacher",
            provider="local",
            model="m|x",
            inputTokens=None,
            outputTokens=None,
            requests=1,
            costUsd=None,
            at="2026-01-01T00:01:00Z",
        ),
    ]
    return chat(
        id="c_1",
        title='Derivatives: "the" basics',
        createdAt="2026-01-01T00:00:00Z",
        updatedAt="2026-01-02T00:00:00Z",
        model={"provider": "openai", "model": "gpt-x"},
        messages=messages,
        usage=usage,
    )


def export(record: ChatRecord) -> str:
    return "".join(lesson_markdown(record, demo_url=lambda job: f"http://127.0.0.1:8000/api/jobs/{job}/demo"))


def headings(document: str) -> list[str]:
    """The headings' texts, the front matter left out (Obsidian and GitHub read it as metadata)."""
    body = document.split("\n---\n", 1)[1] if document.startswith("---\n") else document
    tokens = MarkdownIt("commonmark").parse(body)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def front(document: str) -> dict[str, Any]:
    assert document.startswith("---\n")
    end = document.index("\n---\n", 4)
    loaded = yaml.safe_load(document[4:end])
    assert isinstance(loaded, dict)
    return loaded


def test_the_front_matter_reads_back_as_the_record_says() -> None:
    document = export(full_lesson())
    assert front(document) == {
        "title": 'Derivatives: "the" basics',
        "lesson": "c_1",
        "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-02T00:00:00Z",
        "model": "openai/gpt-x",
    }


def test_the_sections_come_in_order_and_a_fence_left_open_swallows_nothing() -> None:
    document = export(full_lesson())
    assert headings(document) == [
        'Derivatives: "the" basics',
        "Plan: Derivatives",
        "Transcript",
        "Learner",
        "Teacher",
        "Teacher",
        "Workbench: visual",
        "Workbench: research",
        "Workbench: demo",
        "Workbench: research",
        "Learner",
        "Teacher",
        "Usage",
    ]
    assert "After the fence." in document


def test_the_plan_is_a_mermaid_block_with_each_nodes_status() -> None:
    document = export(full_lesson())
    block = document.split("```mermaid\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert lines[0] == "graph TD"
    # renamed ids (an authored `end` would end a mermaid subgraph), quotes as entities, math kept
    assert '  n0["Limits & $\\epsilon$ · upcoming"]:::upcoming' in lines
    assert '  n1["Derivative · current"]:::current' in lines
    assert '  n2["The #quot;end#quot; · upcoming"]:::upcoming' in lines
    assert "  n0 --> n1" in lines and "  n1 --> n2" in lines
    assert "- Derivative — current" in document
    assert "*Now teaching: Derivative*" in document


def test_a_quiz_shows_the_options_as_the_learner_saw_them_the_answer_and_its_grade() -> None:
    document = export(full_lesson())
    order = display_order("quiz_1", 3)
    letters = {index: "ABC"[position] for position, index in enumerate(order)}
    assert "> **Quiz** (plan: Derivative)" in document
    assert f"> - **{letters[1]}.** $2x$ *(✓ correct)*" in document
    assert f"> - **{letters[0]}.** $x$ *(← your answer)*" in document
    assert f"> **Your answer:** {letters[0]}, incorrect ✗" in document
    assert "> *Why:* Power rule: $2x$." in document
    pending = document.split("> Pending one?", 1)[1]
    assert "> *Not answered.*" in pending.split("###", 1)[0]


def test_text_and_math_are_kept_as_source_and_thinking_is_left_out() -> None:
    document = export(full_lesson())
    assert "Teach me $f'(x)$" in document
    assert "$$\\lim_{h\\to 0} \\frac{f(x+h)-f(x)}{h}$$" in document
    assert "SECRET THOUGHTS" not in document and "model-facing words" not in document
    assert f"![sketch.png]({PNG})" in document
    assert "> To pass my exam" in document and "> - Exams" in document
    assert "*Asked the Workbench for a visual: a tangent line*" in document


def test_workbench_results_are_embedded_or_linked() -> None:
    document = export(full_lesson())
    encoded = base64.b64encode(SVG.encode()).decode()
    assert f"![Tangent](data:image/svg+xml;base64,{encoded})" in document
    assert "1. [History (of) \\[calculus\\]](https://example.org/a%28b%29)" in document
    assert "[Open the demo](http://127.0.0.1:8000/api/jobs/job_d/demo)" in document
    assert "- the slider moves" in document
    assert "*It failed: the search provider refused*" in document
    links = [
        t.attrGet("href")
        for block in MarkdownIt("commonmark").parse(document)
        for t in (block.children or [])
        if t.type == "link_open"
    ]
    assert "https://example.org/a%28b%29" in links


def test_usage_rows_and_totals_never_count_unreported_as_zero() -> None:
    document = export(full_lesson())
    usage = document.split("## Usage\n\n", 1)[1]
    tokens = MarkdownIt("commonmark").enable("table").parse(usage)
    cells = [t.content for t in tokens if t.type == "inline"]
    assert cells[:7] == ["When", "Role", "Model", "Input tokens", "Output tokens", "Requests", "Cost"]
    assert cells[7:14] == ["2026-01-01T00:00:00Z", "teacher", "openai/gpt-x", "1,200", "300", "2", "$0.0100"]
    assert cells[14:21] == [
        "2026-01-01T00:01:00Z",
        "teacher",
        "local/m|x",
        "unknown",
        "unknown",
        "1",
        "unknown",
    ]
    assert (
        "**Total:** 2 model runs, 3 requests, 1,200 (+1 unreported) input tokens, "
        "300 (+1 unreported) output tokens, cost $0.0100 (+1 unreported)." in usage
    )


def test_a_demo_reply_and_a_reply_cut_short_say_so() -> None:
    demo = {**text("a9", "assistant", "Paris is in Spain."), "metadata": {"demo": True}}
    cut = {
        **text("a10", "assistant", "Half"),
        "metadata": {"interrupted": True, "error": "the model\nstopped"},
    }
    record = full_lesson().model_copy(update={"messages": [demo, cut]})
    document = export(record)
    assert headings(document)[2:4] == ["Teacher (demo model: may be wrong)", "Teacher"]
    assert "Half\n\n*(This reply was cut short: the model stopped.)*" in document


def test_an_empty_lesson_says_so() -> None:
    record = chat(
        id="c_2", title="New lesson", createdAt="t", updatedAt="t", model={"provider": "local", "model": "m"}
    )
    document = export(record)
    assert headings(document) == ["New lesson", "Transcript", "Usage"]
    assert "*Nothing was said in this lesson yet.*" in document
    assert "*No model usage recorded.*" in document


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
PART = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "text",
                "tool-quiz",
                "tool-ask_user_question",
                "tool-plan_init",
                "tool-plan_teach",
                "tool-visual",
                "file",
                "source-url",
                "data-subagent-artifact",
                "reasoning",
                "x",
            ]
        )
    },
    optional={
        "text": JSON,
        "input": JSON,
        "output": JSON,
        "state": st.sampled_from(["output-available", "input-available"]),
        "data": JSON,
        "url": JSON,
        "toolCallId": JSON,
    },
)
MESSAGE = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=5),
        "role": st.sampled_from(["user", "assistant", "system"]),
        "parts": st.lists(PART | JSON, max_size=4),
    }
)


@settings(max_examples=100, deadline=None)
@given(
    messages=st.lists(MESSAGE, max_size=6),
    words=st.lists(
        st.text(max_size=60)
        | st.lists(
            st.sampled_from(["```", "~~~", "````py", "`", "# h", "<div>", "x", "\n", "    ", "> "]),
            max_size=8,
        ).map("".join),
        min_size=1,
        max_size=4,
    ),
)
def test_any_stored_messages_export_and_every_learner_text_keeps_its_heading(
    messages: list[dict[str, Any]], words: list[str]
) -> None:
    """Records hold what the AI SDK wrote, loosely checked: no part shape makes the export fail, and
    whatever a learner typed (fences, headings, HTML) cannot swallow the headings after it."""
    learner = [text(f"w{i}", "user", w) for i, w in enumerate(words) if w.strip()]
    record = chat(
        id="c_3",
        title="T",
        createdAt="t",
        updatedAt="t",
        model={"provider": "local", "model": "m"},
        messages=[*messages, *learner, text("last", "assistant", "THE END")],
    )
    document = export(record)
    found = headings(document)
    assert found[-1] == "Usage" and found[-2] == "Teacher"
    assert "THE END" in document
