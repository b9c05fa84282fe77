"""Background consent per subscription (seed §5.1, §8.1; decision 0030): whether work the learner
did not start (a finished job waking its lesson, or steered into a running turn) may run on each
subscription. Transport only (`services.consent`, the Workbench's `BackgroundConsentService`).

    GET /api/background-consent  -> {"chatgpt": bool, "github-copilot-subscription": bool,
                                     "xai-subscription": bool}
    PUT /api/background-consent  body {"provider": <one of them>, "allowed": bool} -> the same shape

Default ON for each. Works in the web and the desktop mode alike (it is a setting in
`settings.json`, not a credential). A change emits `subscriptions-changed`.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, StrictBool

from server.api.bodies import StrictRoute
from server.api.deps import ServicesDep
from server.api.errors import GUARDED, errors
from server.core.contracts.models import SubscriptionRoute

router = APIRouter(route_class=StrictRoute, responses=GUARDED)


class ConsentChange(BaseModel):
    """`PUT /api/background-consent` body.

    Attributes:
        provider: `chatgpt`, `github-copilot-subscription` or `xai-subscription` (else 400
            naming them).
        allowed: true lets background work use it; false holds finished results (nothing is
            lost) until it is true again, and stops an idle wake running on it.
    """

    model_config = ConfigDict(extra="forbid")

    provider: SubscriptionRoute
    allowed: StrictBool


@router.get("/api/background-consent", responses=errors(503))
async def get_consent(services: ServicesDep) -> dict[str, bool]:
    """Each subscription's background consent."""
    return services.consent.view()


@router.put("/api/background-consent", responses=errors(400, 413, 503))
async def put_consent(body: ConsentChange, services: ServicesDep) -> dict[str, bool]:
    """Switch one subscription's background consent; answers every subscription's as it now applies."""
    return services.consent.set(body.provider, body.allowed)
