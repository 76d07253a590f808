"""The hybrid rubric: how often each layer judges the labelled cases right, and what the hybrid adds per run.

Labelled cases: the hybrid's own (tests/graders/sandbox/hybrid_apps.py and its Ruby and PHP twins,
each case's truth per rubric category), in styles the static reading still misjudges (a method name read from
the environment at run time, a coroutine kept in a variable and never awaited, a job queued nothing drains)
and in styles it reads right (``asyncio.to_thread``, a coroutine dropped unawaited: both layers should agree),
and the shipped fixtures' goldens and negative controls (``test_controls/*.expected.json``: rubric categories
and sandbox checks). Each case is built and driven once (the Seam kind, both layers); from that one grade come
the static reading's categories (``static_score``: before), the hybrid's (after) and the sandbox's checks. A
category or check is right when it is within 0.011 of its label.

The time the hybrid adds is the pass itself (``rubric.json``: ``hybrid.seconds``), read from what the sandbox
recorded; it runs nothing again.

    .venv/bin/python benchmarks/hybrid.py                 # the hybrid cases and the Python fixtures
    .venv/bin/python benchmarks/hybrid.py --fixtures all  # every shipped fixture (Node: slower builds)
    .venv/bin/python benchmarks/hybrid.py --fixtures none
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests" / "graders" / "sandbox"))

import hybrid_php_apps  # noqa: E402
import hybrid_ruby_apps  # noqa: E402
from hybrid_apps import CASES, grade  # noqa: E402

from skillassay.kinds.base import GradeOutcome, GradeRequest  # noqa: E402
from skillassay.seam.emulator.emulator import SeamEmulator  # noqa: E402
from skillassay.seam.kind import SeamKind, check_points  # noqa: E402
from skillassay.seam.loader import load_fixture  # noqa: E402

FIXTURES = REPO / "evals" / "fixtures"
TOLERANCE = 0.011
ALL_CHECKS = {"build": 10, "create": 30, "update": 30, "cancel": 30}


@dataclass
class Tally:
    right: int = 0
    of: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, ok: bool, what: str) -> None:
        self.of += 1
        self.right += ok
        if not ok:
            self.misses.append(what)

    def text(self) -> str:
        return f"{self.right}/{self.of} ({self.right / self.of:.0%})" if self.of else "-"


@dataclass
class Figures:
    static: Tally = field(default_factory=Tally)
    hybrid: Tally = field(default_factory=Tally)
    sandbox: Tally = field(default_factory=Tally)
    hybrid_s: list[float] = field(default_factory=list)
    rubric_s: list[float] = field(default_factory=list)
    sandbox_s: list[float] = field(default_factory=list)


def _score(out: GradeOutcome, rubric: dict[str, float], sandbox: dict[str, float], name: str, fig: Figures):
    cats = (out.rubric or {}).get("categories", {})
    for cat, want in rubric.items():
        got = cats.get(cat, {})
        fig.static.add(abs(float(got.get("static_score", -9)) - want) <= TOLERANCE, f"{name} {cat}")
        fig.hybrid.add(abs(float(got.get("score", -9)) - want) <= TOLERANCE, f"{name} {cat}")
    points = check_points(out.sandbox)
    for check, want in sandbox.items():
        fig.sandbox.add(abs(points.get(check, -9) - want) <= 1e-9, f"{name} {check}")
    hybrid = (out.rubric or {}).get("hybrid") or {}
    fig.hybrid_s.append(float(hybrid.get("seconds") or 0.0))
    fig.rubric_s.append(out.timings.get("rubric", 0.0))
    fig.sandbox_s.append(out.timings.get("sandbox", 0.0))


def hybrid_cases(emu: SeamEmulator, blind: Figures, agreed: Figures) -> None:
    labelled = [(n, c, grade) for n, c in sorted(CASES.items())]
    labelled += [(n, c, hybrid_ruby_apps.grade) for n, c in sorted(hybrid_ruby_apps.CASES.items())]
    labelled += [(n, c, hybrid_php_apps.grade) for n, c in sorted(hybrid_php_apps.CASES.items())]
    for name, case, grade_case in labelled:
        out = grade_case(Path(tempfile.mkdtemp(prefix="hyb-bench-")), emu, styles=case.styles)
        _score(out, case.truth, {}, f"hybrid case {name}", blind if case.static_misjudges else agreed)
        g = out.grades
        print(f"  {name}: static {g.get('rubric_static_total')}, hybrid {g.get('rubric_total')}")


def fixture_cases(emu: SeamEmulator, fig: Figures, which: str) -> None:
    names = sorted(p.name for p in FIXTURES.iterdir() if (p / "eval_config.json").is_file())
    if which == "python":
        names = [n for n in names if n.endswith("-py")]
    kind = SeamKind()
    for fx in names:
        d = load_fixture(FIXTURES / fx)
        for case in kind.control_cases(d, "both"):
            exp = case.expected
            rubric = exp.rubric_categories or (
                {c.name: 1.0 for c in d.rubric.categories} if case.name == "golden" and d.rubric else {}
            )
            sandbox = exp.sandbox_checks or (ALL_CHECKS if case.name == "golden" else {})
            if case.name == "pristine":
                sandbox = {"build": 10, "create": 0, "update": 0, "cancel": 0}
            run_dir = Path(tempfile.mkdtemp(prefix="hyb-bench-run-"))
            rid = f"hb{fx[:10]}{case.name[:6]}".replace("-", "")
            out = kind.grade(
                GradeRequest(
                    definition=d, modified_dir=case.folder, run_dir=run_dir, run_id=rid, emulator=emu
                )
            )
            _score(out, rubric, sandbox, f"{fx} {case.name}", fig)
            print(
                f"  {fx} {case.name}: static {out.grades.get('rubric_static_total')}, "
                f"hybrid {out.grades.get('rubric_total')}, sandbox {out.grades.get('sandbox_total')}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixtures", choices=("python", "all", "none"), default="python")
    args = ap.parse_args()
    t0 = time.monotonic()
    emu = SeamEmulator(async_delay=1.0).start()
    try:
        blind, agreed, fixtures = Figures(), Figures(), Figures()
        print("hybrid labelled cases (names read at run time, coroutines kept unawaited, undrained queues;")
        print("  to_thread and dropped coroutines, which the static reading reads right):")
        hybrid_cases(emu, blind, agreed)
        if args.fixtures != "none":
            print(f"shipped fixtures ({args.fixtures}): goldens and labelled controls")
            fixture_cases(emu, fixtures, args.fixtures)
    finally:
        emu.stop()
    print()
    print(f"{'labelled set':<28} {'static rubric':>16} {'hybrid rubric':>16} {'sandbox':>16}")
    sets = (("static's blind spots", blind), ("static reads right", agreed), ("shipped fixtures", fixtures))
    for label, fig in sets:
        if fig.static.of:
            print(f"{label:<28} {fig.static.text():>16} {fig.hybrid.text():>16} {fig.sandbox.text():>16}")
    for label, fig in sets:
        for layer in ("static", "hybrid", "sandbox"):
            for miss in getattr(fig, layer).misses:
                print(f"  miss ({layer}, {label}): {miss}")
    times = [s for _, fig in sets for s in fig.hybrid_s]
    rubric = [s for _, fig in sets for s in fig.rubric_s]
    sandbox = [s for _, fig in sets for s in fig.sandbox_s]
    print()
    print(
        f"hybrid pass per run: median {statistics.median(times) * 1000:.2f} ms, max "
        f"{max(times) * 1000:.2f} ms ({len(times)} runs); the static rubric: median "
        f"{statistics.median(rubric) * 1000:.0f} ms; the sandbox: median {statistics.median(sandbox):.1f} s"
    )
    print(f"benchmark wall time {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
