"""The graph's folds share what repeats (issue 28, item 3: the 100k graph's memory): one fields-set
for every folded proposition (chain), and one string object per id, source and time, so a chain's
members are its propositions' own id strings. Results equal the lines' meaning (the merger's
tests); here only the sharing that keeps a large graph small."""

from __future__ import annotations

from server.core.contracts.graph import ChainLine, NodeLine, Proposition, Provenance
from server.core.library.graph import fold_chains, fold_nodes


def _node(i: int, source: str = "src_a", name: str | None = None) -> NodeLine:
    # ids and times built at run time: equal strings, distinct objects, as a ledger read makes them
    return NodeLine(
        id="".join(["n_", f"{i:016x}"]),
        name=name or f"P{i}",
        statement=f"Statement {i}.",
        provenance=Provenance(source="".join(["src_", source[4:]]), job="job_1"),
        at="".join(["2026-12-06T", "00:00:00Z"]),
    )


def test_folded_propositions_share_their_fields_set_and_strings() -> None:
    nodes = fold_nodes([_node(i) for i in range(3)])
    a, b, c = nodes.values()
    assert a.model_fields_set == set(Proposition.model_fields)
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__ is c.__pydantic_fields_set__
    assert a.sources[0] is b.sources[0] and a.created_at is c.created_at


def test_a_touched_copy_shares_them_too_and_the_earlier_fold_is_unchanged() -> None:
    first = fold_nodes([_node(1)])
    later = fold_nodes([_node(1, source="src_b", name="Another name")], into=first)
    was, now = first["n_0000000000000001"], later["n_0000000000000001"]
    assert was is not now and was.sources == ["src_a"] and was.aliases == []
    assert now.sources == ["src_a", "src_b"] and now.aliases == ["Another name"]
    assert now.__pydantic_fields_set__ is was.__pydantic_fields_set__


def test_a_chains_members_are_its_propositions_own_id_strings() -> None:
    nodes = fold_nodes([_node(i) for i in range(3)])
    line = ChainLine(
        id="arg_1",
        premises=["".join(["n_", f"{i:016x}"]) for i in (1, 0)],
        conclusion="".join(["n_", f"{2:016x}"]),
        provenance=Provenance(source="src_a", job="job_1"),
        at="2026-12-06T00:00:00Z",
    )
    chain = fold_chains([line])["arg_1"]
    ids = {nid: node.id for nid, node in nodes.items()}
    assert chain.premises == ["n_0000000000000000", "n_0000000000000001"]
    assert all(p is ids[p] for p in chain.premises) and chain.conclusion is ids[chain.conclusion]
    again = fold_chains(
        [line.model_copy(update={"provenance": Provenance(source="src_b", job="job_2")})],
        into={"arg_1": chain},
    )
    assert again["arg_1"].sources == ["src_a", "src_b"] and chain.sources == ["src_a"]
    assert again["arg_1"].__pydantic_fields_set__ is chain.__pydantic_fields_set__
