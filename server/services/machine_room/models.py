"""The model seam: settings + keys + the offline server -> a runnable model (seed §3, BYOK).

`ModelService.status()` is what the settings page shows (projected by `model_status`);
`model_for(ref)` is what a turn runs. Keys are read from the environment first, then the key
store; they never leave this module except inside the model client.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic_ai.models import Model

from server.agent.machine_room.engine import build_model, build_subscription_model
from server.agent.machine_room.subscription_http import bases as subscription_bases
from server.config import (
    API_KEY_ENV,
    OFFLINE_READY_TIMEOUT_S,
    SEARCH_KEY_ENV,
    SECRET_KEY_ENV,
)
from server.core.contracts.models import (
    KEYED_PROVIDERS,
    ROLE_NAMES,
    SEARCH_PROVIDERS,
    SLOT_NAMES,
    ModelRef,
    ModelSlot,
    ResearchSettings,
    ResolvedModel,
    RoleName,
    RoleOverrides,
    SearchProviderName,
    SecretName,
    Settings,
)
from server.core.machine_room.model_failures import FailureKind
from server.core.machine_room.model_roles import ROLES_BY_NAME, resolve_role
from server.core.machine_room.model_slots import Resolution, resolve_ref, resolve_slot, stamp_from
from server.core.machine_room.subscriptions import (
    SUBSCRIPTION_PROVIDERS,
    ScopedAuth,
    SubscriptionAuth,
    auth_problem,
)
from server.core.ports import SecretStore, SettingsStore
from server.core.refusals import Refused
from server.services.machine_room.model_status import settings_status
from server.services.machine_room.offline_model import CONTEXT_TOKENS, TOKENS_PER_ESTIMATE, OfflineModelServer

ModelFactory = Callable[[ResolvedModel, "str | None", "str | None"], Model]
"""(resolved, api_key, base_url) -> model. Tests inject scripted models here."""


def default_model_factory(resolved: ResolvedModel, api_key: str | None, base_url: str | None) -> Model:
    """The real engine with the default deadlines (a `ModelService` without a factory of its own
    builds with the deadlines of `settings.json` instead)."""
    return build_model(resolved, api_key=api_key, base_url=base_url)


CLIENT_CACHE_SIZE = 16
"""Model clients kept (oldest dropped first)."""


def _fingerprint(key: str | None) -> str | None:
    """A key's SHA-256 (the cache never holds a key as a dict key in plain text)."""
    return hashlib.sha256(key.encode()).hexdigest() if key else None


