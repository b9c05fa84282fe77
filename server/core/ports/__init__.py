"""Ports: what the domain needs from storage and the outside, as typing.Protocol (seed §3).

One module per system's ports (`classroom`, `library`, `practice`, `workbench`, `machine_room`)
plus `shared` (the session records and `StoreCorrupt`); every name is re-exported here, so
`from server.core.ports import X` is the one import path. Adapters in `server.store` and
`server.agent` implement them; `server.services.stores` wires the stores; tests use the fakes in
`tests/fakes/`, each checked against its adapter by a contract test.
"""

from server.core.ports.classroom import GraphReader, SummaryCache
from server.core.ports.library import (
    Embedder,
    EmbedderUnavailable,
    ExtractionGraph,
    GraphDeleter,
    GraphRows,
    GraphStore,
    GraphViewStore,
    IntakeStore,
    LayoutStore,
    LibraryGraph,
    MergeLedger,
    SourceLedger,
    SourceRecorder,
    UsageLedger,
    ViewCache,
)
from server.core.ports.machine_room import SearchIndex, SecretStore, SettingsStore
from server.core.ports.practice import PracticeStore
from server.core.ports.shared import ChatStore, StoreCorrupt
from server.core.ports.workbench import Headless, HtmlCheck, JobStore, SearchHit, SvgRender, WebSearch

__all__ = [
    "ChatStore",
    "Embedder",
    "EmbedderUnavailable",
    "ExtractionGraph",
    "GraphDeleter",
    "GraphReader",
    "GraphRows",
    "GraphStore",
    "GraphViewStore",
    "Headless",
    "HtmlCheck",
    "IntakeStore",
    "JobStore",
    "LayoutStore",
    "LibraryGraph",
    "MergeLedger",
    "PracticeStore",
    "SearchHit",
    "SearchIndex",
    "SecretStore",
    "SettingsStore",
    "SourceLedger",
    "SourceRecorder",
    "StoreCorrupt",
    "SummaryCache",
    "SvgRender",
    "UsageLedger",
    "ViewCache",
    "WebSearch",
]
