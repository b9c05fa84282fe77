"""The graph's export writers (issue 31 item 2): safe unique names, the Obsidian vault (every link
resolves, front matter, chains as wiki links, folders and index notes), the Anki deck (fields with
MathJax math, tags, stable guids and ids, written as a real `.apkg` read back with SQLite), and the
selection."""

from __future__ import annotations

import io
import random
import re
import sqlite3
import unicodedata
import zipfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.contracts.graph import Chain, Proposition
from server.core.library.graph import chain_id
from server.core.library.graph_export import MAX_NAME, Namer, safe_name, selected, whole
from server.core.library.graph_export_anki import (
    CHAIN_MODEL_ID,
    DECK_ID,
    PROPOSITION_MODEL_ID,
    anki_html,
    anki_notes,
    guid,
)
from server.core.library.graph_export_vault import VAULT, vault_files
from server.services.library.graph_export import write_apkg, zip_stream

WINDOWS_FORBIDDEN = set('<>:"/\\|?*') | {chr(c) for c in range(32)}
DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


def prop(nid: str, name: str, statement: str, source: str) -> Proposition:
    return Proposition(
        id=nid, name=name, statement=statement, aliases=[], sources=[source], createdAt="2026-12-01T10:00:00Z"
    )


def chain(premises: list[str], conclusion: str, source: str) -> Chain:
    return Chain(
        id=chain_id(premises, conclusion),
        premises=sorted(premises),
        conclusion=conclusion,
        sources=[source],
        createdAt="2026-12-01T10:00:00Z",
    )


LABELS = {
    "s_lesson": ("chat", "Limits: a first look"),
    "s_lesson2": ("chat", "Limits: a first look"),
    "s_file": ("notes", "continuity.md"),
    "s_alone": ("notes", "alone.md"),
}
PATHS: dict[str, str | None] = {"s_file": "vault/analysis/continuity.md", "s_alone": "alone.md"}


def graph() -> tuple[dict[str, Proposition], dict[str, Chain]]:
    nodes = {
        p.id: p
        for p in [
            prop("n_1", "Limit", "The limit of $f$ at $a$ is $L$ when $|f(x)-L|<\\varepsilon$.", "s_lesson"),
            prop("n_2", "limit", "Lowercase twin, another file on a case-blind disk.", "s_lesson2"),
            prop("n_3", "Continuity", "$$\\lim_{x\\to a} f(x) = f(a)$$", "s_file"),
            prop("n_4", 'CON: a "device" name?', "Costs $5 and $6.", "s_alone"),
            prop("n_5", "Sum [rule] | linear", "Limits add.", "s_gone"),
        ]
    }
    nodes["n_1"].aliases.append("the limit")
    chains = [
        chain(["n_1", "n_5"], "n_3", "s_file"),
        chain(["n_3"], "n_4", "s_alone"),
        chain(["n_9"], "n_1", "s_file"),
    ]
    return nodes, {c.id: c for c in chains}


def vault() -> dict[str, str]:
    nodes, chains = graph()
    return dict(vault_files(whole(nodes, chains), LABELS, PATHS))


LINK = re.compile(r"\[\[([^\]|]+)(?:\|[^\]]*)?\]\]")


def test_every_link_of_the_vault_resolves_to_one_note() -> None:
    files = vault()
    stems = [Path(p).stem for p in files]
    assert all(p.startswith(f"{VAULT}/") and p.endswith(".md") for p in files)
    assert len({unicodedata.normalize("NFC", s).casefold() for s in stems}) == len(
        stems
    )  # unique, case-blind
    links = [m for text in files.values() for m in LINK.findall(text)]
    assert links and all(target in stems for target in links)


def test_a_proposition_note_has_front_matter_and_its_chains_as_wiki_links() -> None:
    files = vault()
    path, text = next((p, t) for p, t in files.items() if 'id: "n_3"' in t)
    assert path == f"{VAULT}/vault/analysis/Continuity.md"
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta == {
        "id": "n_3",
        "aliases": [],
        "sources": ["continuity.md"],
        "source_ids": ["s_file"],
        "created": "2026-12-01T10:00:00Z",
    }
    assert "# Continuity\n\n$$\\lim_{x\\to a} f(x) = f(a)$$\n\n" in text
    assert "## Follows from\n\n- from [[Limit]] and [[Sum -rule- - linear|Sum (rule) / linear]]\n" in text
    assert '## Leads to\n\n- gives [[CON- a -device- name|CON: a "device" name?]]\n' in text
    limit = next(t for t in files.values() if 'id: "n_1"' in t)
    assert yaml.safe_load(limit.split("---\n")[1])["aliases"] == ["the limit"]
    assert "- with [[Sum -rule- - linear|Sum (rule) / linear]], gives [[Continuity]]\n" in limit
    assert "Follows from" not in limit  # its only chain dangles (n_9 is gone): left out


