"""The static site: pages written, untrusted content escaped, the Evals page, pagination, size caps."""

from __future__ import annotations

import re
from html import escape

import pytest
from report_data import JOB, OTHER, XSS_DIFF, XSS_TRANSCRIPT
from synthetic_runs import make_job

from skillassay.report import site as site_mod
from skillassay.report.site import CSP, build_site


def pages(out):
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.html")}


def test_site_pages_and_escaping(results_tree, definitions, tmp_path):
    out = tmp_path / "site"
    res = build_site(results_tree.root, out, definitions=definitions)
    html = pages(out)
    assert res.pages == len(html) == 2 + 1 + 12  # evals, jobs, one job page, 12 runs
    run_html = html[f"jobs/{JOB}/express-ts/run_1.html"]
    # escaped, visibly
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run_html
    assert "alert(2)" in run_html and "&lt;/pre&gt;&lt;script&gt;alert(2)" in run_html
    assert "&lt;img src=x onerror=" in run_html
    # no page anywhere has a script element or an event handler attribute of its own
    for name, text in html.items():
        assert "<script" not in text.lower(), name
        assert not re.search(r"<[^>]+\son\w+=", text), name
        assert f'content="{CSP}"' in text, name
    # the diff is highlighted (pygments spans) and names its file; the timeline lists the tool calls
    assert 'class="hl"' in run_html and "src/app.ts" in run_html
    assert run_html.count('class="tool"') == 3
    # long logs are tailed
    assert "last lines" in run_html and "last line" in run_html


def test_evals_page(results_tree, definitions, tmp_path):
    out = tmp_path / "site"
    definitions[1].criteria[0].options = {"mode": "black-box"}
    build_site(results_tree.root, out, definitions=definitions)
    ev = (out / "index.html").read_text()
    # white-box hidden tests are marked forgeable; black-box ones are not
    assert ev.count(">forgeable</span>") == 1
    assert ev.split('id="eval-never-run"')[1].count(">forgeable</span>") == 0
    # the three examples, computed by judge
    examples = re.findall(r'<div class="box example">(.*?)</div>', ev, re.DOTALL)
    assert len(examples) == 3
    assert 'badge pass">pass' in examples[0] and "<b>100%</b>" in examples[0]
    assert 'badge fail">fail' in examples[1] and "<b>70%</b>" in examples[1]
    assert "unjudged: <b>scope_discipline, respects_policy</b>" in examples[1]
    assert "fail (forbidden behaviour)" in examples[2] and "<b>100%</b>" in examples[2]
    # definitions with every field, and a copy of the source, linked
    assert "Creates an access code on reservation create" in ev
    assert "Edits the tests to make them pass" in ev and "idempotency keys" in ev
    assert "Errors from Seam are logged" in ev and "Seam sandbox devices only." in ev
    assert "creates_code" in ev and "75%" in ev
    assert 'href="evals/express-ts/express-ts.toml"' in ev
    assert (out / "evals" / "express-ts" / "express-ts.toml").read_text().startswith('id = "express-ts"')
    assert "Add Seam &lt;b&gt;now&lt;/b&gt;" in ev
    # an eval that was run links its results; one that was not says so and shows no score
    block = ev.split('id="eval-never-run"')[1]
    assert "Not evaluated yet" in block and "%</td>" not in block
    assert f'href="jobs/{JOB}/index.html"' in ev


def test_no_results_says_so(tmp_path, definitions):
    out = tmp_path / "site"
    build_site(tmp_path / "empty", out, definitions=definitions)
    ev = (out / "index.html").read_text()
    assert "No evaluation has been run yet" in ev
    assert ev.count("Not evaluated yet") == 2
    # the only percentages are the scoring examples' and the thresholds
    defs_part = ev.split('id="definitions"')[1]
    assert not re.search(r"<td class=\"n\">\d+\.\d%</td>", defs_part)


def test_unknown_job_is_an_error(results_tree, tmp_path):
    from skillassay.errors import SkillassayError

    with pytest.raises(SkillassayError, match="no job nope"):
        build_site(results_tree.root, tmp_path / "site", job_ids=["nope"], definitions=[])


