"""Guzzle's ``base_uri``: a request's URL is resolved against its client's base as RFC 3986 (and Guzzle) do,
and the agent plays the grader with it: a client of another service posting a Seam route's path, a base with
a path a relative URL joins onto (or, without the trailing ``/``, replaces), a leading ``/`` dropping the
base's path, an absolute Seam URL on another service's client, two clients side by side, a config array held
in a variable, a global constant (``const``, ``define``), a client handed to a constructor, one made lazily
with ``??=``, a base read from the environment (unknown: the path alone decides, as before). And Laravel's
``Http::baseUrl``, joined its own way (one ``/`` between), in a chain, side by side, on a pending request a
variable or a property holds."""

from __future__ import annotations

import textwrap

import pytest
from rubric_helpers import ENDPOINTS
from test_rubric_php import GOLDEN, KEY, PRISTINE, php_syntax  # noqa: F401 - the fixture

from skillassay.languages import php
from skillassay.seam.rubric.project import Project
from skillassay.seam.rubric.rawhttp import resolve_reference

SEAM = "https://connect.getseam.com"
OTHER = "https://api.example.com"


def _service(body: str, members: str = "") -> str:
    template = textwrap.dedent(
        """\
        <?php

        namespace App\\Services;

        use GuzzleHttp\\Client;

        class Bookings
        {
        MEMBERS
            public function sync(array $r): void
            {
        BODY
            }
        }
        """
    )
    members = textwrap.indent(textwrap.dedent(members), "    ")
    return template.replace("MEMBERS", members).replace(
        "BODY", textwrap.indent(textwrap.dedent(body), "        ")
    )


def _routes(*files: tuple[str, str]) -> list[str]:
    """The Seam routes the rubric sees requested, by method name."""
    modules = [php.parse(text.encode(), path) for path, text in files]
    return sorted(c.name for c in Project(modules).sdk_calls)


def _one(body: str, members: str = "") -> list[str]:
    return _routes(("app/Services/Bookings.php", _service(body, members)))


POST = "['json' => ['customer_key' => $r['p']]]"


def test_another_services_base_makes_no_seam_call():
    body = f"""
        $client = new Client(['base_uri' => '{OTHER}', 'timeout' => 5]);
        $client->post('/customers/push_data', {POST});
    """
    assert _one(body) == []
    assert _one(body.replace(OTHER, SEAM)) == ["customers.push_data"]


def test_an_absolute_seam_url_wins_over_the_base():
    body = f"""
        $client = new Client(['base_uri' => '{OTHER}/v2/']);
        $client->request('POST', '{SEAM}/customers/push_data', {POST});
    """
    assert _one(body) == ["customers.push_data"]


@pytest.mark.parametrize(
    ("base", "path", "route"),
    [
        (f"{SEAM}/customers/", "push_data", "customers.push_data"),  # relative: after the base path's last /
        (f"{SEAM}/customers", "push_data", None),  # no trailing /: `customers` is replaced -> /push_data
        (f"{SEAM}/nested/", "/customers/push_data", "customers.push_data"),  # a leading / replaces the path
        (f"{OTHER}/customers/", "push_data", None),
        (SEAM, "customers/push_data", "customers.push_data"),  # a base without a path: /customers/push_data
        # dot segments removed: /customers/delete_data, not a path ending in push_data/../delete_data
        (f"{SEAM}/customers/push_data/", "../delete_data", "customers.delete_data"),
        (f"{SEAM}/customers/push_data", "./delete_data", "customers.delete_data"),
    ],
)
def test_the_join_is_rfc_3986s(base, path, route):
    members = f"""
        private const BASE = '{base}';
        private Client $http;

        public function __construct()
        {{
            $this->http = new Client(['base_uri' => self::BASE]);
        }}
    """
    body = f"$this->http->post('{path}', {POST});"
    assert _one(body, members) == ([route] if route else [])