class ModelService:
    """Resolves slots and session stamps into models.

    Args:
        settings: the settings port.
        secrets: the key store port.
        offline: the offline model server (None when not wanted, e.g. in tests).
        model_factory: builds the model client; tests pass one returning a FunctionModel. None:
            the real engine, with the deadlines and retries of settings' `modelCalls`.
        environ: where environment keys are read (defaults to os.environ).
        subscriptions: the subscription logins' port (web owner or desktop push; issue 19), None
            when there is none (subscription routes then read as not connected).
        subscription_factory: builds a subscription route's model from its scoped auth (tests
            may pass one); None: the real engine against the provider's endpoints.
    """

    def __init__(
        self,
        settings: SettingsStore,
        secrets: SecretStore,
        offline: OfflineModelServer | None,
        model_factory: ModelFactory | None = None,
        environ: Mapping[str, str] | None = None,
        subscriptions: SubscriptionAuth | None = None,
        subscription_factory: Callable[[ResolvedModel, ScopedAuth], Model] | None = None,
    ) -> None:
        self.settings = settings
        self.secrets = secrets
        self.offline = offline
        self.model_factory: ModelFactory = model_factory or self._build
        self._clients: dict[tuple[Any, ...], Model] = {}
        """Built model clients, by (provider, model, slot URL, live URL, key fingerprint, deadlines):
        a new client (provider, SSL context, connection pool) costs ~17 ms, a turn reuses one."""
        self.environ = os.environ if environ is None else environ
        self.subscriptions = subscriptions
        self.subscription_factory = subscription_factory or self._build_subscription

    def _build_subscription(self, resolved: ResolvedModel, auth: ScopedAuth) -> Model:
        try:
            limits = self.settings.load().model_calls
        except Exception:
            limits = None
        return build_subscription_model(
            resolved, auth, api_bases=subscription_bases(self.environ), limits=limits
        )

    def _build(self, resolved: ResolvedModel, api_key: str | None, base_url: str | None) -> Model:
        """The real engine with settings' deadlines (defaults when settings.json is unreadable)."""
        try:
            limits = self.settings.load().model_calls
        except Exception:
            limits = None
        return build_model(resolved, api_key=api_key, base_url=base_url, limits=limits)

    # -- keys -----------------------------------------------------------------------------------
    def key_source(self, name: SecretName) -> str | None:
        """Where a key (model, search or dictation provider's) comes from: "env" (its variable in
        `SECRET_KEY_ENV`), the key store's source ("keyring" / "file"), or None when no key exists
        or the keychain is broken."""
        if self.environ.get(SECRET_KEY_ENV[name]):
            return "env"
        try:
            return self.secrets.source if self.secrets.get(name) else None
        except Exception:  # a broken keychain reads as "no key", never as a crash
            return None

    def secret_key(self, name: SecretName) -> str | None:
        """Any key the app holds (model, search or dictation provider): its environment variable
        (`SECRET_KEY_ENV`, the only source in desktop mode), else the key store; None when absent
        or the keychain is broken."""
        try:
            return self.environ.get(SECRET_KEY_ENV[name]) or self.secrets.get(name)
        except Exception:  # a broken keychain reads as "no key"
            return None

    def dictation_key(self) -> str | None:
        """The learner's Deepgram key (`LH_DEEPGRAM_API_KEY`, else the key store), or None."""
        return self.secret_key("deepgram")

    def api_key(self, provider: str) -> str | None:
        if provider not in KEYED_PROVIDERS:
            return None
        return self.environ.get(API_KEY_ENV[provider]) or self.secrets.get(provider)

    def _keys_present(self) -> dict[str, bool]:
        """Key presence by provider; for a subscription route, whether its login is connected."""
        present: dict[str, bool] = {p: self.key_source(p) is not None for p in KEYED_PROVIDERS}
        for p in SUBSCRIPTION_PROVIDERS:
            present[p] = self.subscriptions is not None and self.subscriptions.connected(p)
        return present

    @property
    def offline_available(self) -> bool:
        return self.offline is not None and self.offline.available

    # -- resolution -----------------------------------------------------------------------------
    def context_window(self, role: RoleName) -> tuple[int, float] | None:
        """The context window of the model a background `role` resolves to now when it is known
        to be small: the offline model's (`CONTEXT_TOKENS` tokens, `TOKENS_PER_ESTIMATE` of its
        tokens per estimated token); else None (keyed models: large, or no model).

        Raises StoreCorrupt for unreadable settings."""
        outcome = self.resolve_role(self.settings.load(), role)
        resolved = outcome.model if outcome is not None else None
        return (CONTEXT_TOKENS, TOKENS_PER_ESTIMATE) if resolved is not None and resolved.offline else None

    def resolve_role(
        self, settings: Settings, role: RoleName, keys_present: Mapping[str, bool] | None = None
    ) -> Resolution | None:
        """What `role` runs under `settings` (`model_roles.resolve_role`): None for a lesson role
        without an override (it runs each lesson's own model). `keys_present`: the key presence
        already read (status() reads the key store once for every role), else read now."""
        return resolve_role(
            role,
            settings.roles,
            settings.models,
            keys_present=self._keys_present() if keys_present is None else keys_present,
            offline_available=self.offline_available,
            key_env=API_KEY_ENV,
        )

    def resolve(self, settings: Settings, slot: str) -> Resolution:
        return resolve_slot(
            settings.models,
            slot,  # type: ignore[arg-type]
            keys_present=self._keys_present(),
            offline_available=self.offline_available,
            key_env=API_KEY_ENV,
        )

    def status(self) -> dict[str, Any]:
        """The settings page's view: slots, key presence, offline state, what runs, problems.

        Raises StoreCorrupt when settings.json is unreadable.
        """
        settings = self.settings.load()
        outcomes: dict[str, Resolution] = {name: self.resolve(settings, name) for name in SLOT_NAMES}
        present = self._keys_present()
        roles = {name: self.resolve_role(settings, name, present) for name in ROLE_NAMES}
        return settings_status(
            settings, outcomes, self.key_source, self.offline, self.offline_available, roles
        )

    def stamp_for_new_session(self) -> ModelRef:
        """The strong slot as a session stamp (seed §3: stamped verbatim at creation).

        Raises:
            Refused("unavailable", models_not_configured): the strong slot cannot be resolved.
            StoreCorrupt: settings.json is unreadable.
        """
        settings = self.settings.load()
        outcome = self.resolve(settings, "strong")
        if outcome.model is None:
            raise Refused("unavailable", "models_not_configured", outcome.problem or "no strong model")
        return stamp_from(outcome.model, settings.models.strong)

    def choice_for(self, ref: ModelRef, role: RoleName | None = None) -> tuple[ModelSlot, str]:
        """Which model a role runs in a session: the role's override in settings when set,
        else the session's own model. Returns (choice, label for problem sentences)."""
        if role is not None:
            override = self.settings.load().roles.of(role)
            if override is not None:
                return override, f"the {ROLES_BY_NAME[role].label} override"
        return ModelSlot(
            provider=ref.provider, model=ref.model, base_url=ref.base_url
        ), "this session's model"

    async def model_for(self, ref: ModelRef, role: RoleName | None = None) -> tuple[ResolvedModel, Model]:
        """The runnable model for a role in a session; starts the offline server when needed.

        Raises:
            Refused("unavailable", models_not_configured): no key for the chosen provider.
            Refused("unavailable", model_unreachable): the offline model failed to start.
            StoreCorrupt: settings.json is unreadable.
        """
        slot, label = self.choice_for(ref, role)
        outcome = resolve_ref(
            slot,
            keys_present=self._keys_present(),
            offline_available=self.offline_available,
            key_env=API_KEY_ENV,
            label=label,
        )
        if outcome.model is None:
            raise Refused("unavailable", "models_not_configured", outcome.problem or "no model")
        return await self._runnable(outcome.model)

    async def model_for_slot(self, slot: str) -> tuple[ResolvedModel, Model]:
        """The runnable model of a named slot (background work runs the cheap slot).

        Raises Refused(unavailable) like `model_for`, and StoreCorrupt for unreadable settings."""
        outcome = self.resolve(self.settings.load(), slot)
        if outcome.model is None:
            raise Refused("unavailable", "models_not_configured", outcome.problem or "no model")
        return await self._runnable(outcome.model)

    async def model_for_role(self, role: RoleName) -> tuple[ResolvedModel, Model]:
        """The runnable model of a background role: its override in settings' `roles` when set,
        else its default slot (`model_roles.MODEL_ROLES`). The returned ResolvedModel is what
        really runs; callers record it on the job's usage row.

        Raises:
            Refused("unavailable", models_not_configured): the role's model cannot run (a plain
                sentence naming the role or slot and what to set), or `role` is a lesson role
                without an override (prober and teacher run the lesson's model: `model_for`).
            Refused("unavailable", model_unreachable): the offline model failed to start.
            StoreCorrupt: settings.json is unreadable.
        """
        outcome = self.resolve_role(self.settings.load(), role)
        if outcome is None:
            raise Refused(
                "unavailable", "models_not_configured", f"{ROLES_BY_NAME[role].label} runs the lesson's model"
            )
        if outcome.model is None:
            raise Refused("unavailable", "models_not_configured", outcome.problem or "no model")
        return await self._runnable(outcome.model)

    def save_roles(self, roles: RoleOverrides) -> dict[str, Any]:
        """Replace settings' `roles` section (every override; null: the role's default), keep the
        other sections; returns status(). Raises StoreCorrupt for unreadable settings."""
        settings = self.settings.load()
        settings.roles = roles
        self.settings.save(settings)
        return self.status()

    async def _subscription_model(self, resolved: ResolvedModel) -> tuple[ResolvedModel, Model]:
        """A subscription route's model with the login's current scoped auth; never an API key.

        Raises:
            Refused("unavailable", models_not_configured): not connected, revoked, or expired (plain
                words of the contract: "Your ChatGPT subscription is not connected. ...").
        """
        port = self.subscriptions
        auth = await port.current(resolved.provider) if port is not None else None
        desktop = bool(port is not None and port.desktop)
        problem = (
            port.error(resolved.provider) if port is not None and auth is None else None
        ) or auth_problem(resolved.provider, auth, time.time(), desktop=desktop)
        if problem is not None or auth is None:
            raise Refused("unavailable", "models_not_configured", problem or "not connected")
        limits = self._limits()
        key = (
            resolved.provider,
            resolved.model,
            auth.base_url,
            auth.account_id,
            _fingerprint(auth.access_token),
            limits,
        )
        model = self._clients.get(key)
        if model is None:
            model = self.subscription_factory(resolved, auth)
            if len(self._clients) >= CLIENT_CACHE_SIZE:
                self._clients.pop(next(iter(self._clients)))
            self._clients[key] = model
        return resolved, model

    async def _runnable(self, resolved: ResolvedModel) -> tuple[ResolvedModel, Model]:
        if resolved.provider in SUBSCRIPTION_PROVIDERS:
            return await self._subscription_model(resolved)
        base_url = None
        if resolved.offline:
            assert self.offline is not None
            try:
                base_url = await self.offline.wait_ready(OFFLINE_READY_TIMEOUT_S)
            except RuntimeError as exc:
                retry = (
                    "Send your message again to retry it, or add" if self.offline.retry_helps else "Or add"
                )
                raise Refused(
                    "unavailable",
                    "model_unreachable",
                    f"{exc}. {retry} an API key in Settings to use a hosted model instead.",
                ) from exc
        api_key = self.api_key(resolved.provider)
        limits = self._limits()
        key = (resolved.provider, resolved.model, resolved.base_url, base_url, _fingerprint(api_key), limits)
        model = self._clients.get(key)
        if model is None:  # a client per (provider, model, URL, key, deadlines), reused (issue 15)
            # built in a worker thread: a client's TLS context loads the CA bundle (20-50 ms, and
            # a 2.9 s stall of the loop under load during a vault import, issue 16)
            built = await asyncio.to_thread(self.model_factory, resolved, api_key, base_url)
            model = self._clients.get(key)  # a concurrent first use may have built one meanwhile
            if model is None:
                model = built
                if len(self._clients) >= CLIENT_CACHE_SIZE:
                    self._clients.pop(next(iter(self._clients)))
                self._clients[key] = model
        return resolved, model

    def _limits(self) -> str:
        """The deadlines a client is built with (part of its cache key: a changed setting builds anew)."""
        try:
            return self.settings.load().model_calls.model_dump_json()
        except Exception:
            return ""

    async def offline_failure(
        self, since: float | None = None, failure: Mapping[str, Any] | None = None
    ) -> str | None:
        """After a request to the offline model failed: what happened to it in plain words, else
        None (the failure was something else, reported as it is).

        Args:
            since: a `time.monotonic()` reading (the turn's start): crashes since then count.
            failure: the error chunk's `failure` (`{"kind": FailureKind value, "limitS": s}`).
                A passed deadline (first-token or idle) means a hung child: it is killed and
                restarted once ("the offline model stopped answering (no reply in 120 s) and was
                restarted").

        Returns:
            E.g. "the offline model crashed (signal 11) while answering; it is being restarted".
        """
        if self.offline is None:
            return None
        kind = (failure or {}).get("kind")
        if kind in (FailureKind.FIRST_TOKEN_TIMEOUT.value, FailureKind.IDLE_TIMEOUT.value):
            limit = (failure or {}).get("limitS")
            hang = await self.offline.report_hang(limit if isinstance(limit, int | float) else None, since)
            if hang is not None:
                return hang
        return await self.offline.failure_report(since)

    def offline_answered(self, tokens: int = 0, seconds: float = 0.0) -> None:
        """A turn on the offline model finished well: its last crash leaves the banner, and the
        turn (`tokens` written in `seconds` of wall time) updates its measured speed."""
        if self.offline is not None:
            self.offline.answered(tokens, seconds)

    # -- writes ---------------------------------------------------------------------------------
    def save_slots(self, models: Any, roles: Any = None) -> dict[str, Any]:
        """Replace the model slots (and the role overrides when given), keep other sections;
        return status()."""
        settings = self.settings.load()
        settings.models = models
        if roles is not None:
            settings.roles = roles
        self.settings.save(settings)
        return self.status()

    def set_key(self, provider: SecretName, key: str) -> None:
        self.secrets.set(provider, key)

    def delete_key(self, provider: SecretName) -> None:
        self.secrets.delete(provider)

    # -- web research (the Workbench's researcher) ------------------------------------------------
    def search_key(self, provider: SearchProviderName) -> str | None:
        """The search provider's key: its environment variable, else the key store."""
        try:
            return self.environ.get(SEARCH_KEY_ENV[provider]) or self.secrets.get(provider)
        except Exception:  # a broken keychain reads as "no key"
            return None

    def research_status(self) -> dict[str, Any]:
        """`{provider, googleCx, baseUrl, keys: {tavily, brave, google}}` (key presence, never keys)."""
        research = self.settings.load().research
        return {
            **research.model_dump(mode="json", by_alias=True),
            "keys": {p: self.search_key(p) is not None for p in SEARCH_PROVIDERS},
        }

    def save_research(self, research: ResearchSettings) -> dict[str, Any]:
        """Replace the `research` section, keep the others; returns research_status()."""
        settings = self.settings.load()
        settings.research = research
        self.settings.save(settings)
        return self.research_status()
