from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from skillassay.seam.config import PlanEvalConfig
from skillassay.seam.eval import SeamEval

HERE = Path(__file__).resolve().parent
TINYAPP = HERE / "tinyapp"

TINY_DOCKERFILE = """\
# a stdlib-only app: no dependencies to install
FROM python:3.11-slim
WORKDIR /app
COPY . .
EXPOSE 8000
CMD ["python", "server.py"]
"""


def tiny_config(mode: str = "good", **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "fixture": "tiny",
        "prompt": "test",
        "expected_api_path": "access_codes",
        "app_port": 8000,
        "test_endpoints": {
            "create": {
                "method": "POST",
                "path": "/api/reservations",
                "payload": {
                    "guest": "eval_{{RUN_ID}}",
                    "propertyId": "prop-1",
                    "unitId": "unit-1",
                    "checkIn": "{{STARTS_AT}}",
                    "checkOut": "{{ENDS_AT}}",
                },
                "response_id_path": "reservation.id",
            },
            "update": {
                "method": "PUT",
                "path": "/api/reservations/{{RESERVATION_ID}}",
                "payload": {"checkOut": "{{NEW_ENDS_AT}}"},
            },
            "cancel": {"method": "DELETE", "path": "/api/reservations/{{RESERVATION_ID}}"},
        },
        "seam": {"env": {"SEAM_DEVICE_ID": "{{DEVICE_ID}}"}},
        "run": {"env": {"MODE": mode}},
        "timeouts": {"health": 20, "create": 10, "update": 5, "cancel": 5},
    }
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(config.get(k), dict):
            config[k] = {**config[k], **v}
        else:
            config[k] = v
    return config


def make_fixture(root: Path, config: dict[str, Any], dockerfile: str = TINY_DOCKERFILE) -> SeamEval:
    """A fixture folder in ``root`` (Dockerfile, eval_config.json, app/) and its SeamEval."""
    fixture = root / "tiny"
    app = fixture / "app"
    shutil.copytree(TINYAPP, app, ignore=shutil.ignore_patterns("__pycache__"))
    (fixture / "Dockerfile").write_text(dockerfile)
    (fixture / "eval_config.json").write_text(json.dumps(config, indent=2))
    cfg = PlanEvalConfig.model_validate(config)
    return SeamEval(
        id="tiny",
        title="tiny",
        format="plan-json",
        source=fixture / "eval_config.json",
        suite_dir=root,
        fixture_dir=fixture,
        app_dir=app,
        prompt="test",
        stack="python",
        language="python",
        app_port=cfg.app_port,
        dockerfile=fixture / "Dockerfile",
        config=cfg,
    )


@pytest.fixture(scope="session")
def emulator():
    from skillassay.seam.emulator.emulator import SeamEmulator

    emu = SeamEmulator(async_delay=0.2).start()
    yield emu
    emu.stop()


@pytest.fixture
def tiny(tmp_path):
    def build(mode: str = "good", **extra: Any) -> SeamEval:
        return make_fixture(Path(tempfile.mkdtemp(dir=tmp_path)), tiny_config(mode, **extra))

    return build
