"""The scripted partitioner, generator and grader, told apart by their prompts, deterministic in
their input, with switches that make them misbehave the ways a real model does (issue 13).

Partitioner: one group per chain ("Group 1", ...), in the listed order, or every chain in one
group titled `one_group`; `partition_first` makes its first submit duplicate a chain
("duplicate") or drop one ("drop"), so the partition law sends it back; `partition_always` makes
every submit do so (the run fails after 4 turns).
Generator: one problem about a heap's root, echoing its target chains; `echo_first_wrong` makes
the first submit echo one id too many; `rubric_first_missing` makes the first submit leave the
rubric out (the schema sends it back); a target whose chains mention a proposition named in
`fail_names` raises (that problem errors).
Grader: `grade_first` is submitted first (e.g. "8/10" or 11: refused by the schema), then `score`
with a comment; its first `grade_prose` turns are prose with no submit at all (a large number: it
never submits).
Anything else is the extractor or auditor `graph` (None: read as a partitioner's request).

Served in-process by calling a `PracticeScript` as a `FunctionModel` function (it records every
prompt in `prompts`; `partition_gate` / `gen_gate` / `gate`, when set, are awaited before a
partitioner / generator / grader answers) and over HTTP as `practice_reply` (score 7, one group
"Heaps", the plain extractor and auditor for everything else: one stub plays every role a
practice set needs).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from tests.scripts.library import PLAIN, GraphScript
from tests.scripts.serving import Ask, Reply, ask_of_messages, over_http, response

PROBLEM = {
    "title": "Where the smallest key lives",
    "statement": "A heap holds the keys $5, 3, 8, 1$. Which key is at the root, and why?",
    "solution": "The key $1$: heap order makes every parent at most its children.",
    "rubric": "- uses heap order\n- concludes $1$ is at the root",
}
"""What the generator writes (with `chainIds`, its target)."""
COMMENT = "You named heap order; say why it reaches the root."
"""The grader's comment."""


def role(prompt: str) -> str:
    """Which practice model a prompt is for: "grade", "generate", "partition" or "other"."""
    if prompt.startswith("THE PROBLEM:"):
        return "grade"
    if prompt.startswith("THE LEVELS OF THIS SET:"):
        return "generate" if "YOUR TARGET" in prompt else "partition"
    return "other"


def _ids(section: str) -> list[str]:
    return re.findall(r"^- ((?:arg|single)_[A-Za-z0-9_]+):", section, re.M)


@dataclass
class PracticeScript:
    partition_first: str | None = None
    partition_always: str | None = None
    partition_gate: asyncio.Event | None = None
    one_group: str | None = None
    echo_first_wrong: bool = False
    rubric_first_missing: bool = False
    fail_names: set[str] = field(default_factory=set)
    grade_first: Any = None
    grade_prose: int = 0
    score: int = 8
    gate: asyncio.Event | None = None
    gen_gate: asyncio.Event | None = None
    graph: GraphScript | None = None
    prompts: list[str] = field(default_factory=list)

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """In-process: record the prompt, wait on the gate of its role, answer."""
        ask = ask_of_messages(messages, info)
        self.prompts.append(ask.prompt)
        gate = {"grade": self.gate, "generate": self.gen_gate}.get(role(ask.prompt), self.partition_gate)
        if gate is not None:
            await gate.wait()
        return response(self.step(ask))

    def step(self, ask: Ask) -> Reply:
        """The answer to `ask`."""
        kind = role(ask.prompt)
        if kind == "grade":
            return self.grade(ask)
        if kind == "generate" or (self.graph is None and "YOUR TARGET" in ask.prompt):
            return self.generate(ask)
        if kind == "other" and self.graph is not None:
            return self.graph(ask)
        return self.partition(ask)

    def grade(self, ask: Ask) -> Reply:
        if ask.turn <= self.grade_prose:
            return Reply("I would give this answer a solid 7 out of 10.")
        value = self.grade_first if self.grade_first is not None and not ask.sent_back() else self.score
        return Reply("", ("submit", {"score": value, "comment": COMMENT}, "g"))

    def generate(self, ask: Ask) -> Reply:
        target_section = ask.prompt.split("YOUR TARGET", 1)[1].split("THE FULL SET", 1)[0]
        target = _ids(target_section)
        if any(name in target_section for name in self.fail_names):
            raise RuntimeError("the model broke down on this problem")
        ids = list(target)
        if self.echo_first_wrong and not ask.sent_back():
            ids = [*ids, "arg_not_yours"]
        problem: dict[str, Any] = {"chainIds": ids, **PROBLEM}
        if self.rubric_first_missing and not ask.sent_back():
            del problem["rubric"]
        return Reply("", ("submit", problem, "gen"))

    def partition(self, ask: Ask) -> Reply:
        chains = _ids(ask.prompt.split("THE CHAINS", 1)[1].split("THE PROPOSITIONS", 1)[0])
        if self.one_group is not None:
            return Reply("", ("submit", {"groups": [{"chainIds": chains, "title": self.one_group}]}, "part"))
        groups = [[c] for c in chains]
        mistake = self.partition_always or (None if ask.sent_back() else self.partition_first)
        if mistake == "duplicate" and len(chains) > 1:
            groups[0] = [chains[0], chains[1]]
        if mistake == "drop" and len(chains) > 1:
            groups = groups[1:]
        titled = [{"chainIds": g, "title": f"Group {i}"} for i, g in enumerate(groups, 1)]
        return Reply("", ("submit", {"groups": titled}, "part"))


OVER_HTTP = PracticeScript(score=7, one_group="Heaps", graph=PLAIN)
"""The practice models the HTTP stub plays (with the plain extractor and auditor)."""
practice_reply = over_http(OVER_HTTP.step)
"""Over HTTP: `create_stub(practice_reply)`."""
