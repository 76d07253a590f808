"""What a run's sealed phases recorded (docs/sealing.md): how each was sealed and what happened at its
boundary.
"""

from __future__ import annotations

import json
from typing import Any

from skillassay.isolation.audit import AuditReport, PathTouch
from skillassay.isolation.base import Policy, Sandbox, SealRecord, SealReport

SUITE_LABELS = ("suite", "results")  # reaching for these is the forbidden behaviour below
REACHED_FOR_SUITE = "reached_for_suite"


class Sealing:
    """What a run's phases recorded: how each was sealed (run.json ``sealing``) and what happened at its
    boundary (process.json ``sealing``): refused connections, the out-of-bounds paths (syscalls and
    transcript)."""

    def __init__(self, policy: Policy | None = None):
        self.policy = policy
        self.records: dict[str, SealRecord] = {}
        self.reports: dict[str, SealReport] = {}
        self.transcript: list[PathTouch] = []

    def add(self, box: Sandbox) -> None:
        """A closed sandbox's record and report; phases with several sandboxes (gates) are merged."""
        report = box.final or box.report()
        phase = box.seal.phase
        self.records.setdefault(phase, box.record())
        if phase in self.reports:
            old = self.reports[phase]
            old.processes += report.processes
            old.refused += report.refused
            for k, v in report.registries_reached.items():
                old.registries_reached[k] = old.registries_reached.get(k, 0) + v
            old.audit = old.audit.merge(report.audit)
        else:
            self.reports[phase] = report

    def out_of_bounds(self) -> list[PathTouch]:
        merged = AuditReport()
        for report in self.reports.values():
            merged = merged.merge(report.audit)
        return merged.merge(AuditReport(out_of_bounds=self.transcript)).out_of_bounds

    def reached_suite(self) -> list[str]:
        return [t.path for t in self.out_of_bounds() if t.protected in SUITE_LABELS]

    def run_json(self) -> dict[str, Any]:
        isolation = self.policy.isolation if self.policy else "none"
        return {
            "isolation": isolation,
            "sealed": isolation != "none",
            "registries": list(self.policy.registries) if self.policy else [],
            "mounts": [str(m.target) for m in self.policy.mounts] if self.policy else [],
            "phases": {k: json.loads(v.model_dump_json()) for k, v in self.records.items()},
        }

    def process_json(self) -> dict[str, Any]:
        return {
            "isolation": self.policy.isolation if self.policy else "none",
            "out_of_bounds": [json.loads(t.model_dump_json()) for t in self.out_of_bounds()],
            "reached_for_suite": self.reached_suite(),
            "phases": {k: json.loads(v.model_dump_json()) for k, v in self.reports.items()},
        }
