"""Time the structural rubric (layer 1): every fixture present, and synthetic workspaces.

Targets: < 100 ms per fixture; < 2 s for a 5,000-file workspace with a handful of changed files; the cost
grows with the changed files, not the size of the repository.

    .venv/bin/python benchmarks/rubric.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

from pydantic import TypeAdapter

from skillassay.seam.plan import AnswerKey, Rubric
from skillassay.seam.rubric import grade

REPO = Path(__file__).resolve().parent.parent
EVALS = REPO / "evals"
RUBRIC = TypeAdapter(Rubric).validate_json((EVALS / "rubric.json").read_text())

KEY = AnswerKey(
    expected_files_modified=["src/services/reservationService.ts"],
    expected_calls={
        "create": ["customers.push_data"],
        "update": ["customers.push_data"],
        "cancel": ["customers.delete_data"],
    },
    expected_placements={
        "customers.push_data": ["createReservation", "updateReservation"],
        "customers.delete_data": ["cancelReservation"],
    },
    required_parameters={
        "push_data": ["customer_key", "reservations", "user_identities"],
        "delete_data": ["customer_key", "reservation_keys"],
    },
)

FILLER = """import {{ helper{m} }} from './helper{m}';
export function util{n}(items: number[]): number {{
  // a typical small module
  return items.map((x) => helper{m}(x) * {n}).reduce((a, b) => a + b, 0);
}}
export class Thing{n} {{
  constructor(private readonly name: string) {{}}
  describe(): string {{ return `thing ${{this.name}} #{n}`; }}
}}
"""

SERVICE = """import { Seam } from 'seam';
const seam = new Seam();
export async function createReservation(r: any) {
  await seam.customers.pushData({ customer_key: r.p, user_identities: [{ user_identity_key: r.g }],
    reservations: [{ reservation_key: r.id, space_keys: [r.u] }] });
  return r;
}
export async function updateReservation(r: any) {
  await seam.customers.pushData({
    customer_key: r.p, user_identities: [], reservations: [{ reservation_key: r.id }],
  });
  return r;
}
export async function cancelReservation(id: string) {
  await seam.customers.deleteData({ customer_keys: ['p'], reservation_keys: [id] });
}
"""


def timed(fn, repeat: int = 5) -> float:
    fn()  # warm: grammars, the SDK surface
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def synthetic(root: Path, files: int, changed: int, copy: bool) -> tuple[Path, Path]:
    """A pristine tree and a modified one: a copy keeping file times (as a workspace is made) or written
    anew.
    """
    pristine, modified = root / "pristine", root / "modified"
    for tree in (pristine,) if copy else (pristine, modified):
        for n in range(files):
            path = tree / "src" / f"pkg{n % 50}" / f"mod{n}.ts"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(FILLER.format(n=n, m=n % 7))
        service = tree / "src" / "services" / "reservationService.ts"
        service.parent.mkdir(parents=True, exist_ok=True)
        service.write_text("export async function createReservation(r: any) { return r; }\n")
    if copy:
        shutil.copytree(pristine, modified)
    (modified / "src" / "services" / "reservationService.ts").write_text(SERVICE)
    for n in range(changed - 1):
        path = modified / "src" / f"pkg{n % 50}" / f"mod{n}.ts"
        path.write_text(path.read_text() + f"export const changed{n} = {n};\n")
    return pristine, modified


def main() -> None:
    print("fixtures (median of 5, golden and controls):")
    for fixture in sorted((EVALS / "fixtures").iterdir()) if (EVALS / "fixtures").is_dir() else []:
        if not (fixture / "answer_key.json").exists() or not (fixture / "eval_config.json").exists():
            continue
        key = TypeAdapter(AnswerKey).validate_json((fixture / "answer_key.json").read_text())
        api = json.loads((fixture / "eval_config.json").read_text())["expected_api_path"]
        targets = [
            fixture / "test_golden",
            *sorted(p for p in (fixture / "test_controls").glob("*") if p.is_dir()),
        ]
        for target in targets:
            if not target.is_dir():
                continue
            seconds = timed(partial(grade, fixture / "app", target, key, RUBRIC, api))
            print(f"  {fixture.name}/{target.relative_to(fixture)}: {seconds * 1000:.1f} ms")
    print("synthetic TypeScript workspaces (median of 5):")
    for copy in (True, False):
        how = "copied keeping times" if copy else "written anew (every file's bytes compared)"
        for files, changed in ((500, 5), (5000, 5), (5000, 50), (5000, 500)):
            root = Path(tempfile.mkdtemp(prefix="skillassay-bench-"))
            try:
                pristine, modified = synthetic(root, files, changed, copy)
                seconds = timed(partial(grade, pristine, modified, KEY, RUBRIC, "reservation_automations"))
                print(f"  {files} files, {changed} changed, {how}: {seconds * 1000:.1f} ms")
            finally:
                shutil.rmtree(root)
    print("one large changed file (median of 5):")
    for functions in (200, 2000):
        root = Path(tempfile.mkdtemp(prefix="skillassay-bench-"))
        try:
            pristine, modified = synthetic(root, 10, 1, True)
            body = "".join(
                f"export async function step{n}(r: any) {{ const p = {{ customer_key: r.k{n} }}; "
                f"return step{n + 1}(p); }}\n"
                for n in range(functions)
            )
            big = modified / "src" / "services" / "reservationService.ts"
            big.write_text(SERVICE + body)
            seconds = timed(partial(grade, pristine, modified, KEY, RUBRIC, "reservation_automations"))
            lines = len(big.read_text().splitlines())
            print(f"  {lines} lines, {functions} functions: {seconds * 1000:.1f} ms")
        finally:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
