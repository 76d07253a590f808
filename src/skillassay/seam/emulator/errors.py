"""Errors the emulator answers with, in Seam's shape:
``{"error": {"type", "message", "data"?, "validation_errors"?}}``."""

from __future__ import annotations

from typing import Any


class SeamApiError(Exception):
    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        *,
        data: dict[str, Any] | None = None,
        validation_errors: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.data = data
        self.validation_errors = validation_errors

    def body(self, request_id: str) -> dict[str, Any]:
        error: dict[str, Any] = {"type": self.type, "message": self.message, "request_id": request_id}
        if self.data is not None:
            error["data"] = self.data
        if self.validation_errors is not None:
            error["validation_errors"] = self.validation_errors
        return {"error": error, "ok": False}


def not_found(resource: str, message: str | None = None) -> SeamApiError:
    label = resource.replace("_", " ")
    return SeamApiError(404, f"{resource}_not_found", message or f"{label[0].upper()}{label[1:]} not found")


def invalid_input(message: str, validation_errors: dict[str, Any] | None = None) -> SeamApiError:
    return SeamApiError(
        400, "invalid_input", message, validation_errors=validation_errors or {"_errors": [message]}
    )


def unauthorized() -> SeamApiError:
    return SeamApiError(401, "unauthorized", "Unauthorized")
