"""413 for request bodies above ``max_body_bytes``, declared or streamed (chunked)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collapse.errors import PayloadTooLarge

__all__ = ["BodySizeLimitMiddleware"]


class _TooLarge(Exception):
    pass


class BodySizeLimitMiddleware:
    """Refuses a body by its Content-Length, or stops reading it once it grows past the limit."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    def _error(self, declared: int | None = None) -> PayloadTooLarge:
        size = f" ({declared} bytes)" if declared is not None else ""
        return PayloadTooLarge(
            f"request body{size} is larger than the limit of {self.max_body_bytes} bytes "
            "(setting max_body_bytes)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_body_bytes:
                    await self._error(declared).response()(scope, receive, send)
                    return

        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if started:
                raise
            await self._error().response()(scope, receive, send)
