"""FastAPI on Python, served by uvicorn. Checked before Flask."""

from __future__ import annotations

from skillassay.stacks.python import PythonStack


class FastapiStack(PythonStack):
    name = "fastapi"
    order = 20
    package = "fastapi"
    init_name = "fastapi"

    def start_command(self, entry: str, port: int) -> list[str]:
        return ["uvicorn", f"{entry[:-3]}:app", "--host", "0.0.0.0", "--port", str(port)]
