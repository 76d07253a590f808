"""The PHP outline (languages/php.py): Laravel routes as routes/*.php declare them, calls as chains with named
arguments, arrays as objects, classes with promoted constructor properties, imports, code that never runs, and
the raw HTTP clients the rubric reads (Guzzle, Laravel's Http facade)."""

from __future__ import annotations

import textwrap

import pytest

from skillassay import stacks
from skillassay.languages import parser_for
from skillassay.languages.base import ImportRef, Module
from skillassay.languages.php import parse
from skillassay.languages.routes import endpoint_routes, mounted_routes
from skillassay.seam.rubric.project import Project
from skillassay.seam.rubric.rawhttp import RawHttp
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


def _parse(text: str, path: str = "app/X.php") -> Module:
    return parse(("<?php\n" + textwrap.dedent(text).lstrip()).encode(), path)


ROUTES = """
    use App\\Http\\Controllers\\ReservationController;
    use App\\Http\\Controllers\\Api\\BookingController;
    use Illuminate\\Support\\Facades\\Route;

    Route::post('/reservations', [ReservationController::class, 'store']);
    Route::put('reservations/{reservation}', 'ReservationController@update');
    Route::get('/health', fn () => ['ok' => true]);
    Route::match(['get', 'post'], '/ping', [ReservationController::class, 'ping']);
    Route::prefix('v1')->middleware('auth')->group(function () {
        Route::apiResource('bookings', BookingController::class)->only(['store', 'destroy']);
        Route::controller(ReservationController::class)->group(function () {
            Route::delete('/reservations/{id}', 'destroy');
        });
    });
    Route::group(['prefix' => 'admin'], function () {
        Route::resource('rooms', 'Admin\\RoomController', ['except' => ['create', 'edit', 'index']]);
    });
    // Route::post('/webhooks/seam', [SeamWebhookController::class, 'handle']);
    if (false) {
        Route::post('/hidden', [ReservationController::class, 'hidden']);
    }
"""


def _routes(text: str = ROUTES, path: str = "routes/api.php") -> set[tuple[str, str, tuple[str, ...]]]:
    module = _parse(text, path)
    return {(r.method, r.path, r.handlers[0].chain if r.handlers else ()) for r in module.routes}


def test_laravel_routes_verbs_groups_prefixes_and_resources():
    routes = _routes()
    reservations = "ReservationController"
    assert {
        ("POST", "/api/reservations", (reservations, "store")),
        ("PUT", "/api/reservations/{reservation}", (reservations, "update")),
        ("GET", "/api/ping", (reservations, "ping")),
        ("POST", "/api/ping", (reservations, "ping")),
        ("POST", "/api/v1/bookings", ("BookingController", "store")),
        ("DELETE", "/api/v1/bookings/{id}", ("BookingController", "destroy")),
        ("DELETE", "/api/v1/reservations/{id}", (reservations, "destroy")),
        ("POST", "/api/admin/rooms", ("Admin\\RoomController", "store")),
        ("GET", "/api/admin/rooms/{id}", ("Admin\\RoomController", "show")),
        ("PUT", "/api/admin/rooms/{id}", ("Admin\\RoomController", "update")),
        ("PATCH", "/api/admin/rooms/{id}", ("Admin\\RoomController", "update")),
    } <= routes
    assert not any(p == "/api/v1/bookings" and m == "GET" for m, p, _h in routes)  # only: no index
    assert not any(p.endswith("/create") or (p == "/api/admin/rooms" and m == "GET") for m, p, _h in routes)
    assert not any("webhooks" in p for _m, p, _h in routes)  # commented out
    health = next(r for r in _parse(ROUTES, "routes/api.php").routes if r.path == "/api/health")
    assert health.handlers[0].kind == "func"


def test_a_route_under_a_constant_false_condition_or_in_web_php():
    assert not any(p == "/api/hidden" for _m, p, _h in _routes())  # not a statement the router runs
    web = _routes("Route::post('/webhooks/seam', 'SeamWebhookController@handle');", "routes/web.php")
    assert web == {("POST", "/webhooks/seam", ("SeamWebhookController", "handle"))}
    assert _routes("Route::post('/x', 'XController@y');", "app/Http/Kernel.php") == set()  # not a routes file


