"""The progress of ``skillassay run`` on stderr: one line for the job (done/planned, elapsed), one line per
run under way naming its eval and the phase it is in (workspace, agent, install, build, start, checks,
grading), and a line per finished run above them. Fits 80 columns: nothing on a line is longer than an eval
id and a phase."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from skillassay.phases import RunKey


class _JobOnly(ProgressColumn):
    """A column shown on the job's line only (a run's line has no bar of its own)."""

    def __init__(self, inner: ProgressColumn):
        super().__init__()
        self.inner = inner

    def render(self, task: Task) -> Any:
        return Text("") if task.fields.get("lane") else self.inner.render(task)


class RunProgress:
    def __init__(self, console: Console, title: str, total: int | None, disable: bool = False):
        self.disable = disable
        self.progress = Progress(
            TextColumn("{task.description}"),
            TextColumn("{task.fields[phase]}"),
            _JobOnly(BarColumn(bar_width=16)),
            _JobOnly(MofNCompleteColumn()),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=disable,
        )
        self.task = self.progress.add_task(f"[bold]{title}[/]", total=total, phase="", lane=False)
        self.lanes: dict[RunKey, TaskID] = {}

    def start(self, title: str) -> None:
        self.progress.update(self.task, description=f"[bold]{title}[/]")
        self.progress.start()

    def stop(self) -> None:
        self.progress.stop()

    def phase(self, key: RunKey, name: str) -> None:
        lane = self.lanes.get(key)
        if lane is None:
            lane = self.lanes[key] = self.progress.add_task(
                f"  {key.label()}", total=None, phase=name, lane=True
            )
        self.progress.update(lane, phase=name)

    def finished(self, key: RunKey | None, line: str) -> None:
        lane = self.lanes.pop(key, None) if key is not None else None
        if lane is not None:
            self.progress.remove_task(lane)
        self.progress.update(self.task, advance=1)
        if not self.disable:
            self.progress.console.print(line, highlight=False)
