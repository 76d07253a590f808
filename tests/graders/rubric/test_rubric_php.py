"""Every check on small Laravel apps, in styles of their own: the SDK ``seamapi/seam``
(``$this->seam->customers->push_data(customer_key: ...)``) on a promoted constructor property, a service the
container injects into a controller action by its type, ``Route::apiResource(...)->except(...)``, an
invokable webhook controller, a ``match`` dispatch; and the agent playing the grader: calls that never run,
calls in comments and strings, a camelCase method, a method nothing calls, a route commented out, raw HTTP
through Guzzle to the wrong path."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rubric_helpers import ENDPOINTS, RA_KEY_PY, scores

from skillassay import stacks
from skillassay.stacks.php import PHP


@pytest.fixture(autouse=True)
def php_syntax(monkeypatch):
    """The PHP syntax as a registered stack carries it (a no-op once a PHP stack is registered)."""
    if stacks.syntax_of("php") is None:
        clients, syntax_of = stacks.http_clients, stacks.syntax_of
        monkeypatch.setattr(
            stacks,
            "http_clients",
            lambda family: clients(family) | (PHP.http_clients if family == PHP.sdk_family else frozenset()),
        )
        monkeypatch.setattr(
            stacks, "syntax_of", lambda language: PHP if language == "php" else syntax_of(language)
        )


PRISTINE = {
    "composer.json": '{"require": {"php": "^8.1", "laravel/framework": "^8.83"}}\n',
    "routes/api.php": """
        <?php

        use App\\Http\\Controllers\\ReservationController;
        use App\\Http\\Controllers\\PaymentWebhookController;
        use Illuminate\\Support\\Facades\\Route;

        Route::apiResource('reservations', ReservationController::class)->except(['index', 'show']);
        Route::post('/webhooks/payments', PaymentWebhookController::class);
    """,
    "app/Http/Controllers/ReservationController.php": """
        <?php

        namespace App\\Http\\Controllers;

        use App\\Services\\ReservationService;
        use Illuminate\\Http\\Request;

        class ReservationController extends Controller
        {
            public function store(Request $request, ReservationService $service)
            {
                return response()->json($service->create_reservation($request->all()), 201);
            }

            public function update(Request $request, ReservationService $service, string $id)
            {
                return response()->json($service->update_reservation($id, $request->all()));
            }

            public function destroy(ReservationService $service, string $id)
            {
                return response()->json($service->cancel_reservation($id));
            }
        }
    """,
    "app/Http/Controllers/PaymentWebhookController.php": """
        <?php

        namespace App\\Http\\Controllers;

        class PaymentWebhookController extends Controller
        {
            public function __invoke()
            {
                return response()->noContent();
            }
        }
    """,
    "app/Services/ReservationService.php": """
        <?php

        namespace App\\Services;

        class ReservationService
        {
            public function create_reservation(array $data): array
            {
                return ['id' => 'r1'] + $data;
            }

            public function update_reservation(string $rid, array $changes): array
            {
                return ['id' => $rid] + $changes;
            }

            public function cancel_reservation(string $rid): array
            {
                return ['id' => $rid, 'status' => 'cancelled'];
            }
        }
    """,
}

SERVICE_GOLDEN = """
    <?php

    namespace App\\Services;

    use Seam\\SeamClient;

    class ReservationService
    {
        public function __construct(private SeamClient $seam) {}

        public function create_reservation(array $data): array
        {
            $r = ['id' => 'r1'] + $data;
            $this->push($r);
            return $r;
        }

        public function update_reservation(string $rid, array $changes): array
        {
            $r = ['id' => $rid] + $changes;
            $payload = ['customer_key' => $r['property_id']];
            $payload['user_identities'] = [['user_identity_key' => $r['guest_id']]];
            $payload['reservations'] = [['reservation_key' => $rid, 'space_keys' => [$r['unit_id']]]];
            $this->seam->customers->push_data(...$payload);
            return $r;
        }

        public function cancel_reservation(string $rid): array
        {
            $this->seam->customers->delete_data(customer_keys: ['p1'], reservation_keys: [$rid]);
            return ['id' => $rid, 'status' => 'cancelled'];
        }

        private function push(array $r): void
        {
            $this->seam->customers->push_data(
                customer_key: $r['property_id'],
                user_identities: [['user_identity_key' => $r['guest_id']]],
                reservations: [['reservation_key' => $r['id'], 'space_keys' => [$r['unit_id']]]],
            );
        }
    }
"""

ROUTES_WITH_WEBHOOK = (
    PRISTINE["routes/api.php"]
    .replace(
        "Route::post('/webhooks/payments', PaymentWebhookController::class);",
        "Route::post('/webhooks/payments', PaymentWebhookController::class);\n"
        "        Route::post('webhooks/seam', [SeamWebhookController::class, 'handle']);",
    )
    .replace(
        "use Illuminate\\\\Support",
        "use App\\\\Http\\\\Controllers\\\\SeamWebhookController;\n        use Illuminate\\\\Support",
    )
)

WEBHOOK = """
    <?php

    namespace App\\Http\\Controllers;

    use Illuminate\\Http\\Request;
    use Illuminate\\Support\\Facades\\Log;

    class SeamWebhookController extends Controller
    {
        public function handle(Request $request)
        {
            $event = $request->json()->all();
            $level = match ($event['event_type'] ?? '') {
                'access_code.set_on_device', 'device.disconnected' => 'info',
                default => null,
            };
            if ($level !== null) {
                Log::info("seam event {$event['event_type']}");
            }
            return response()->noContent();
        }
    }
