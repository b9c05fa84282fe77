"""The offline model's background build, read from its builder's output (issue 29, item 1).

`make run` prints the ready line before llama.cpp is compiled; the server then runs the builder
(`scripts/install_llama_cpp.py --progress`, or a command named by `$LH_OFFLINE_BUILD_COMMAND`)
and follows its output here. Pure: lines and clock readings in, a `BuildProgress` out, and the one
sentence the terminal and the page's banner both show.

The builder's protocol (plain text lines on stdout; anything else is ignored):
- `install_llama_cpp: plan <step> | <step> | ...` (optional, first) names every step, so that
  what remains can be said by name;
- `install_llama_cpp: step K/N <what it does>` starts step K of N (1-based);
- `[n/m] ...` (ninja) or `[ pp%] ...` (make) inside a step counts its compiled files;
- exit status 0 means installed; anything else failed (the last lines say why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

PLAN_LINE = re.compile(r"^install_llama_cpp: plan (.+?)\s*$")
STEP_LINE = re.compile(r"^install_llama_cpp: step (\d+)/(\d+) (.+?)\s*$")
NINJA_LINE = re.compile(r"^\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")
MAKE_LINE = re.compile(r"^\s*\[\s*(\d+)%\]")
TYPICAL_BUILD = "5 to 35 minutes on 2 cores"
"""What a whole build took before it counts files (measured: ~5 min quiet, 35 min loaded; issue 29)."""

State = Literal["building", "installed", "failed"]


@dataclass(frozen=True)
class BuildProgress:
    """One build's state. Times are `time.monotonic()` readings in seconds.

    Attributes:
        started: when the builder was started.
        state: building, installed (exit 0) or failed.
        step / steps / step_name: the current step (1-based) of how many, and what it does
            (0 / 0 / "" before the builder's first step line).
        step_started: when the current step began.
        done / total: files compiled of how many in this step (0 / 0 when not counted), or, when
            `percent`, make's percentage as done=pp, total=100.
        plan: every step's name, when the builder said them (else empty).
        ended: when the builder exited (None while it runs).
        error: why it failed, in plain words (None unless failed).
    """

    started: float
    state: State = "building"
    step: int = 0
    steps: int = 0
    step_name: str = ""
    step_started: float = 0.0
    done: int = 0
    total: int = 0
    percent: bool = False
    plan: tuple[str, ...] = ()
    ended: float | None = None
    error: str | None = None


def read_line(progress: BuildProgress, line: str, now: float) -> BuildProgress:
    """The progress after one line of the builder's output (unchanged for other lines)."""
    if progress.state != "building":
        return progress
    if plan := PLAN_LINE.match(line):
        names = tuple(name.strip() for name in plan.group(1).split("|") if name.strip())
        return replace(progress, plan=names) if names else progress
    if step := STEP_LINE.match(line):
        index, count = int(step.group(1)), int(step.group(2))
        if 1 <= index <= count:
            return replace(
                progress, step=index, steps=count, step_name=step.group(3), step_started=now, done=0, total=0,
                percent=False,
            )  # fmt: skip
        return progress
    if (ninja := NINJA_LINE.match(line)) and int(ninja.group(2)) > 0:
        done, total = int(ninja.group(1)), int(ninja.group(2))
        if done <= total and (total != progress.total or done >= progress.done):
            return replace(progress, done=done, total=total, percent=False)
        return progress
    if make := MAKE_LINE.match(line):
        percent = int(make.group(1))
        if percent <= 100 and percent >= progress.done:
            return replace(progress, done=percent, total=100, percent=True)
    return progress


def finished(
    progress: BuildProgress, returncode: int, now: float, last_lines: list[str], log_path: str
) -> BuildProgress:
    """The progress once the builder exited with `returncode`; a failure says why from its last
    lines (the last one that is not blank) and where the whole output is."""
    if returncode == 0:
        return replace(progress, state="installed", ended=now)
    reason = next((line.strip() for line in reversed(last_lines) if line.strip()), "")
    cause = f"exited with code {returncode}" if returncode > 0 else f"was stopped (signal {-returncode})"
    error = f"building the offline model failed: the builder {cause}"
    if reason:
        error += f' ("{reason[:200]}")'
    return replace(progress, state="failed", ended=now, error=f"{error}; details in {log_path}")


def remaining_s(progress: BuildProgress, now: float) -> float | None:
    """Seconds the current step still needs, from its pace so far; None when it cannot be told yet
    (no file counted, or under 5% of them)."""
    if progress.state != "building" or progress.total <= 0 or progress.done * 20 < progress.total:
        return None
    spent = max(0.0, now - progress.step_started)
    return spent * (progress.total - progress.done) / progress.done


def duration(seconds: float) -> str:
    """`42 s`, `3 min 05 s`, `1 h 02 min`."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def describe(progress: BuildProgress, now: float) -> str:
    """The sentence for the terminal and the banner, e.g. "Building the offline model: step 2 of 3,
    compiling llama.cpp (120 of 215 files), 12 min 30 s so far, about 9 min 40 s left for this
    step; then installing it."."""
    if progress.state == "installed":
        took = duration((progress.ended or now) - progress.started)
        return f"The offline model was built and installed in {took}; it is ready to use."
    if progress.state == "failed":
        return f"The offline model could not be built: {progress.error}."
    elapsed = duration(now - progress.started)
    if progress.step == 0:
        return f"Building the offline model: starting, {elapsed} so far (usually {TYPICAL_BUILD})."
    what = f"step {progress.step} of {progress.steps}, {progress.step_name}"
    if progress.percent:
        what += f" ({progress.done}%)"
    elif progress.total > 0:
        what += f" ({progress.done} of {progress.total} files)"
    sentence = f"Building the offline model: {what}, {elapsed} so far"
    left = remaining_s(progress, now)
    if left is not None:
        sentence += f", about {duration(left)} left for this step"
    elif progress.step < progress.steps:
        sentence += f" (a whole build usually takes {TYPICAL_BUILD})"
    if progress.step < progress.steps:
        sentence += "; then " + _what_remains(progress)
    return sentence + "."


def _what_remains(progress: BuildProgress) -> str:
    """The steps after the current one, by name when the builder gave its plan."""
    if len(progress.plan) == progress.steps:
        return ", then ".join(progress.plan[progress.step :])
    left = progress.steps - progress.step
    return "one more step" if left == 1 else f"{left} more steps"


def status(progress: BuildProgress | None, now: float) -> dict[str, Any] | None:
    """`GET /api/settings` offline.build: `{state, step, steps, stepName, done, total, percent, elapsedS,
    remainingS, error, line}` (seconds; remainingS None when unknown), or None when no build ran."""
    if progress is None:
        return None
    left = remaining_s(progress, now)
    return {
        "state": progress.state,
        "step": progress.step,
        "steps": progress.steps,
        "stepName": progress.step_name,
        "done": progress.done,
        "total": progress.total,
        "percent": progress.percent,
        "elapsedS": round(((progress.ended or now) - progress.started), 1),
        "remainingS": None if left is None else round(left, 1),
        "error": progress.error,
        "line": describe(progress, now),
    }
