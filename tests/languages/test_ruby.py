"""The Ruby outline (languages/ruby.py): Rails routes as config/routes.rb declares them, calls as chains with
keyword arguments, classes and their methods' visibility, code that never runs, and the raw HTTP clients the
rubric reads (Faraday, Net::HTTP, HTTParty)."""

from __future__ import annotations

import textwrap

import pytest

from skillassay.languages import parser_for
from skillassay.languages.base import Module
from skillassay.languages.routes import endpoint_routes, mounted_routes
from skillassay.languages.ruby import parse
from skillassay.seam.rubric.project import Project
from skillassay.seam.rubric.rawhttp import RawHttp


def _parse(text: str, path: str = "app/x.rb") -> Module:
    return parse(textwrap.dedent(text).lstrip().encode(), path)


ROUTES = """
    Rails.application.routes.draw do
      root to: "home#index"
      get "/health", to: "health#show"
      post "/webhooks/seam" => "seam_webhooks#receive"
      match "/ping", to: "health#ping", via: [:get, :post]
      namespace :api do
        namespace :v1 do
          resources :bookings, only: %i[create show update destroy] do
            member do
              post :extend
            end
            collection do
              get :today
            end
            resources :guests, only: [:index]
          end
        end
        resource :profile, only: [:show]
      end
      scope "/admin", module: :admin do
        resources :rooms, except: [:new, :edit, :index]
      end
    end
"""


def _routes(text: str = ROUTES) -> set[tuple[str, str, tuple[str, ...]]]:
    module = _parse(text, "config/routes.rb")
    return {(r.method, r.path, r.handlers[0].chain if r.handlers else ()) for r in module.routes}


def test_rails_routes_resources_verbs_namespaces_and_scopes():
    routes = _routes()
    assert ("GET", "/", ("HomeController", "index")) in routes
    assert ("GET", "/health", ("HealthController", "show")) in routes
    assert ("POST", "/webhooks/seam", ("SeamWebhooksController", "receive")) in routes
    assert {
        ("GET", "/ping", ("HealthController", "ping")),
        ("POST", "/ping", ("HealthController", "ping")),
    } <= routes
    bookings = "Api::V1::BookingsController"
    assert {
        ("POST", "/api/v1/bookings", (bookings, "create")),
        ("GET", "/api/v1/bookings/:id", (bookings, "show")),
        ("PATCH", "/api/v1/bookings/:id", (bookings, "update")),
        ("PUT", "/api/v1/bookings/:id", (bookings, "update")),
        ("DELETE", "/api/v1/bookings/:id", (bookings, "destroy")),
        ("POST", "/api/v1/bookings/:id/extend", (bookings, "extend")),
        ("GET", "/api/v1/bookings/today", (bookings, "today")),
        ("GET", "/api/v1/bookings/:booking_id/guests", ("Api::V1::GuestsController", "index")),
        ("GET", "/api/profile", ("Api::ProfilesController", "show")),
        ("POST", "/admin/rooms", ("Admin::RoomsController", "create")),
        ("DELETE", "/admin/rooms/:id", ("Admin::RoomsController", "destroy")),
    } <= routes
    assert not any(p == "/api/v1/bookings" and m == "GET" for m, p, _h in routes)  # only: no index
    assert not any(p.startswith("/admin/rooms") and m == "GET" and p.endswith("/new") for m, p, _h in routes)


def test_a_route_commented_out_or_under_a_condition_is_not_declared():
    routes = _routes(
        """
        Rails.application.routes.draw do
          # post "/webhooks/seam", to: "seam_webhooks#receive"
          if false
            post "/webhooks/other", to: "other#receive"
          end
          get "/health", to: "health#show"
        end
        """
    )
    assert {p for _m, p, _h in routes} == {"/health"}


def test_a_route_handler_is_the_controller_action_in_its_autoloaded_file(tmp_path):
    files = {
        "config/routes.rb": ROUTES,
        "app/controllers/api/v1/bookings_controller.rb": """
            module Api
              module V1
                class BookingsController < ApplicationController
                  def create
                    BookingService.create_booking(params)
                  end
                end
              end
            end
        """,
        "app/services/booking_service.rb": """
            class BookingService
              def self.create_booking(params)
                seam.access_codes.create(device_id: params[:device_id])
              end
            end
        """,
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text).lstrip())
    project = Project.load(tmp_path, sorted(files))
    [route] = endpoint_routes(mounted_routes(project.modules.values()), "POST", "/api/v1/bookings")
    from skillassay.seam.rubric.checks import handler_refs

    [handler] = handler_refs(project, route.module, route.route.handlers)
    assert project.function(handler).qualname == "Api.V1.BookingsController.create"
    reach = project.reach([handler])
    names = {project.function(r).qualname for r in reach if project.function(r) is not None}
    assert "BookingService.create_booking" in names


