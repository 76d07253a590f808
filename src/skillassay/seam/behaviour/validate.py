"""Layer 2: build, run and drive the modified app; check what happened in Seam. See docs/sandbox.md."""

from __future__ import annotations

import os
import re
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx

from skillassay import tls
from skillassay.apps.backends.backend import Backend
from skillassay.apps.runplan import plan_for
from skillassay.apps.steps import StepFailed
from skillassay.apps.windows import WindowClock
from skillassay.definitions.models import EvalDefinition, stack_registries
from skillassay.errors import InfrastructureError, SkillassayError
from skillassay.phases import phase
from skillassay.seam.behaviour.endpoint_checks import Checker, render, time_templates
from skillassay.seam.behaviour.result import SandboxResult
from skillassay.seam.behaviour.session import (
    LIVE_ENDPOINT,
    EmulatorSession,
    LiveSession,
    SeamSession,
    WantedSpace,
)
from skillassay.seam.behaviour.trace import TraceOrigin
from skillassay.seam.config import PlanEvalConfig, SandboxTimeouts, SeamSetup
from skillassay.seam.eval import SeamEval
from skillassay.secrets import redact, redact_tree, secret_values

if TYPE_CHECKING:
    from skillassay.isolation import Policy
    from skillassay.isolation.record import Sealing
    from skillassay.seam.emulator.emulator import SeamEmulator

SeamMode = Literal["emulator", "live"]
BackendName = Literal["host", "docker"]

UNIT_FIELDS = ("unitId", "unit_id")
PROPERTY_FIELDS = ("propertyId", "property_id")
DEFAULT_EMULATOR_DELAY = 1.0  # seconds the emulator takes to "program" a code when validate() starts its own
QUIET_AFTER = 5.0  # emulator only: no Seam write at all this long after a request -> no code can come
# emulator only: every Seam request the app sent for a step failed, and none followed for this long -> stop
# waiting (long enough for an SDK's own retries, which follow within a second or two)
FAIL_GRACE = 3.0


