"""The scenario page's WebSocket: pushes the re-rendered body after every change.

It joins the scenario's group (``scenario-<id>``) once the user may see the scenario (its
owner, staff, or the holder of a shared link's token) and relays ``scenario.updated`` as
the body fragment with ``hx-swap-oob``. It never writes.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from console.events import scenario_group
from scenarios import services
from scenarios.models import Scenario

__all__ = ["ScenarioConsumer", "CLOSE_NOT_ALLOWED"]

CLOSE_NOT_ALLOWED = 4403


def _token(scope: dict) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or []
    return values[0] if values else None


class ScenarioConsumer(AsyncWebsocketConsumer):
    """One open scenario page."""

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        scenario_id = self.scope["url_route"]["kwargs"]["scenario_id"]
        allowed = await sync_to_async(self._allowed)(user, scenario_id, _token(self.scope))
        if not allowed:
            await self.close(code=CLOSE_NOT_ALLOWED)
            return
        self.scenario_id = scenario_id
        self.group = scenario_group(scenario_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    @staticmethod
    def _allowed(user, scenario_id: int, token: str | None) -> bool:
        scenario = Scenario.objects.filter(pk=scenario_id).first()
        return scenario is not None and user is not None and services.can_view(
            user, scenario, token)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None
                      ) -> None:
        """The page sends nothing that matters."""

    async def scenario_updated(self, event: dict) -> None:
        html = await sync_to_async(self._render)()
        if html:
            await self.send(text_data=html)

    def _render(self) -> str:
        from scenarios.views import render_body

        scenario = Scenario.objects.filter(pk=self.scenario_id).first()
        if scenario is None:
            return ""
        user = self.scope["user"]
        return render_body(scenario, services.can_edit(user, scenario), oob=True, user=user)
