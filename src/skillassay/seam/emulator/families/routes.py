"""Importing this module registers every family route in ``handlers.HANDLERS``."""

from __future__ import annotations

from skillassay.seam.emulator.families import access_codes_multi, accounts, acs, client_sessions

FAMILY_MODULES = (access_codes_multi, accounts, acs, client_sessions)