def test_folders_per_lesson_and_source_folder_with_index_notes() -> None:
    files = vault()
    folders = {str(Path(p).parent) for p in files}
    assert folders == {
        VAULT,
        f"{VAULT}/Lessons",
        f"{VAULT}/Lessons/Limits- a first look",
        f"{VAULT}/Lessons/Limits- a first look (2)",  # two lessons of one title: two folders
        f"{VAULT}/vault",
        f"{VAULT}/vault/analysis",
        f"{VAULT}/Notes",
        f"{VAULT}/Other sources",
    }
    twin = next(p for p, t in files.items() if 'id: "n_2"' in t)
    assert twin == f"{VAULT}/Lessons/Limits- a first look (2)/limit (2).md"
    indexes = {p: t for p, t in files.items() if p.endswith("(index).md")}
    assert len(indexes) == len(folders) - 1  # one per folder; the top has Index.md
    assert files[f"{VAULT}/vault/analysis/analysis (index).md"] == "# analysis\n\n- [[Continuity]]\n"
    assert "- [[analysis (index)|analysis]]\n" in files[f"{VAULT}/vault/vault (index).md"]
    top = files[f"{VAULT}/Index.md"]
    assert "5 propositions, 2 chains." in top and "[[Lessons (index)|Lessons]]" in top


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=20))
def test_names_are_safe_everywhere_and_unique_case_blind(texts: list[str]) -> None:
    namer = Namer()
    names = [namer.take(t, "fallback") for t in texts]
    folded = [unicodedata.normalize("NFC", n).casefold() for n in names]
    assert len(set(folded)) == len(names)
    for name in names:
        assert name and not (set(name) & WINDOWS_FORBIDDEN) and not (set(name) & set("#^[]|"))
        assert name == name.strip(" .") and len(name) <= MAX_NAME + 8
        assert name.split(".")[0].upper() not in DEVICES
        assert len(f"{name}.md".encode()) < 255


def test_safe_name_examples() -> None:
    assert safe_name("a/b\\c: d?", "x") == "a-b-c- d"
    assert safe_name("  ...  ", "n_1") == "n_1"
    assert safe_name("nul.txt", "x") == "nul.txt_"
    assert safe_name("Ünïcode", "x") == unicodedata.normalize("NFC", "Ünïcode")


