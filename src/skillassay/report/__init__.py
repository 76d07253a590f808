"""Reports: terminal tables, JSON/JUnit for CI, and the static web report.

from skillassay.report import build_site, junit_xml, job_json
build_site("results", "site", job_ids=None, suite=None)   # -> BuildResult(pages, seconds, largest_page, ...)
"""

from skillassay.report.ci import job_json, junit_xml, write_json, write_junit
from skillassay.report.examples import ScoringExample, scoring_examples
from skillassay.report.runs import failure_reason, load_run_files
from skillassay.report.site import CSP, BuildResult, build_site, run_page

__all__ = [
    "CSP",
    "BuildResult",
    "ScoringExample",
    "build_site",
    "failure_reason",
    "job_json",
    "junit_xml",
    "load_run_files",
    "run_page",
    "scoring_examples",
    "write_json",
    "write_junit",
]
