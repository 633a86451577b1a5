"""What `make run` decides about its parts (web, worker, beat, the embedded database): pure functions.

The runner (memorylane/runner.py) applies these decisions — it starts and signals processes, writes
``supervisor.json`` — and nothing here touches a process, a file or the clock, so every rule can be
tested in memory: the backoff after a death, when a crash loop is given up, what giving up on a part
means for the rest, the order parts stop in, and the report health shows.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

# Stop order: the web server first (no new work is accepted), then beat (no new periodic work), then the
# worker (it finishes or hands back what it holds), the database last (everyone above needs it).
STOP_ORDER = ("web", "beat", "worker", "database")
START_ORDER = ("database", "web", "worker", "beat")
# Without these the server is no use: giving up on one stops everything. Without a worker or beat the
# web server still answers (reads, writes; extraction waits), so the runner keeps it serving, degraded.
ESSENTIAL = frozenset({"web", "database"})

STARTING, RUNNING, BACKOFF, GAVE_UP, STOPPED = "starting", "running", "backoff", "gave_up", "stopped"
RESTART, GIVE_UP = "restart", "give_up"
STOP_ALL, DEGRADE = "stop_all", "degrade"


@dataclass(frozen=True)
class Policy:
    backoff_initial: float = 1.0
    backoff_max: float = 30.0
    crash_loop_failures: int = 5
    stable_seconds: float = 10.0

    @classmethod
    def from_settings(cls, conf: dict) -> Policy:
        return cls(
            backoff_initial=float(conf["RUNNER_BACKOFF_INITIAL_SECONDS"]),
            backoff_max=float(conf["RUNNER_BACKOFF_MAX_SECONDS"]),
            crash_loop_failures=int(conf["RUNNER_CRASH_LOOP_FAILURES"]),
            stable_seconds=float(conf["RUNNER_STABLE_SECONDS"]),
        )


@dataclass
class PartState:
    """What the runner knows about one part; ``quick_failures`` counts deaths in a row that came
    within ``stable_seconds`` of the part's start."""

    name: str
    status: str = STARTING
    restarts: int = 0
    quick_failures: int = 0
    last_exit: str = ""
    pid: int | None = None
    started_at: float | None = None
    restart_at: float | None = None

    def public(self) -> dict:
        return {
            "status": self.status,
            "restarts": self.restarts,
            "pid": self.pid,
            "last_exit": self.last_exit,
        }


@dataclass(frozen=True)
class Decision:
    action: str  # RESTART | GIVE_UP
    delay: float = 0.0
    quick_failures: int = 0
    consequence: str = ""  # for GIVE_UP: STOP_ALL | DEGRADE
    message: str = ""


def backoff_delay(quick_failures: int, policy: Policy) -> float:
    """1 s after a death, doubling with each quick failure in a row, never more than the maximum."""
    return min(policy.backoff_max, policy.backoff_initial * 2 ** max(0, quick_failures))


def exit_description(returncode: int | None) -> str:
    """``exit code 1``, ``killed by SIGKILL`` (Popen's negative return codes are signals)."""
    if returncode is None:
        return "vanished"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def decide_after_exit(state: PartState, *, uptime: float, exit: str, policy: Policy) -> Decision:
    """A part died after ``uptime`` seconds: restart it after a backoff, or give up on a crash loop
    (more than ``crash_loop_failures`` quick failures in a row). A part that ran ``stable_seconds``
    starts a new count: a kill after an hour of service is restarted after the initial second."""
    quick = state.quick_failures + 1 if uptime < policy.stable_seconds else 0
    if quick > policy.crash_loop_failures:
        consequence = STOP_ALL if state.name in ESSENTIAL else DEGRADE
        then = (
            "stopping everything"
            if consequence == STOP_ALL
            else "the web server keeps serving; fix it, then `kill -HUP <runner pid>` to try again"
        )
        return Decision(
            GIVE_UP,
            quick_failures=quick,
            consequence=consequence,
            message=(
                f"{state.name} keeps failing ({quick} quick failures in a row, {state.restarts} restarts, "
                f"last: {exit}); giving up on it: {then}"
            ),
        )
    delay = backoff_delay(quick, policy)
    return Decision(
        RESTART,
        delay=delay,
        quick_failures=quick,
        message=f"{state.name} died ({exit}) after {uptime:.1f} s; restarting in {delay:g} s",
    )


def retry_given_up(states: dict[str, PartState]) -> list[str]:
    """On SIGHUP: the parts to try again (those given up on), each from a fresh count."""
    return [name for name in START_ORDER if name in states and states[name].status == GAVE_UP]


def stop_sequence(names) -> list[str]:
    """The order to stop ``names`` in (unknown names last, in their own order)."""
    names = list(names)
    known = [name for name in STOP_ORDER if name in names]
    return known + [name for name in names if name not in STOP_ORDER]


def overall_status(states: dict[str, PartState]) -> str:
    """``ok`` when every part runs; ``restarting`` while one waits or starts again; ``degraded`` when
    the runner gave up on one (the web server still serves)."""
    statuses = {state.status for state in states.values()}
    if GAVE_UP in statuses:
        return "degraded"
    if statuses - {RUNNING}:
        return "restarting"
    return "ok"


@dataclass
class Report:
    """The contents of ``MEMORYLANE_HOME/supervisor.json`` (read by the health check)."""

    pid: int
    host: str
    status: str
    processes: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def of(cls, *, pid: int, host: str, states: dict[str, PartState], stopping: bool) -> Report:
        return cls(
            pid=pid,
            host=host,
            status="stopping" if stopping else overall_status(states),
            processes={name: states[name].public() for name in START_ORDER if name in states},
        )

    def as_dict(self) -> dict:
        return {
            "pid": self.pid,
            "host": self.host,
            "status": self.status,
            "restarts": sum(p["restarts"] for p in self.processes.values()),
            "processes": self.processes,
        }


def public_supervisor(report: dict) -> dict:
    """For anonymous health callers: the status and restart counts, no pids, hosts or exit details."""
    return {
        "status": report.get("status", "unknown"),
        "restarts": {name: part.get("restarts", 0) for name, part in report.get("processes", {}).items()},
    }