def _safe_run_id(run_id: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", run_id):
        raise SkillassayError(
            f"run id {run_id!r}: use 1-64 letters, digits, '_', '.', '-' (it names files and keys)"
        )
    return run_id


def _field(payload: dict[str, Any], explicit: str | None, candidates: tuple[str, ...]) -> str | None:
    if explicit:
        return explicit if explicit in payload else None
    return next((f for f in candidates if f in payload), None)


def seam_plan(config: PlanEvalConfig, variables: dict[str, str]) -> tuple[list[WantedSpace], str | None]:
    """What to create in Seam, and the customer key.

    Default: one space whose key is the create payload's unit id (``unitId``/``unit_id`` or
    ``seam.unit_id_field``), customer key = its property id; or the declared ``seam.spaces``. Keys are
    rendered, so a fixture whose payload says ``"unitId": "eval_unit_{{RUN_ID}}"`` gets run-scoped keys (what
    a shared live sandbox needs).
    """
    setup = config.seam or SeamSetup()
    payload = render(config.test_endpoints.create.payload or {}, variables)
    unit_field = _field(payload, setup.unit_id_field, UNIT_FIELDS)
    prop_field = _field(payload, setup.property_id_field, PROPERTY_FIELDS)
    if setup.customer_key:
        customer = render(setup.customer_key, variables)
    else:
        customer = str(payload[prop_field]) if prop_field else None
    if setup.spaces:
        wanted = [
            WantedSpace(render(s.space_key, variables), render(s.name or s.space_key, variables), s.devices)
            for s in setup.spaces
        ]
    else:
        if not unit_field:
            raise SkillassayError(
                f"eval config {config.fixture}: the create payload has no unit id field "
                f"({', '.join(UNIT_FIELDS)}); "
                "declare `seam.unit_id_field` or `seam.spaces`"
            )
        key = str(payload[unit_field])
        wanted = [WantedSpace(key, key, 1)]
    return wanted, customer


def needs_spaces(config: PlanEvalConfig, seam: SeamMode) -> bool:
    """Whether the bootstrap creates the eval's spaces in Seam. Live mode creates them only where the eval's
    path uses them (reservation automations, access grants): an access-codes eval works on a device alone,
    so nothing is made in a shared sandbox it does not need, and it runs against a Seam without spaces
    (Seam's own fake). The emulator's workspace is the run's own: it always gets them."""
    return seam == "emulator" or config.expected_api_path != "access_codes"


def _seam_variables(seam: SeamSession) -> dict[str, str]:
    first = seam.spaces[0] if seam.spaces else None
    devices = seam.device_ids()
    return {
        "DEVICE_ID": devices[0] if devices else "",
        "DEVICE_IDS": ",".join(devices),
        "SPACE_ID": (first.space_id or "") if first else "",
        "SPACE_KEY": first.space_key if first else "",
        "CUSTOMER_KEY": seam.customer_key or "",
    }


def _make_backend(name: BackendName, **kw: Any) -> Backend:
    if name == "docker":
        from skillassay.apps.backends.docker import DockerBackend

        return DockerBackend(**kw)
    from skillassay.apps.backends.host import HostBackend

    return HostBackend(**kw)


def validate(
    modified_dir: Path,
    definition: EvalDefinition,
    run_id: str,
    *,
    seam: SeamMode = "emulator",
    backend: BackendName = "host",
    emulator: SeamEmulator | None = None,
    logs_dir: Path | None = None,
    quiet_after: float | None = QUIET_AFTER,
    fail_grace: float | None = FAIL_GRACE,
    policy: Policy | None = None,
    sealing: Sealing | None = None,
    trace_tail: float = 0.0,
) -> SandboxResult:
    """Build, start and drive ``modified_dir`` (never modified), and score it 0..100 as the plan does.

    ``emulator``: a started ``SeamEmulator`` to share between validations (each still gets its own workspace);
    without it one is started (and stopped) for this call. ``quiet_after`` (emulator only): stop waiting for a
    code when the app sent Seam no request at all this long after the step's request; None waits the full time
    limit. ``fail_grace`` (emulator only): stop waiting when every Seam request the app sent for the step
    failed and it sent no other for this long after the last answer; the reason names the failed requests.
    None waits the full limit. ``trace_tail``: seconds the app stays up after the last step, so requests it
    sends late (a timer, a background task) appear in the trace as unattributed.

    Raises SkillassayError for problems the user must fix (no Docker engine, no SEAM_API_KEY, a bad config);
    everything the app does wrong is a score with a reason.
    """
    run_id = _safe_run_id(run_id)
    config = definition.config if isinstance(definition, SeamEval) else None
    if config is None:
        raise SkillassayError(f"{definition.source}: no eval_config.json, so no sandbox checks are defined")
    modified_dir = Path(modified_dir).resolve()
    if not modified_dir.is_dir():
        raise SkillassayError(f"{modified_dir}: not a directory")
    timeouts = config.timeouts or SandboxTimeouts()
    result = SandboxResult(fixture=config.fixture, run_id=run_id, seam_mode=seam, backend=backend)
    if logs_dir is None:
        logs_dir = Path(tempfile.mkdtemp(prefix=f"skillassay-sandbox-logs-{config.fixture}-{run_id}-"))
    logs_dir = Path(logs_dir)
    logs_dir.mkdir(parents=True, exist_ok=True)
    variables = {"RUN_ID": run_id, **time_templates()}
    result.templates = dict(variables)
    if backend == "docker":
        from skillassay.apps.backends.docker import check_engine

        check_engine()  # exit 2 before anything starts
    if seam == "live" and not os.environ.get("SEAM_API_KEY"):
        raise SkillassayError("--seam live needs SEAM_API_KEY (a Seam sandbox key) in the environment")

    # how to run the app: a broken Dockerfile or `run` section is the fixture's problem (exit 2), not a score
    plan = plan_for(definition, modified_dir)

    t_all = time.monotonic()
    # Seam keys this run handed out: scrubbed from logs and evidence with the usual secrets
    keys: list[str] = []
    with ExitStack() as stack:
        # registered first: runs last, after the app's logs are complete
        stack.callback(_scrub_logs, logs_dir, keys)
        # ---------------------------------------------------------------- Seam
        t0 = time.monotonic()
        if seam == "emulator":
            if emulator is None:
                from skillassay.seam.emulator.emulator import SeamEmulator

                emulator = SeamEmulator(async_delay=DEFAULT_EMULATOR_DELAY)
                # docker's bridge network cannot reach 127.0.0.1 on the host
                host = "0.0.0.0" if backend == "docker" and not _host_network() else "127.0.0.1"
                emulator.start(host=host, port=0)
                stack.callback(emulator.stop)
            session: SeamSession = EmulatorSession(emulator, run_id)
            result.emulator_spec_version = session.spec_version
        else:
            session = LiveSession(
                run_id, os.environ["SEAM_API_KEY"], os.environ.get("SEAM_ENDPOINT") or LIVE_ENDPOINT
            )
            quiet_after = fail_grace = None
        keys.append(session.api_key)
        stack.callback(_record_seam, result, session)
        stack.callback(session.cleanup)
        wanted, customer = seam_plan(config, variables)
        endpoints = config.test_endpoints
        try:
            session.bootstrap(wanted, customer, spaces=needs_spaces(config, seam))
        except InfrastructureError as e:
            # not the app's fault (a bad key, Seam down): no score, exit 2; what was created is still cleaned
            # up
            raise InfrastructureError(f"Seam ({seam}) bootstrap failed: {e}") from e
        result.timings["seam_bootstrap"] = round(time.monotonic() - t0, 3)
        variables.update(_seam_variables(session))
        setup = config.seam or SeamSetup()
        device_ids = session.device_ids()
        if setup.check_device == "env":
            named = [
                d for v in setup.env.values() for d in render(v, variables).split(",") if d in device_ids
            ]
            device_ids = list(dict.fromkeys(named)) or device_ids
        elif setup.check_device == "acs_entrance":
            variables.update(session.watch_acs_entrance())
            device_ids = [variables["ACS_ENTRANCE_ID"]]

        # ---------------------------------------------------------------- the app
        if policy is None:  # sealed as `run` seals it: the eval's registries, so a cold cache still installs
            from skillassay.isolation import Policy

            policy = Policy(registries=stack_registries(definition))
        result.run = {
            "plan_source": plan.source,
            "runtime": plan.runtime,
            "install": plan.install.model_dump(),
            "build": plan.build,
            "start": plan.start,
            "health_path": plan.health_path,
        }
        app = _make_backend(
            backend,
            plan=plan,
            source_dir=modified_dir,
            fixture=config.fixture,
            run_id=run_id,
            logs_dir=logs_dir,
            fixture_dir=definition.fixture_dir,
            dockerfile=definition.dockerfile,
            health_timeout=timeouts.health,
            **({"policy": policy, "sealing": sealing} if backend == "host" else {}),
        )
        origin = session.trace_origin()  # after the bootstrap: every request from here on is the app's
        clock = WindowClock(origin.at if origin is not None else None)
        stack.callback(_record_trace, result, session, origin, clock)  # runs after the app has stopped
        stack.callback(_record_app, result, app)
        stack.callback(app.cleanup)
        stack.callback(app.stop)  # runs first: LIFO, on every way out including KeyboardInterrupt

        build = result.checks["build"]
        t0 = time.monotonic()
        base_url: str | None = None
        try:
            app.prepare()
            env = {k: render(v, variables) for k, v in setup.env.items()}
            env[config.seam_env_var] = session.api_key
            env["SEAM_ENDPOINT"] = app.seam_endpoint(session.endpoint)
            phase("start")
            base_url = app.start(env)
            session.allow_webhooks_to(base_url)
        except StepFailed as e:
            build.fail(f"{e.step} failed: {e.reason}")
            if e.log_tail:
                build.details["log_tail"] = e.log_tail
                result.log_tail = e.log_tail
            for name in ("create", "update", "cancel"):
                result.checks[name].fail(
                    f"not run: the app did not {'start' if e.step == 'start' else 'build'}"
                )
        finally:
            build.elapsed_s = round(time.monotonic() - t0, 3)
            build.details.update(
                {
                    "start": app.facts.get("start_argv") or plan.start,
                    "timings": {
                        k: round(app.timings[k], 3)
                        for k in ("copy", "install", "build", "start")
                        if k in app.timings
                    },
                }
            )

        # ---------------------------------------------------------------- the checks
        if base_url is not None:
            build.ok()
            build.details["health_url"] = base_url + plan.health_path
            phase("checks")
            with httpx.Client(timeout=30.0, trust_env=False, verify=tls.context(False)) as client:
                checker = Checker(
                    client=client,
                    base_url=base_url,
                    seam=session,
                    device_ids=device_ids,
                    endpoints=endpoints,
                    variables=variables,
                    timeouts=timeouts,
                    update_check=config.sandbox_update_check,
                    quiet_after=quiet_after,
                    fail_grace=fail_grace,
                    clock=clock,
                )
                checker.create(result.checks["create"], endpoints.create.response_id_path)
                checker.update(result.checks["update"])
                checker.cancel(result.checks["cancel"])
            if trace_tail > 0:  # the app stays up a little: what it sends late is traced, never credited
                time.sleep(trace_tail)
            if not app.alive():
                result.log_tail = app.log_tail()
                for c in result.checks.values():
                    if c.name != "build" and not c.passed and c.reason and "connection" in c.reason:
                        c.reason += " (the app had exited)"
            for name in ("create", "update", "cancel"):
                result.timings[name] = result.checks[name].elapsed_s
    return _scrubbed(_finish(result, t_all), keys)


def _host_network() -> bool:
    from skillassay.apps.backends.docker import default_network

    return default_network() == "host"


def _record_app(result: SandboxResult, app: Backend) -> None:
    for k, v in app.timings.items():
        result.timings[k] = round(v, 3)
    result.logs = {k: str(v) for k, v in app.logs.items() if v.exists()}
    result.run.update(dict(app.facts.items()))


def _record_trace(
    result: SandboxResult, session: SeamSession, origin: TraceOrigin | None, clock: WindowClock
) -> None:
    result.seam_trace = session.trace(origin, clock.windows)


def _record_seam(result: SandboxResult, session: SeamSession) -> None:
    result.seam = session.describe()
    if session.http is not None:
        result.seam["harness_calls"] = session.http.calls[:50]  # route + status of our own Seam calls


def _scrub_logs(logs_dir: Path, keys: list[str]) -> None:
    redact_tree(logs_dir, secret_values(extra=keys))


def _scrubbed(result: SandboxResult, keys: list[str]) -> SandboxResult:
    """The result with every secret value replaced (an app may echo its key in an answer or its log)."""
    text = result.model_dump_json()
    clean = redact(text, secret_values(extra=keys))
    return result if clean == text else SandboxResult.model_validate_json(clean)


def _finish(result: SandboxResult, t_all: float) -> SandboxResult:
    result.timings["total"] = round(time.monotonic() - t_all, 3)
    return result.finish()
