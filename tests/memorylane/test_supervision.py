"""The runner's decisions, in memory (memorylane/supervision.py): backoff, crash loops, stop order."""

from __future__ import annotations

from memorylane import supervision
from memorylane.supervision import GAVE_UP, RUNNING, PartState, Policy

POLICY = Policy(backoff_initial=1.0, backoff_max=30.0, crash_loop_failures=5, stable_seconds=30.0)


def die_quickly(state: PartState, times: int) -> list[supervision.Decision]:
    decisions = []
    for _ in range(times):
        decision = supervision.decide_after_exit(state, uptime=0.5, exit="exit code 1", policy=POLICY)
        state.quick_failures = decision.quick_failures
        state.restarts += decision.action == supervision.RESTART
        decisions.append(decision)
    return decisions


def test_a_part_killed_after_a_stable_run_is_restarted_after_one_second():
    decision = supervision.decide_after_exit(
        PartState("worker", quick_failures=3), uptime=3600, exit="killed by SIGKILL", policy=POLICY
    )
    assert decision.action == "restart" and decision.delay == 1.0 and decision.quick_failures == 0
    assert decision.message == "worker died (killed by SIGKILL) after 3600.0 s; restarting in 1 s"


def test_quick_failures_double_the_backoff_up_to_the_maximum():
    delays = [supervision.backoff_delay(n, POLICY) for n in range(8)]
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
    decisions = die_quickly(PartState("beat"), 5)
    assert [d.delay for d in decisions] == [2, 4, 8, 16, 30]


def test_more_than_five_quick_failures_give_up_and_say_what_failed_how_often():
    state = PartState("web")
    decisions = die_quickly(state, 6)
    assert [d.action for d in decisions] == ["restart"] * 5 + ["give_up"]
    last = decisions[-1]
    assert last.consequence == "stop_all"
    assert "web keeps failing (6 quick failures in a row, 5 restarts, last: exit code 1)" in last.message


def test_giving_up_on_the_database_stops_everything_but_on_worker_or_beat_only_degrades():
    assert die_quickly(PartState("database"), 6)[-1].consequence == "stop_all"
    for name in ("worker", "beat"):
        last = die_quickly(PartState(name), 6)[-1]
        assert last.consequence == "degrade" and "kill -HUP" in last.message


def test_stop_order_is_web_beat_worker_then_the_database():
    assert supervision.stop_sequence(["database", "web", "worker", "beat"]) == [
        "web",
        "beat",
        "worker",
        "database",
    ]
    assert supervision.stop_sequence(["worker", "web"]) == ["web", "worker"]


def test_sighup_retries_only_what_was_given_up():
    states = {
        "web": PartState("web", status=RUNNING),
        "worker": PartState("worker", status=GAVE_UP),
        "beat": PartState("beat", status=GAVE_UP),
    }
    assert supervision.retry_given_up(states) == ["worker", "beat"]


def test_exit_descriptions_name_the_signal():
    assert supervision.exit_description(-9) == "killed by SIGKILL"
    assert supervision.exit_description(-15) == "killed by SIGTERM"
    assert supervision.exit_description(3) == "exit code 3"


def test_the_report_is_ok_restarting_or_degraded_and_the_public_one_has_no_pids():
    states = {
        "web": PartState("web", status=RUNNING, pid=12, restarts=2),
        "worker": PartState("worker", status=RUNNING),
    }
    report = supervision.Report.of(pid=1, host="h", states=states, stopping=False).as_dict()
    assert report["status"] == "ok" and report["restarts"] == 2
    states["worker"].status = "backoff"
    assert supervision.Report.of(pid=1, host="h", states=states, stopping=False).status == "restarting"
    states["worker"].status = GAVE_UP
    report = supervision.Report.of(pid=1, host="h", states=states, stopping=False).as_dict()
    assert report["status"] == "degraded"
    assert supervision.public_supervisor(report) == {
        "status": "degraded",
        "restarts": {"web": 2, "worker": 0},
    }