def test_anki_fields_render_math_with_mathjax_and_escape_html() -> None:
    assert anki_html("If $a<b$ then $$a^2\n< b^2$$") == "If \\(a&lt;b\\) then \\[a^2 &lt; b^2\\]"
    assert anki_html("Costs $5 and $6.") == "Costs $5 and $6."
    assert anki_html("A \\$ sign\nnext") == "A $ sign<br>next"
    assert anki_html("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"


def test_anki_notes_have_stable_guids_and_tags_by_source() -> None:
    nodes, chains = graph()
    notes = list(anki_notes(whole(nodes, chains), LABELS))
    assert [n.kind for n in notes] == ["proposition"] * 5 + ["chain"] * 2
    assert [n.guid for n in notes] == [n.guid for n in anki_notes(whole(nodes, chains), LABELS)]
    assert notes[0].guid == guid("n_1") and len({n.guid for n in notes}) == 7
    assert notes[0].fields[0] == "Limit" and "\\(|f(x)-L|&lt;\\varepsilon\\)" in notes[0].fields[1]
    assert notes[0].tags == ("learning-harness::proposition", "source::Limits:_a_first_look")
    assert notes[4].tags == ("learning-harness::proposition", "source::s_gone")
    first = notes[5]
    assert "Limit" in first.fields[0] and "Sum [rule] | linear" in first.fields[0]
    assert "Continuity" in first.fields[1] and "\\[\\lim_{x\\to a} f(x) = f(a)\\]" in first.fields[1]


def read_apkg(path: Path, tmp: Path) -> sqlite3.Connection:
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["collection.anki2", "media"]
        archive.extract("collection.anki2", tmp)
    return sqlite3.connect(tmp / "collection.anki2")


def test_the_apkg_holds_one_note_and_card_each_with_fixed_ids(tmp_path: Path) -> None:
    nodes, chains = graph()
    first = write_apkg(whole(nodes, chains), LABELS, tmp_path / "a.apkg", timestamp=1_700_000_000)
    db = read_apkg(first, tmp_path / "a")
    rows = db.execute("SELECT guid, mid, tags, flds FROM notes ORDER BY id").fetchall()
    assert len(rows) == 7 and db.execute("SELECT count(*) FROM cards").fetchone() == (7,)
    assert {r[0] for r in rows} == {guid(i) for i in [*nodes, *(c.id for c in whole(nodes, chains).chains)]}
    assert [r[1] for r in rows] == [PROPOSITION_MODEL_ID] * 5 + [CHAIN_MODEL_ID] * 2
    assert rows[0][2] == " learning-harness::proposition source::Limits:_a_first_look "
    assert rows[0][3].split("\x1f")[0] == "Limit"
    assert {r[0] for r in db.execute("SELECT did FROM cards")} == {DECK_ID}
    assert not list(tmp_path.glob("*.anki2"))  # the collection file is removed
    # a later export (another time, one proposition fewer) keeps every remaining id
    nodes.pop("n_4")
    second = write_apkg(whole(nodes, chains), LABELS, tmp_path / "b.apkg", timestamp=1_800_000_000)
    again = {r[0] for r in read_apkg(second, tmp_path / "b").execute("SELECT guid FROM notes")}
    assert again == {r[0] for r in rows} - {guid("n_4"), guid(chain_id(["n_3"], "n_4"))}


def test_the_selection_takes_chains_members_and_the_chains_among_them() -> None:
    nodes, chains = graph()
    by_name = {c.conclusion: c for c in chains.values()}
    part = selected(nodes, chains, ["n_3", "n_4"])
    assert set(part.nodes) == {"n_3", "n_4"} and part.chains == [by_name["n_4"]]
    part = selected(nodes, chains, [by_name["n_3"].id])
    assert set(part.nodes) == {"n_1", "n_5", "n_3"} and part.chains == [by_name["n_3"]]
    with pytest.raises(KeyError, match="n_404"):
        selected(nodes, chains, ["n_1", "n_404"])
    with pytest.raises(KeyError):
        selected(nodes, chains, [by_name["n_1"].id])  # a dangling chain is not in the graph


def test_the_zip_streams_in_blocks_and_reads_back() -> None:
    noise = random.Random(7)
    files = [(f"v/{i}.md", "".join(noise.choices("abcdefghij $\n", k=i * 97 % 5000))) for i in range(400)]
    blocks = list(zip_stream(iter(files)))
    assert len(blocks) > 3
    with zipfile.ZipFile(io.BytesIO(b"".join(blocks))) as archive:
        assert archive.testzip() is None
        assert [(n, archive.read(n).decode()) for n in archive.namelist()] == files


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(max_size=60), min_size=1, max_size=12),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), st.integers(0, 11)), max_size=12),
    st.text(max_size=40),
)
def test_any_names_give_a_vault_whose_every_link_resolves(
    names: list[str], links: list[tuple[int, int, int]], title: str
) -> None:
    labels = {"s_a": ("chat", title), "s_b": ("notes", title)}
    nodes = {f"n_{i}": prop(f"n_{i}", name, name, "s_a" if i % 2 else "s_b") for i, name in enumerate(names)}
    chains = [
        chain(sorted({f"n_{a % len(names)}", f"n_{b % len(names)}"}), f"n_{c % len(names)}", "s_a")
        for a, b, c in links
    ]
    files = dict(vault_files(whole(nodes, {c.id: c for c in chains}), labels, {"s_b": f"{title}/x.md"}))
    stems = [Path(p).stem for p in files]
    assert len({unicodedata.normalize("NFC", s).casefold() for s in stems}) == len(stems)
    assert all(target in stems for text in files.values() for target in LINK.findall(text))
    assert sorted(
        yaml.safe_load(t.split("---\n")[1])["id"] for t in files.values() if t.startswith("---\n")
    ) == sorted(nodes)
    for note in anki_notes(whole(nodes, {c.id: c for c in chains}), labels):
        assert all("<script" not in field for field in note.fields) and all(" " not in t for t in note.tags)


def test_front_matter_text_reads_back_in_yaml_whatever_it_holds() -> None:
    """DEL, C1 controls, U+FFFE and the line breaks a quoted YAML scalar folds (NEL, U+2028/9)
    are escaped: raw, a YAML reader refuses the note's front matter or reads another name."""
    from server.core.markdown import yaml_value

    for text in ["a\x7fb", "\x85x\x9f", "\ufffe", "a\u2028b\u2029", 'ok: "q"\n', "😀 é"]:
        assert yaml.safe_load(f"k: {yaml_value(text)}")["k"] == text
