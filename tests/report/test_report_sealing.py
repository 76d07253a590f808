"""The run page says how the run was sealed and lists what its agent reached for out of bounds; a job with
unsealed runs says so."""

from __future__ import annotations

import json

from synthetic_runs import make_job

from skillassay.report.site import build_site
from skillassay.store.files import write_json_atomic, write_run_file

SEALED = {
    "isolation": "bubblewrap",
    "sealed": True,
    "registries": ["pypi.org"],
    "mounts": [],
    "phases": {
        "agent": {
            "phase": "agent",
            "isolation": "bubblewrap",
            "endpoints": ["model 127.0.0.1:9"],
            "registries": ["pypi.org"],
        }
    },
}
PROCESS = {
    "sealing": {
        "out_of_bounds": [
            {
                "path": "/suite/<golden>.py",
                "ops": ["openat"],
                "results": ["ENOENT"],
                "write": False,
                "count": 2,
                "programs": ["cat"],
                "source": ["syscall"],
                "protected": "suite",
            }
        ],
        "reached_for_suite": ["/suite/<golden>.py"],
        "phases": {
            "agent": {
                "refused": [
                    {
                        "host": "evil.example",
                        "port": 443,
                        "method": "CONNECT",
                        "reason": "not on the allow-list",
                        "count": 1,
                        "first_at": 0.1,
                    }
                ],
                "audit": {
                    "connects": [
                        {
                            "address": "127.0.0.1:5432",
                            "results": ["ECONNREFUSED"],
                            "count": 1,
                            "programs": ["psql"],
                        }
                    ]
                },
            }
        },
    }
}


def test_run_pages_show_the_sealing(tmp_path):
    root = tmp_path / "results"
    job, runs = make_job(root, evals=("flask-py",), runs=2)
    sealed, unsealed = runs
    sealed.sealing = SEALED
    sealed.arm = {
        "expected": "seam",
        "mode": "native",
        "installed": [{"name": "seam", "where": "home:.claude/skills/seam", "hash": "sha256:abcdef0123"}],
        "reported": ["seam", "debug"],
        "reported_source": "cli",
        "user_config": [],
        "ok": True,
        "problem": None,
    }
    unsealed.sealing = {**SEALED, "isolation": "none", "sealed": False}
    for r in runs:
        write_run_file(root, r)
    write_json_atomic(root / sealed.run_dir / "process.json", json.loads(json.dumps(PROCESS)))
    out = tmp_path / "site"
    build_site(root, out)
    page = (out / "jobs" / job.job_id / "flask-py" / "run_1.html").read_text()
    assert "The agent reached for the suite or the results" in page
    assert "<code>/suite/&lt;golden&gt;.py</code>" in page and "ENOENT" in page  # listed, escaped
    assert "evil.example:443" in page and "127.0.0.1:5432" in page and "ECONNREFUSED" in page
    assert "home:.claude/skills/seam" in page and "sha256:abcdef01" in page
    assert "Not sealed" not in page
    other = (out / "jobs" / job.job_id / "flask-py" / "run_2.html").read_text()
    assert "Not sealed" in other and "--isolation none" in other
    job_page = next((out / "jobs" / job.job_id).glob("index*.html")).read_text()
    assert "1 run(s) of this job ran with <code>--isolation none</code>" in job_page
