"""The scripted partitioner, generator and grader over the OpenAI chat-completions wire (for the
stub server), told apart by their prompts; anything else is the extractor or auditor
(`tests/stub_graph.py`). One stub thus plays every role a practice set needs.

Partitioner: every chain in one group "Heaps". Generator: one problem about a heap's root, echoing
its target chains. Grader: 7/10 with a comment.
"""

from __future__ import annotations

import re
from typing import Any

from tests.stub_graph import _last_user_text, graph_reply
from tests.stub_openai import Reply


def _ids(section: str) -> list[str]:
    return re.findall(r"^- ((?:arg|single)_[A-Za-z0-9_]+):", section, re.M)


def practice_reply(body: dict[str, Any]) -> Reply:
    text = _last_user_text(body)
    if text.startswith("THE PROBLEM:"):
        return Reply(
            "", ("submit", {"score": 7, "comment": "You named heap order; say why it reaches the root."}, "g")
        )
    if text.startswith("THE LEVELS OF THIS SET:") and "YOUR TARGET" in text:
        target = _ids(text.split("YOUR TARGET", 1)[1].split("THE FULL SET", 1)[0])
        problem = {
            "chainIds": target,
            "title": "Where the smallest key lives",
            "statement": "A heap holds the keys $5, 3, 8, 1$. Which key is at the root, and why?",
            "solution": "The key $1$: heap order makes every parent at most its children.",
            "rubric": "- uses heap order\n- concludes $1$ is at the root",
        }
        return Reply("", ("submit", problem, "gen"))
    if text.startswith("THE LEVELS OF THIS SET:"):
        chains = _ids(text.split("THE CHAINS", 1)[1].split("THE PROPOSITIONS", 1)[0])
        return Reply("", ("submit", {"groups": [{"chainIds": chains, "title": "Heaps"}]}, "part"))
    return graph_reply(body)