def test_a_controller_resolves_by_psr4_and_its_action_reaches_the_service(tmp_path):
    files = {
        "routes/api.php": ROUTES,
        "app/Http/Controllers/ReservationController.php": """
            <?php
            namespace App\\Http\\Controllers;

            use App\\Services\\ReservationService;

            class ReservationController extends Controller
            {
                public function __construct(private ReservationService $service) {}

                public function store(Request $request)
                {
                    return $this->service->create($request->all());
                }

                public function unused()
                {
                    return $this->service->cancel('x');
                }
            }
        """,
        "app/Services/ReservationService.php": """
            <?php
            namespace App\\Services;

            use Seam\\SeamClient;

            class ReservationService
            {
                public function __construct(private SeamClient $seam) {}

                public function create(array $data): array
                {
                    $this->seam->access_codes->create(device_id: $data['device_id']);
                    return $data;
                }

                public function cancel(string $id): void {}
            }
        """,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(text).lstrip()
        (tmp_path / rel).write_text(body if body.startswith("<?php") else "<?php\n" + body)
    project = Project.load(tmp_path, sorted(files))
    [route] = endpoint_routes(mounted_routes(project.modules.values()), "POST", "/api/reservations")
    from skillassay.seam.rubric.checks import handler_refs

    [handler] = handler_refs(project, route.module, route.route.handlers)
    assert project.function(handler).qualname == "ReservationController.store"
    reach = project.reach([handler])
    names = {project.function(r).qualname for r in reach if project.function(r) is not None}
    assert "ReservationService.create" in names and "ReservationService.cancel" not in names
    controller = project.modules["app/Http/Controllers/ReservationController.php"]
    assert controller.classes["ReservationController"].routed  # its actions run when a route names them
    assert not next(f for f in controller.functions if f.name == "unused").exported


def test_calls_are_chains_with_named_arguments_and_this():
    module = _parse(
        """
        namespace App\\Services;

        use Seam\\SeamClient;
        use GuzzleHttp\\Client as Guzzle;

        class SeamGateway
        {
            private SeamClient $seam;

            public function __construct(private Guzzle $http, ?SeamClient $seam = null)
            {
                $this->seam = $seam ?? new SeamClient(getenv('SEAM_API_KEY'));
            }

            public function create($booking)
            {
                $this->client()->access_codes->create(
                    device_id: $booking->device_id,
                    ...$this->extra($booking),
                );
                $this->seam?->access_codes->delete(access_code_id: $booking->code_id);
                self::log('created');
                \\Illuminate\\Support\\Facades\\Http::withToken('t')->post('https://example.com');
            }

            protected function client()
            {
                return $this->seam;
            }
        }
        """
    )
    chains = {c.chain: c for c in module.calls}
    create = chains[("this", "client()", "access_codes", "create")]
    assert set(create.kwargs) == {"device_id"} and len(create.kw_spreads) == 1
    assert create.kwargs["device_id"].chain == ("booking", "device_id")
    assert "device_id" in create.kw_spans  # where the named argument is written (a mutant drops it)
    assert ("this", "seam", "access_codes", "delete") in chains  # ?-> as ->
    assert ("new", "SeamClient") in chains and ("self", "log") in chains
    assert ("Http", "withToken()", "post") in chains  # a call inside the chain keeps its ()
    assert (
        module.language == "php" and module.sdk == "python" and module.sdk_label == "PHP SDK (seamapi/seam)"
    )
    assert (
        module.imports["SeamClient"] == "seam/seamclient" and module.imports["Guzzle"] == "guzzlehttp/client"
    )
    assert module.imports["Http"] == "illuminate/support/facades/http"  # written in full, no `use`
    assert module.import_refs["SeamGateway"] == [ImportRef("app/Services/SeamGateway", "SeamGateway")]
    methods = {f.qualname: f for f in module.functions if f.name}
    ctor = methods["SeamGateway.__construct"]
    assert ctor.params == ["http", "seam"] and ctor.param_types == {
        "http": ("Guzzle",),
        "seam": ("SeamClient",),
    }
    assert [v.chain for v in ctor.bindings["this.http"]] == [("http",)]  # the promoted property
    assert [v.chain for v in ctor.bindings["this.seam"]] == [("seam",)]  # $seam ?? ...: the left side
    assert methods["SeamGateway.create"].exported and not methods["SeamGateway.client"].exported
    assert methods["SeamGateway.client"].returns[0].chain == ("this", "seam")


def test_arrays_with_string_keys_are_objects_and_spreads_are_kept():
    module = _parse(
        """
        function payload($r, $base) {
            $body = [
                'customer_key' => $r['property_id'],
                'reservations' => [['space_keys' => [$r['unit']]]],
                ...$base,
            ];
            $body['user_identities'] = [['user_identity_key' => $r['guest']]];
            $list = ['a', 'b'];
            $callable = [$this, 'push'];
            $url = "{$base}/customers/push_data?x=" . urlencode($r['id']);
            return $body;
        }
        """
    )
    fn = module.functions[0]
    [body, added] = fn.bindings["body"]
    assert set(body.keys) == {"customer_key", "reservations"} and len(body.spreads) == 1
    assert set(body.key_spans) == {"customer_key", "reservations"}
    assert body.keys["reservations"].items[0].keys["space_keys"].kind == "array"
    assert set(added.keys) == {"user_identities"}  # $body['k'] = ...
    assert [i.text for i in fn.bindings["list"][0].items] == ["a", "b"]
    assert fn.bindings["callable"][0].chain == ("this", "push")  # a callable naming a method
    url = fn.bindings["url"][0]
    assert url.kind == "template" and [p.text for p in url.items if p.kind == "str"] == [
        "/customers/push_data?x="
    ]


def test_code_that_never_runs_is_marked_dead():
    module = _parse(
        """
        class Sync
        {
            public function run($r)
            {
                if (false) {
                    $this->seam->customers->push_data(customer_key: $r);
                } elseif (true) {
                    $this->seam->access_codes->get(access_code_id: $r);
                } else {
                    $this->seam->customers->delete_data(reservation_keys: [$r]);
                }
                false && $this->seam->access_codes->list();
                return $r;
                $this->seam->access_codes->create(device_id: $r);
            }

            public function later($r)
            {
                throw new \\RuntimeException('not yet');
                $this->seam->access_codes->update(access_code_id: $r);
            }

            public function live($r)
            {
                true && $this->seam->access_codes->delete(access_code_id: $r);
            }
        }
        """
    )
    dead = {c.chain[-1]: c.dead for c in module.calls if len(c.chain) == 4}
    assert dead == {
        "push_data": True,
        "get": False,
        "delete_data": True,
        "list": True,
        "create": True,
        "update": True,
        "delete": False,
    }


def test_event_types_compared_matched_switched_or_listed_are_decisions():
    module = _parse(
        """
        function receive(array $event) {
            switch ($event['event_type']) {
                case 'access_code.set_on_device':
                    break;
            }
            $label = match ($event['event_type']) {
                'access_code.removed_from_device', 'lock.locked' => 'x',
                default => 'y',
            };
            if ($event['event_type'] === 'device.disconnected') { alert($event); }
            if (in_array($event['event_type'], ['lock.unlocked'], true)) { note($event); }
            if (str_starts_with($event['event_type'], 'access_code.failed')) { warn($event); }
        }
        """
    )
    found = {text for text, _line in module.functions[0].decision_strings}
    assert {
        "access_code.set_on_device",
        "access_code.removed_from_device",
        "lock.locked",
        "device.disconnected",
        "lock.unlocked",
        "access_code.failed",
    } <= found


def _raw(tmp_path, text: str) -> list[tuple[str, str, str | None, list[str]]]:
    (tmp_path / "app").mkdir(exist_ok=True)
    (tmp_path / "app/Client.php").write_text("<?php\n" + textwrap.dedent(text).lstrip())
    project = Project.load(tmp_path, ["app/Client.php"])
    out = []
    for request in RawHttp(project).requests():
        keys = project.object_keys(*request.body) if request.body else []
        out.append((request.route, request.client, request.http_method, sorted(keys)))
    return sorted(out)


@pytest.mark.parametrize(
    ("code", "client"),
    [
        (
            """
            use GuzzleHttp\\Client;

            class SeamApi
            {
                private Client $http;

                public function __construct()
                {
                    $this->http = new Client(['base_uri' => getenv('SEAM_ENDPOINT')]);
                }

                public function createCode(string $deviceId): array
                {
                    $json = ['device_id' => $deviceId, 'name' => 'x'];
                    $res = $this->http->post('/access_codes/create', ['json' => $json]);
                    return json_decode((string) $res->getBody(), true);
                }
            }
            """,
            "Guzzle.post",
        ),
        (
            """
            use GuzzleHttp\\Client;

            function create_code(Client $client, string $deviceId) {
                $base = getenv('SEAM_ENDPOINT');
                return $client->request('POST', $base . '/access_codes/create', [
                    'json' => ['device_id' => $deviceId, 'name' => 'x'],
                ]);
            }
            """,
            "Guzzle.request",
        ),
        (
            """
            namespace App\\Services;

            use Illuminate\\Support\\Facades\\Http;

            class Codes
            {
                public function create(string $deviceId)
                {
                    $url = "https://connect.getseam.com/access_codes/create";
                    return Http::withToken(env('SEAM_API_KEY'))->acceptJson()->post($url, [
                        'device_id' => $deviceId,
                        'name' => 'x',
                    ])->json();
                }
            }
            """,
            "Http.post",
        ),
    ],
)
def test_raw_http_clients(tmp_path, code, client):
    assert _raw(tmp_path, code) == [("/access_codes/create", client, "POST", ["device_id", "name"])]


def test_a_get_through_the_http_facade_sends_its_array_as_the_query(tmp_path):
    found = _raw(
        tmp_path,
        """
        function code($id) {
            return Http::get(getenv('SEAM_ENDPOINT') . '/access_codes/get', ['access_code_id' => $id]);
        }
        """,
    )
    assert found == [("/access_codes/get", "Http.get", "GET", [])]  # a query, no body


def test_an_http_call_to_another_service_or_a_string_is_not_seam(tmp_path):
    assert (
        _raw(
            tmp_path,
            """
            use GuzzleHttp\\Client;

            function notify($id) {
                $url = 'https://payments.example.com/access_codes/create';
                (new Client())->post($url, ['json' => ['id' => $id]]);
                $note = "Http::post('https://connect.getseam.com/access_codes/create')";
                $other = new Mailer();
                $other->post('/access_codes/create', ['json' => ['id' => $id]]);
            }
            """,
        )
        == []
    )


def test_php_files_are_read_by_the_php_parser():
    assert parser_for("app/Http/Controllers/X.php") is parse
    assert parse(b"<?php function broken(\n", "x.php").language == "php"  # broken code still outlines
    assert parse(b"<html><?= $x ?></html>", "view.php").calls == []


def test_a_file_beyond_the_parsers_bounds_is_unparsable_not_a_crash():
    from skillassay.languages import bounds

    with pytest.raises(bounds.Unparsable, match="nested too deep"):
        parse(b"<?php $x = " + b"[" * 30000 + b"]" * 30000 + b";", "deep.php")
    with pytest.raises(bounds.Unparsable, match="beyond the parsers' bound"):
        parse(b"/" * (bounds.MAX_SOURCE_BYTES + 1), "big.php")


def test_null_and_global_constants_are_values():
    m = _parse(
        """
        const BASE = 'https://connect.getseam.com';
        define('OTHER', 'https://api.example.com');
        if (false) { define('NEVER', 'x'); }
        $seam->access_codes->create($id, NULL, code: null);
        """
    )
    call = next(c for c in m.calls if c.chain[-1:] == ("create",))
    assert [a.kind for a in call.args] == ["ref", "null"] and call.kwargs["code"].kind == "null"
    assert [v.text for v in m.bindings["BASE"]] == ["https://connect.getseam.com"]
    assert [v.text for v in m.bindings["OTHER"]] == ["https://api.example.com"]
    assert "NEVER" not in m.bindings  # defined where code never runs