def test_two_clients_side_by_side():
    members = f"""
        private Client $billing;
        private Client $doors;

        public function __construct()
        {{
            $this->billing = new Client(['base_uri' => '{OTHER}']);
            $this->doors = new Client(['base_uri' => '{SEAM}']);
        }}
    """
    body = f"""
        $this->billing->post('/customers/delete_data', {POST});
        $this->doors->post('/customers/push_data', {POST});
    """
    assert _one(body, members) == ["customers.push_data"]


def test_a_config_array_in_a_variable():
    body = f"""
        $config = ['timeout' => 3, 'base_uri' => '{OTHER}/api/'];
        $http = new Client($config);
        $http->post('customers/push_data', {POST});
    """
    assert _one(body) == []


@pytest.mark.parametrize(
    "declared", ["const PAYMENTS_BASE = 'URL';", "define('PAYMENTS_BASE', 'URL');"], ids=["const", "define"]
)
def test_a_global_constant_as_the_base(declared):
    body = f"""
        $client = new Client(['base_uri' => PAYMENTS_BASE]);
        $client->post('customers/push_data', {POST});
    """
    service = _service(body).replace("class Bookings", declared + "\n\nclass Bookings")
    assert _routes(("app/Services/Bookings.php", service.replace("URL", OTHER))) == []
    assert _routes(("app/Services/Bookings.php", service.replace("URL", SEAM))) == ["customers.push_data"]


def test_a_client_handed_to_the_constructor():
    service = _service(
        f"$this->http->post('/customers/push_data', {POST});",
        "public function __construct(private Client $http) {}",
    )
    caller = f"""<?php
        namespace App\\Jobs;

        use App\\Services\\Bookings;
        use GuzzleHttp\\Client;

        function run(array $r): void
        {{
            (new Bookings(new Client(['base_uri' => '{OTHER}'])))->sync($r);
        }}
    """
    files = [("app/Services/Bookings.php", service), ("app/Jobs/run.php", caller)]
    assert _routes(*files) == []
    assert _routes(files[0], (files[1][0], caller.replace(OTHER, SEAM))) == ["customers.push_data"]
    # made by the container (no construction in the app): the path alone, as before
    assert _routes(files[0]) == ["customers.push_data"]


def test_a_lazily_made_client_of_another_service():
    members = f"""
        private ?Client $client = null;

        private function client(): Client
        {{
            return $this->client ??= new Client(['base_uri' => '{OTHER}', 'http_errors' => false]);
        }}
    """
    body = f"$this->client()->post('/customers/push_data', {POST});"
    assert _one(body, members) == []
    assert _one(body, members.replace(OTHER, SEAM)) == ["customers.push_data"]


def test_a_static_lazily_made_client():
    members = f"""
        private static ?Client $shared = null;

        private static function http(): Client
        {{
            return self::$shared ??= new Client(['base_uri' => '{OTHER}']);
        }}
    """
    body = f"self::http()->post('/customers/push_data', {POST});"
    assert _one(body, members) == []
    assert _one(body, members.replace(OTHER, SEAM)) == ["customers.push_data"]


def test_a_base_from_the_environment_leaves_the_path_to_decide():
    body = f"""
        $client = new Client(['base_uri' => getenv('SEAM_ENDPOINT')]);
        $client->post('customers/push_data', {POST});
    """
    assert _one(body) == ["customers.push_data"]


def test_the_golden_with_another_services_base_loses_its_calls(make_app):
    service = GOLDEN["app/Services/ReservationService.php"]
    assert "$this->seam->customers" in service  # the SDK golden; here its calls go through Guzzle instead
    raw = service.replace("use Seam\\SeamClient;", "use GuzzleHttp\\Client;")
    assert "use GuzzleHttp\\Client;" in raw
    raw = raw.replace(
        "public function __construct(private SeamClient $seam) {}",
        "private Client $seam;\n\n        public function __construct()\n        {\n"
        f"            $this->seam = new Client(['base_uri' => '{OTHER}/']);\n        }}",
    )
    raw = raw.replace(
        "$this->seam->customers->delete_data(customer_keys: ['p1'], reservation_keys: [$rid]);",
        "$this->seam->post('customers/delete_data', ['json' => ['reservation_keys' => [$rid]]]);",
    )
    assert "$this->seam->post('customers/delete_data'" in raw
    result = make_app(PRISTINE, {**GOLDEN, "app/Services/ReservationService.php": raw}).grade(
        KEY, endpoints=ENDPOINTS
    )
    cancel = next(e for e in result.categories["lifecycle_completeness"].evidence if "cancel" in e.message)
    assert not cancel.ok, cancel.message
    seam = raw.replace(f"'{OTHER}/'", f"'{SEAM}'")
    result = make_app(PRISTINE, {**GOLDEN, "app/Services/ReservationService.php": seam}).grade(
        KEY, endpoints=ENDPOINTS
    )
    cancel = next(e for e in result.categories["lifecycle_completeness"].evidence if "cancel" in e.message)
    assert cancel.ok, cancel.message


