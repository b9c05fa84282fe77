"""Background consent per subscription (seed §5.1, §8.1; decision 0030).

Work the learner did not start - an idle wake of a lesson by a finished job, a finished job's
result steered into a running turn - runs on the lesson's model. When that model is a subscription
(ChatGPT, GitHub Copilot, xAI) the learner decides per provider whether such work may use it:
`settings.json` `backgroundConsent`, independent per provider, default ON. With consent off, the
wake pipeline keeps the result (its queue entry and the job's pending delivery) until consent
permits delivery; nothing is sent to the provider for it meanwhile.

Turning consent off also stops an idle wake already running on that provider (foreground-
preserving cancellation: the learner's own turns are never stopped). Turning it on wakes what
was held.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from server.core.contracts.models import (
    SUBSCRIPTION_ROUTES,
    BackgroundConsent,
    ModelRef,
    ModelSlot,
    SubscriptionRoute,
)
from server.core.events import EventBus
from server.core.ports import ChatStore, SettingsStore
from server.core.refusals import Refused
from server.core.workbench.wake import background_allowed, withheld

log = logging.getLogger("lh.consent")

ChoiceFor = Callable[[ModelRef, Any], tuple[ModelSlot, str]]
"""`ModelService.choice_for`: (session's model, role) -> (the model that role runs, a label)."""

LESSON_ROLES: tuple[str, ...] = ("prober", "teacher")
"""The roles a lesson's turn may run (the prober hands over to the teacher within one turn)."""


class BackgroundConsentService:
    """Reads and changes `backgroundConsent`; says whether a lesson's background work may run.

    Args:
        settings: the settings port (`backgroundConsent`; every other section is kept on a write).
        chats: the session store (read only: which model a lesson runs).
        choice_for: which model a role runs in a session (`ModelService.choice_for`: the role's
            override in settings when set, else the session's own model).
        events: the browser's bus; a change emits `subscriptions-changed` (the Settings page's
            subscription rows refetch), after the write.
    """

    def __init__(
        self, settings: SettingsStore, chats: ChatStore, choice_for: ChoiceFor, events: EventBus
    ) -> None:
        self.settings = settings
        self.chats = chats
        self.choice_for = choice_for
        self.events = events
        self.listeners: list[Callable[[str, bool], None]] = []
        """Called with (provider, allowed) after a change was saved (the wake pipeline's)."""

    def consent(self) -> BackgroundConsent:
        return self.settings.load().background_consent

    def view(self) -> dict[str, bool]:
        """`{"chatgpt": bool, "github-copilot-subscription": bool, "xai-subscription": bool}`."""
        return self.consent().view()

    def set(self, provider: SubscriptionRoute, allowed: bool) -> dict[str, bool]:
        """Save one provider's consent (the others and every other setting kept), then tell the
        listeners and the browser. Returns the view as it now applies.

        Raises:
            Refused("invalid", unknown_provider): `provider` is not a subscription.
            StoreCorrupt / OSError: settings.json unreadable or not written (nothing changed).
        """
        if provider not in SUBSCRIPTION_ROUTES:
            raise Refused(
                "invalid",
                "unknown_provider",
                f"{provider!r} is not a subscription; one of {', '.join(SUBSCRIPTION_ROUTES)}",
            )
        settings = self.settings.load()
        before = settings.background_consent.allows(provider)
        consent = settings.background_consent.model_copy(update={provider.replace("-", "_"): allowed})
        if before != allowed:
            self.settings.save(settings.model_copy(update={"background_consent": consent}))
            log.info("background consent for %s: %s", provider, "on" if allowed else "off")
            self.events.emit("subscriptions-changed")
            for listener in list(self.listeners):
                try:
                    listener(provider, allowed)
                except Exception:  # a listener never fails the saved change
                    log.exception("background consent listener failed")
        return consent.view()

    def providers(self, chat_id: str) -> list[str]:
        """The providers a turn of the lesson may call (its own model and its prober/teacher
        overrides); [] for an unknown lesson."""
        record = self.chats.get(chat_id)
        if record is None:
            return []
        return sorted({self.choice_for(record.model, role)[0].provider for role in LESSON_ROLES})

    def allows(self, chat_id: str) -> bool:
        """Whether background work may run in the lesson now (True when it uses no subscription
        whose consent is off, and for an unknown lesson: nothing would run there)."""
        return background_allowed(self.providers(chat_id), self.consent())

    def withheld(self, chat_id: str) -> list[str]:
        """The lesson's subscriptions whose background consent is off."""
        return withheld(self.providers(chat_id), self.consent())

    def refusal(self, chat_id: str) -> Refused | None:
        """The 403 an idle wake of the lesson gets now, or None when consent permits it."""
        off = self.withheld(chat_id)
        if not off:
            return None
        return Refused(
            "forbidden",
            "background_not_consented",
            f"background work may not use {', '.join(off)} (switched off in Settings > Subscriptions); "
            "the finished result waits until it is switched on",
        )
