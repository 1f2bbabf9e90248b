"""The scenario page's WebSocket: pushes the re-rendered body after every change.

It joins the scenario's group (``scenario-<id>``) once the user may see the scenario (its
owner, staff, or the holder of a shared link's token) and relays ``scenario.updated`` as
the body fragment with ``hx-swap-oob``, except to the page whose own request made the
change: the page says its id once the socket is open (``{"page": id}``,
``static/js/scenario.js``), its requests name it too (``scenarios.views.PAGE_HEADER``), and
the answer to the request already carries the new body, so rendering it again for that
page's socket would only double the work of every drop (docs/scenarios.md, "Drag and
drop"). It never writes.
"""

from __future__ import annotations

import json
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
    page: str = ""  # the id the page said (``receive``); "" until it does

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
        """The page says its id (``{"page": id}``); anything else is ignored."""
        try:
            said = json.loads(text_data or "")
        except ValueError:
            return
        page = said.get("page") if isinstance(said, dict) else None
        if isinstance(page, str) and page:
            self.page = page[:64]  # as long as a request's header may name it (views.origin)

    async def scenario_updated(self, event: dict) -> None:
        if self.page and event.get("origin") == self.page:
            return  # this page's own change: the answer to its request carries the body
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
