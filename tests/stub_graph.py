"""The scripted extractor and auditor over the OpenAI chat-completions wire (for the stub server):
the HTTP twin of `tests/flows/graph_script.py`, for tests that run `python -m server`.

Extractor: propositions named after the source's first three lines, chains p1 ⟹ p2 and p2 ⟹ p3.
A pack of notes (`<note id>` sections): the same per note, each finding naming its note.
Auditor (its request offers `find`): no links.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.stub_openai import Reply


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content)
    return ""


def _names(source: str) -> list[str]:
    names: list[str] = []
    for line in source.splitlines():
        name = re.sub(r"^[#>*\-\s]+", "", line).strip()[:60]
        if len(name) > 3 and name not in names:
            names.append(name)
        if len(names) == 3:
            break
    return names


def _pack_reply(prompt: str) -> Reply:
    """A pack of notes (decision 0023): per `<note id>` section, what a lone note would get, each
    finding naming its note, ids unique across the submit."""
    props: list[dict[str, Any]] = []
    chains: list[dict[str, Any]] = []
    for k, (note, text) in enumerate(re.findall(r'<note id="([^"]+)"[^>]*>\n(.*?)\n</note>', prompt, re.S)):
        ids = []
        for i, n in enumerate(_names(text)):
            ids.append(f"n{k}p{i + 1}")
            props.append(
                {"id": ids[-1], "note": note, "name": n, "statement": f"{n} is a claim of this source."}
            )
        chains += [{"premises": [a], "conclusion": b, "note": note} for a, b in itertools.pairwise(ids)]
    return Reply("", ("submit", {"propositions": props, "chains": chains}, "call_extract"))


def graph_reply(body: dict[str, Any]) -> Reply:
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "find" in tools:
        return Reply("", ("submit", {"links": []}, "call_audit"))
    prompt = _last_user_text(body)
    if '<note id="' in prompt:
        return _pack_reply(prompt)
    source = prompt.split("THE SOURCE:\n", 1)[-1]
    names: list[str] = []
    for line in source.splitlines():
        name = re.sub(r"^[#>*\-\s]+", "", line).strip()[:60]
        if len(name) > 3 and name not in names:
            names.append(name)
        if len(names) == 3:
            break
    props = [
        {"id": f"p{i + 1}", "name": n, "statement": f"{n} is a claim of this source."}
        for i, n in enumerate(names or ["Untitled idea"])
    ]
    chains = [{"premises": [f"p{i}"], "conclusion": f"p{i + 1}"} for i in range(1, len(props))]
    return Reply("", ("submit", {"propositions": props, "chains": chains}, "call_extract"))
