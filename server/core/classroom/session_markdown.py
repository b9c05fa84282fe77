"""A lesson as Markdown (issue 31, item 1; the seed's `core/session-markdown`, future work there):
the document `GET /api/chats/{id}/export.md` streams, readable in Obsidian and on GitHub as it is.

Shape, in order:

- YAML front matter: title, lesson id, created, updated, model;
- `# <title>`;
- `## Plan: <plan title>` (when the lesson has a plan): a mermaid `graph TD` block, each node
  labelled with its status (current, visited, upcoming; `plan_tree.derive_statuses`) and styled by
  it, then the same as a list for readers that do not draw mermaid;
- `## Transcript`: one `### Learner` / `### Teacher` section per message, oldest first. Text as
  written (math stays `$…$` source); a quiz as a quote with its options in the order the learner
  saw them (`questions.display_order`), the correct one marked, the learner's answer and its
  grade, and the explanation; an open question with the learner's answer; the plan node being
  taught; a Workbench request. A Workbench result (a steer message, `contracts.jobs`) is a
  `### Workbench: <kind>` section: a research summary with its sources as links, a visual as an
  embedded SVG image (a `data:image/svg+xml;base64` URL: Obsidian draws it; GitHub shows its
  title), a demo as a link to its page in the app. A reply of the offline demo model is headed
  `### Teacher (demo model: may be wrong)`, as the page marks it; a reply cut short says so.
  The model's thinking and internal tool calls (graph look-ups) are left out; a learner's image
  is embedded as its data URL;
- `## Usage`: one table row per model run (role, model, tokens, requests, cost), then the totals;
  unreported tokens and unknown prices are shown as unknown, never as 0.

Streaming: `lesson_markdown` yields the document in pieces (the head, then one piece per message,
then the usage), reading the record it is given and building nothing the size of the lesson, so
a 10,000-message lesson is held once (the record) while its export streams
(tests/bench/classroom/bench_export.py).

Records hold UIMessages as the AI SDK wrote them; a part of an unexpected shape is skipped, never
an error: an export never fails half-way because of one odd message.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from server.core.classroom.plan_tree import derive_statuses, plan_of
from server.core.classroom.questions import display_order
from server.core.contracts.chat import ChatRecord, TurnUsage
from server.core.contracts.jobs import ARTIFACT_PART
from server.core.contracts.plan import PlanStatus, PlanTree
from server.core.contracts.questions import AskInput, QuizInput
from server.core.markdown import (
    block,
    count,
    front_matter,
    link_text,
    link_url,
    one_line,
    quoted,
    table,
)

DemoUrl = Callable[[str], str]
"""The URL of a finished demo's page, from its job id (the app's `/api/jobs/{id}/demo`)."""

STATUS_STYLE: dict[PlanStatus, str] = {
    "current": "fill:#fde68a,stroke:#b45309,color:#111",
    "visited": "fill:#bbf7d0,stroke:#15803d,color:#111",
    "upcoming": "fill:#e5e7eb,stroke:#6b7280,color:#111",
}
"""The mermaid class of each plan status (readable in light and dark themes)."""

JOB_WORDS = {"research": "research", "demo": "an interactive demo", "visual": "a visual"}
LETTERS = "ABCDEFGHIJ"


def lesson_markdown(record: ChatRecord, *, demo_url: DemoUrl | None = None) -> Iterator[str]:
    """The lesson as Markdown, in pieces (join them for the document; see the module docstring).

    Args:
        record: the session record (not changed; a cached record may be shared).
        demo_url: links a demo result to its page; None writes the demo's title and checks only.

    Yields: the head (front matter, title, plan), one piece per message that shows anything, the
    usage section. Never raises for a message's content.
    """
    plan = _plan(record.messages)
    yield _head(record, plan)
    labels = {node.id: node.label for node in plan[0].nodes} if plan else {}
    yield "## Transcript\n\n"
    shown = False
    for message in record.messages:
        piece = message_markdown(message, labels, demo_url)
        if piece:
            shown = True
            yield piece
    if not shown:
        yield "*Nothing was said in this lesson yet.*\n\n"
    yield from usage_markdown(record.usage)


def _plan(messages: list[dict[str, Any]]) -> tuple[PlanTree, dict[str, PlanStatus]] | None:
    """The lesson's plan and its nodes' statuses, or None (no plan, or parts too malformed for
    the plan's readers: then the transcript is still exported)."""
    try:
        plan = plan_of(messages)
        return (plan, derive_statuses(plan, messages)) if plan is not None else None
    except (AttributeError, TypeError):
        return None


def _head(record: ChatRecord, plan: tuple[PlanTree, dict[str, PlanStatus]] | None) -> str:
    model = f"{record.model.provider}/{record.model.model}"
    out = front_matter(
        {
            "title": record.title,
            "lesson": record.id,
            "created": record.created_at,
            "updated": record.updated_at,
            "model": model,
        }
    )
    out += f"# {one_line(record.title) or 'Untitled lesson'}\n\n"
    if plan is not None:
        out += plan_markdown(*plan)
    return out


def _label(text: str) -> str:
    """A mermaid node label's text inside `["…"]`: one line, quotes as the `#quot;` entity."""
    return one_line(text).replace('"', "#quot;")


def plan_markdown(plan: PlanTree, statuses: dict[str, PlanStatus]) -> str:
    """`## Plan: <title>`, the mermaid block (nodes renamed n0, n1, … so that an authored id such
    as `end` cannot break mermaid; each labelled `<label> · <status>` and styled by its status),
    then the nodes as a list `- <label> — <status>`."""
    names = {node.id: f"n{i}" for i, node in enumerate(plan.nodes)}
    lines = [f"## Plan: {one_line(plan.title) or 'Lesson plan'}", "", "```mermaid", "graph TD"]
    for node in plan.nodes:
        status = statuses.get(node.id, "upcoming")
        lines.append(f'  {names[node.id]}["{_label(node.label)} · {status}"]:::{status}')
    lines.extend(f"  {names[a]} --> {names[b]}" for a, b in plan.edges if a in names and b in names)
    lines.extend(f"  classDef {status} {style}" for status, style in STATUS_STYLE.items())
    lines += ["```", ""]
    lines.extend(f"- {one_line(node.label)} — {statuses.get(node.id, 'upcoming')}" for node in plan.nodes)
    return "\n".join(lines) + "\n\n"


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def message_markdown(message: dict[str, Any], labels: dict[str, str], demo_url: DemoUrl | None = None) -> str:
    """One message's section (`### Learner`, `### Teacher` or `### Workbench: <kind>`), or "" when
    it shows nothing (a thinking-only reply, a system message).

    Args:
        message: a UIMessage as stored.
        labels: the plan's node labels by id (a quiz or `plan_teach` names its node by label).
        demo_url: see `lesson_markdown`.
    """
    if not isinstance(message, dict):
        return ""
    role = message.get("role")
    parts = _parts(message)
    artifact = next((p for p in parts if p.get("type") == ARTIFACT_PART), None)
    if role == "user" and artifact is not None:
        return _steer(artifact.get("data"), demo_url)
    if role not in ("user", "assistant"):
        return ""
    body = "".join(_part(p, labels) for p in parts)
    if not body:
        return ""
    heading = "### Learner" if role == "user" else "### Teacher"
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and role == "assistant":
        if metadata.get("demo"):
            heading += " (demo model: may be wrong)"
        if metadata.get("interrupted"):
            error = metadata.get("error")
            why = f": {one_line(error)}" if isinstance(error, str) and error.strip() else ""
            body += f"*(This reply was cut short{why}.)*\n\n"
    return f"{heading}\n\n{body}"


def _part(part: dict[str, Any], labels: dict[str, str]) -> str:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        return block(text) if isinstance(text, str) else ""
    if kind == "file":
        return _file(part)
    url = part.get("url")
    if kind == "source-url" and isinstance(url, str):
        title = part.get("title")
        return f"Source: [{link_text(title if isinstance(title, str) else url)}]({link_url(url)})\n\n"
    if kind == "tool-quiz":
        return _quiz(part, labels)
    if kind == "tool-ask_user_question":
        return _ask(part)
    if kind == "tool-plan_teach" and part.get("state") == "output-available":
        node = _input(part).get("node")
        if isinstance(node, str):
            return f"*Now teaching: {one_line(labels.get(node, node))}*\n\n"
    if kind == "tool-plan_init" and part.get("state") == "output-available":
        title = _input(part).get("title")
        where = " (see Plan above)" if labels else ""
        return f"*The teacher drew the plan “{one_line(str(title or ''))}”{where}.*\n\n"
    if kind in ("tool-research", "tool-demo", "tool-visual"):
        tool_input = _input(part)
        request = tool_input.get("question") or tool_input.get("request")
        if isinstance(request, str):
            words = JOB_WORDS[kind.removeprefix("tool-")]
            return f"*Asked the Workbench for {words}: {one_line(request)}*\n\n"
    return ""  # thinking, step marks, graph look-ups, data parts


def _input(part: dict[str, Any]) -> dict[str, Any]:
    value = part.get("input")
    return value if isinstance(value, dict) else {}


def _file(part: dict[str, Any]) -> str:
    url, media = part.get("url"), part.get("mediaType")
    filename = part.get("filename")
    name = filename if isinstance(filename, str) else "image"
    if (
        isinstance(url, str)
        and isinstance(media, str)
        and media.startswith("image/")
        and url.startswith("data:")
    ):
        return f"![{link_text(name)}]({url})\n\n"
    return f"*(a file: {one_line(name)})*\n\n"


def _quiz(part: dict[str, Any], labels: dict[str, str]) -> str:
    try:
        quiz = QuizInput.model_validate(part.get("input"))
    except ValidationError:
        return ""  # a call the model got wrong: the learner never saw it
    found = part.get("toolCallId")
    call_id = found if isinstance(found, str) else ""
    order = display_order(call_id, len(quiz.options))
    output = part.get("output") if part.get("state") == "output-available" else None
    chosen = output.get("chosen") if isinstance(output, dict) else None
    head = "**Quiz**"
    if quiz.node:
        head += f" (plan: {one_line(labels.get(quiz.node, quiz.node))})"
    lines = [head, "", quiz.question.strip(), ""]
    for position, index in enumerate(order):
        marks = []
        if index == quiz.correct:
            marks.append("✓ correct")
        if index == chosen:
            marks.append("← your answer")
        suffix = f" *({'; '.join(marks)})*" if marks else ""
        lines.append(f"- **{LETTERS[position]}.** {one_line(quiz.options[index])}{suffix}")
    lines.append("")
    if isinstance(chosen, int) and 0 <= chosen < len(quiz.options):
        letter = LETTERS[order.index(chosen)]
        verdict = "correct ✓" if chosen == quiz.correct else "incorrect ✗"
        lines.append(f"**Your answer:** {letter}, {verdict}")
        lines += ["", f"*Why:* {quiz.explanation.strip()}"]
    else:
        lines.append("*Not answered.*")
    return quoted("\n".join(lines))


def _ask(part: dict[str, Any]) -> str:
    try:
        ask = AskInput.model_validate(part.get("input"))
    except ValidationError:
        return ""
    lines = ["**Question**", "", ask.question.strip(), ""]
    lines.extend(f"- {one_line(option)}" for option in ask.options)
    if ask.options:
        lines.append("")
    output = part.get("output") if part.get("state") == "output-available" else None
    answer = output.get("answer") if isinstance(output, dict) else None
    if isinstance(answer, str) and answer.strip():
        lines += ["**Your answer:**", "", answer.strip()]
    else:
        lines.append("*Not answered.*")
    return quoted("\n".join(lines))


def _steer(data: object, demo_url: DemoUrl | None) -> str:
    """A Workbench result's section, from the steer message's artifact part data
    (`{"jobId", "kind", "status", "artifact", "error"}`, `contracts.jobs.steer_message`)."""
    if not isinstance(data, dict):
        return ""
    kind = data.get("kind") if data.get("kind") in JOB_WORDS else "job"
    head = f"### Workbench: {kind}\n\n"
    status = data.get("status")
    if status == "aborted":
        return head + "*Stopped by the learner before it finished.*\n\n"
    artifact = data.get("artifact")
    if status != "done" or not isinstance(artifact, dict):
        error = data.get("error")
        return head + f"*It failed: {one_line(str(error or 'no reason given'))}*\n\n"
    if artifact.get("kind") == "research":
        out = head + f"**{one_line(str(artifact.get('question', '')))}**\n\n"
        out += block(str(artifact.get("summary", "")))
        sources = artifact.get("sources")
        for i, source in enumerate(sources if isinstance(sources, list) else [], start=1):
            if isinstance(source, dict) and isinstance(source.get("url"), str):
                title = str(source.get("title") or source["url"])
                out += f"{i}. [{link_text(title)}]({link_url(source['url'])})\n"
        return out + "\n"
    title = one_line(str(artifact.get("title") or kind))
    if artifact.get("kind") == "visual" and isinstance(artifact.get("svg"), str):
        encoded = base64.b64encode(artifact["svg"].encode("utf-8", "replace")).decode("ascii")
        return head + f"**{title}**\n\n![{link_text(title)}](data:image/svg+xml;base64,{encoded})\n\n"
    if artifact.get("kind") == "demo":
        job_id = data.get("jobId")
        out = head + f"**{title}**\n\n"
        if demo_url is not None and isinstance(job_id, str):
            out += f"[Open the demo]({link_url(demo_url(job_id))}) (while the app runs)\n\n"
        checks = artifact.get("checks")
        for check in checks if isinstance(checks, list) else []:
            out += f"- {one_line(str(check))}\n"
        return out + ("\n" if checks else "")
    return ""


def _tokens(value: int | None) -> str:
    return count(value) if value is not None else "unknown"


def _cost(value: float | None) -> str:
    return f"${value:.4f}" if value is not None else "unknown"


def _sum(values: Iterable[int | float | None]) -> tuple[float, int]:
    """(sum of the known values, how many are unknown)."""
    total, unknown = 0.0, 0
    for value in values:
        if value is None:
            unknown += 1
        else:
            total += value
    return total, unknown


def _total(total: float, unknown: int, money: bool = False) -> str:
    known = f"${total:.4f}" if money else count(int(total))
    return known + (f" (+{unknown} unreported)" if unknown else "")


def usage_markdown(usage: list[TurnUsage]) -> Iterator[str]:
    """`## Usage`: a table row per model run, then the totals (the sum of what is known and how
    many runs did not report it), or a sentence when there was none."""
    yield "## Usage\n\n"
    if not usage:
        yield "*No model usage recorded.*\n"
        return
    rows = (
        [
            u.at,
            u.role,
            f"{u.provider}/{u.model}",
            _tokens(u.input_tokens),
            _tokens(u.output_tokens),
            str(u.requests),
            _cost(u.cost_usd),
        ]
        for u in usage
    )
    yield from table(["When", "Role", "Model", "Input tokens", "Output tokens", "Requests", "Cost"], rows)
    tokens_in, unknown_in = _sum(u.input_tokens for u in usage)
    tokens_out, unknown_out = _sum(u.output_tokens for u in usage)
    cost, unknown_cost = _sum(u.cost_usd for u in usage)
    yield (
        f"**Total:** {count(len(usage))} model runs, {count(sum(u.requests for u in usage))} requests, "
        f"{_total(tokens_in, unknown_in)} input tokens, {_total(tokens_out, unknown_out)} output tokens, "
        f"cost {_total(cost, unknown_cost, money=True)}.\n"
    )
