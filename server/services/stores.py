"""THE storage composition root: the only module that builds storage adapters (seed §3)."""

from __future__ import annotations

from dataclasses import dataclass

from server import __version__
from server.config import KEYRING_SERVICE, DataPaths
from server.core.clock import utc_now
from server.core.machine_room.backup import BackupStore
from server.core.machine_room.subscriptions import SubscriptionStore
from server.core.ports import (
    ChatStore,
    GraphStore,
    IntakeStore,
    JobStore,
    PracticeStore,
    SearchIndex,
    SecretStore,
    SettingsStore,
    SummaryCache,
)
from server.core.trash import TrashStore
from server.store.atomic import sweep_temp_files
from server.store.classroom.chats import FileChatStore
from server.store.classroom.summaries import FileSummaryCache
from server.store.library.graph import FileGraphStore
from server.store.library.intake import FileIntakeStore
from server.store.lock import DataDirLock, DataDirLocked
from server.store.machine_room.backup import BackupFiles, apply_pending_restore
from server.store.machine_room.search import SqliteSearchIndex
from server.store.machine_room.secrets import FileSecrets, KeyringSecrets, keychain_available
from server.store.machine_room.settings import FileSettingsStore
from server.store.machine_room.subscriptions import FileSubscriptionStore
from server.store.practice.sets import FilePracticeStore
from server.store.trash import FileTrash
from server.store.workbench.jobs import FileJobStore

__all__ = ["DataDirLock", "DataDirLocked", "Stores", "build_stores", "data_dir_lock"]


@dataclass(frozen=True)
class Stores:
    """Every port the services use, bound to one data dir."""

    chats: ChatStore
    settings: SettingsStore
    secrets: SecretStore
    graph: GraphStore
    practice: PracticeStore
    jobs: JobStore
    summaries: SummaryCache
    subscriptions: SubscriptionStore
    """Web mode's subscription logins (owner-only files); desktop mode never touches it."""
    intake: IntakeStore
    """The accepted queue: work answered for and not yet finished (resumed at start)."""
    backup: BackupStore
    """The data dir's backup archives and a staged restore (decision 0041)."""
    search: SearchIndex
    """The derived full-text index, `data/search/index.sqlite` (decision 0044)."""
    trash: TrashStore
    """Deleted lessons and problem sets, kept 30 days (`data/trash/`, decision 0043)."""


def build_stores(paths: DataPaths, *, secrets: SecretStore | None = None) -> Stores:
    """Build the file adapters for a data dir, first removing the temp files an interrupted
    atomic write left (the caller holds the data-dir lock, so none is in flight).

    Args:
        paths: the data dir's paths.
        secrets: overrides the key store; by default the OS keychain when a backend exists,
            else an owner-only file in the data dir.
    """
    apply_pending_restore(paths.root, utc_now().replace(":", "").replace(".", "-"))
    sweep_temp_files(paths.root)  # what a crash (kill -9) mid-write left behind
    if secrets is None:
        secrets = KeyringSecrets(KEYRING_SERVICE) if keychain_available() else FileSecrets(paths.secrets)
    chats = FileChatStore(paths.chats)
    return Stores(
        chats=chats,
        settings=FileSettingsStore(paths.settings),
        secrets=secrets,
        graph=FileGraphStore(paths.graph),
        practice=FilePracticeStore(paths.practice),
        jobs=FileJobStore(paths.jobs),
        summaries=FileSummaryCache(paths.summaries),
        subscriptions=FileSubscriptionStore(paths.subscriptions),
        intake=FileIntakeStore(paths.intake),
        backup=BackupFiles(paths.root, chats.held, __version__),
        search=SqliteSearchIndex(paths.root / "search" / "index.sqlite", paths.root),
        trash=FileTrash(paths.root),
    )


def data_dir_lock(paths: DataPaths) -> DataDirLock:
    """The exclusive lock guarding the data dir (acquire before serving)."""
    return DataDirLock(paths.lock)
