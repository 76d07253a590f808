"""The node install key, the hard-linked node_modules a Next.js build gets, and what the build cache keeps.

No install runs here (no registry): the key is a pure function of the manifests, and the cache entries are
folders these tests make; the real installs and builds are exercised by the slow fixture tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillassay.apps import deps

MANIFEST = {
    "name": "driftwood-stays-pms",
    "version": "1.0.0",
    "private": True,
    "description": "one app",
    "scripts": {"build": "next build", "start": "next start"},
    "dependencies": {"next": "16.4.6", "react": "19.3.1"},
    "devDependencies": {"typescript": "5.9.3"},
}
LOCK = {
    "name": "driftwood-stays-pms",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "packages": {
        "": {"name": "driftwood-stays-pms", "version": "1.0.0", "dependencies": MANIFEST["dependencies"]},
        "node_modules/next": {"version": "16.4.6", "integrity": "sha512-x"},
    },
}


def _app(root: Path, manifest: dict, lock: dict) -> Path:
    root.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps(manifest, indent=2))
    (root / "package-lock.json").write_text(json.dumps(lock, indent=2))
    return root


@pytest.fixture(autouse=True)
def _known_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(deps._versions, "node", "v20.0.0")  # the key includes it; no node needed here


def test_apps_that_differ_only_in_descriptive_fields_share_one_install(tmp_path: Path) -> None:
    one = _app(tmp_path / "one", MANIFEST, LOCK)
    renamed = {
        **MANIFEST,
        "name": "larkspur-hotel",
        "description": "another app",
        "version": "2.0.0",
        "scripts": {"build": "next build --debug", "dev": "next dev", "start": "next start -p 4000"},
    }
    lock = {
        **LOCK,
        "name": "larkspur-hotel",
        "packages": {
            **LOCK["packages"],
            "": {**LOCK["packages"][""], "name": "larkspur-hotel", "version": "2.0.0"},
        },
    }
    other = _app(tmp_path / "other", renamed, json.loads(json.dumps(lock, indent=4)))  # other formatting too
    assert deps.node_key(one, ["npm", "ci"]) == deps.node_key(other, ["npm", "ci"])


@pytest.mark.parametrize(
    "change",
    [
        lambda m, lk: m["dependencies"].update(seam="1.245.0"),
        lambda m, lk: m["devDependencies"].update(typescript="5.9.2"),
        lambda m, lk: m.update(overrides={"react": "19.3.0"}),
        lambda m, lk: m["scripts"].update(
            postinstall="node scripts/patch.js"
        ),  # npm runs it where it installs
        lambda m, lk: lk["packages"]["node_modules/next"].update(integrity="sha512-y"),
        lambda m, lk: lk["packages"][""].update(engines={"node": ">=22"}),
    ],
)
def test_anything_npm_installs_from_changes_the_key(tmp_path: Path, change) -> None:
    base = _app(tmp_path / "base", MANIFEST, LOCK)
    manifest, lock = json.loads(json.dumps(MANIFEST)), json.loads(json.dumps(LOCK))
    change(manifest, lock)
    changed = _app(tmp_path / "changed", manifest, lock)
    assert deps.node_key(base, ["npm", "ci"]) != deps.node_key(changed, ["npm", "ci"])
    assert deps.node_key(base, ["npm", "ci"]) != deps.node_key(base, ["npm", "install"])
    (base / ".npmrc").write_text("omit=peer\n")
    assert deps.node_key(base, ["npm", "ci"]) != deps.node_key(
        _app(tmp_path / "again", MANIFEST, LOCK), ["npm", "ci"]
    )


def test_a_manifest_that_is_not_json_is_keyed_by_its_bytes(tmp_path: Path) -> None:
    app = tmp_path / "broken"
    app.mkdir()
    (app / "package.json").write_text("{ not json")
    key = deps.node_key(app, ["npm", "ci"])
    (app / "package.json").write_text("{ not json either")
    assert deps.node_key(app, ["npm", "ci"]) != key


def test_only_apps_depending_on_next_get_real_node_modules(tmp_path: Path) -> None:
    assert deps.needs_real_node_modules(_app(tmp_path / "next", MANIFEST, LOCK))
    express = {
        **MANIFEST,
        "dependencies": {"express": "4.21.2", "nextjs-like": "1.0.0"},
        "devDependencies": {},
    }
    assert not deps.needs_real_node_modules(_app(tmp_path / "express", express, LOCK))
    dev_only = {**MANIFEST, "dependencies": {}, "devDependencies": {"next": "16.4.6"}}
    assert deps.needs_real_node_modules(_app(tmp_path / "dev", dev_only, LOCK))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "package.json").write_text("[]")
    assert not deps.needs_real_node_modules(tmp_path / "bad")


def test_materialised_node_modules_hard_links_the_cache_and_keeps_new_files_out_of_it(tmp_path: Path) -> None:
    cached = tmp_path / "cache" / "node_modules"
    (cached / "next" / "dist").mkdir(parents=True)
    (cached / "next" / "dist" / "index.js").write_text("module.exports = 1;\n")
    (cached / ".bin").mkdir()
    (cached / ".bin" / "next").symlink_to("../next/dist/index.js")
    app = tmp_path / "app"
    app.mkdir()
    (app / "node_modules").symlink_to(cached, target_is_directory=True)

    assert deps.materialise_node_modules(app) is True
    linked = app / "node_modules"
    assert linked.is_dir() and not linked.is_symlink()
    src, dst = cached / "next" / "dist" / "index.js", linked / "next" / "dist" / "index.js"
    assert os.stat(src).st_ino == os.stat(dst).st_ino  # the same file, not a copy
    # relative links stay inside the copy
    assert os.readlink(linked / ".bin" / "next") == "../next/dist/index.js"
    assert (linked / ".bin" / "next").resolve() == dst.resolve()
    (linked / "next" / ".cache-of-a-build").write_text("x")  # a file a build adds
    assert not (cached / "next" / ".cache-of-a-build").exists()
    assert deps.materialise_node_modules(app) is False  # no symlink left to replace


def test_the_build_cache_leaves_out_nexts_compiler_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "skillassay-cache"))
    app = tmp_path / "app"
    (app / "app").mkdir(parents=True)
    (app / "app" / "page.tsx").write_text("export default function Page() { return null; }\n")
    before = deps.tree_snapshot(app)
    key = deps.build_key(app, [["/bin/sh", "-c", "npm run build"]], "node-x")
    for rel, text in {
        ".next/BUILD_ID": "abc",
        ".next/server/app/page.js": "x",
        ".next/cache/swc/big": "y" * 1000,
        "next-env.d.ts": '/// <reference types="next" />\n',
    }.items():
        (app / rel).parent.mkdir(parents=True, exist_ok=True)
        (app / rel).write_text(text)
    deps.save_build(app, key, before)

    fresh = tmp_path / "fresh"
    (fresh / "app").mkdir(parents=True)
    (fresh / "app" / "page.tsx").write_text((app / "app" / "page.tsx").read_text())
    assert deps.restore_build(fresh, key)
    assert (fresh / ".next" / "BUILD_ID").read_text() == "abc" and (
        fresh / ".next/server/app/page.js"
    ).is_file()
    assert (fresh / "next-env.d.ts").is_file()
    assert not (fresh / ".next" / "cache").exists()


# ---------------------------------------------------------------------------- a Next.js build, sealed and not
BUILD_SCRIPT = """
set -e
test -d node_modules && test ! -L node_modules          # a real folder inside the project, as Turbopack wants
test -f node_modules/next/package.json
if echo tampered > node_modules/next/package.json 2>/dev/null; then echo wrote-into-cache > tamper.txt; fi
echo built > built.txt
"""


@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
def test_a_next_build_sees_a_real_node_modules_and_never_changes_the_cache(
    isolation: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillassay.apps.backends.host import HostBackend
    from skillassay.apps.runplan import InstallSpec, RunPlan
    from skillassay.isolation import Policy

    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SKILLASSAY_NO_BUILD_CACHE", "1")
    source = _app(tmp_path / "src", MANIFEST, LOCK)
    # a complete cache entry for this app's dependencies, so nothing is installed
    entry = deps.cache_root() / "deps" / deps.node_key(source, ["npm", "ci"])
    (entry / "node_modules" / "next").mkdir(parents=True)
    cached = entry / "node_modules" / "next" / "package.json"
    cached.write_text('{"name": "next"}')
    (entry / deps.MARKER).write_text("{}")
    plan = RunPlan(
        runtime="node",
        install=InstallSpec(npm_argv=["npm", "ci"]),
        build=[["/bin/sh", "-c", BUILD_SCRIPT]],
        start=["node", "-e", ""],
    )
    backend = HostBackend(
        plan=plan,
        source_dir=source,
        fixture="nextish",
        run_id="t1",
        logs_dir=tmp_path / "logs",
        fixture_dir=tmp_path,
        work_root=tmp_path,
        policy=Policy(isolation=isolation),
    )
    try:
        backend.prepare()
        app = backend.app_dir
        assert (app / "built.txt").read_text() == "built\n", (tmp_path / "logs" / "build.log").read_text()
        if isolation == "bubblewrap":
            # mounted read-only in place for the build: the build could not write, and the copy is a symlink
            # again
            assert backend.facts.get("node_modules_mounted") is True
            assert not (app / "tamper.txt").exists() and cached.read_text() == '{"name": "next"}'
            assert (app / "node_modules").is_symlink() and (
                app / "node_modules"
            ).resolve() == entry / "node_modules"
        else:
            # unsealed (nothing is, there): hard links, a real folder for the build and the app
            assert backend.facts.get("node_modules_linked") is True
            assert (app / "node_modules").is_dir() and not (app / "node_modules").is_symlink()
    finally:
        backend.stop()
        backend.cleanup()
    assert cached.exists()  # removing the copy never removes the cache's files


# two processes (xdist workers, parallel evals) building the same tree: the first builds, the second waits for
# it and takes its outputs from the cache
RACER = """
import sys, time
from pathlib import Path
from skillassay.apps import deps