def test_calls_are_chains_with_keyword_arguments_and_implicit_self():
    module = _parse(
        """
        class SeamGateway
          def initialize
            @seam = Seam.new(api_key: ENV["SEAM_API_KEY"])
          end

          def create(booking)
            client.access_codes.create(device_id: booking.device_id, **extra(booking))
            @seam.access_codes.delete(access_code_id: booking.code_id)
            Net::HTTP.get(URI("https://example.com"))
          end

          private

          def client
            @seam
          end
        end
        """
    )
    chains = {c.chain: c for c in module.calls}
    create = chains[("self", "client", "access_codes", "create")]
    assert set(create.kwargs) == {"device_id"} and len(create.kw_spreads) == 1
    assert ("self", "seam", "access_codes", "delete") in chains
    assert ("new", "Seam") in chains and ("Net", "HTTP", "get") in chains
    assert ("self", "client") in chains  # a method called without receiver or parentheses
    assert module.language == "ruby" and module.sdk == "python" and module.sdk_label == "Ruby SDK (gem seam)"
    assert "seam" in module.import_sources  # the gem's constant says the SDK is used
    methods = {f.qualname: f for f in module.functions if f.name}
    assert methods["SeamGateway.create"].exported and not methods["SeamGateway.client"].exported
    assert methods["SeamGateway.client"].returns[0].chain == ("self", "seam")  # its last expression


def test_local_variables_are_not_calls():
    module = _parse(
        """
        def handle(event)
          kind = event["event_type"]
          kind
        end
        """
    )
    assert [c.chain for c in module.calls] == []
    assert module.functions[0].params == ["event"]


def test_code_that_never_runs_is_marked_dead():
    module = _parse(
        """
        class Sync
          def run(r)
            seam.customers.push_data(customer_key: r) if false
            unless true
              seam.customers.delete_data(reservation_keys: [r])
            end
            return r
            seam.access_codes.create(device_id: r)
          end

          def later(r)
            raise "not yet"
            seam.access_codes.update(access_code_id: r)
          end

          def live(r)
            seam.access_codes.delete(access_code_id: r) if true && r
          end
        end
        """
    )
    dead = {c.chain[-1]: c.dead for c in module.calls if len(c.chain) == 4}
    assert dead == {"push_data": True, "delete_data": True, "create": True, "update": True, "delete": False}


def test_event_types_compared_matched_or_listed_are_decisions():
    module = _parse(
        """
        def receive(event)
          case event["event_type"]
          when "access_code.set_on_device", "access_code.removed_from_device" then log(event)
          end
          alert(event) if event["event_type"] == "device.disconnected"
          ignore(event) unless %w[lock.locked lock.unlocked].include?(event["event_type"])
          warn(event) if event["event_type"].start_with?("access_code.failed")
        end
        """
    )
    found = {text for text, _line in module.functions[0].decision_strings}
    assert {
        "access_code.set_on_device",
        "access_code.removed_from_device",
        "device.disconnected",
        "lock.locked",
        "lock.unlocked",
        "access_code.failed",
    } <= found


def _raw(tmp_path, text: str) -> list[tuple[str, str, list[str]]]:
    (tmp_path / "client.rb").write_text(textwrap.dedent(text).lstrip())
    project = Project.load(tmp_path, ["client.rb"])
    out = []
    for request in RawHttp(project).requests():
        keys = project.object_keys(*request.body) if request.body else []
        out.append((request.route, request.client, keys))
    return sorted(out)


@pytest.mark.parametrize(
    ("code", "client"),
    [
        (
            """
            class Seam
              def self.create_code(device_id)
                connection.post("/access_codes/create", { device_id: device_id, name: "x" }.to_json)
              end

              def self.connection
                Faraday.new(url: ENV.fetch("SEAM_ENDPOINT"))
              end
            end
            """,
            "faraday.post",
        ),
        (
            """
            def create_code(device_id)
              uri = URI("#{ENV['SEAM_ENDPOINT']}/access_codes/create")
              body = JSON.generate({ device_id: device_id, name: "x" })
              Net::HTTP.post(uri, body, "Content-Type" => "application/json")
            end
            """,
            "Net::HTTP.post",
        ),
        (
            """
            def create_code(device_id)
              url = "https://connect.getseam.com/access_codes/create"
              HTTParty.post(url, body: { device_id: device_id, name: "x" }.to_json)
            end
            """,
            "HTTParty.post",
        ),
    ],
)
def test_raw_http_clients(tmp_path, code, client):
    assert _raw(tmp_path, code) == [("/access_codes/create", client, ["device_id", "name"])]


def test_an_http_call_to_another_service_or_a_string_is_not_seam(tmp_path):
    assert (
        _raw(
            tmp_path,
            """
            def notify(id)
              Faraday.post("https://payments.example.com/access_codes/create", { id: id }.to_json)
              note = "Faraday.post('https://connect.getseam.com/access_codes/create')"
            end
            """,
        )
        == []
    )


def test_ruby_files_are_read_by_the_ruby_parser():
    parser = parser_for("app/models/booking.rb")
    assert parser is parse
    assert parse(b"def broken(\n", "x.rb").language == "ruby"  # broken code still outlines


def test_a_file_beyond_the_parsers_bounds_is_unparsable_not_a_crash():
    from skillassay.languages import bounds

    with pytest.raises(bounds.Unparsable, match="nested too deep"):
        parse(b"x = " + b"[" * 30000 + b"]" * 30000, "deep.rb")
    with pytest.raises(bounds.Unparsable, match="beyond the parsers' bound"):
        parse(b"#" * (bounds.MAX_SOURCE_BYTES + 1), "big.rb")
