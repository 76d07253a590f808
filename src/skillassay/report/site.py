"""The static web report: the Evals page, job pages with charts, run pages with diff, transcript and evidence.

Every page is rendered by jinja2 with autoescape on; diffs are highlighted by pygments (which escapes);
charts are inline SVG built in ``charts``. Each page carries a Content-Security-Policy that forbids
scripts, so even a transcript that slipped past escaping could not run. Nothing is fetched from the
network."""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, PrefixLoader, StrictUndefined
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from skillassay import __version__
from skillassay.definitions.models import EvalDefinition
from skillassay.errors import SkillassayError
from skillassay.kinds import kind_of
from skillassay.kinds.base import JobSummary, figure_columns, job_kind, job_kind_findings, registered
from skillassay.report import charts
from skillassay.report.examples import scoring_examples
from skillassay.report.runs import (
    failure_reason,
    first_line,
    is_graded,
    load_run_files,
    short_hash,
    skill_label,
    variant_label,
)
from skillassay.scoring import GRADING_VERSION
from skillassay.scoring.cost import runs_cost
from skillassay.scoring.skill_use import SkillUseSplit, skill_use_of
from skillassay.scoring.stats import (
    Comparison,
    Summary,
    by_eval,
    compare,
    grading_versions,
    summarize,
    to_points,
)
from skillassay.store import db as store_db
from skillassay.store import exploits as store_exploits
from skillassay.store import mutants as store_mutants
from skillassay.store.records import JobRecord, RunRecord

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
RUNS_PER_PAGE = 250
SAFE_SOURCE_SUFFIXES = {".json", ".toml", ".yaml", ".yml", ".md", ".txt"}
# Written into every site; a folder holding it is skillassay's to clean before the next build.
SITE_MARKER = ".skillassay-site"
# What a build writes at the top of the folder, removed before the next build (old job pages must not linger).
GENERATED = ("jobs", "evals", "compare", "index.html", "jobs.html", SITE_MARKER)

_FORMATTER = HtmlFormatter(cssclass="hl", nowrap=False)
PYGMENTS_CSS = _FORMATTER.get_style_defs(".hl")


def slug(text: str) -> str:
    """A file-name-safe form of an id (eval ids and job ids are already tame; this keeps odd ones safe)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return s or "_"


def run_page(run: RunRecord) -> str:
    """Path of a run's page relative to the site root."""
    name = f"run_{run.run_index}.html" if run.variant == "skill" else f"baseline-run_{run.run_index}.html"
    return f"jobs/{slug(run.job_id)}/{slug(run.eval_id)}/{name}"


def job_page(job_id: str, page: int = 1) -> str:
    return f"jobs/{slug(job_id)}/index.html" if page == 1 else f"jobs/{slug(job_id)}/runs-{page}.html"


def compare_page(a: str, b: str) -> str:
    return f"compare/{slug(a)}--{slug(b)}.html"


def highlight_diff(diff: str) -> Markup:
    return Markup(highlight(diff, DiffLexer(), _FORMATTER))


@dataclass
class BuildResult:
    out_dir: Path
    pages: int = 0
    seconds: float = 0.0
    largest_page: tuple[str, int] = ("", 0)
    jobs: list[str] = field(default_factory=list)
    definitions_error: str | None = None


@dataclass
class VariantStats:
    variant: str
    summary: Summary
    points: dict[str, list]
    errors: dict[str, list[RunRecord]] = field(default_factory=dict)  # eval id -> runs not scored


@dataclass
class JobView:
    job: JobRecord
    runs: list[RunRecord]
    variants: list[VariantStats]
    comparison: Comparison | None  # skill vs the job's own baseline
    # the job's runs summarised their kind's own way (a trigger suite's: recall, precision, F1 per category)
    kind_summary: JobSummary | None = None
    kind_template: str | None = None  # the kind's report template, which shows ``kind_summary``
    skill_use: SkillUseSplit | None = None  # an ordinary job with a skill: how often it was used
    findings: list[str] = field(
        default_factory=list
    )  # the kinds' own lines (Seam: static/trace disagreements)

    @property
    def done(self) -> int:
        return sum(r.scored for r in self.runs)

    @property
    def outcomes(self) -> dict[str, int]:
        """Outcome -> runs, in the taxonomy's order (docs/results.md)."""
        from skillassay.outcomes import OUTCOMES

        return {o: n for o in OUTCOMES if (n := sum(r.outcome == o for r in self.runs))}

    @property
    def grading_versions(self) -> dict[int, int]:
        """Grading version -> scored runs graded with it (scoring.stats.grading_versions)."""
        return grading_versions(self.runs)

    @property
    def has_skill(self) -> bool:
        return bool(self.job.skill_path or self.job.skill_hash)

    @property
    def has_baseline(self) -> bool:
        return any(r.variant == "baseline" for r in self.runs)


