"""The hybrid rubric's labelled PHP app: the reservation service of ``hybrid_apps`` written again in PHP
(``php -S`` and a router script, its state in a JSON file as PHP keeps nothing between requests, a small Seam
client of the app's own whose namespaces take named arguments through ``__call``), its Seam calls in PHP's
own styles the static reading misjudges or reads right, with each case's truth per rubric category. Shared by
tests/graders/sandbox/test_hybrid_rubric.py and benchmarks/hybrid.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from textwrap import dedent
from typing import Any

from conftest import make_fixture, tiny_config
from hybrid_apps import KEY, RUBRIC, Case, _truth

from skillassay.kinds.base import GradeOutcome, GradeRequest
from skillassay.seam.eval import SeamEval
from skillassay.seam.kind import SeamKind

ROUTER = dedent("""\
    <?php
    // the reservation app: POST creates, PUT updates, DELETE cancels /api/reservations/{id}
    require __DIR__ . '/../vendor/autoload.php';

    use App\\Bookings;

    $method = $_SERVER['REQUEST_METHOD'];
    $id = basename(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
    $body = json_decode(file_get_contents('php://input') ?: '{}', true) ?: [];
    $bookings = new Bookings();
    header('Content-Type: application/json');
    if ($method === 'GET') {
        echo json_encode(['ok' => true]);
    } elseif ($method === 'POST') {
        http_response_code(201);
        echo json_encode(['reservation' => $bookings->create_reservation($body)]);
    } elseif ($method === 'PUT') {
        echo json_encode(['reservation' => $bookings->update_reservation($id, $body)]);
    } elseif ($method === 'DELETE') {
        echo json_encode(['reservation' => $bookings->cancel_reservation($id)]);
    } else {
        http_response_code(405);
    }
""")
# the app's own client (the SDK is not installed): any method of a namespace is one POST of its named
# arguments
SEAMLITE = dedent("""\
    <?php

    namespace App;

    class SeamNamespace
    {
        public function __construct(private Seam $client, private string $name)
        {
        }

        public function __call(string $method, array $params): array
        {
            return $this->client->post("/{$this->name}/{$method}", $params);
        }
    }

    class Seam
    {
        public SeamNamespace $access_grants;
        private string $endpoint;

        public function __construct(private string $apiKey)
        {
            $this->endpoint = rtrim(getenv('SEAM_ENDPOINT') ?: 'https://connect.getseam.com', '/');
            $this->access_grants = new SeamNamespace($this, 'access_grants');
        }

        public function post(string $route, array $params): array
        {
            $headers = "authorization: Bearer {$this->apiKey}\\r\\ncontent-type: application/json\\r\\n";
            $http = ['method' => 'POST', 'header' => $headers, 'content' => json_encode($params)];
            $context = stream_context_create(['http' => $http + ['timeout' => 10]]);
            $raw = file_get_contents($this->endpoint . $route, false, $context);
            return json_decode($raw ?: '{}', true) ?: [];
        }
    }
""")
STORE = dedent("""\
    <?php

    namespace App;

    class Store
    {
        private const FILE = __DIR__ . '/../reservations.json';

        public static function load(): array
        {
            return is_file(self::FILE) ? json_decode(file_get_contents(self::FILE), true) : [];
        }

        public static function save(array $all): void
        {
            file_put_contents(self::FILE, json_encode($all), LOCK_EX);
        }
    }
""")
PRISTINE_BOOKINGS = dedent("""\
    <?php

    namespace App;

    class Bookings
    {
        public function create_reservation(array $body): array
        {
            $rid = bin2hex(random_bytes(4));
            $all = Store::load();
            $all[$rid] = $body + ['id' => $rid];
            Store::save($all);
            return $all[$rid];
        }

        public function update_reservation(string $rid, array $body): array
        {
            $all = Store::load();
            $all[$rid] = array_merge($all[$rid], $body);
            Store::save($all);
            return $all[$rid];
        }

        public function cancel_reservation(string $rid): array
        {
            $all = Store::load();
            $res = $all[$rid];
            unset($all[$rid]);
            Store::save($all);
            return $res;
        }
    }
""")
_GRANT = (
    "user_identity: ['full_name' => $body['guest']], device_ids: [getenv('SEAM_DEVICE_ID') ?: ''], "
    "requested_access_methods: [['mode' => 'code']], starts_at: $body['checkIn'], ends_at: $body['checkOut']"
)
_MOVE = "access_grant_id: $res['grant_id'], ends_at: $res['checkOut']"
CREATE = {
    "direct": f"$got = $this->seam->access_grants->create({_GRANT});",
    # the method's name read from the environment at run time (unset: "create"): sent, and the static reading
    # cannot tell which method it is
    "runtime": (
        "$op = getenv('SEAM_GRANT_OP') ?: 'create';\n"
        f"        $got = $this->seam->access_grants->{{$op}}({_GRANT});"
    ),
}
UPDATE = {
    "direct": f"$this->seam->access_grants->update({_MOVE});",
    # a closure bound to a local and never called: never runs (the static reading knows)
    "uncalled": f"$sync = fn () => $this->seam->access_grants->update({_MOVE});",
    # a closure pushed onto a queue nothing drains: never runs, and the static reading takes it as run
    "queued": f"$this->later[] = fn () => $this->seam->access_grants->update({_MOVE});",
}
CANCEL = {
    "direct": "$this->seam->access_grants->delete(access_grant_id: $res['grant_id']);",
    "queued": (
        "$this->later[] = fn () => $this->seam->access_grants->delete(access_grant_id: $res['grant_id']);"
    ),
}
BOOKINGS_TEMPLATE = """<?php

namespace App;

class Bookings
{
    private Seam $seam;
    private array $later = []; // jobs for later: nothing ever takes them off

    public function __construct()
    {
        $this->seam = new Seam(getenv('SEAM_API_KEY') ?: '');
    }

    public function create_reservation(array $body): array
    {
        $rid = bin2hex(random_bytes(4));
        @CREATE@
        $all = Store::load();
        $all[$rid] = $body + ['id' => $rid, 'grant_id' => $got['access_grant']['access_grant_id']];
        Store::save($all);
        return $all[$rid];
    }

    public function update_reservation(string $rid, array $body): array
    {
        $all = Store::load();
        $res = $all[$rid] = array_merge($all[$rid], $body);
        Store::save($all);
        @UPDATE@
        return $res;
    }

    public function cancel_reservation(string $rid): array
    {
        $all = Store::load();
        $res = $all[$rid];
        unset($all[$rid]);
        Store::save($all);
        @CANCEL@
        return $res;
    }
}
"""
COMPOSER_JSON = json.dumps(
    {"name": "skillassay/hybrid-php", "require": {"php": ">=8.1"}, "autoload": {"psr-4": {"App\\": "src/"}}},
    indent=4,
)
COMPOSER_LOCK = json.dumps(
    {
        "content-hash": "",
        "packages": [],
        "packages-dev": [],
        "aliases": [],
        "minimum-stability": "stable",
        "stability-flags": [],
        "prefer-stable": False,
        "prefer-lowest": False,
        "platform": {"php": ">=8.1"},
        "platform-dev": [],
        "plugin-api-version": "2.3.0",
    },
    indent=4,
)
DOCKERFILE = (
    "FROM php:8.2-cli\nCOPY --from=composer:2 /usr/bin/composer /usr/bin/composer\nWORKDIR /app\n"
    "COPY composer.json composer.lock ./\nRUN composer install --no-dev --no-scripts --no-autoloader\n"
    "COPY . .\nRUN composer dump-autoload --optimize\nEXPOSE 8000\n"
    "CMD php -S 0.0.0.0:${PORT:-8000} -t public public/index.php\n"
)


def bookings(create: str, update: str, cancel: str) -> str:
    """The modified app's src/Bookings.php, each phase's Seam call written in the style named."""
    return (
        BOOKINGS_TEMPLATE.replace("@CREATE@", CREATE[create])
        .replace("@UPDATE@", UPDATE[update])
        .replace("@CANCEL@", CANCEL[cancel])
    )


# the app graded once: static misses create, credits the update that never runs, agrees on cancel
STYLES = ("runtime", "queued", "direct")
CASES = {
    # styles the static reading still misjudges: the trace settles them
    "php-runtime-name-create": Case(("runtime", "direct", "direct"), _truth(True, True, True), True),
    "php-queued-update": Case(("direct", "queued", "direct"), _truth(True, False, True), True),
    "php-runtime-create-queued-update": Case(STYLES, _truth(True, False, True), True),
    "php-queued-cancel": Case(("direct", "direct", "queued"), _truth(True, True, False), True),
    # a style the static reading reads right: both layers agree
    "php-uncalled-closure-update": Case(("direct", "uncalled", "direct"), _truth(True, False, True), False),
}


def _write(root: Path, bookings_php: str) -> Path:
    files = {
        "public/index.php": ROUTER,
        "src/Seam.php": SEAMLITE,
        "src/Store.php": STORE,
        "src/Bookings.php": bookings_php,
        "composer.json": COMPOSER_JSON + "\n",
        "composer.lock": COMPOSER_LOCK + "\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def definition(root: Path, styles: tuple[str, str, str] = STYLES) -> tuple[SeamEval, Path]:
    """The eval (pristine PHP app, the Python app's answer key and rubric) and the modified app."""
    d = make_fixture(root, tiny_config(), DOCKERFILE)
    for stale in d.app_dir.iterdir():
        stale.unlink()
    _write(d.app_dir, PRISTINE_BOOKINGS)
    modified = _write(root / "modified", bookings(*styles))
    key = dataclasses.replace(KEY, expected_files_modified=["src/Bookings.php"])
    update = {
        "answer_key": key,
        "rubric": RUBRIC,
        "api_path": "access_grants",
        "stack": "php",
        "language": "php",
    }
    return d.model_copy(update=update), modified


def grade(
    root: Path, emulator: Any, layers: str = "both", styles: tuple[str, str, str] = STYLES
) -> GradeOutcome:
    """The PHP app in ``styles`` graded by the Seam kind on ``layers`` (the sandbox's waits kept short)."""
    d, modified = definition(root, styles)
    run_dir = root / "run"
    run_dir.mkdir()
    request = GradeRequest(
        definition=d,
        modified_dir=modified,
        run_dir=run_dir,
        run_id="hyp" + root.name[-5:].lower().replace("_", ""),
        layers=layers,  # type: ignore[arg-type]
        emulator=emulator,
        sandbox_waits={"quiet_after": 1.5, "fail_grace": 1.0},
    )
    return SeamKind().grade(request)