"""

KEY = dataclasses.replace(
    RA_KEY_PY,
    expected_files_modified=["app/Services/ReservationService.php"],
    expected_new_files_allowed=["app/Http/Controllers/Seam*.php"],
)
GOLDEN = {
    "app/Services/ReservationService.php": SERVICE_GOLDEN,
    "routes/api.php": ROUTES_WITH_WEBHOOK,
    "app/Http/Controllers/SeamWebhookController.php": WEBHOOK,
}


def _grade(make_app, changes: dict[str, str]):
    return make_app(PRISTINE, {**GOLDEN, **changes}).grade(KEY, endpoints=ENDPOINTS)


def test_golden_scores_100(make_app):
    result = _grade(make_app, {})
    assert result.total == 100.0, json.dumps(result.to_json(), indent=1)
    lifecycle = " ".join(e.message for e in result.categories["lifecycle_completeness"].evidence)
    assert "ReservationController.store -> ReservationService.create_reservation" in lifecycle
    hook = result.categories["webhook_setup"].evidence[0].message
    assert "POST /api/webhooks/seam" in hook and "device.disconnected" in hook


def test_a_call_behind_if_false_or_after_return_never_runs(make_app):
    service = SERVICE_GOLDEN.replace(
        "            $this->push($r);\n",
        "            if (false) {\n                $this->push($r);\n            }\n",
    ).replace(
        "            $this->seam->customers->delete_data(",
        "            return ['id' => $rid];\n            $this->seam->customers->delete_data(",
    )
    s = scores(_grade(make_app, {"app/Services/ReservationService.php": service}))
    assert s["lifecycle_completeness"] == 0.33  # update alone: create's call is dead, cancel's after return
    assert s["integration_placement"] == 0.33


def test_calls_in_comments_and_strings_are_not_calls(make_app):
    call = "$this->seam->customers->delete_data(customer_keys: ['p1'], reservation_keys: [$rid]);"
    service = SERVICE_GOLDEN.replace(
        f"            {call}\n",
        f"            // {call}\n"
        "            /* $this->seam->customers->delete_data(reservation_keys: [$rid]); */\n"
        "            $note = '$this->seam->customers->delete_data(reservation_keys: [$rid])';\n",
    )
    result = _grade(make_app, {"app/Services/ReservationService.php": service})
    cancel = next(e for e in result.categories["lifecycle_completeness"].evidence if "cancel" in e.message)
    assert not cancel.ok, cancel.message


def test_a_method_nothing_calls_is_dead_code(make_app):
    service = SERVICE_GOLDEN.replace("            $this->push($r);\n", "").replace(
        "private function push(", "private function push_later("
    )
    s = scores(_grade(make_app, {"app/Services/ReservationService.php": service}))
    assert s["lifecycle_completeness"] == 0.66  # create no longer reaches push_data


def test_an_action_no_route_names_never_runs(make_app):
    routes = ROUTES_WITH_WEBHOOK.replace("->except(['index', 'show'])", "->only(['update', 'destroy'])")
    s = scores(_grade(make_app, {"routes/api.php": routes}))
    assert s["lifecycle_completeness"] == 0.66  # store is no route: create_reservation never runs


def test_camel_case_method_in_php_fails_correctness(make_app):
    service = SERVICE_GOLDEN.replace(
        "$this->seam->customers->delete_data", "$this->seam->customers->deleteData"
    )
    result = _grade(make_app, {"app/Services/ReservationService.php": service})
    problems = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert any(
        "PHP SDK (seamapi/seam) has no `customers.deleteData`; its method is `customers.delete_data`" in p
        for p in problems
    ), problems


def test_a_missing_named_argument_fails_correctness(make_app):
    service = SERVICE_GOLDEN.replace(
        "                user_identities: [['user_identity_key' => $r['guest_id']]],\n", ""
    )
    s = scores(_grade(make_app, {"app/Services/ReservationService.php": service}))
    assert s["api_correctness"] < 1.0


def test_a_route_commented_out_is_no_route(make_app):
    routes = ROUTES_WITH_WEBHOOK.replace("Route::post('webhooks/seam'", "// Route::post('webhooks/seam'")
    s = scores(_grade(make_app, {"routes/api.php": routes}))
    assert s["webhook_setup"] == 0.0


def test_wrong_path_raw_http_through_guzzle_is_seen(make_app):
    service = """
        <?php

        namespace App\\Services;

        use GuzzleHttp\\Client;

        class ReservationService
        {
            public function __construct(private Client $http) {}

            public function create_reservation(array $data): array
            {
                $base = env('SEAM_ENDPOINT', 'https://connect.getseam.com');
                $body = ['json' => ['device_id' => $data['device_id']]];
                $this->http->post("{$base}/access_codes/create", $body);
                return $data;
            }

            public function update_reservation(string $rid, array $changes): array
            {
                return $changes;
            }

            public function cancel_reservation(string $rid): array
            {
                return ['id' => $rid];
            }
        }
    """
    result = _grade(make_app, {"app/Services/ReservationService.php": service})
    path = result.categories["api_path_selection"]
    assert path.score == 0.0
    assert any("access_codes.create" in e.message for e in path.evidence), path.evidence
