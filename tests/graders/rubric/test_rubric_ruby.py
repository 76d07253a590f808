"""Every check on small Rails apps, written in styles the shipped Rails fixture does not use: the gem ``seam``
(``seam.customers.push_data(customer_key: ...)``) on an instance variable, ``resources`` under ``scope``, a
hash-rocket route, a ``%w[...]`` dispatch; and the agent playing the grader: calls that never run, calls in
comments and strings, a camelCase method, a method nothing calls."""

from __future__ import annotations

import dataclasses
import json

from rubric_helpers import ENDPOINTS, RA_KEY_PY, scores

PRISTINE = {
    "Gemfile": 'source "https://rubygems.org"\n\ngem "rails", "~> 6.1.7"\n',
    "config/routes.rb": """
        Rails.application.routes.draw do
          scope "/api" do
            resources :reservations, except: [:index, :new, :edit]
          end
          post "/webhooks/payments" => "payments#receive"
        end
    """,
    "app/controllers/reservations_controller.rb": """
        class ReservationsController < ApplicationController
          def create
            render json: service.create_reservation(params.to_unsafe_h)
          end

          def update
            render json: service.update_reservation(params[:id], params.to_unsafe_h)
          end

          def destroy
            render json: service.cancel_reservation(params[:id])
          end

          private

          def service
            @service ||= ReservationService.new
          end
        end
    """,
    "app/controllers/payments_controller.rb": """
        class PaymentsController < ApplicationController
          def receive
            head :no_content
          end
        end
    """,
    "app/services/reservation_service.rb": """
        class ReservationService
          def create_reservation(data)
            { id: "r1" }.merge(data)
          end

          def update_reservation(rid, changes)
            { id: rid }.merge(changes)
          end

          def cancel_reservation(rid)
            { id: rid, status: "cancelled" }
          end
        end
    """,
}

SERVICE_GOLDEN = """
    require "seam"

    class ReservationService
      def initialize(seam: Seam.new(api_key: ENV.fetch("SEAM_API_KEY")))
        @seam = seam
      end

      def create_reservation(data)
        r = { id: "r1" }.merge(data)
        push(r)
        r
      end

      def update_reservation(rid, changes)
        r = { id: rid }.merge(changes)
        payload = { customer_key: r["property_id"] }
        payload[:user_identities] = [{ user_identity_key: r["guest_id"] }]
        payload[:reservations] = [{ reservation_key: rid, space_keys: [r["unit_id"]] }]
        @seam.customers.push_data(**payload)
        r
      end

      def cancel_reservation(rid)
        @seam.customers.delete_data(customer_keys: ["p1"], reservation_keys: [rid])
        { id: rid, status: "cancelled" }
      end

      private

      def push(r)
        @seam.customers.push_data(
          customer_key: r["property_id"],
          user_identities: [{ user_identity_key: r["guest_id"] }],
          reservations: [{ reservation_key: r["id"], space_keys: [r["unit_id"]] }]
        )
      end
    end
"""

ROUTES_WITH_WEBHOOK = PRISTINE["config/routes.rb"].replace(
    'post "/webhooks/payments" => "payments#receive"',
    'post "/webhooks/payments" => "payments#receive"\n'
    '          post "webhooks/seam", to: "seam_webhooks#receive"',
)

WEBHOOK = """
    class SeamWebhooksController < ApplicationController
      HANDLED = %w[access_code.set_on_device device.disconnected].freeze

      def receive
        event = JSON.parse(request.raw_post)
        Rails.logger.info("seam event #{event['event_type']}") if HANDLED.include?(event["event_type"])
        head :no_content
      end
    end
"""

KEY = dataclasses.replace(
    RA_KEY_PY,
    expected_files_modified=["app/services/reservation_service.rb"],
    expected_new_files_allowed=["app/controllers/seam_*.rb"],
)
GOLDEN = {
    "app/services/reservation_service.rb": SERVICE_GOLDEN,
    "config/routes.rb": ROUTES_WITH_WEBHOOK,
    "app/controllers/seam_webhooks_controller.rb": WEBHOOK,
}