def _loader() -> ChoiceLoader:
    """The report's templates, then each kind's under its name (``EvalKind.template_package``)."""
    kinds = {
        k.name: PackageLoader(k.template_package, "templates") for k in registered() if k.template_package
    }
    return ChoiceLoader([PackageLoader("skillassay.report", "templates"), PrefixLoader(kinds)])


def _env() -> Environment:
    env = Environment(
        loader=_loader(),
        autoescape=True,  # everything untrusted (diffs, transcripts, logs, ids) is escaped by default
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v, d=1: "–" if v is None else f"{v * 100:.{d}f}%"
    env.filters["pts"] = lambda v: "–" if v is None else f"{v * 100:+.1f}"
    env.filters["num"] = lambda v, d=1: "–" if v is None else f"{v:.{d}f}"
    env.filters["short"] = lambda v, n=12: "–" if not v else str(v).removeprefix("sha256:")[:n]
    env.filters["when"] = lambda v: "–" if v is None else v.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    env.filters["first_line"] = first_line
    env.globals.update(
        skill_label=skill_label,
        variant_label=variant_label,
        is_graded=is_graded,
        runs_cost=runs_cost,
        short_hash=short_hash,
    )
    # the kinds' own parts of the generic pages: their figure columns, and their report templates (a run's
    # page asks each for its ``run_figures``)
    env.globals.update(
        figure_columns=figure_columns(),
        kind_templates=[t for k in registered() if (t := k.template_name()) is not None],
    )
    # the policy holds single quotes only, safe inside the double-quoted attribute; kept verbatim for readers
    env.globals.update(
        csp=Markup(CSP),
        version=__version__,
        pygments_css=Markup(PYGMENTS_CSS),
        grading_version=GRADING_VERSION,
    )
    return env


def _job_view(job: JobRecord, runs: list[RunRecord], root: Path | None = None) -> JobView:
    variants = []
    for v in ("skill", "baseline"):
        vr = [r for r in runs if r.variant == v]
        if vr:
            errors: dict[str, list[RunRecord]] = defaultdict(list)
            for r in vr:
                if not is_graded(r):
                    errors[r.eval_id].append(r)
            variants.append(VariantStats(v, summarize(vr), by_eval(to_points(vr)), dict(errors)))
    comparison = None
    base = [r for r in runs if r.variant == "baseline"]
    if base:
        comparison = compare(
            base,
            [r for r in runs if r.variant == "skill"],
            a_label="without the skill",
            b_label="with the skill",
        )
    kind = job_kind(runs)
    own = kind.job_summary(runs) if kind is not None else None
    findings = job_kind_findings(root, runs) if root is not None else []
    if kind is not None and own is not None:
        return JobView(
            job, runs, variants, None, kind_summary=own, kind_template=kind.template_name(), findings=findings
        )
    return JobView(job, runs, variants, comparison, skill_use=skill_use_of(runs), findings=findings)


def _load_definitions(
    jobs: list[JobRecord], suite: Path | None, definitions: list[EvalDefinition] | None
) -> tuple[list[EvalDefinition], str | None]:
    """The suite's definitions, one by one: a broken definition is named on the page, the others still
    shown.
    """
    if definitions is not None:
        return definitions, None
    from skillassay.definitions.suite import definition_sources, load_source

    candidates = [suite] if suite else [Path(j.suite) for j in reversed(jobs)] + [Path("evals")]
    for c in candidates:
        if c is None or not c.exists():
            continue
        try:
            sources = definition_sources(c)
        except SkillassayError as exc:
            return [], f"No definitions could be read from {c}: {exc}"
        defs, problems = [], []
        for kind, source, suite_dir in sources:
            try:
                defs.extend(load_source(kind, source, suite_dir))  # a trigger suite: its prompts
            except SkillassayError as exc:
                problems.append(str(exc))
        note = None
        if problems:
            note = (
                f"{len(problems)} definition(s) in {c} could not be loaded and are not shown: "
                + "; ".join(problems)
            )
        return defs, note
    return [], "No eval definitions were found (pass --suite to name the suite folder)."


def _copy_sources(defs: list[EvalDefinition], out: Path) -> dict[str, list[tuple[str, str]]]:
    """Copy each definition's files into the site; returns eval id -> [(label, href)]. Files keep their names,
    except that anything a browser might execute gets ``.txt`` appended."""
    links: dict[str, list[tuple[str, str]]] = {}
    for d in defs:
        files = [Path(d.source), *kind_of(d).shown_files(d)]
        found = []
        for f in files:
            f = Path(f)
            if not f.is_file():
                continue
            name = f.name if f.suffix.lower() in SAFE_SOURCE_SUFFIXES else f.name + ".txt"
            rel = f"evals/{slug(d.id)}/{slug(name)}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out / rel)
            found.append((f.name, rel))
        links[d.id] = found
    return links


def _criteria_rows(d: EvalDefinition) -> list[dict[str, Any]]:
    rows = []
    for c in d.criteria:
        rows.append(
            {
                "id": _attr(c, "id"),
                "weight": _attr(c, "weight"),
                "description": _attr(c, "description"),
                "grader": _attr(c, "grader"),
                "gates": _attr(c, "gates"),
                "forgeable": _forgeable(c),
            }
        )
    return rows


def _forgeable(criterion: Any) -> bool:
    """White-box hidden tests: the app's code runs in the process that decides them (docs/agent-evals.md)."""
    options = _attr(criterion, "options") or {}
    mode = options.get("mode") if isinstance(options, dict) else getattr(options, "mode", None)
    return _attr(criterion, "grader") == "hidden_tests" and mode != "black-box"


def _attr(item: Any, name: str) -> Any:
    value = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
    return "" if value is None else value


def _plain(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("description", "text", "id"):
            if isinstance(item.get(key), str):
                extra = f" ({item['id']})" if key != "id" and isinstance(item.get("id"), str) else ""
                return item[key] + extra
        return ", ".join(f"{k}: {v}" for k, v in item.items())
    for key in ("description", "text", "id"):
        if isinstance(getattr(item, key, None), str):
            return getattr(item, key)
    return str(item)


class _Writer:
    def __init__(self, out: Path, result: BuildResult):
        self.out, self.result = out, result

    def __call__(self, rel: str, html: str) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = html.encode("utf-8")
        path.write_bytes(data)
        self.result.pages += 1
        if len(data) > self.result.largest_page[1]:
            self.result.largest_page = (rel, len(data))


def _ours(out: Path) -> bool:
    """The folder holds the marker, or is a site from before the marker (its index.html and jobs.html carry
    the report's footer and policy)."""
    if (out / SITE_MARKER).is_file():
        return True
    try:
        pages = [
            (out / name).read_text(encoding="utf-8", errors="replace") for name in ("index.html", "jobs.html")
        ]
    except OSError:
        return False
    return all(f'content="{CSP}"' in p and "by skillassay" in p for p in pages)


def check_out_dir(out: Path) -> None:
    """Raise unless ``out`` is missing, empty, or a site skillassay wrote (it holds the marker): any other
    folder may hold the user's files, and is neither written into nor emptied."""
    if out.exists() and not out.is_dir():
        raise SkillassayError(f"{out} is a file, not a folder; choose another folder for the report")
    if out.is_dir() and not _ours(out) and any(out.iterdir()):
        raise SkillassayError(
            f"{out} is not empty and was not written by skillassay; choose another folder or empty it"
        )


def prepare_out_dir(out: Path) -> None:
    """Make ``out`` ready for a fresh build (see ``check_out_dir``): a site skillassay wrote loses its
    generated parts, so pages of jobs no longer in the report do not linger; then the marker is written."""
    check_out_dir(out)
    if out.is_dir():
        for name in GENERATED:
            path = out / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        for page in out.glob("*.html"):  # any other page an older build wrote at the top
            page.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / SITE_MARKER).write_text(
        f"Written by skillassay {__version__} (`skillassay report --html`). Each build removes and "
        "rewrites this "
        "folder's generated pages (jobs/, evals/, compare/, *.html).\n",
        encoding="utf-8",
    )


def build_site(
    results_root: Path | str,
    out_dir: Path | str,
    job_ids: list[str] | None = None,
    suite: Path | str | None = None,
    definitions: list[EvalDefinition] | None = None,
) -> BuildResult:
    """Write the static report for ``job_ids`` (all jobs when None) into ``out_dir``, cleanly: an earlier
    build's pages are removed first (see ``prepare_out_dir``; a non-empty folder skillassay did not write
    is refused)."""
    t0 = time.perf_counter()
    root, out = Path(results_root), Path(out_dir)
    check_out_dir(out)  # refuse early, before any work
    result = BuildResult(out_dir=out)
    write = _Writer(out, result)
    env = _env()

    with store_db.open(root) as st:
        all_jobs = {j.job_id: j for j in st.jobs()}
        if job_ids:
            unknown = [j for j in job_ids if j not in all_jobs]
            if unknown:
                raise SkillassayError(
                    f"{root}: no job {', '.join(unknown)} (known: {', '.join(sorted(all_jobs)) or 'none'})"
                )
            jobs = [all_jobs[j] for j in job_ids]
        else:
            jobs = list(all_jobs.values())
        job_runs = [(j, st.runs(job_id=j.job_id)) for j in jobs]
    now = datetime.now(UTC)
    prepare_out_dir(out)

    # Run pages are most of the work and need no statistics: render them in worker processes (when there are
    # many) while this process computes the statistics and writes the other pages.
    pending = _start_run_pages(root, out, job_runs, now, jobs)
    views = [_job_view(j, runs, root) for j, runs in job_runs]
    result.jobs = [j.job_id for j in jobs]

    defs, result.definitions_error = _load_definitions(jobs, Path(suite) if suite else None, definitions)
    mutation = store_mutants.read(root)  # the latest `check --mutants` kept with these results
    exploits = store_exploits.read(root)  # and the latest `check --exploits`
    sources = _copy_sources(defs, out)

    # what each eval scored in the jobs of this report (latest job first), for the Evals page
    eval_results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for view in reversed(views):
        for vs in view.variants:
            for s in vs.summary.per_eval:
                eval_results[s.eval_id].append(
                    {
                        "job": view.job.job_id,
                        "stats": s,
                        "href": job_page(view.job.job_id),
                        "variant": vs.variant if view.has_skill or vs.variant == "baseline" else "no skill",
                    }
                )

    # comparison pages for jobs the user named together, in the order named (not for every job in the folder)
    pairs = [(result.jobs[i], result.jobs[i + 1]) for i in range(len(result.jobs) - 1)] if job_ids else []
    common = {"now": now, "jobs": jobs}

    write(
        "index.html",
        env.get_template("evals.html").render(
            root="",
            page="evals",
            examples=scoring_examples(),
            definitions=defs,
            eval_labels={d.id: kind_of(d).eval_label for d in defs},
            eval_templates={d.id: kind_of(d).template_name() for d in defs},
            sources=sources,
            criteria_rows={d.id: _criteria_rows(d) for d in defs},
            plain=_plain,
            attr=_attr,
            eval_results=eval_results,
            mutation=mutation.by_eval() if mutation else {},
            mutation_at=mutation.created_at if mutation else None,
            mutation_layers={
                e.eval_id: sorted({layer for m in e.mutants for layer in m.layers})
                for e in (mutation.evals if mutation else [])
            },
            exploits=exploits.by_eval() if exploits else {},
            exploits_at=exploits.created_at if exploits else None,
            definitions_error=result.definitions_error,
            views=views,
            job_page=job_page,
            **common,
        ),
    )
    write(
        "jobs.html",
        env.get_template("jobs.html").render(
            root="",
            page="jobs",
            views=views,
            job_page=job_page,
            pairs=pairs,
            compare_page=compare_page,
            **common,
        ),
    )

    by_id = {v.job.job_id: v for v in views}
    for a, b in pairs:
        va, vb = by_id[a], by_id[b]
        a_runs = [r for r in va.runs if r.variant == "skill"]
        b_runs = [r for r in vb.runs if r.variant == "skill"]
        cmp = compare(a_runs, b_runs, a_label=a, b_label=b)
        # two versions of a skill on one trigger suite: compared the kind's own way (prompt by prompt)
        kind = job_kind(va.runs)
        own = (
            kind.compare_jobs(a_runs, b_runs, a, b)
            if kind is not None and kind is job_kind(vb.runs)
            else None
        )
        write(
            compare_page(a, b),
            env.get_template("compare.html").render(
                root="../",
                page="jobs",
                a=va.job,
                b=vb.job,
                cmp=cmp,
                a_label=a,
                b_label=b,
                costs={
                    a: runs_cost([r for r in va.runs if r.variant == "skill"]),
                    b: runs_cost([r for r in vb.runs if r.variant == "skill"]),
                },
                plot=charts.comparison_plot(cmp, a, b),
                job_page=job_page,
                own_cmp=own.figures if own is not None else None,
                own_template=kind.template_name() if kind is not None else None,
                use_a=va.skill_use,
                use_b=vb.skill_use,
                **common,
            ),
        )

    job_tpl = env.get_template("job.html")
    for view in views:
        _write_job(view, write, job_tpl, common)
    for rel, size in pending():
        result.pages += 1
        if size > result.largest_page[1]:
            result.largest_page = (rel, size)
    result.seconds = time.perf_counter() - t0
    return result


PARALLEL_MIN_RUNS = 300
_FORK_INPUT: list[tuple[Path, Path, list[tuple[JobRecord, list[RunRecord]]], datetime, list[JobRecord]]] = []


def _render_run_pages(
    root: Path,
    out: Path,
    job_runs: list[tuple[JobRecord, list[RunRecord]]],
    now: datetime,
    jobs: list[JobRecord],
) -> list[tuple[str, int]]:
    """Write the pages of the given runs; returns (page, bytes) for each."""
    tpl = _env().get_template("run.html")
    written = []
    for job, runs in job_runs:
        for r in runs:
            files = load_run_files(root, r)
            html = tpl.render(
                root="../../../",
                page="jobs",
                run=r,
                job=job,
                files=files,
                diff_html=highlight_diff(files.diff) if files.diff else None,
                reason=failure_reason(r),
                job_href=job_page(job.job_id),
                now=now,
                jobs=jobs,
            ).encode("utf-8")
            rel = run_page(r)
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(html)
            written.append((rel, len(html)))
    return written


def _render_forked(chunk: int) -> list[tuple[str, int]]:
    root, out, job_runs, now, jobs = _FORK_INPUT[chunk]
    return _render_run_pages(root, out, job_runs, now, jobs)


def _start_run_pages(
    root: Path,
    out: Path,
    job_runs: list[tuple[JobRecord, list[RunRecord]]],
    now: datetime,
    jobs: list[JobRecord],
) -> Callable[[], list[tuple[str, int]]]:
    """Render every run page, in forked worker processes when there are many runs and more than one CPU (the
    inputs reach the workers through fork, not pickling); returns a function that waits and gives the
    results."""
    total = sum(len(runs) for _, runs in job_runs)
    workers = min(os.cpu_count() or 1, 8)
    if total < PARALLEL_MIN_RUNS or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return lambda: _render_run_pages(root, out, job_runs, now, jobs)
    flat = [(job, r) for job, runs in job_runs for r in runs]
    _FORK_INPUT.clear()
    for i in range(workers):
        part: dict[str, tuple[JobRecord, list[RunRecord]]] = {}
        for job, r in flat[i::workers]:
            part.setdefault(job.job_id, (job, []))[1].append(r)
        _FORK_INPUT.append((root, out, list(part.values()), now, jobs))
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    futures = [pool.submit(_render_forked, i) for i in range(workers)]

    def wait() -> list[tuple[str, int]]:
        try:
            return [item for f in futures for item in f.result()]
        finally:
            pool.shutdown()
            _FORK_INPUT.clear()

    return wait


def _write_job(view: JobView, write: _Writer, tpl: Any, common: dict[str, Any]) -> None:
    job = view.job
    charts_by_variant = {}
    for vs in view.variants:
        threshold = None
        verdicts = [r.verdict.threshold for r in view.runs if r.verdict and r.variant == vs.variant]
        if verdicts and len(set(verdicts)) == 1:
            threshold = verdicts[0]
        charts_by_variant[vs.variant] = {
            "strip": charts.strip_plot(vs.summary.per_eval, vs.points, threshold),
            "hist": charts.histogram([p.score for pts in vs.points.values() for p in pts]),
            "heat": charts.heat_map(vs.summary.criteria),
        }
    cmp_plot = (
        charts.comparison_plot(view.comparison, "without the skill", "with the skill")
        if view.comparison
        else None
    )
    runs = view.runs
    pages = max(1, -(-len(runs) // RUNS_PER_PAGE))
    for p in range(1, pages + 1):
        chunk = runs[(p - 1) * RUNS_PER_PAGE : p * RUNS_PER_PAGE]
        write(
            job_page(job.job_id, p),
            tpl.render(
                root="../../",
                page="jobs",
                view=view,
                job=job,
                charts=charts_by_variant if p == 1 else {},
                cmp_plot=cmp_plot,
                runs=chunk,
                page_no=p,
                pages=pages,
                first=p == 1,
                page_href=lambda n: job_page(job.job_id, n).rsplit("/", 1)[1],
                run_href=lambda r: run_page(r).split("/", 2)[2],
                reason=failure_reason,
                **common,
            ),
        )
