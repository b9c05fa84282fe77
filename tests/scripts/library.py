"""The scripted extractor and auditor, deterministic in their input.

Extractor: names up to three propositions after the source's first headings or lines
("Untitled idea" when none), chains them `p1 ⟹ p2 ⟹ p3`. A pack of notes (`<note id>`
sections, decision 0023): the same per note, each finding naming its note, ids unique across the
submit. Auditor (its request offers `find`): no links.

Switches that make it exercise the graph's laws (all on in `graph_model`, the in-process serving):
`redundant` also chains `p1 ∧ p2 ⟹ p3` (simplification must drop it); `lean_on_graph` chains the
first existing id of THE GRAPH SO FAR `⟹ p1` (from a source's second stretch on);
`dangling_first` makes its first submit of a conversation refer to a missing id, so the chain
laws send it back once; `link_twins` makes the auditor link a proposition to a candidate with
exactly the same name. `reads_packs` off: a pack is read as one source (its submit names no note,
so the pack fails and each note runs alone, as with a model that cannot keep notes apart).

Served in-process as `graph_model` (a `FunctionModel` function, every switch on, packs not read)
and over HTTP as `graph_reply` (no switch on, packs read).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from tests.scripts.serving import Ask, Reply, over_http, whole


def _names(source: str) -> list[str]:
    names: list[str] = []
    for line in source.splitlines():
        name = re.sub(r"^[#>*\-\s]+", "", line).strip()[:60]
        if len(name) > 3 and name not in names:
            names.append(name)
        if len(names) == 3:
            break
    return names


@dataclass(frozen=True)
class GraphScript:
    redundant: bool = False
    lean_on_graph: bool = False
    dangling_first: bool = False
    link_twins: bool = False
    reads_packs: bool = True

    def __call__(self, ask: Ask) -> Reply:
        if "find" in ask.tools:
            return self.audit(ask)
        if self.reads_packs and '<note id="' in ask.prompt:
            return self.pack(ask)
        return self.extract(ask)

    def extract(self, ask: Ask) -> Reply:
        source = ask.prompt.split("THE SOURCE:\n", 1)[-1]
        props = [
            {"id": f"p{i + 1}", "name": n, "statement": f"{n} is a claim of this source."}
            for i, n in enumerate(_names(source) or ["Untitled idea"])
        ]
        chains: list[dict[str, Any]] = [
            {"premises": [f"p{i}"], "conclusion": f"p{i + 1}"} for i in range(1, len(props))
        ]
        if self.redundant and len(props) >= 3:
            chains.append({"premises": ["p1", "p2"], "conclusion": "p3"})
        existing = re.search(r"^- (n_[0-9a-f]{16}):", ask.prompt, re.M)
        if self.lean_on_graph and existing and len(props) >= 2:
            chains.append({"premises": [existing.group(1)], "conclusion": "p1"})
        if self.dangling_first and not ask.sent_back():
            chains.append({"premises": ["p99"], "conclusion": "p1"})  # refused: p99 does not exist
        return Reply("", ("submit", {"propositions": props, "chains": chains}, "call_extract"))

    def pack(self, ask: Ask) -> Reply:
        """A pack of notes (decision 0023): per `<note id>` section, what a lone note would get,
        each finding naming its note, ids unique across the submit."""
        props: list[dict[str, Any]] = []
        chains: list[dict[str, Any]] = []
        sections = re.findall(r'<note id="([^"]+)"[^>]*>\n(.*?)\n</note>', ask.prompt, re.S)
        for k, (note, text) in enumerate(sections):
            ids = []
            for i, n in enumerate(_names(text)):
                ids.append(f"n{k}p{i + 1}")
                props.append(
                    {"id": ids[-1], "note": note, "name": n, "statement": f"{n} is a claim of this source."}
                )
            chains += [{"premises": [a], "conclusion": b, "note": note} for a, b in itertools.pairwise(ids)]
        return Reply("", ("submit", {"propositions": props, "chains": chains}, "call_extract"))

    def audit(self, ask: Ask) -> Reply:
        links: list[dict[str, str]] = []
        current = None
        for line in ask.prompt.splitlines() if self.link_twins else []:
            head = re.match(r"^- (p\d+): (.*?) — ", line)
            if head:
                current = head.groups()
                continue
            cand = re.match(r"^\s+candidate (n_[0-9a-f]+): (.*?) — ", line)
            if (
                cand
                and current
                and cand.group(2) == current[1]
                and not any(link["finding"] == current[0] for link in links)
            ):
                links.append({"finding": current[0], "node": cand.group(1)})
        return Reply("", ("submit", {"links": links}, "call_audit"))


LAWFUL = GraphScript(
    redundant=True, lean_on_graph=True, dangling_first=True, link_twins=True, reads_packs=False
)
"""The extractor that tries the graph's laws (in-process flows)."""
PLAIN = GraphScript()
"""The extractor that just answers (over HTTP: e2e, processes, benches)."""

graph_model = whole(LAWFUL)
"""In-process: `FunctionModel(function=graph_model)`."""
graph_reply = over_http(PLAIN)
"""Over HTTP: `create_stub(graph_reply)`."""
