"""Benchmark: the auditor's candidates on labelled proposition pairs (issue 16). Three rankings:
`before` (as `server/core/library/candidates.py` was: name/alias matches, then rapidfuzz WRatio >= 60 on
raw text), `lexical+exact` (exact normalized statements linked without the model; name matches,
then BM25's best re-ranked by token_set_ratio on case-folded words, from the indexes of
`server/core/library/candidate_index.py`, issue 28) and `fused` (the same, with the fuzzy and
embedding ranks merged by reciprocal rank fusion; the packaged all-MiniLM-L6-v2 int8 ONNX model).
Since issue 28 the normalized statement keeps letter case: the `case` pairs (paraphrases equal but
for case, and distinct pairs differing only by a letter's case, `$F$` / `$f$`) are candidates for
the auditor, never links.

Run: `.venv/bin/python -m tests.bench.library.bench_candidates` (not part of the test suite).

The pairs are `tests/vectors/paraphrase_pairs.json`: groups of an anchor claim from a fixture note
and variants, each a pair with its anchor (paraphrase: reworded or exact; distinct: a changed
number, direction, qualifier, a negation, or a related claim). For each pair the variant is the
query and the graph holds every anchor and every distinct variant except the query (the hard
negatives stand beside the claims they mimic):

- recall@5: the share of paraphrase queries whose anchor is among the 5 candidates (a
  deterministic link to the anchor counts as found).
- deterministic links: how many queries were linked without the model, and the false-merge rate:
  wrong links (to anything but the anchor of a paraphrase; any link of a distinct query) over the
  links made, and over the distinct queries. Before, the only model-free signal was an exact
  name/alias match (ranked first, then judged by the model); it is scored as if it linked, to show
  what a name rule would merge.
- in a batch: the query and its anchor in one job's findings with 4 other anchors of the same
  note; recall@5 of the anchor among the query's same-batch candidates, and the share of distinct
  pairs that still put the anchor there (each such batch costs an auditor call on an empty graph).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from server.agent.library.embedder import OnnxEmbedder
from server.core.contracts.graph import FindingProposition, Proposition
from server.core.library.candidates import audit_candidates, text_of

PAIRS = Path(__file__).resolve().parents[2] / "vectors" / "paraphrase_pairs.json"
LIMIT = 5
NOTES = [
    "algorithms-graph-dijkstra.en.md",
    "data-structures-heap.en.md",
    "algorithms-math-bits.en.md",
    "algorithms-sets-knapsack-problem.en.md",
    "system-design-primer.large.en.md",
]


def note_sentences() -> list[dict[str, str]]:
    """Every prose sentence of the English fixture notes (40-240 characters, 6+ words, no tables,
    code or bare links), as distractor nodes named by their first three words."""
    from tests.shared import NOTES as NOTES_DIR

    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for note in NOTES:
        text = (NOTES_DIR / note).read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith(("|", "#", ">", "<"))]
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(" ".join(lines).split())):
            sentence = sentence.strip("*-• ")
            prose = 40 <= len(sentence) <= 240 and len(sentence.split()) >= 6 and "http" not in sentence
            if prose and sentence not in seen:
                seen.add(sentence)
                name = " ".join(re.findall(r"[\w'-]+", sentence)[:3])
                out.append({"id": f"n_s{len(out)}", "name": name, "statement": sentence})
    return out


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def lexical_before(
    finding: FindingProposition, nodes: Mapping[str, Proposition], limit: int = LIMIT
) -> tuple[list[str], str | None]:
    """The candidates as they were before issue 16 (and the name match the bench scores as a link)."""
    by_name: dict[str, list[str]] = {}
    for node in nodes.values():
        for name in [node.name, *node.aliases]:
            by_name.setdefault(_key(name), []).append(node.id)
    found: list[str] = []
    for name in [finding.name, *finding.aliases]:
        for node_id in by_name.get(_key(name), []):
            if node_id not in found:
                found.append(node_id)
    named = found[0] if found else None
    choices = {node.id: f"{node.name}. {node.statement}" for node in nodes.values()}
    if len(found) < limit:
        query = f"{finding.name}. {finding.statement}"
        for _, score, node_id in process.extract(query, choices, scorer=fuzz.WRatio, limit=limit * 2):
            if score >= 60.0 and node_id not in found:
                found.append(node_id)
    return found[:limit], named


def load() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(anchors, pairs): anchors {id, source, prop}; pairs {id, anchor, label, kind, prop}."""
    data = json.loads(PAIRS.read_text(encoding="utf-8"))
    anchors, pairs = [], []
    for g, group in enumerate(data["groups"]):
        name, statement = group["anchor"]
        anchors.append({"id": f"n_a{g}", "source": group["source"], "name": name, "statement": statement})
        for v, (label, kind, vname, vstatement) in enumerate(group["variants"]):
            pairs.append(
                {
                    "id": f"n_v{g}_{v}",
                    "anchor": f"n_a{g}",
                    "label": label,
                    "kind": kind,
                    "name": vname,
                    "statement": vstatement,
                }
            )
    return anchors, pairs


def prop(row: dict[str, str]) -> Proposition:
    return Proposition(
        id=row["id"], name=row["name"], statement=row["statement"], aliases=[], sources=["s"], createdAt="t0"
    )


def finding(row: dict[str, str], fid: str = "p1") -> FindingProposition:
    return FindingProposition(id=fid, name=row["name"], statement=row["statement"])


