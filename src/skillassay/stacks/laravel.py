"""Laravel on PHP: an app with an ``artisan`` and ``laravel/framework`` in its composer.json, served by PHP's
own server through the front controller (``php -S ... public/index.php``, listening on ``PORT``)."""

from __future__ import annotations

from pathlib import Path

from skillassay.stacks.php import PhpStack


class LaravelStack(PhpStack):
    name = "laravel"
    order = 40
    package = "laravel/framework"
    init_name = "laravel"

    def detect(self, app: Path, strict: bool = False) -> bool:
        # `artisan` alone says Laravel (an app whose framework comes another way); else its composer.json
        if not self.belongs(app):
            return False
        return (app / "artisan").is_file() or self.declares(app, "laravel/framework", strict)

    def start_command(self, port: int) -> list[str]:
        return ["/bin/sh", "-c", f"php -S 0.0.0.0:${{PORT:-{port}}} -t public public/index.php"]
