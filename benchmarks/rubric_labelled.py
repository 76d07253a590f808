"""Accuracy of the static rubric on the labelled apps written in styles the fixtures do not use
(tests/graders/rubric/labelled_styles.py): how many (app, category) judgements match the label, per stack,
per Seam path, per category, and every miss.

    .venv/bin/python benchmarks/rubric_labelled.py
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "graders" / "rubric"))

from labelled_styles import CASES, CATEGORIES, OPEN_CASES  # noqa: E402 - the cases live with the tests
from rubric_helpers import App, scores  # noqa: E402


def main() -> None:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    for case in CASES + OPEN_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            result = App(Path(tmp), case.pristine, case.changes).grade(
                case.key, api_path=case.path, endpoints=case.endpoints
            )
        got = scores(result)
        for category in CATEGORIES:
            ok = got[category] == case.expected[category]
            for group in ("all", f"stack {case.stack}", f"path {case.path}", f"category {category}"):
                total[group] += 1
                right[group] += ok
            if not ok:
                misses.append(f"  {case.name}: {category} {got[category]} (label {case.expected[category]})")
    for group in sorted(total, key=lambda g: (g != "all", g)):
        print(f"{group:40} {right[group]:3}/{total[group]:3}  {100 * right[group] / total[group]:5.1f}%")
    print(f"misses ({len(misses)}):")
    print("\n".join(misses) or "  none")


if __name__ == "__main__":
    main()