def main() -> None:
    anchors, pairs = load()
    extra = note_sentences()
    rows = {r["id"]: r for r in [*anchors, *pairs, *extra]}
    embedder = OnnxEmbedder()
    started = time.perf_counter()
    ids = list(rows)
    matrix = embedder.embed([text_of(prop(rows[i])) for i in ids])
    embed_ms = (time.perf_counter() - started) * 1000 / len(ids)
    vec = {i: matrix[k] for k, i in enumerate(ids)}
    print(f"{len(pairs)} pairs in {len(anchors)} groups; {len(extra)} note sentences as distractors")
    print(
        f"embedding: {embed_ms:.1f} ms per text ({len(ids)} texts batched, 1 thread, with the model's load)"
    )
    base = [a["id"] for a in anchors] + [p["id"] for p in pairs if p["label"] == "distinct"]
    for title, graph_rows in (
        ("anchors and hard negatives", base),
        ("anchors, hard negatives and every sentence of the English notes", base + [e["id"] for e in extra]),
    ):
        print(f"\n### graph: {title} ({len(graph_rows) - 1} nodes per query)")
        run(anchors, pairs, rows, vec, graph_rows)


def run(
    anchors: list[dict[str, str]],
    pairs: list[dict[str, str]],
    rows: dict[str, dict[str, str]],
    vec: dict[str, np.ndarray],
    graph_rows: list[str],
) -> None:

    stats: dict[str, dict[str, int]] = {}

    def bump(mode: str, key: str, n: int = 1) -> None:
        stats.setdefault(mode, {}).setdefault(key, 0)
        stats[mode][key] += n

    for pair in pairs:
        nodes = {i: prop(rows[i]) for i in graph_rows if i != pair["id"]}
        query = finding(pair)
        para = pair["label"] == "paraphrase"
        before, named = lexical_before(query, nodes)
        lex = audit_candidates([query], nodes)
        fused = audit_candidates(
            [query],
            nodes,
            finding_vectors=vec[pair["id"]][None, :],
            node_vectors=np.stack([vec[i] for i in nodes]),
        )
        for mode, found, link in (
            ("before", before, named),
            ("lexical+exact", lex.existing.get("p1", []), lex.exact.get("p1")),
            ("fused", fused.existing.get("p1", []), fused.exact.get("p1")),
        ):
            tag = f"{pair['label']}/{pair['kind']}"
            bump(mode, f"n {tag}")
            if para:
                bump(mode, "paraphrases")
                hit = link == pair["anchor"] or pair["anchor"] in found
                bump(mode, "recall hits", hit)
                bump(mode, f"hits {tag}", hit)
            else:
                bump(mode, "distincts")
            if link is not None:
                bump(mode, "links")
                wrong = not para or link != pair["anchor"]
                bump(mode, "false merges", wrong)
                bump(mode, f"false merges {tag}", wrong)
                bump(mode, "false merges of distinct", wrong and not para)

        # in a batch: 4 other anchors of the same note, the anchor, then the query
        same = [
            a for a in anchors if a["source"] == rows[pair["anchor"]]["source"] and a["id"] != pair["anchor"]
        ][:4]
        batch_rows = [*same, rows[pair["anchor"]], pair]
        batch = [finding(r, f"p{k}") for k, r in enumerate(batch_rows)]
        anchor_fid, query_fid = f"p{len(batch) - 2}", f"p{len(batch) - 1}"
        bv = np.stack([vec[r["id"]] for r in batch_rows])
        for mode, found_b in (
            ("lexical+exact", audit_candidates(batch, {})),
            (
                "fused",
                audit_candidates(batch, {}, finding_vectors=bv, node_vectors=np.zeros((0, bv.shape[1]))),
            ),
        ):
            in_batch = found_b.exact.get(query_fid) == anchor_fid or anchor_fid in found_b.batch.get(
                query_fid, []
            )
            bump(mode, "batch hits" if para else "batch distinct candidates", in_batch)
            bump(mode, "batch false merges", not para and found_b.exact.get(query_fid) is not None)

    print()
    print(
        "| ranking | recall@5 (paraphrases) | reworded | exact | deterministic links "
        "| false merges / links | false merges / distinct pairs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for mode, s in stats.items():
        n_para, dist = s["paraphrases"], s["distincts"]
        links = s.get("links", 0)
        fm = s.get("false merges", 0)
        fmd = s.get("false merges of distinct", 0)
        reworded = f"{s.get('hits paraphrase/reworded', 0)}/{s['n paraphrase/reworded']}"
        exact = f"{s.get('hits paraphrase/exact', 0)}/{s['n paraphrase/exact']}"
        rate = f"{fm / links:.1%}" if links else "n/a"
        print(
            f"| {mode} | {s['recall hits'] / n_para:.1%} ({s['recall hits']}/{n_para}) | {reworded} | "
            f"{exact} | "
            f"{links} | {rate} ({fm}) | {fmd / dist:.1%} ({fmd}/{dist}) |"
        )
    print()
    print(
        "| ranking | in-batch recall@5 | distinct pairs still same-batch candidates | in-batch false merges |"
    )
    print("|---|---:|---:|---:|")
    for mode in ("lexical+exact", "fused"):
        s = stats[mode]
        n_para, dist = s["paraphrases"], s["distincts"]
        print(
            f"| {mode} | {s.get('batch hits', 0) / n_para:.1%} | "
            f"{s.get('batch distinct candidates', 0) / dist:.1%} | {s.get('batch false merges', 0)} |"
        )
    print()
    kinds = sorted({k[len("n distinct/") :] for k in stats["fused"] if k.startswith("n distinct/")})
    print("false merges by hard-negative kind (before = name rule; after = statement rule):")
    for kind in kinds:
        n = stats["fused"][f"n distinct/{kind}"]
        b = stats["before"].get(f"false merges distinct/{kind}", 0)
        a = stats["fused"].get(f"false merges distinct/{kind}", 0)
        print(f"  {kind}: {n} pairs, before {b}, after {a}")


if __name__ == "__main__":
    main()
