"""CORS: closed unless ``cors_origins`` names the origins a browser page may call us from."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

__all__ = ["CORS_HEADERS", "CORS_METHODS", "add_cors"]

#: Methods a cross-origin page may use: the read endpoints of the allowlist.
CORS_METHODS = ("GET", "HEAD", "POST")
#: Request headers a cross-origin page may send.
CORS_HEADERS = ("content-type", "x-request-id", "x-opaque-id")


def add_cors(app: FastAPI, origins: list[str]) -> None:
    """Answer CORS for ``origins`` (``["*"]`` for any); add nothing when the list is empty."""
    if not origins:
        return
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=list(CORS_METHODS),
        allow_headers=list(CORS_HEADERS),
        expose_headers=["x-request-id"],
        allow_credentials=False,
        max_age=600,
    )
