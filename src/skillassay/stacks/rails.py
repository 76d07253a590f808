"""Ruby on Rails on Ruby, served by Puma (``bundle exec puma``: ``config/puma.rb``, listening on ``PORT``)."""

from __future__ import annotations

from skillassay.stacks.ruby import RubyStack


class RailsStack(RubyStack):
    name = "rails"
    order = 30
    package = "rails"
    init_name = "rails"

    def start_command(self, port: int) -> list[str]:
        return ["bundle", "exec", "puma", "-C", "config/puma.rb"]
