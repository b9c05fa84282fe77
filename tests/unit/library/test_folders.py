"""Folder clusters (issue 17 item 2, decision 0022): the hierarchy from notes paths, the view's
folder level, and a layout where files of one folder sit together and folders apart."""

from __future__ import annotations

import orjson

from server.core.library.folders import folder_key, folder_path, folder_tree
from server.core.library.layout import settle
from server.core.library.layout_metrics import region_metrics
from server.core.library.view_derive import clusters, derive_view
from server.core.library.view_rows import view_bytes
from tests.synthetic_layout import synthetic_vault
from tests.unit.library.test_graph_view import node


def test_folder_path_reads_every_way_an_import_names_a_file() -> None:
    assert folder_path("vault/sub/a.md") == "vault/sub"
    assert folder_path("C:\\notes\\b.md") == "C:/notes"
    assert folder_path("/a.md") == "/"
    assert folder_path("a.md") is None  # a single browser file: no folder
    assert folder_path(None) is None and folder_path("") is None


def test_folders_nest_under_their_nearest_folder_with_files() -> None:
    of, folders = folder_tree(
        {"s1": "vault/a.md", "s2": "vault/x/y/b.md", "s3": "vault/x/y/c.md", "s4": "single.md", "s5": None}
    )
    by_path = {f.path: f for f in folders}
    assert [f.path for f in folders] == ["vault", "vault/x/y"]  # parents first
    assert by_path["vault/x/y"].parent == folder_key("vault") and by_path["vault"].parent is None
    assert by_path["vault/x/y"].label == "y" and by_path["vault/x/y"].sessions == ("s2", "s3")
    assert of == {"s1": folder_key("vault"), "s2": folder_key("vault/x/y"), "s3": folder_key("vault/x/y")}
    assert folder_key("vault") == folder_tree({"other": "vault/z.md"})[1][0].key  # stable id


def test_the_view_carries_the_folder_level_and_lessons_stay_top_level() -> None:
    nodes = {n.id: n for n in [node("a", "src_a"), node("b", "src_b"), node("c", "c_1")]}
    paths = {"src_a": "vault/notes/a.md", "src_b": "vault/b.md", "src_gone": "vault/old/z.md"}
    view = derive_view(nodes, {}, {}, {}, paths)
    folder = {row["key"]: row["folder"] for row in view["clusters"]}
    assert folder == {"src_a": folder_key("vault/notes"), "src_b": folder_key("vault"), "c_1": None}
    assert [(f["label"], f["path"], f["clusters"], f["nodeCount"]) for f in view["folders"]] == [
        ("vault", "vault", ["src_b"], 1),
        ("notes", "vault/notes", ["src_a"], 1),  # a source with no node makes no folder
    ]
    assert view["folders"][1]["parent"] == folder_key("vault")
    assert clusters(nodes, {}, paths) == view["clusters"]
    body, rows = view_bytes(nodes, {}, {}, {}, None, paths)
    assert body == orjson.dumps(view)
    moved = {**nodes, "a": node("a", "src_b")}  # a file's last node now born elsewhere
    again, _ = view_bytes(moved, {}, {}, {}, rows, paths)
    assert again == orjson.dumps(derive_view(moved, {}, {}, {}, paths))
    assert b"vault/notes" not in again


def test_a_synthetic_vault_reads_as_folders_and_stays_stable() -> None:
    """30 folders × 40 notes on a fixed seed: the share of notes' nodes whose nearest folder
    centroid is their own folder's ≥ 0.9, folder-hull overlap ≤ 0.1 (hulls padded as the canvas
    pads them at the default node size, 20 units); sessions still read as regions; placing 5 more
    folders and a new file of a placed folder moves nothing and keeps the figures."""
    g, folders = synthetic_vault(30, 40, seed=7)
    pos = settle({}, g.ids, g.links, groups=g.groups, folders=folders)
    by_folder = {n: folders[s] for n, s in g.groups.items()}
    f = region_metrics(pos, by_folder, pad=20.0)
    assert f.sessions == 30 and f.own_share >= 0.9 and f.overlap <= 0.1, f
    s = region_metrics(pos, g.groups, pad=0.0)
    assert s.own_share >= 0.9 and s.overlap <= 0.1, s
    more, more_folders = synthetic_vault(5, 10, seed=9, prefix="n")
    ids = [*g.ids, *more.ids, "late"]
    groups = {**g.groups, **more.groups, "late": "late_file"}
    all_folders = {**folders, **more_folders, "late_file": "f3"}
    after = settle(pos, ids, g.links + more.links, groups=groups, folders=all_folders)
    assert all(after[k] == v for k, v in pos.items())  # existing nodes never jump
    f2 = region_metrics(after, {n: all_folders[s] for n, s in groups.items()}, pad=20.0)
    assert f2.own_share >= 0.9 and f2.overlap <= 0.1, f2


def test_files_arriving_one_merge_at_a_time_still_group_by_folder() -> None:
    """A folder import merges file after file: each later file of a placed folder lands beside its
    folder's files and clear of the other folders'."""
    g, folders = synthetic_vault(6, 8, seed=5)
    pos: dict[str, tuple[float, float]] = {}
    sessions = sorted({s for s in g.groups.values()}, key=lambda s: (int(s[1:]) % 8, int(s[1:])))
    shown: set[str] = set()
    for session in sessions:  # round robin over the folders, one file per settle
        shown |= {n for n, s in g.groups.items() if s == session}
        ids = [i for i in g.ids if i in shown]
        groups = {n: g.groups[n] for n in ids}
        before = dict(pos)
        pos = settle(pos, ids, [], groups=groups, folders=folders)
        assert all(pos[k] == v for k, v in before.items())
    m = region_metrics(pos, {n: folders[s] for n, s in g.groups.items()}, pad=20.0)
    assert m.own_share >= 0.9 and m.overlap <= 0.1, m
