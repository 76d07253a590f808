"""``report --markdown`` and ``compare --markdown``: what a pull request's reader sees, its links, its exit
codes, and that no secret a run holds reaches it."""

from __future__ import annotations

import base64
import re
import urllib.parse
from pathlib import Path

import pytest
from leaks import encodings
from synthetic_runs import make_job
from typer.testing import CliRunner

from skillassay.cli.main import app
from skillassay.report.markdown import cell
from skillassay.scoring.stats import compare
from skillassay.store.files import write_json_atomic, write_run_file
from skillassay.usage import ModelUsage

runner = CliRunner()
JOB, WORSE, BETTER = "20261129-224512-ab12", "20261130-090000-cd34", "20261130-100000-ef56"


def cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def _priced(root: Path, runs, usd: float):
    out = []
    for r in runs:
        r = r.model_copy(update={"model_usage": ModelUsage(requests=3, cost_usd=usd)})
        write_run_file(root, r)
        out.append(r)
    return out


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    root = tmp_path_factory.mktemp("md")
    _, runs = make_job(root, job_id=JOB, baseline=True, artifacts=False)
    runs = _priced(root, runs, 0.25)
    _, worse = make_job(root, job_id=WORSE, seed=2, skill_mean=0.55, artifacts=False)
    make_job(root, job_id=BETTER, seed=3, skill_mean=0.97, artifacts=False)
    return root, runs, worse


def _points(x: float) -> str:
    return f"{x * 100:+.1f}"


def test_report_markdown_has_verdicts_paired_difference_cost_and_link(jobs, tmp_path):
    root, runs, _ = jobs
    res = cli("report", JOB, "--results", str(root), "--markdown", "--report-url", "https://ci.example/r/7/")
    assert res.exit_code == 0, res.output
    md = res.output
    # one row per eval and one for all, with the passes counted from the records
    skill = [r for r in runs if r.variant == "skill"]
    for eval_id in ("express-ts", "flask-py"):
        mine = [r for r in skill if r.eval_id == eval_id]
        passes = sum(r.verdict.passed for r in mine)
        assert re.search(
            rf"^\| {re.escape(cell(eval_id))} \| {len(mine)} \| {passes} \|", md, re.MULTILINE
        ), md
    assert re.search(r"^\| \*\*all\*\* \| 6 \|", md, re.MULTILINE)
    # the skill's paired difference from the baseline, with its interval, as the statistics give it
    cmp = compare(
        [r for r in runs if r.variant == "baseline"],
        skill,
        a_label="without the skill",
        b_label="with the skill",
    )
    d = cmp.overall
    assert f"{_points(d.delta)} points**, 95% interval [{_points(d.ci[0])}, {_points(d.ci[1])}]" in md
    # cost: 6 runs a side at $0.25 each, per pass over the passes
    passes = sum(r.verdict.passed for r in skill)
    assert f"| with the skill | 6 | $1.5000 | ${1.5 / passes:.4f} |" in md
    assert "| without the skill | 6 | $1.5000 |" in md
    # the link points at the job's page of the site `report --html` builds
    link = re.search(r"\[Full report\]\(https://ci\.example/r/7/([^)]+)\)", md)
    assert link, md
    assert cli("report", JOB, "--results", str(root), "--html", str(tmp_path / "site")).exit_code == 0
    assert (tmp_path / "site" / link.group(1)).is_file()
    # the runs that failed are named, folded away
    failed = [r for r in runs if not r.verdict.passed]
    assert md.count(f"{JOB}") >= 1 and md.count("<details>") == 1
    assert len(re.findall(r"^- (express-ts|flask-py) run \d", md, re.MULTILINE)) == len(failed)


def test_report_markdown_without_url_names_the_command(jobs):
    root, _, _ = jobs
    res = cli("report", WORSE, "--results", str(root), "--markdown")
    assert res.exit_code == 0
    assert "skillassay report --html" in res.output and "](" not in res.output
    assert "With the skill against without it" not in res.output  # no baseline ran


def test_report_markdown_keeps_fail_on_verdict(jobs):
    root, _, _ = jobs
    res = cli("report", WORSE, "--results", str(root), "--markdown", "--min-pass-rate", "0.99")
    assert res.exit_code == 1 and "### skillassay job" in res.output


def test_report_markdown_and_json_to_stdout_refused(jobs):
    root, _, _ = jobs
    res = runner.invoke(app, ["report", JOB, "--results", str(root), "--markdown", "--json", "-"])
    assert res.exit_code == 2 and "--markdown" in res.output


@pytest.mark.parametrize(("b", "code", "word"), [(WORSE, 1, "is worse"), (BETTER, 0, "points higher")])
def test_compare_markdown_exit_codes_with_fail_if_worse(jobs, b, code, word):
    root, _, _ = jobs
    res = cli("compare", JOB, b, "--results", str(root), "--markdown", "--fail-if-worse", "--report-url", "u")
    assert res.exit_code == code, res.output
    assert word in res.output
    assert re.search(r"points\*\*, 95% interval \[[-+]\d+\.\d, [-+]\d+\.\d\]", res.output)
    assert f"[Full comparison](u/compare/{JOB}--{b}.html)" in res.output


def test_compare_markdown_of_one_jobs_arms_links_the_jobs_page(jobs):
    root, _, _ = jobs
    res = cli("compare", f"{JOB}:baseline", JOB, "--results", str(root), "--markdown", "--report-url", "u")
    assert res.exit_code == 0
    assert f"[Full comparison](u/jobs/{JOB}/index.html)" in res.output
    assert "| A = " in res.output and "$1.5000" in res.output  # each arm's cost