root, key, builds = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

def build():
    with builds.open("a") as f:
        f.write(f"{root.name}\\n")
    time.sleep(1.5)  # long enough for the other racer to arrive while this build runs
    (root / "dist").mkdir()
    (root / "dist" / "index.js").write_text(f"built in {root.name}")

print("hit" if deps.build_once(root, key, build) else "built")
"""


def test_two_processes_building_the_same_tree_build_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    builds = tmp_path / "builds.txt"
    copies = [tmp_path / "one", tmp_path / "two"]
    for copy in copies:
        copy.mkdir()
        (copy / "index.ts").write_text("export {}\n")
    key = deps.build_key(copies[0], [["npm", "run", "build"]], "node-toy")
    assert deps.build_key(copies[1], [["npm", "run", "build"]], "node-toy") == key  # the same tree
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(copy), key, str(builds)], stdout=subprocess.PIPE, text=True
        )
        for copy in copies
    ]
    said = sorted(r.communicate(timeout=60)[0].strip() for r in racers)
    assert [r.returncode for r in racers] == [0, 0]
    assert said == ["built", "hit"]
    (builder,) = builds.read_text().split()  # one build for the two
    for copy in copies:  # each copy has the outputs, the one that waited its builder's
        assert (copy / "dist" / "index.js").read_text() == f"built in {builder}"


def test_a_failed_build_leaves_the_next_one_to_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLASSAY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "index.ts").write_text("export {}\n")
    key = deps.build_key(tmp_path, [["tsc"]], "node-toy")

    def broken() -> None:
        raise deps.StepFailed("build", "tsc: error TS2304")

    with pytest.raises(deps.StepFailed):
        deps.build_once(tmp_path, key, broken)
    assert deps.build_once(tmp_path, key, lambda: (tmp_path / "out.js").write_text("ok")) is False
    (tmp_path / "out.js").unlink()
    assert deps.build_once(tmp_path, key, broken) is True  # now cached: no build runs
    assert (tmp_path / "out.js").read_text() == "ok"
