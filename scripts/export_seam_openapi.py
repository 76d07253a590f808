#!/usr/bin/env python3
"""Regenerate the Seam OpenAPI document that ships in the skillassay package.

npm ``@seamapi/types`` ships the document only as an ES module (``lib/seam/connect/openapi.js``). This script
imports it with node from ``node/node_modules`` (the version pinned in ``node/package.json``; run ``npm ci
--prefix node`` first), writes canonical JSON (sorted keys, no spaces, UTF-8) gzipped reproducibly (no name,
no time stamp) to ``src/skillassay/seam/emulator/data/seam-openapi-<version>.json.gz``, and removes the
previous version's file; the route paths go to the rubric's ``seam/rubric/data/seam_routes.json`` too (the
rubric reads them there without parsing the whole document), and so does the PHP SDK's parameter order
(``seam/rubric/data/php_sdk_params.json``, ``seam/rubric/php_sdk.py``).

    python scripts/export_seam_openapi.py            # regenerate the package data
    python scripts/export_seam_openapi.py --output F # write elsewhere (the test compares it with the shipped
    copy)

After bumping ``@seamapi/types`` in node/package.json: npm install --prefix node, run this, run the emulator
tests.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "@seamapi/types"
MODULE = "lib/seam/connect/openapi.js"
DATA_DIR = REPO / "src" / "skillassay" / "seam" / "emulator" / "data"


def pinned_version() -> str:
    deps = json.loads((REPO / "node" / "package.json").read_text())["dependencies"]
    return deps[PACKAGE]


def export_document(node_modules: Path) -> tuple[dict, str]:
    pkg = node_modules / PACKAGE
    manifest = pkg / "package.json"
    if not manifest.is_file():
        sys.exit(f"{manifest} not found: run `npm ci --prefix node`")
    installed, pinned = json.loads(manifest.read_text())["version"], pinned_version()
    if installed != pinned:
        sys.exit(
            f"node/node_modules has {PACKAGE} {installed}, node/package.json pins {pinned}: run `npm ci "
            "--prefix node`"
        )
    if shutil.which("node") is None:
        sys.exit("node is not on PATH (needed to import the ES module)")
    script = (
        "import(process.argv[1]).then(m => process.stdout.write(JSON.stringify(m.default)))"
        ".catch(e => { console.error(e); process.exit(1) })"
    )
    out = subprocess.run(
        ["node", "-e", script, (pkg / MODULE).as_uri()], check=True, capture_output=True, timeout=300
    ).stdout
    return json.loads(out), installed


def canonical_gzip(document: dict) -> bytes:
    raw = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    buf = io.BytesIO()
    # filename="" and mtime=0: the same document always gives the same bytes
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    return buf.getvalue()


def write_routes(document: dict, version: str) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from skillassay.seam.rubric import php_sdk
    from skillassay.seam.rubric.rawhttp import ROUTES_FILE, render_routes

    ROUTES_FILE.write_text(render_routes(version, document.get("paths", {})), encoding="utf-8")
    php_sdk.DATA_FILE.write_text(php_sdk.render(version, php_sdk.derive(document)), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-modules", type=Path, default=REPO / "node" / "node_modules")
    parser.add_argument("--output", type=Path, help="write here instead of the package data folder")
    args = parser.parse_args()
    document, version = export_document(args.node_modules)
    data = canonical_gzip(document)
    if args.output is not None:
        args.output.write_bytes(data)
        target = args.output
    else:
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        target = DATA_DIR / f"seam-openapi-{version}.json.gz"
        for old in DATA_DIR.glob("seam-openapi-*.json.gz"):
            if old != target:
                old.unlink()
        target.write_bytes(data)
        write_routes(document, version)
    print(f"{PACKAGE} {version}: {len(document.get('paths', {}))} paths -> {target} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