def test_job_page_charts_comparison_and_pagination(results_tree, tmp_path, monkeypatch):
    monkeypatch.setattr(site_mod, "RUNS_PER_PAGE", 5)
    make_job(results_tree.root, job_id=OTHER, runs=3, seed=9)
    out = tmp_path / "site"
    build_site(results_tree.root, out, job_ids=[JOB, OTHER], definitions=[])
    html = pages(out)
    job = html[f"jobs/{JOB}/index.html"]
    assert job.count("<svg") >= 7  # strip, histogram, heat map per variant + the comparison
    assert "With the skill vs without" in job and "excludes zero" in job
    assert f"jobs/{JOB}/runs-3.html" in html and 'href="runs-2.html"' in job
    assert "run 1</a>" in html[f"jobs/{JOB}/runs-2.html"]
    assert f"compare/{JOB}--{OTHER}.html" in html
    assert (
        "cannot be told from noise" in html[f"compare/{JOB}--{OTHER}.html"]
        or "excludes zero" in html[f"compare/{JOB}--{OTHER}.html"]
    )


def test_huge_diff_is_capped(results_tree, tmp_path, monkeypatch):
    monkeypatch.setattr("skillassay.report.runs.MAX_DIFF_BYTES", 2000)
    r = results_tree.runs[1]
    (results_tree.root / r.run_dir / "diff.patch").write_text(
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n" + "+line\n" * 10000, encoding="utf-8"
    )
    out = tmp_path / "site"
    build_site(results_tree.root, out, definitions=[])
    page = (out / site_mod.run_page(r)).read_text()
    assert "only its beginning is shown" in page
    assert len(page) < 60_000


def test_unreadable_transcript_is_reported(results_tree, tmp_path):
    r = results_tree.runs[2]
    (results_tree.root / r.run_dir / "transcript.json").write_text("{broken", encoding="utf-8")
    out = tmp_path / "site"
    build_site(results_tree.root, out, definitions=[])
    assert "transcript.json could not be read" in (out / site_mod.run_page(r)).read_text()


def test_source_files_that_could_run_are_copied_as_text(tmp_path, definitions):
    d = definitions[0]
    evil = d.source.with_suffix(".html")
    evil.write_text("<script>alert(4)</script>")
    out = tmp_path / "site"
    build_site(tmp_path / "empty", out, definitions=[d.model_copy(update={"source": evil})])
    assert (out / "evals" / "express-ts" / "express-ts.html.txt").is_file()
    assert not list((out / "evals").rglob("*.html"))


def test_hostile_strings_reach_the_page_only_escaped(results_tree, definitions, tmp_path):
    # every hostile string the run holds (transcript, tool names, diff, logs) is on its page, and only escaped
    out = tmp_path / "site"
    build_site(results_tree.root, out, definitions=definitions)
    run_html = (out / "jobs" / JOB / "express-ts" / "run_1.html").read_text()
    for hostile in (XSS_TRANSCRIPT, XSS_DIFF):
        assert hostile not in run_html
        assert escape(hostile, quote=False) in run_html or escape(hostile) in run_html


def test_scoring_examples_come_from_decide():
    """One set: the document's examples, each verdict what the harness's scoring function says."""
    from skillassay.report import examples
    from skillassay.scoring.examples import DOCUMENT_EXAMPLES
    from skillassay.scoring.verdict import decide

    shown = examples.scoring_examples()
    assert [e.id for e in shown] == [e.id for e in DOCUMENT_EXAMPLES] and len(shown) == 3
    for ex in shown:
        assert ex.verdict == decide(ex.criteria, ex.forbidden_observed, ex.threshold)
    full, unjudged, forbidden = shown
    assert full.verdict.passed and full.verdict.score == 1.0
    assert not unjudged.verdict.passed and unjudged.verdict.unjudged == [
        "scope_discipline",
        "respects_policy",
    ]
    assert forbidden.verdict.disqualified and not forbidden.verdict.passed


def test_parallel_run_pages_match_serial(results_tree, tmp_path, monkeypatch):
    serial = tmp_path / "serial"
    build_site(results_tree.root, serial, definitions=[])
    monkeypatch.setattr(site_mod, "PARALLEL_MIN_RUNS", 1)
    monkeypatch.setattr(site_mod.os, "cpu_count", lambda: 3)
    parallel = tmp_path / "parallel"
    res = build_site(results_tree.root, parallel, definitions=[])
    a, b = pages(serial), pages(parallel)
    assert res.pages == len(b) == len(a)

    def strip(t):
        return re.sub(r"Built .*? UTC", "", t)

    assert {k: strip(v) for k, v in a.items()} == {k: strip(v) for k, v in b.items()}
