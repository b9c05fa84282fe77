"""The merger and chain simplification (seed §6): pure, deterministic, sound."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.graph import (
    Chain,
    ChainLine,
    CoverageLine,
    FindingChain,
    FindingProposition,
    Findings,
    IdentityLink,
    NodeLine,
    Provenance,
    Verdicts,
)
from server.core.library.graph import (
    chain_id,
    covered_by,
    findings_problems,
    fold_chains,
    fold_nodes,
    node_id,
    plan_merge,
    version_jobs,
)
from server.core.library.simplify import ChainIndex, restorable, simplify

PROV = Provenance(source="c_1", job="job_1")


def chain(premises: list[str], conclusion: str, at: str = "t0", cid: str | None = None) -> Chain:
    return Chain(
        id=cid or chain_id(premises, conclusion),
        premises=sorted(premises),
        conclusion=conclusion,
        sources=["s"],
        createdAt=at,
    )


def prop(pid: str, name: str | None = None) -> FindingProposition:
    return FindingProposition(id=pid, name=name or pid.upper(), statement=f"{pid} holds.")


# -- simplification ------------------------------------------------------------------------------
def test_strict_containment_prefers_fewer_premises() -> None:
    small, big = chain(["A", "B"], "Y", "t1"), chain(["A", "B", "C"], "Y", "t0")
    assert simplify({c.id: c for c in (small, big)}) == {big.id}


def test_ancestry_cover_from_the_seed() -> None:
    ab_x, xc_y, abc_y = chain(["A", "B"], "X"), chain(["X", "C"], "Y"), chain(["A", "B", "C"], "Y")
    assert simplify({c.id: c for c in (ab_x, xc_y, abc_y)}) == {abc_y.id}


def test_transitive_ancestry_cover() -> None:
    chains = [chain(["A"], "B"), chain(["B"], "C"), chain(["C", "D"], "Y"), chain(["A", "D", "E"], "Y")]
    assert simplify({c.id: c for c in chains}) == {chains[3].id}


def test_an_argument_that_needs_less_is_not_redundant() -> None:
    # [A,B]⟹X and [X,C]⟹Y do not make [A,B]⟹Y redundant: that argument does not need C.
    chains = [chain(["X", "C"], "Y", "t0"), chain(["A", "B"], "X", "t1"), chain(["A", "B"], "Y", "t2")]
    assert simplify({c.id: c for c in chains}) == set()


def test_independent_arguments_for_one_conclusion_both_stay() -> None:
    chains = [chain(["A", "B"], "E"), chain(["C", "D"], "E")]
    assert simplify({c.id: c for c in chains}) == set()


def test_cycles_do_not_loop_or_justify_themselves() -> None:
    chains = [chain(["A"], "B"), chain(["B"], "A"), chain(["A", "C"], "Y"), chain(["B", "C"], "Y", "t1")]
    dropped = simplify({c.id: c for c in chains})
    assert dropped == {chains[3].id}  # {B, C} derives A through B⟹A, so [A,C]⟹Y covers [B,C]⟹Y


def derives(premises: set[str], rules: list[Chain]) -> set[str]:
    known = set(premises)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            if rule.conclusion not in known and set(rule.premises) <= known:
                known.add(rule.conclusion)
                changed = True
    return known


NODES = st.sampled_from(list("ABCDEFGH"))


@st.composite
def chain_sets(draw: st.DrawFn) -> dict[str, Chain]:
    out: dict[str, Chain] = {}
    for i in range(draw(st.integers(0, 14))):
        conclusion = draw(NODES)
        premises = draw(st.sets(NODES.filter(lambda n, c=conclusion: n != c), min_size=1, max_size=4))
        c = chain(sorted(premises), conclusion, f"t{i:02d}")
        out.setdefault(c.id, c)
    return out


@settings(max_examples=300, deadline=None)
@given(chain_sets(), st.sets(NODES, max_size=4))
def test_simplification_preserves_what_the_graph_derives(chains: dict[str, Chain], start: set[str]) -> None:
    dropped = simplify(chains)
    kept = [c for c in chains.values() if c.id not in dropped]
    assert derives(start, list(chains.values())) == derives(start, kept)
    for cid in dropped:  # every dropped chain is derivable from what stays
        c = chains[cid]
        assert c.conclusion in derives(set(c.premises), kept)


@settings(max_examples=200, deadline=None)
@given(chain_sets(), chain_sets())
def test_incremental_simplification_is_sound_too(old: dict[str, Chain], new: dict[str, Chain]) -> None:
    base = {cid: c for cid, c in old.items() if cid not in simplify(old)}
    fresh = [c for cid, c in new.items() if cid not in base]
    merged = {**base, **{c.id: c for c in fresh}}
    dropped = simplify(merged, changed=fresh)
    kept = [c for c in merged.values() if c.id not in dropped]
    for cid in dropped:
        assert merged[cid].conclusion in derives(set(merged[cid].premises), kept)


def test_incremental_leaves_unrelated_parts_alone() -> None:
    unrelated = {c.id: c for c in [chain(["P"], "Q"), chain(["P", "R"], "Q")]}  # redundant, but untouched
    new = chain(["A"], "B")
    assert simplify({**unrelated, new.id: new}, changed=[new]) == set()
    assert simplify({**unrelated, new.id: new}) == {chain(["P", "R"], "Q").id}


# -- the local redundancy check equals the ancestry walk it replaced (issue 17) -----------------
def oracle_redundant(c: Chain, kept_by_conclusion: dict[str, list[Chain]]) -> bool:
    """The pre-issue-17 check: gather the kept rules in the rivals' whole ancestry (not past the
    given premises or the conclusion), then forward-chain from the given premises over them."""
    rivals = kept_by_conclusion.get(c.conclusion, [])
    if not rivals:
        return False
    given = set(c.premises)
    seen = given | {c.conclusion}
    stack = [t for t in {p for r in rivals for p in r.premises} if t not in seen]
    seen.update(stack)
    rules: list[Chain] = []
    while stack:
        for rule in kept_by_conclusion.get(stack.pop(), []):
            rules.append(rule)
            for premise in rule.premises:
                if premise not in seen:
                    seen.add(premise)
                    stack.append(premise)
    derived = derives(given, rules)
    return any(set(r.premises) <= derived for r in rivals)


def oracle_simplify(chains: dict[str, Chain], changed: list[Chain] | None = None) -> set[str]:
    if changed is None:
        candidates = list(chains.values())
    else:
        affected = {c.conclusion for c in changed}
        grew = True
        while grew:
            more = {c.conclusion for c in chains.values() if affected & set(c.premises)} - affected
            affected |= more
            grew = bool(more)
        candidates = [c for c in chains.values() if c.conclusion in affected]
    ids = {c.id for c in candidates}
    kept: dict[str, list[Chain]] = defaultdict(list)
    for c in chains.values():
        if c.id not in ids:
            kept[c.conclusion].append(c)
    dropped = set()
    for c in sorted(candidates, key=lambda c: (len(c.premises), c.created_at, c.id)):
        if oracle_redundant(c, kept):
            dropped.add(c.id)
        else:
            kept[c.conclusion].append(c)
    return dropped


WIDE = st.sampled_from([f"N{i}" for i in range(12)])


@st.composite
def wide_chain_sets(draw: st.DrawFn) -> dict[str, Chain]:
    out: dict[str, Chain] = {}
    for _ in range(draw(st.integers(0, 40))):
        conclusion = draw(WIDE)
        premises = draw(st.sets(WIDE.filter(lambda n, c=conclusion: n != c), min_size=1, max_size=4))
        c = chain(sorted(premises), conclusion, f"t{draw(st.integers(0, 5)):02d}")
        out.setdefault(c.id, c)
    return out


@settings(max_examples=400, deadline=None)
@given(st.one_of(chain_sets(), wide_chain_sets()), st.one_of(chain_sets(), wide_chain_sets()))
def test_local_simplification_equals_the_ancestry_walk(old: dict[str, Chain], new: dict[str, Chain]) -> None:
    assert simplify(old) == oracle_simplify(old)
    fresh = [c for cid, c in new.items() if cid not in old]
    merged = {**old, **{c.id: c for c in fresh}}
    expected = oracle_simplify(merged, fresh)
    assert simplify(merged, changed=fresh) == expected
    # a kept index layered with the new chains gives the same answer as one built on the spot
    layered = ChainIndex(old.values()).over(fresh)
    assert simplify(merged, changed=fresh, index=layered) == expected


def test_a_kept_index_follows_adds_and_discards() -> None:
    ab_x, xc_y, abc_y = chain(["A", "B"], "X"), chain(["X", "C"], "Y"), chain(["A", "B", "C"], "Y")
    index = ChainIndex([ab_x, abc_y])
    index.add(xc_y)
    assert simplify({c.id: c for c in (ab_x, xc_y, abc_y)}, changed=[xc_y], index=index) == {abc_y.id}
    index.discard(xc_y)  # without X, C => Y nothing covers A, B, C => Y
    assert list(index.premised("X")) == [] and list(index.concluding("Y")) == [abc_y]
    assert simplify({c.id: c for c in (ab_x, abc_y)}, changed=[abc_y], index=index) == set()


# -- validation ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "findings, words",
    [
        pytest.param(
            Findings(propositions=[prop("p1"), prop("p1")], chains=[]), "unique", id="duplicate-ids"
        ),
        pytest.param(
            Findings(propositions=[prop("p1")], chains=[FindingChain(premises=["p9"], conclusion="p1")]),
            "p9",
            id="unknown-premise",
        ),
        pytest.param(
            Findings(
                propositions=[prop("p1"), prop("p2")],
                chains=[FindingChain(premises=["p1", "p2"], conclusion="p2")],
            ),
            "conclusion p2 as a premise",
            id="self-reference",
        ),
    ],
)
def test_findings_problems(findings: Findings, words: str) -> None:
    assert any(words in p for p in findings_problems(findings, {}))


def test_existing_node_ids_are_valid_endpoints() -> None:
    findings = Findings(propositions=[prop("p1")], chains=[FindingChain(premises=["n_old"], conclusion="p1")])
    assert findings_problems(findings, {"n_old": object()}) == []


def test_findings_require_both_fields() -> None:
    with pytest.raises(ValueError):
        Findings.model_validate({"propositions": []})
    with pytest.raises(ValueError):
        Verdicts.model_validate({})
    with pytest.raises(ValueError):
        FindingChain.model_validate({"premises": [], "conclusion": "p1"})


# -- merging -------------------------------------------------------------------------------------
def test_merge_links_creates_dedupes_and_passes_existing_ids_through() -> None:
    existing_node = fold_nodes(
        [
            NodeLine(
                id="n_old",
                name="Limit",
                statement="Limits exist.",
                provenance=Provenance(source="c_0", job="j0"),
                at="t0",
            )
        ]
    )
    old_chain = chain(["n_old"], "n_x")  # ids are deterministic in (premises, conclusion)
    first = old_chain.id
    nodes = {
        **existing_node,
        "n_x": fold_nodes([NodeLine(id="n_x", name="X", statement="X.", provenance=PROV, at="t0")])["n_x"],
    }
    findings = Findings(
        propositions=[prop("p1", "Limits"), prop("p2", "Derivative")],
        chains=[
            FindingChain(premises=["p1"], conclusion="p2"),
            FindingChain(premises=["p1"], conclusion="p2"),  # repeated within the job
            FindingChain(premises=["p1"], conclusion="n_x"),
        ],  # = the old chain, via the link
    )
    verdicts = Verdicts(
        links=[
            IdentityLink(finding="p1", node="n_old"),
            IdentityLink(finding="p2", node="n_missing"),  # invalid: ignored
            IdentityLink(finding="zz", node="n_old"),
        ]
    )  # not submitted: ignored
    plan = plan_merge(nodes, {old_chain.id: old_chain}, findings, verdicts, PROV, "t1")
    new_p2 = node_id("c_1", "job_1", "p2")
    assert [line.id for line in plan.node_lines] == ["n_old", new_p2]
    assert (plan.added_nodes, plan.linked_nodes, plan.added_chains) == (1, 1, 1)
    ids = [line.id for line in plan.chain_lines]
    assert ids == [chain_id(["n_old"], new_p2), chain_id(["n_old"], new_p2), first]
    merged = fold_chains(
        [
            ChainLine(
                id=first,
                premises=["n_old"],
                conclusion="n_x",
                provenance=Provenance(source="c_0", job="j0"),
                at="t0",
            ),
            *plan.chain_lines,
        ]
    )
    assert len(merged) == 2 and merged[first].sources == ["c_0", "c_1"]
    folded = fold_nodes(
        [
            *(
                NodeLine(
                    id="n_old",
                    name="Limit",
                    statement="Limits exist.",
                    provenance=Provenance(source="c_0", job="j0"),
                    at="t0",
                ),
            ),
            *plan.node_lines,
        ]
    )
    assert folded["n_old"].aliases == ["Limits"] and folded["n_old"].sources == ["c_0", "c_1"]


def test_a_rerun_of_a_changed_source_welds_nothing_it_was_not_told_to_link() -> None:
    """Issue 11, item 1: a changed notes file re-runs an unchanged chunk's job; the model now says
    something else. Nothing of the new run may land on an old id unless the auditor linked it,
    even when the job id is the same as before (the ids collided before the fix)."""
    heap = Findings(
        propositions=[prop("p1", "Binary heap"), prop("p2", "Heap order")],
        chains=[FindingChain(premises=["p1"], conclusion="p2")],
    )
    first = plan_merge({}, {}, heap, Verdicts(links=[]), PROV, "t1")
    nodes, chains = fold_nodes(first.node_lines), fold_chains(first.chain_lines)
    rerun = Findings(
        propositions=[prop("p1", "Sift-down cost"), prop("p2", "Binary heap")],
        chains=[FindingChain(premises=["p1"], conclusion="p2")],  # reversed: was Binary heap ⟹ …
    )
    again = plan_merge(nodes, chains, rerun, Verdicts(links=[]), PROV, "t2")  # the same job id
    assert not [line.id for line in again.node_lines if line.id in nodes]  # no silent link
    assert (again.added_nodes, again.linked_nodes) == (2, 0)
    merged = fold_nodes([*first.node_lines, *again.node_lines])
    assert len(merged) == 4 and all(n.aliases == [] for n in merged.values())  # nothing welded
    graph = fold_chains([*first.chain_lines, *again.chain_lines])
    assert len(graph) == 2 and not any(  # no chain reversed into a cycle
        c.premises == [d.conclusion] and d.premises == [c.conclusion]
        for c in graph.values()
        for d in graph.values()
    )


def test_only_the_auditors_links_reach_existing_nodes() -> None:
    first = plan_merge(
        {}, {}, Findings(propositions=[prop("p1", "Heap")], chains=[]), Verdicts(links=[]), PROV, "t1"
    )
    nodes = fold_nodes(first.node_lines)
    [old] = nodes
    rerun = Findings(propositions=[prop("p1", "Heap"), prop("p2", "Sift-down")], chains=[])
    plan = plan_merge(nodes, {}, rerun, Verdicts(links=[IdentityLink(finding="p1", node=old)]), PROV, "t2")
    assert [line.id == old for line in plan.node_lines] == [True, False]
    assert (plan.added_nodes, plan.linked_nodes) == (1, 1)


def test_a_new_node_never_takes_a_reserved_id() -> None:
    findings = Findings(propositions=[prop("p1")], chains=[])
    taken = node_id(PROV.source, PROV.job, "p1")
    plan = plan_merge({}, {}, findings, Verdicts(links=[]), PROV, "t1", reserved={taken})
    assert plan.node_lines[0].id != taken and plan.node_lines[0].id.startswith("n_")


def test_merge_simplifies_with_the_new_chains() -> None:
    findings = Findings(
        propositions=[prop(p) for p in ("a", "b", "c", "x", "y")],
        chains=[
            FindingChain(premises=["a", "b", "c"], conclusion="y"),
            FindingChain(premises=["a", "b"], conclusion="x"),
            FindingChain(premises=["x", "c"], conclusion="y"),
        ],
    )
    plan = plan_merge({}, {}, findings, Verdicts(links=[]), PROV, "t1")
    by_key = defaultdict(list)
    for line in plan.chain_lines:
        by_key[line.id].append(line)
    big = chain_id([node_id("c_1", "job_1", p) for p in "abc"], node_id("c_1", "job_1", "y"))
    assert plan.dropped_chains == {big}


# -- replacement and restoration (docs/decisions/0010-...) -----------------------------------------
def cov(job: str, message: str, fingerprint: str) -> CoverageLine:
    return CoverageLine(source="c_1", message=message, fingerprint=fingerprint, job=job, at="t")


def test_a_job_belongs_to_a_version_only_when_every_pair_it_read_is_current() -> None:
    lines = [cov("j1", "m1", "a"), cov("j1", "m2", "b"), cov("j2", "m3", "c"), cov("j3", "m4", "old")]
    version = {"m1": "a", "m2": "b-edited", "m3": "c", "m4": "new"}
    assert version_jobs(lines, version) == {"j2"}  # j1 read m2's old text; j3 read m4's old text
    assert covered_by(lines, version_jobs(lines, version)) == {"m3": {"c"}}  # so m1 is read again
    assert version_jobs(lines, {"m1": "a", "m2": "b", "m3": "c", "m4": "old"}) == {"j1", "j2", "j3"}
    assert version_jobs([], version) == set()


@settings(max_examples=200, deadline=None)
@given(chain_sets(), chain_sets())
def test_restoration_brings_back_exactly_what_the_graph_no_longer_derives(
    kept: dict[str, Chain], archived: dict[str, Chain]
) -> None:
    nodes = dict.fromkeys("ABCDEFGH")
    archived = {cid: c for cid, c in archived.items() if cid not in kept}
    restored = restorable(archived, kept, nodes)
    after = [*kept.values(), *restored]
    for c in archived.values():  # whatever was archived is derived again
        assert c.conclusion in derives(set(c.premises), after)
    for c in restored:  # and nothing restored was derivable from the current chains alone
        assert c.conclusion not in derives(set(c.premises), list(kept.values()))
    assert {c.id for c in restored} <= set(archived)


def test_restoration_needs_every_member_and_skips_current_chains() -> None:
    ab = chain(["A"], "B", "t1")
    assert restorable({ab.id: ab}, {}, dict.fromkeys("A")) == []  # B is gone: it would dangle
    assert restorable({ab.id: ab}, {ab.id: ab}, dict.fromkeys("AB")) == []
    assert restorable({ab.id: ab}, {}, dict.fromkeys("AB")) == [ab]
    bc, ac = chain(["B"], "C", "t2"), chain(["A"], "C", "t3")
    assert restorable({ac.id: ac}, {ab.id: ab, bc.id: bc}, dict.fromkeys("ABC")) == []  # still derived
