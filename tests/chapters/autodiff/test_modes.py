"""Mode state is per thread: a mode entered in one thread changes nothing in another.

Each test parks a thread inside a mode and runs a probe in the test's own
thread meanwhile; the probe must see the defaults (recording on, no autocast
hook, no anomaly checks, no forward-mode tangents)."""

import threading

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff.dispatch import get_autocast_hook, set_autocast_hook
from chapters.autodiff.modes import MODES, OpObserver, observing


def while_another_thread_is_inside(enter, probe):
    """``probe()``'s result, run here while another thread sits inside ``enter()``."""
    inside, release, errors = threading.Event(), threading.Event(), []

    def hold():
        try:
            with enter():
                inside.set()
                release.wait(10)
        except BaseException as err:  # reported by the assertion below
            errors.append(err)
            inside.set()

    thread = threading.Thread(target=hold)
    thread.start()
    assert inside.wait(10), "the other thread never entered the mode"
    try:
        return probe()
    finally:
        release.set()
        thread.join(10)
        assert not errors, f"the other thread failed: {errors!r}"


@pytest.mark.parametrize("lib", [ad, torch], ids=["engine", "torch"])
def test_no_grad_in_one_thread_leaves_recording_on_in_another(lib):
    def probe():
        x = lib.ones(3, requires_grad=True)
        return lib.is_grad_enabled(), (x * 2).requires_grad

    assert while_another_thread_is_inside(lib.no_grad, probe) == (True, True)


def test_an_autocast_hook_in_one_thread_is_not_called_by_another():
    calls = []

    class hooked:
        def __enter__(self):
            set_autocast_hook(lambda op, args: calls.append(op) or args)

        def __exit__(self, *exc):
            set_autocast_hook(None)

    def probe():
        x = ad.ones(2, 2)
        return get_autocast_hook(), (x @ x).dtype

    assert while_another_thread_is_inside(hooked, probe) == (None, ad.float32)
    assert calls == []


def test_anomaly_mode_in_one_thread_neither_checks_nor_records_sites_in_another():
    def probe():
        x = ad.tensor([-1.0, 4.0], requires_grad=True)
        with np.errstate(invalid="ignore"):
            y = x.sqrt()              # NaN: would raise under detect_anomaly here
        return bool(np.isnan(y.data[0])), y.grad_fn.site

    assert while_another_thread_is_inside(ad.detect_anomaly, probe) == (True, None)


def test_anomaly_mode_still_stops_the_thread_that_entered_it():
    x = ad.tensor([-1.0], requires_grad=True)
    with ad.detect_anomaly(), np.errstate(invalid="ignore"), pytest.raises(
            RuntimeError, match="'sqrt' produced nan"):
        x.sqrt()


def test_a_running_jvp_gives_no_tangents_to_another_threads_ops():
    parked, release = threading.Event(), threading.Event()

    def f(x):
        parked.set()
        release.wait(10)
        return x * 3.0

    result = {}
    thread = threading.Thread(target=lambda: result.update(
        out=ad.jvp(f, (ad.ones(2),), (ad.ones(2),))))
    thread.start()
    assert parked.wait(10)
    try:
        seen_here = MODES.observers
        y = ad.ones(2) * 3.0
    finally:
        release.set()
        thread.join(10)
    assert seen_here == () and y.grad_fn is None
    np.testing.assert_array_equal(result["out"][1].data, np.full(2, 3.0, np.float32))


def test_observers_see_ops_records_and_rules_only_while_active():
    class Log(OpObserver):
        def __init__(self):
            self.events = []

        def op_ran(self, op, inputs, attrs, result):
            self.events.append(("op", op))

        def node_recorded(self, node):
            self.events.append(("node", node.op))

        def rule_ran(self, node, input_grads):
            self.events.append(("rule", node.op, len(input_grads)))

    log = Log()
    x = ad.ones(3, requires_grad=True)
    with observing(log):
        y = x.exp()
        y.backward(ad.ones(3))
    (x * 2).sum()                                    # after the block: not seen
    assert log.events[:2] == [("node", "exp"), ("op", "exp")]
    assert ("rule", "exp", 1) in log.events
    assert not any(e[1] == "sum" for e in log.events)
