"""The hybrid rubric's labelled Ruby app: the reservation service of ``hybrid_apps`` written again in Ruby (a
WEBrick server, a small Seam client of the app's own over Net::HTTP, the gem's surface:
``Seam.new(api_key:)``, ``seam.access_grants.create(...)``), its Seam calls in Ruby's own styles the static
reading misjudges or reads right, with each case's truth per rubric category. Shared by
tests/graders/sandbox/test_hybrid_rubric.py and benchmarks/hybrid.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from textwrap import dedent
from typing import Any

from conftest import make_fixture, tiny_config
from hybrid_apps import KEY, RUBRIC, Case, _truth, write

from skillassay.kinds.base import GradeOutcome, GradeRequest
from skillassay.seam.eval import SeamEval
from skillassay.seam.kind import SeamKind

SERVER = dedent("""
    # A WEBrick reservation app: POST creates, PUT updates, DELETE cancels /api/reservations/:id
    require "json"
    require "webrick"
    require_relative "bookings"

    BOOKINGS = Bookings.new

    class ReservationsServlet < WEBrick::HTTPServlet::AbstractServlet
      def do_GET(_req, res)
        reply(res, 200, { ok: true })
      end

      def do_POST(req, res)
        reply(res, 201, { reservation: BOOKINGS.create_reservation(body_of(req)) })
      end

      def do_PUT(req, res)
        reply(res, 200, { reservation: BOOKINGS.update_reservation(req.path.split("/").last, body_of(req)) })
      end

      def do_DELETE(req, res)
        reply(res, 200, { reservation: BOOKINGS.cancel_reservation(req.path.split("/").last) })
      end

      private

      def body_of(req)
        req.body.to_s.empty? ? {} : JSON.parse(req.body)
      end

      def reply(res, status, body)
        res.status = status
        res["content-type"] = "application/json"
        res.body = JSON.generate(body)
      end
    end

    server = WEBrick::HTTPServer.new(
      BindAddress: "127.0.0.1", Port: Integer(ENV.fetch("PORT")),
      Logger: WEBrick::Log.new(File::NULL), AccessLog: []
    )
    server.mount("/", ReservationsServlet)
    trap("TERM") { server.shutdown }
    server.start
""")
# the app's own client (the gem is not installed): any method of a namespace is one POST
SEAMLITE = dedent("""
    require "json"
    require "net/http"
    require "uri"

    class Seam
      class Namespace
        def initialize(client, name)
          @client = client
          @name = name
        end

        def method_missing(method, **params)
          @client.post("/#{@name}/#{method}", params)
        end

        def respond_to_missing?(*)
          true
        end
      end

      attr_reader :access_grants

      def initialize(api_key:)
        @api_key = api_key
        @endpoint = ENV.fetch("SEAM_ENDPOINT", "https://connect.getseam.com").chomp("/")
        @access_grants = Namespace.new(self, "access_grants")
      end

      def post(route, params)
        headers = { "authorization" => "Bearer #{@api_key}", "content-type" => "application/json" }
        res = Net::HTTP.post(URI(@endpoint + route), JSON.generate(params), headers)
        res.body.to_s.empty? ? {} : JSON.parse(res.body)
      end
    end
""")
PRISTINE_BOOKINGS = dedent("""
    require "securerandom"

    class Bookings
      def initialize
        @reservations = {}
      end

      def create_reservation(body)
        rid = SecureRandom.hex(4)
        @reservations[rid] = body.merge("id" => rid)
      end

      def update_reservation(rid, body)
        @reservations.fetch(rid).merge!(body)
      end

      def cancel_reservation(rid)
        @reservations.delete(rid)
      end
    end
""")
_GRANT = (
    'user_identity: { full_name: body["guest"] }, device_ids: [DEVICE], '
    'requested_access_methods: [{ mode: "code" }], starts_at: body["checkIn"], ends_at: body["checkOut"]'
)
CREATE = {
    "direct": f"got = @seam.access_grants.create({_GRANT})",
    # the method's name read from the environment at run time (unset: "create"): sent, and the static reading
    # cannot tell which method it is
    "runtime": f'got = @seam.access_grants.public_send(ENV.fetch("SEAM_GRANT_OP", "create"), {_GRANT})',
}
UPDATE = {
    "direct": '@seam.access_grants.update(access_grant_id: res["grant_id"], ends_at: res["checkOut"])',
    # a lambda bound to a local and never called: never runs (the static reading knows)
    "uncalled": (
        'push = -> { @seam.access_grants.update(access_grant_id: res["grant_id"], ends_at: res["checkOut"]) }'
    ),
    # a block handed to a method of the reservation's own that only keeps it: never runs, and the static
    # reading takes a block passed to a call as run
    "kept": (
        'res.define_singleton_method(:sync) { @seam.access_grants.update(access_grant_id: res["grant_id"], '
        'ends_at: res["checkOut"]) }'
    ),
}
CANCEL = {
    "direct": '@seam.access_grants.delete(access_grant_id: res["grant_id"])',
    # a proc pushed onto a queue nothing drains: never runs, and the static reading assumes it does
    "queued": '@later << proc { @seam.access_grants.delete(access_grant_id: res["grant_id"]) }',
}
BOOKINGS_TEMPLATE = """
require "securerandom"
require_relative "seamlite"

