"""External services the apps under test talk to, one package each, found by name through the
``skillassay.services`` entry points (``skillassay.plugins``): ``seam`` is the Seam API emulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, Self

GROUP = "skillassay.services"


class Emulator(Protocol):
    """An emulated service, as the harness holds it: started, reached at ``base_url``, stopped. What a wing's
    checks ask of it beyond that is the wing's (``seam.emulator.SeamEmulator``)."""

    @property
    def base_url(self) -> str: ...

    def start(self, host: str = ..., port: int = ...) -> Self: ...

    def stop(self) -> None: ...


def service_class(name: str) -> Callable[..., Emulator]:
    """The emulator class registered as ``name`` (imported now)."""
    from skillassay import plugins

    return plugins.load(GROUP, name)


def available_services() -> list[str]:
    from skillassay import plugins

    return plugins.names(GROUP)
