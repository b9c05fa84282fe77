"""Session seam: create, list and read session records (the Classroom's store, seed §5)."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from server.core.clock import Clock, NewId, new_id, utc_now
from server.core.contracts.chat import DEFAULT_TITLE, ChatRecord, ChatSummary
from server.core.contracts.models import ModelRef, ModelSlot
from server.core.events import EventBus
from server.core.fanout import FanOut, LessonDeleted
from server.core.ports import ChatStore
from server.core.refusals import Refused
from server.services.liveness import TurnRegistry
from server.services.machine_room.models import ModelService

_ROW = TypeAdapter(ChatSummary)


def _updated(row: ChatSummary) -> str:
    return row.updated_at


class ChatService:
    """Sessions as the API sees them.

    Args:
        chats: the session store port.
        models: stamps new sessions from the strong slot.
        registry: the liveness registry (a running turn blocks a deletion).
        fanout: publishes `LessonDeleted` after a delete (the Library, the turn, the Workbench and
            the lesson's caches forget it); its handlers never fail the delete.
        jobs_computing: whether a Workbench worker of a session computes (it blocks the
            deletion, seed §5.1).
        clock: returns the current ISO timestamp (`server.core.clock`; tests pass a fixed one).
        new_id: mints session ids (`c_` + 16 hex digits).
        events: the browser's notification bus (a private one when omitted).
        discard: removes a deleted session's files; returns whether its record was there (the
            trash moves it, decision 0043; when omitted the store deletes it for good).
    """

    def __init__(
        self,
        chats: ChatStore,
        models: ModelService,
        registry: TurnRegistry,
        *,
        fanout: FanOut,
        jobs_computing: Callable[[str], bool],
        clock: Clock = utc_now,
        new_id: NewId = new_id,
        events: EventBus | None = None,
        discard: Callable[[ChatRecord], bool] | None = None,
    ) -> None:
        self.chats = chats
        self.discard = discard or (lambda record: self.chats.delete(record.id))
        self.models = models
        self.registry = registry
        self.fanout = fanout
        self.jobs_computing = jobs_computing
        self.clock = clock
        self.new_id = new_id
        self.events = events if events is not None else EventBus()
        """`chats-changed` after each list-shape write (create, rename, delete); a session's
        model pick is a content write and stays silent (seed §10.3)."""
        self._listed: tuple[list[ChatSummary], frozenset[str], bytes] | None = None
        """`list_json`'s last answer: the store's rows it was made from (the very list object),
        the running sessions then, and the body."""
        self._encoded: dict[str, tuple[ChatSummary, bool, bytes]] = {}
        """Per session, its row as last encoded: (the summary object, running, its JSON)."""

    def create(self, title: str | None, demo: bool = False) -> ChatRecord:
        """A new, empty session stamped with the strong slot's model.

        `demo`: the learner chose the offline demo model on the demo screen; without it, a session
        that would run on the offline model is refused (issue 29, item 3: the tiny model gets facts
        wrong, so nobody is taught by it without saying yes to that first).

        Raises Refused(unavailable) when no model can be resolved; Refused(conflict,
        demo_not_chosen) when it would be the offline model and `demo` is false; OSError when the
        write fails.
        """
        stamp = self.models.stamp_for_new_session()
        if stamp.provider == "local" and not demo:
            raise Refused(
                "conflict",
                "demo_not_chosen",
                "Lessons would run on the offline demo model, which gets facts wrong. Choose it on "
                "the demo screen, or add a model in Settings.",
            )
        now = self.clock()
        record = ChatRecord(
            id=self.new_id("c_"),
            title=(title or "").strip() or DEFAULT_TITLE,
            title_by="learner" if (title or "").strip() else "auto",
            created_at=now,
            updated_at=now,
            model=stamp,
            messages=[],
        )
        self.chats.save(record)
        self.events.emit("chats-changed")
        return record

    def list(self) -> list[ChatSummary]:
        """Session rows, most recently updated first, each saying whether a turn runs (from the
        store's index: no record is read unless its file changed)."""
        rows = [
            row.model_copy(update={"running": True}) if self.registry.running(row.id) else row
            for row in self.chats.summaries()
        ]
        return sorted(rows, key=lambda r: r.updated_at, reverse=True)

    def list_json(self) -> bytes:
        """`GET /api/chats`' body, `{"chats": [ChatSummary...]}` (camelCase keys, `list`'s rows
        and order), encoded once per change: reused while the store answers the same rows object
        (nothing was saved or deleted, no record changed on disk) and the same turns run; made
        again, only the rows that changed are encoded again (issue 15: no per-request sort and
        dump of every row)."""
        rows = self.chats.summaries()
        running = self.registry.running_ids()
        listed = self._listed
        if listed is not None and listed[0] is rows and listed[1] == running:
            return listed[2]
        kept: dict[str, tuple[ChatSummary, bool, bytes]] = {}
        for row in sorted(rows, key=_updated, reverse=True):
            live = row.id in running
            hit = self._encoded.get(row.id)
            if hit is None or hit[0] is not row or hit[1] != live:
                shown = row.model_copy(update={"running": True}) if live else row
                hit = (row, live, _ROW.dump_json(shown, by_alias=True))
            kept[row.id] = hit
        self._encoded = kept
        body = b'{"chats":[' + b",".join(hit[2] for hit in kept.values()) + b"]}"
        self._listed = (rows, running, body)
        return body

    def get(self, chat_id: str) -> ChatRecord:
        """Raises Refused(not_found) for an unknown id; StoreCorrupt for an unreadable record."""
        record = self.chats.get(chat_id)
        if record is None:
            raise _missing(chat_id)
        return record

    def get_json(self, chat_id: str) -> bytes:
        """The record as stored, the bytes of one JSON object (camelCase keys), not re-serialized.

        Raises Refused(not_found) for an unknown id; StoreCorrupt for an unreadable record."""
        body = self.chats.record_json(chat_id)
        if body is None:
            raise Refused(
                "not_found",
                "chat_not_found",
                f"no session {chat_id!r}; pick one from the list or start a new lesson",
            )
        return body

    def rename(self, chat_id: str, title: str) -> ChatRecord:
        """Set the title (allowed while a turn runs: the turn re-reads the record before saving).
        The learner's title wins: the naming side channel never writes over it.

        Raises Refused(not_found)."""
        change = {"title": title, "title_by": "learner"}
        # one read-and-write: a turn's save in a worker thread never comes between
        stored = self.chats.update(
            chat_id, lambda r: r.model_copy(update={**change, "updated_at": self.clock()})
        )
        if stored is None:
            raise _missing(chat_id)
        self.events.emit("chats-changed")
        return stored

    def set_model(self, chat_id: str, slot: ModelSlot, demo: bool = False) -> ChatRecord:
        """An in-session model pick: writes the session's record, never the settings (seed §3).

        `demo`: the learner confirmed the offline demo model in the lesson's model editor. A lesson
        not yet on the offline model (`provider: "local"`) is switched to it only then, as `create`
        stamps it only after the demo screen (issue 29, items 3 and 4); a lesson already on it may
        be saved again without it.

        Raises Refused(not_found); Refused(conflict, turn_running) while a turn runs (the turn
        already chose its model); Refused(conflict, demo_not_chosen) for an unconfirmed switch to
        the offline model (nothing written); OSError when the write fails."""
        current = self.get(chat_id)
        if self.registry.running(chat_id):
            raise Refused("conflict", "turn_running", "a turn is running; change the model when it ends")
        if slot.provider == "local" and current.model.provider != "local" and not demo:
            raise Refused(
                "conflict",
                "demo_not_chosen",
                "The offline demo model gets facts wrong. Confirm that this lesson should use it, "
                "or pick another model.",
            )
        model = ModelRef(provider=slot.provider, model=slot.model, base_url=slot.base_url)
        stored = self.chats.update(
            chat_id, lambda r: r.model_copy(update={"model": model, "updated_at": self.clock()})
        )
        if stored is None:
            raise _missing(chat_id)
        return stored

    def delete(self, chat_id: str) -> None:
        """Delete a session (`discard`: into the trash), then publish `LessonDeleted`. Raises
        Refused(not_found), or Refused(conflict) while a turn runs (`turn_running`) or a worker of it computes
        (`job_running`); OSError when the store's delete fails (nothing is published then)."""
        record = self.get(chat_id)
        if self.registry.running(chat_id):
            raise Refused(
                "conflict", "turn_running", "a turn is running in this session; stop it or wait, then delete"
            )
        if self.jobs_computing(chat_id):
            raise Refused(
                "conflict",
                "job_running",
                "a background agent of this session is still working; stop it in the activity dock "
                "or wait, then delete",
            )
        removed = self.discard(record)
        if removed:  # present-entry gating: a delete that removed nothing is silent
            self.events.emit("chats-changed")
        self.fanout.publish(LessonDeleted(chat_id))  # each handler contained: never fails the delete


def _missing(chat_id: str) -> Refused:
    """The 404 for an unknown session id."""
    return Refused(
        "not_found", "chat_not_found", f"no session {chat_id!r}; pick one from the list or start a new lesson"
    )