DEVICE = ENV.fetch("SEAM_DEVICE_ID", "")

class Bookings
  def initialize
    @seam = Seam.new(api_key: ENV.fetch("SEAM_API_KEY", ""))
    @reservations = {}
    @later = [] # jobs for later: nothing ever takes them off
  end

  def create_reservation(body)
    rid = SecureRandom.hex(4)
    @CREATE@
    @reservations[rid] = body.merge("id" => rid, "grant_id" => got["access_grant"]["access_grant_id"])
  end

  def update_reservation(rid, body)
    res = @reservations.fetch(rid)
    res.merge!(body)
    @UPDATE@
    res
  end

  def cancel_reservation(rid)
    res = @reservations.delete(rid)
    @CANCEL@
    res
  end
end
"""
GEMFILE = 'source "https://rubygems.org"\n\ngem "webrick", "~> 1.8"\n'
# what `bundle lock` writes for it against the installed webrick: Bundler resolves it without RubyGems
GEMFILE_LOCK = """\
GEM
  remote: https://rubygems.org/
  specs:
    webrick (1.8.1)

PLATFORMS
  ruby

DEPENDENCIES
  webrick (~> 1.8)

BUNDLED WITH
   2.3.15
"""
DOCKERFILE = (
    "FROM ruby:3.1-slim\nWORKDIR /app\nCOPY Gemfile Gemfile.lock ./\nRUN bundle install\nCOPY . .\n"
    'EXPOSE 8000\nCMD ["bundle", "exec", "ruby", "server.rb"]\n'
)


def bookings(create: str, update: str, cancel: str) -> str:
    """The modified app's bookings.rb, each phase's Seam call written in the style named."""
    return (
        BOOKINGS_TEMPLATE.replace("@CREATE@", CREATE[create])
        .replace("@UPDATE@", UPDATE[update])
        .replace("@CANCEL@", CANCEL[cancel])
    )


# the app graded once: static misses create, credits the update that never runs, agrees on cancel
STYLES = ("runtime", "kept", "direct")
CASES = {
    # styles the static reading still misjudges: the trace settles them
    "rb-runtime-name-create": Case(("runtime", "direct", "direct"), _truth(True, True, True), True),
    "rb-kept-block-update": Case(("direct", "kept", "direct"), _truth(True, False, True), True),
    "rb-runtime-create-kept-update": Case(STYLES, _truth(True, False, True), True),
    "rb-queued-cancel": Case(("direct", "direct", "queued"), _truth(True, True, False), True),
    # a style the static reading reads right: both layers agree
    "rb-uncalled-lambda-update": Case(("direct", "uncalled", "direct"), _truth(True, False, True), False),
}


def _files(bookings_rb: str) -> dict[str, str]:
    return {
        "server.rb": SERVER,
        "seamlite.rb": SEAMLITE,
        "bookings.rb": bookings_rb,
        "Gemfile": GEMFILE,
        "Gemfile.lock": GEMFILE_LOCK,
    }


def definition(root: Path, styles: tuple[str, str, str] = STYLES) -> tuple[SeamEval, Path]:
    """The eval (pristine Ruby app, the Python app's answer key and rubric) and the modified app."""
    d = make_fixture(root, tiny_config(), DOCKERFILE)
    for stale in d.app_dir.iterdir():
        stale.unlink()
    write(d.app_dir, _files(PRISTINE_BOOKINGS))
    modified = write(root / "modified", _files(bookings(*styles)))
    key = dataclasses.replace(KEY, expected_files_modified=["bookings.rb"])
    update = {
        "answer_key": key,
        "rubric": RUBRIC,
        "api_path": "access_grants",
        "stack": "ruby",
        "language": "ruby",
    }
    return d.model_copy(update=update), modified


def grade(
    root: Path, emulator: Any, layers: str = "both", styles: tuple[str, str, str] = STYLES
) -> GradeOutcome:
    """The Ruby app in ``styles`` graded by the Seam kind on ``layers`` (the sandbox's waits kept short)."""
    d, modified = definition(root, styles)
    run_dir = root / "run"
    run_dir.mkdir()
    request = GradeRequest(
        definition=d,
        modified_dir=modified,
        run_dir=run_dir,
        run_id="hyr" + root.name[-5:].lower().replace("_", ""),
        layers=layers,  # type: ignore[arg-type]
        emulator=emulator,
        sandbox_waits={"quiet_after": 1.5, "fail_grace": 1.0},
    )
    return SeamKind().grade(request)