def test_resolve_reference_keeps_unknown_parts():
    hole = ("hole", None)
    # an unknown base: the path is joined on (a leading / or not)
    assert resolve_reference([hole], [("text", "access_codes/create")]) == [
        hole,
        ("text", "/"),
        ("text", "access_codes/create"),
    ]
    assert resolve_reference([hole, ("text", "/v1/x")], [("text", "/a")]) == [hole, ("text", "/a")]
    # a URL starting with something unknown may be absolute: itself
    assert resolve_reference([("text", OTHER)], [hole, ("text", "/a")]) == [hole, ("text", "/a")]
    # a network-path reference takes the base's scheme
    assert resolve_reference([("text", "https://"), hole], [("text", "//h/a"), hole]) == [
        ("text", "https:"),
        ("text", "//h/a"),
        hole,
    ]


# ----------------------------------------------------------------------------- Laravel's Http::baseUrl
LARAVEL_BODY = "['customer_key' => 'p']"


def _laravel(body: str, members: str = "") -> list[str]:
    service = _service(body, members).replace(
        "use GuzzleHttp\\Client;", "use Illuminate\\Support\\Facades\\Http;"
    )
    return _routes(("app/Services/Bookings.php", service))


def test_laravels_base_url_of_another_service_makes_no_seam_call():
    body = f"Http::baseUrl('{OTHER}')->withToken($r['t'])->post('/customers/push_data', {LARAVEL_BODY});"
    assert _laravel(body) == []
    assert _laravel(body.replace(OTHER, SEAM)) == ["customers.push_data"]
    # Laravel 8 prefixes even an absolute URL with the base: the request goes to the base's host
    absolute = body.replace("'/customers/push_data'", f"'{SEAM}/customers/push_data'")
    assert _laravel(absolute) == []
    # an unknown base with an absolute Seam URL: the path decides
    assert _laravel(absolute.replace(f"'{OTHER}'", "config('services.doors.url')")) == ["customers.push_data"]


def test_laravel_joins_with_one_slash_not_rfc_3986():
    # baseUrl('.../customers') + 'push_data' is .../customers/push_data for Laravel (RFC 3986: .../push_data)
    body = (
        f"Http::withToken($r['t'])->baseUrl('{SEAM}/customers')->post('push_data', ['customer_key' => 'p']);"
    )
    assert _laravel(body) == ["customers.push_data"]


def test_laravel_base_urls_side_by_side_and_held():
    body = f"""
        Http::baseUrl('{OTHER}')->post('/customers/delete_data', ['reservation_keys' => ['r']]);
        Http::baseUrl('{SEAM}/')->post('/customers/push_data', ['customer_key' => 'p']);
        $api = Http::baseUrl('{OTHER}')->acceptJson();
        $api->post('/access_codes/create', ['device_id' => 'd']);
    """
    assert _laravel(body) == ["customers.push_data"]
    members = f"""
        private $api;

        public function __construct()
        {{
            $this->api = Http::baseUrl('{OTHER}/v1');
        }}
    """
    held = "$this->api->post('access_codes/create', ['device_id' => 'd']);"
    assert _laravel(held, members) == []
    assert _laravel(held, members.replace(f"{OTHER}/v1", SEAM)) == ["access_codes.create"]
    assert _laravel(body.replace(OTHER, SEAM)) == [
        "access_codes.create",
        "customers.delete_data",
        "customers.push_data",
    ]
