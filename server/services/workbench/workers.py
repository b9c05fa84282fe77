"""What a job's worker runs on: its role's model (researcher, demo builder, visual maker: the
strong slot unless overridden), the picture checker's (the vision slot) when one is set, the
configured web search, and the headless browser (seed §5.1). Also which job tools the teacher is
offered: `research` only with a search provider and its key, `demo` and `visual` only where the
headless browser runs."""

from __future__ import annotations

import logging
from typing import Any

from server.agent.workbench.web import build_search
from server.agent.workbench.workers import WorkerDeps, run_worker
from server.core.contracts.jobs import JobKind, WorkerResult, WorkerUsage
from server.core.contracts.models import RoleName
from server.core.ports import Headless, SettingsStore
from server.core.refusals import Refused
from server.services.machine_room.models import ModelService

log = logging.getLogger("lh.job")

WORKER_ROLES: dict[JobKind, RoleName] = {
    "research": "researcher",
    "demo": "demoBuilder",
    "visual": "visualMaker",
}
"""The model role each job kind's worker runs (`model_roles.MODEL_ROLES`)."""


class NoModel(RuntimeError):
    """The worker's model cannot run (no slot, no key): a plain sentence, the job's error."""


class WorkerHost:
    """Args:
    models: the model slots and keys.
    headless: the browser that verifies demos and visuals.
    settings: the settings port (the `research` section, whether a vision slot is set).
    """

    def __init__(self, models: ModelService, headless: Headless, settings: SettingsStore) -> None:
        self.models = models
        self.headless = headless
        self.settings = settings

    def job_kinds(self) -> list[JobKind]:
        """The job tools to offer the teacher now."""
        kinds: list[JobKind] = []
        research = self.settings.load().research
        key = self.models.search_key(research.provider) if research.provider is not None else None
        if build_search(research, key) is not None:  # a provider, its key, and Google's engine id
            kinds.append("research")
        try:
            browser = self.headless.available()
        except Exception:
            browser = False
        if browser:
            kinds += ["demo", "visual"]
        return kinds

    async def run(self, kind: JobKind, tool_input: dict[str, Any]) -> tuple[WorkerResult, WorkerUsage]:
        """Run one worker on its role's model (`WORKER_ROLES`; the vision check's for a visual
        when that role has a model). The usage returned names the model that ran (`model`, and
        `visionModel` when a picture was looked at). Raises NoModel, or the worker's own failure
        (a plain sentence)."""
        settings = self.settings.load()
        try:
            resolved, model = await self.models.model_for_role(WORKER_ROLES[kind])
        except Refused as exc:
            raise NoModel(f"no model to run the {kind} job: {exc.detail}") from exc
        vision = None
        vision_model = None
        if kind == "visual" and (settings.models.vision is not None or settings.roles.of("visualCheck")):
            try:
                seen, vision = await self.models.model_for_role("visualCheck")
                vision_model = seen.model
            except Refused as exc:  # the picture is still rendered and checked, not looked at
                log.warning("the picture checker cannot run (%s); the visual is not looked at", exc.detail)
        search = None
        if kind == "research" and settings.research.provider is not None:
            search = build_search(settings.research, self.models.search_key(settings.research.provider))
        ran = {"model": resolved.model, "vision_model": vision_model}
        try:
            deps = WorkerDeps(model=model, vision=vision, search=search, headless=self.headless)
            result, usage = await run_worker(kind, tool_input, deps)
        except Exception as exc:
            spent = getattr(exc, "usage", None)
            if isinstance(spent, WorkerUsage):
                exc.usage = spent.model_copy(update=ran)  # type: ignore[attr-defined]
            raise
        return result, usage.model_copy(update=ran)
