"""WebSocket consumers: live pages.

:class:`PageConsumer` serves one open page (``/ws/pages<page path>``, see
``console/routing.py``). It joins the channel-layer group ``cluster`` and, on every
``cluster.changed`` event, sends the page's fragments re-rendered with ``hx-swap-oob`` for the
htmx ws extension to swap in. It only reads: rendering happens in
``allocation.presenters.live`` (run in a worker thread, it touches the database).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from allocation.presenters import live
from console.events import CLUSTER_GROUP

__all__ = ["PageConsumer", "CLOSE_UNAUTHENTICATED", "CLOSE_UNKNOWN_PAGE"]

CLOSE_UNAUTHENTICATED = 4401
CLOSE_UNKNOWN_PAGE = 4404


def _seen_revision(scope: dict) -> int | None:
    """The revision the page was rendered at (``?rev=N``), if it says."""
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("rev") or []
    try:
        return int(values[0]) if values else None
    except ValueError:
        return None


class PageConsumer(AsyncWebsocketConsumer):
    """Pushes one page's fragments after every change to the stored cluster."""

    groups: list[str] = []  # joined in connect, after the user is checked

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)  # before accept: handshake refused
            return
        kwargs = dict(self.scope["url_route"]["kwargs"])
        self.page = kwargs.pop("page", "")
        if self.page not in live.PAGES:
            await self.close(code=CLOSE_UNKNOWN_PAGE)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.kwargs = {**kwargs, **live.query_kwargs(
            self.page, {name: values[0] for name, values in query.items()})}
        self.revision = _seen_revision(self.scope)
        await self.channel_layer.group_add(CLUSTER_GROUP, self.channel_name)
        await self.accept()
        # The cluster may have changed between rendering the page and opening the socket.
        current = await sync_to_async(live.current_revision)()
        if self.revision is None or current != self.revision:
            await self._push()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "kwargs", None) is not None:
            await self.channel_layer.group_discard(CLUSTER_GROUP, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None
                      ) -> None:
        """Pages send nothing that matters; ignore whatever arrives."""

    async def cluster_changed(self, event: dict) -> None:
        """``cluster.changed``: re-render unless this page already shows that revision."""
        revision = event.get("revision")
        if isinstance(revision, int) and self.revision is not None \
                and revision <= self.revision:
            return
        await self._push()

    async def _push(self) -> None:
        html, self.revision = await sync_to_async(live.render_live)(self.page, self.kwargs)
        await self.send(text_data=html)