def test_cell_keeps_a_table_row_one_row():
    text = cell("a | b\n| c `d` <img src=x> [l](http://e)")
    assert "\n" not in text
    # every character Markdown or HTML would read is escaped
    assert not re.search(r"(?<!\\)[|<>`\[\]]", text), text


# ----------------------------------------------------------------------------- secrets
SECRET = "planted-Value-7c4e1a9b2d"
ESCAPED = "under_score*secret_4f2a9c"  # what Markdown escaping would change (into a form no scrubber knows)


def cell_escaped(text: str) -> str:
    return re.sub(r"([_*])", r"\\\1", text)


def _forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        secret[::-1],
        raw.hex(),
        raw.hex().upper(),
        base64.b64encode(raw).decode(),
        base64.b64encode(b"x" + raw).decode(),
        base64.urlsafe_b64encode(b"xy" + raw).decode(),
        urllib.parse.quote(f"k={secret}&", safe=""),
    ]


def test_no_planted_key_reaches_any_markdown(tmp_path, monkeypatch):
    """The key, unknown as a secret when the runs were written, is in their errors, final messages,
    evidence and transcripts in every form; once the environment names it, no summary holds it."""
    root = tmp_path / "res"
    _, runs = make_job(root, job_id=JOB, baseline=True)
    forms = _forms(SECRET)
    for k, r in enumerate(runs):
        form = forms[k % len(forms)]
        crit = [c.model_copy(update={"evidence": [f"saw {form}"]}) for c in r.criteria]
        update: dict = {"criteria": crit}
        update["transcript"] = r.transcript.model_copy(update={"final_message": f"done {form}"})
        if k < len(forms):  # the failure reason quotes the error: every form reaches it
            update |= {"outcome": "harness_error", "error": f"crashed near {form} and {ESCAPED}"}
        r = r.model_copy(update=update)
        write_run_file(root, r)
        d = root / r.run_dir
        transcript = (d / "transcript.json").read_text().replace("Done: push_data", f"Done {form}")
        (d / "transcript.json").write_text(transcript)
        write_json_atomic(d / "rubric.json", {"evidence": [form]})
    make_job(root, job_id=WORSE, seed=2, skill_mean=0.5)
    monkeypatch.setenv("SKILLASSAY_PLANTED_API_KEY", SECRET)
    monkeypatch.setenv("SKILLASSAY_OTHER_TOKEN", ESCAPED)

    outputs = {
        "report": cli("report", JOB, "--results", str(root), "--markdown"),
        "compare arms": cli("compare", f"{JOB}:baseline", JOB, "--results", str(root), "--markdown"),
        "compare jobs": cli("compare", WORSE, JOB, "--results", str(root), "--markdown"),
    }
    needles = encodings(SECRET) | {f.encode(): f"planted {i}" for i, f in enumerate(forms)}
    needles |= {ESCAPED.encode(): "escaped raw", cell_escaped(ESCAPED).encode(): "escaped"}
    found = [
        f"{name}: {form}"
        for name, res in outputs.items()
        for needle, form in needles.items()
        if needle in res.output.encode()
    ]
    assert not found, found
    # the errors and the evidence were quoted, scrubbed (the mark escaped: it reads [REDACTED])
    assert "crashed near \\[REDACTED\\] and \\[REDACTED\\]" in outputs["report"].output
    assert "saw \\[REDACTED\\]" in outputs["report"].output


# ----------------------------------------------------------------------------- a kind's own figures
def test_a_kinds_own_summary_and_comparison_in_markdown(tmp_path):
    """Trigger suites: the job's headline (F1) and the kind's comparison, from the kind's own models."""
    from test_report_triggers import write_trigger_job

    from skillassay import store
    from skillassay.kinds.base import job_kind

    root = tmp_path / "results"
    write_trigger_job(root, "job-a", "a")
    write_trigger_job(root, "job-b", "b")
    with store.open(root) as st:
        st.rebuild_index()
        runs_a, runs_b = st.runs(job_id="job-a"), st.runs(job_id="job-b")
    res = cli("report", "job-a", "--results", str(root), "--markdown")
    assert res.exit_code == 0
    # version a: TP 3, FN 3, FP 2 -> precision 60%, recall 50%, F1 54.5
    assert "**F1: 54.5**" in res.output
    kind = job_kind(runs_a)
    for (a, ra), (b, rb) in ((("job-a", runs_a), ("job-b", runs_b)), (("job-b", runs_b), ("job-a", runs_a))):
        cmp = kind.compare_jobs(ra, rb, a, b)
        assert not cmp.worse()  # two runs a prompt: neither version beyond noise
        res = cli("compare", a, b, "--results", str(root), "--markdown", "--fail-if-worse")
        assert res.exit_code == 0, res.output
        assert f"> {cell(cmp.verdict)}" in res.output and "beyond noise**" not in res.output


def test_markdown_beside_the_html_report_keeps_stdout_markdown(jobs, tmp_path):
    root, _, _ = jobs
    res = runner.invoke(
        app, ["report", JOB, "--results", str(root), "--html", str(tmp_path / "site"), "--markdown"]
    )
    assert res.exit_code == 0
    assert res.stdout.startswith("### skillassay job") and "wrote the web report" not in res.stdout
    assert "wrote the web report" in res.stderr
    assert (tmp_path / "site" / "jobs" / JOB / "index.html").is_file()