def _grade(make_app, changes: dict[str, str]):
    return make_app(PRISTINE, {**GOLDEN, **changes}).grade(KEY, endpoints=ENDPOINTS)


def test_golden_scores_100(make_app):
    result = _grade(make_app, {})
    assert result.total == 100.0, json.dumps(result.to_json(), indent=1)
    lifecycle = " ".join(e.message for e in result.categories["lifecycle_completeness"].evidence)
    assert "ReservationsController.create -> ReservationService.create_reservation" in lifecycle
    hook = result.categories["webhook_setup"].evidence[0].message
    assert "POST /webhooks/seam" in hook and "device.disconnected" in hook


def test_a_call_behind_if_false_or_after_return_never_runs(make_app):
    service = SERVICE_GOLDEN.replace("        push(r)\n", "        push(r) if false\n").replace(
        "        @seam.customers.delete_data(",
        "        return { id: rid }\n        @seam.customers.delete_data(",
    )
    s = scores(_grade(make_app, {"app/services/reservation_service.rb": service}))
    assert s["lifecycle_completeness"] == 0.33  # update alone: create's call is dead, cancel's after return
    assert s["integration_placement"] == 0.33


def test_calls_in_comments_and_strings_are_not_calls(make_app):
    service = SERVICE_GOLDEN.replace(
        '        @seam.customers.delete_data(customer_keys: ["p1"], reservation_keys: [rid])\n',
        '        # @seam.customers.delete_data(customer_keys: ["p1"], reservation_keys: [rid])\n'
        '        note = "@seam.customers.delete_data(reservation_keys: [rid])"\n',
    )
    result = _grade(make_app, {"app/services/reservation_service.rb": service})
    cancel = next(e for e in result.categories["lifecycle_completeness"].evidence if "cancel" in e.message)
    assert not cancel.ok, cancel.message


def test_a_method_nothing_calls_is_dead_code(make_app):
    service = SERVICE_GOLDEN.replace("        push(r)\n", "").replace("def push(r)", "def push_later(r)")
    s = scores(_grade(make_app, {"app/services/reservation_service.rb": service}))
    assert s["lifecycle_completeness"] == 0.66  # create no longer reaches push_data


def test_camel_case_method_in_ruby_fails_correctness(make_app):
    service = SERVICE_GOLDEN.replace("@seam.customers.delete_data", "@seam.customers.deleteData")
    result = _grade(make_app, {"app/services/reservation_service.rb": service})
    problems = [e.message for e in result.categories["api_correctness"].evidence if not e.ok]
    assert any(
        "Ruby SDK (gem seam) has no `customers.deleteData`; its method is `customers.delete_data`" in p
        for p in problems
    ), problems


def test_a_route_commented_out_is_no_route(make_app):
    routes = ROUTES_WITH_WEBHOOK.replace('post "webhooks/seam"', '# post "webhooks/seam"')
    s = scores(_grade(make_app, {"config/routes.rb": routes}))
    assert s["webhook_setup"] == 0.0


def test_wrong_path_raw_http_is_seen(make_app):
    service = """
        require "net/http"
        require "json"

        class ReservationService
          BASE = ENV.fetch("SEAM_ENDPOINT", "https://connect.getseam.com")

          def create_reservation(data)
            uri = URI("#{BASE}/access_codes/create")
            body = { device_id: data["device_id"] }
            Net::HTTP.post(uri, body.to_json, "Content-Type" => "application/json")
            data
          end

          def update_reservation(rid, changes)
            changes
          end

          def cancel_reservation(rid)
            { id: rid }
          end
        end
    """
    result = _grade(make_app, {"app/services/reservation_service.rb": service})
    path = result.categories["api_path_selection"]
    assert path.score == 0.0
    assert any("access_codes.create" in e.message for e in path.evidence), path.evidence
