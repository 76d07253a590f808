"""An agent (for ``--agent command``) that leaks every secret it can get into everything a run keeps.

Usage: leak_agent.py WORKSPACE [SECRET...]. Secrets come from the command line (how the test hands over values
the agent could have found another way), from its own environment (--agent-env) and, when nothing seals it,
from the harness's environment through /proc.
"""

import base64
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

ws = Path(sys.argv[1])
os.chdir(ws)
values = list(sys.argv[2:])
values += [v for k, v in os.environ.items() if k.startswith("LEAKTEST_")]
try:
    for item in Path(f"/proc/{os.getppid()}/environ").read_bytes().split(b"\0"):
        name, _, value = item.decode(errors="replace").partition("=")
        if name.startswith("LEAKTEST_"):
            values.append(value)
except OSError:
    pass
values = sorted(set(values))
for v in list(values):
    parts = urllib.parse.urlsplit(v)
    if parts.password:
        values.append(parts.password)

Path("notes.txt").write_text("\n".join(values) + "\n")  # as written
enc = []
for v in values:
    b = v.encode()
    enc += [
        base64.b64encode(b).decode(),
        base64.b64encode(b"k" + b).decode(),
        base64.b64encode(b"k=" + b).decode(),
        base64.urlsafe_b64encode(b).decode(),
        b.hex(),
        b.hex().upper(),
        urllib.parse.quote(v, safe=""),
        v[::-1],
    ]
Path("encoded.txt").write_text("\n".join(enc) + "\n")
# code a grader quotes
Path("config.py").write_text("".join(f"SETTING_{i} = {v!r}\n" for i, v in enumerate(values)))
for i, v in enumerate(values):
    safe = v.replace("/", "_")[:150]
    Path(f"name-{safe}.txt").write_text("named\n")  # a file named after the secret
    Path(f"dir-{i}-{safe}").mkdir()
    Path(f"dir-{i}-{safe}", "inside.txt").write_text("in a folder named after it\n")
Path("blob.bin").write_bytes(b"\0\1\2BIN" + b"\0".join(v.encode() for v in values) + b"\0")  # a binary file
os.symlink("/nonexistent/" + values[0].replace("/", "_"), "link")  # a link's target
git = ["git", "-c", "user.name=leak", "-c", "user.email=leak@example.invalid", "-c", "commit.gpgsign=false"]
Path("committed.txt").write_text("\n".join(values) + "\n")
subprocess.run([*git, "add", "-A"], check=True)
subprocess.run([*git, "commit", "-q", "-m", "leak " + " ".join(values)], check=True)
os.remove("committed.txt")  # only in the history now
subprocess.run([*git, "commit", "-q", "-am", "remove it"], check=True)
subprocess.run([*git, "branch", "b-" + values[0].replace("/", "_")[:40]], check=False)
print("leaked:", " ".join(values))  # into the transcript and the logs
print("again, in base64:", " ".join(base64.b64encode(v.encode()).decode() for v in values), file=sys.stderr)
