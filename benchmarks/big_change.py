"""What an agent that writes a huge change costs a run: wall time and bytes stored in the results folder.

    .venv/bin/python benchmarks/big_change.py [--mb 200] [--fixture cancellation-support] [--cases
    text,binary,...]
                                              [--files 200000]

Each case is one `skillassay run` with the command agent, on the fixture (an agent eval: gates, hidden and
meaningful tests copy the workspace), with the default size limit (20 MB):
- text: one file of random hex text, committed (so it is in the agent's git history too);
- binary: one file of random bytes;
- many: the same bytes as 100 medium files;
- sparse: a file of --mb * 50 that takes no room on disk;
- history: a file committed and then removed (only in .git);
- flood: --files empty files in one new folder (not one of the default cases: it is about the count, not
  bytes).
Prints, per case: the run's wall time, its timings (agent, snapshot, graders), the bytes stored under the
results folder, and what run.json says was left out. Before the size limit (issue 13), "text" at 200 MB took 1
min 56 s and stored 718 MB (the workspace copied into the run folder, and again by the gate and the hidden
tests).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

AGENT = r"""
import os, subprocess, sys
mode, mb = sys.argv[1], int(sys.argv[2])
git = ["git", "-c", "user.name=a", "-c", "user.email=a@b.invalid"]
def random_text(path, n):
    with open(path, "w") as f:
        for _ in range(n):
            f.write(os.urandom(500_000).hex())
if mode == "text":
    random_text("huge.txt", mb)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "big"], check=True)
elif mode == "binary":
    with open("huge.bin", "wb") as f:
        for _ in range(mb):
            f.write(os.urandom(1_000_000))
elif mode == "many":
    os.makedirs("data", exist_ok=True)
    for i in range(100):
        with open(f"data/part-{i:03}.bin", "wb") as f:
            f.write(os.urandom(mb * 10_000))
elif mode == "sparse":
    with open("disk.img", "wb") as f:
        f.truncate(mb * 50 * 1_000_000)
elif mode == "history":
    random_text("gone.txt", mb)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "big"], check=True)
    subprocess.run(git + ["rm", "-q", "gone.txt"], check=True)
    subprocess.run(git + ["commit", "-qm", "gone"], check=True)
elif mode == "flood":
    os.makedirs("flood", exist_ok=True)
    for i in range(int(sys.argv[3])):
        open(f"flood/{i:06}", "w").close()
print("done")
"""


def stored(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() or p.is_symlink())


def main() -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--fixture", default="cancellation-support")
    ap.add_argument("--cases", default="text,binary,many,sparse,history")
    ap.add_argument("--files", type=int, default=200_000, help="empty files the flood case makes")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillassay-bench-") as tmp:
        agent = Path(tmp) / "agent.py"
        agent.write_text(AGENT)
        print(
            f"{'case':<8} {'wall s':>7} {'agent s':>8} {'snapshot s':>10} {'graders s':>9} "
            f"{'stored MB':>10}  "
            "left out"
        )
        for case in args.cases.split(","):
            results = Path(tmp) / case
            t = time.monotonic()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "skillassay",
                    "run",
                    str(REPO / "evals"),
                    "--agent",
                    "command",
                    "--command",
                    f"{sys.executable} {agent} {case} {args.mb} {args.files}",
                    "--fixtures",
                    args.fixture,
                    "--results",
                    str(results),
                    "--json",
                    "--mount",
                    str(agent),
                ],
                capture_output=True,
                text=True,
            )
            wall = time.monotonic() - t
            if proc.returncode not in (0, 1):
                print(f"{case}: failed ({proc.returncode}): {proc.stderr[-500:]}")
                continue
            [run] = json.loads(proc.stdout)["runs"]
            tm = run["timings"]
            graders = sum(v for k, v in tm.items() if k in ("rubric", "sandbox", "process"))
            over = (run.get("size") or {}).get("over_limit", [])
            left = f"{len(over)} file(s), {sum(o['size'] for o in over) / 1e6:.0f} MB" if over else ""
            if (run.get("size") or {}).get("entries_left_out"):
                left = (
                    f"{left + '; ' if left else ''}{run['size']['entries_left_out']} entries past the count"
                )
            print(
                f"{case:<8} {wall:7.1f} {tm.get('agent', 0):8.1f} {tm.get('snapshot', 0):10.2f} "
                f"{graders:9.1f} "
                f"{stored(results) / 1e6:10.2f}  {left or '-'}"
            )


if __name__ == "__main__":
    main()
