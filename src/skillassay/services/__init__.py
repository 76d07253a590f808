"""External services the apps under test talk to, one package each, found by name through the
``skillassay.services`` entry points (``skillassay.plugins``): ``seam`` is the Seam API emulator."""

from __future__ import annotations

from typing import Any, Protocol

GROUP = "skillassay.services"


class Service(Protocol):
    """What the harness asks of a started emulator; its wing's graders reach the rest of it."""

    @property
    def base_url(self) -> str: ...

    @property
    def spec_version(self) -> str: ...  # the API spec it serves (an eval kind's grades record it)

    def stop(self) -> None: ...


def service_class(name: str) -> Any:
    """The emulator class registered as ``name`` (imported now)."""
    from skillassay import plugins

    return plugins.load(GROUP, name)


def available_services() -> list[str]:
    from skillassay import plugins

    return plugins.names(GROUP)
