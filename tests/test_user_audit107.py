"""Audit 107: the interrupt watch in threads, reviewed again (issue 24).

A fit running in another thread stops (``Interrupted``) when the main thread
handles or shows a ``KeyboardInterrupt`` it did not have when the fit began.
A prompt written in Python (``code.interact`` and the consoles built on it,
Python 3.13's own prompt, ``pdb``, a program's ``input()`` loop) catches the
Ctrl-C that discards a typed line in an ``except`` that lasts a millisecond:
a look of a running fit that landed there stopped a fit the user had started
in a thread of their own (2 of 10 sessions of 20 such Ctrl-C on Python 3.13,
``benchmarks/interrupt_prompt_hunt.py``).  A handled interrupt now counts once
it is still handled at the next look (``_LOOK_EVERY`` later): the waits it
stands for last as long as the fits.

A ``ThreadPoolExecutor``'s ``with`` left by a Ctrl-C starts the futures it
still had queued while it waits for them; a fit beginning while the main
thread handles an interrupt was taken as a fallback fitted in an ``except``,
and ran to its end (8 fits of 1 s on 2 threads: 6 ran, control back after
4.9 s).  Those the pool's exit starts now stop (0.8 s).
"""

import code
import threading
import time

from sklearn.base import BaseEstimator

from kernlearn.estimators._base import all_or_nothing
from kernlearn.utils import _threads


class _Looking(BaseEstimator):
    """A fit that looks once at ``inside`` (then sets ``looked``), and goes on
    checking every millisecond for four looks' time."""

    def __init__(self, inside=None, looked=None):
        self.inside, self.looked = inside, looked

    @all_or_nothing
    def fit(self):
        if self.inside is not None:
            assert self.inside.wait(60)
            try:
                _threads.check_abandoned()  # (the first look is due at once)
            finally:
                self.looked.set()
        end = time.monotonic() + 4 * _threads._LOOK_EVERY
        while time.monotonic() < end:
            _threads.check_abandoned()
            time.sleep(0.001)
        self.fitted_ = True
        return self


def _in_a_thread(est):
    """Start ``est.fit()`` in a thread; the thread and the list its result
    ("fitted" or the fit's exception) goes to."""
    out = []

    def run():
        try:
            est.fit()
            out.append("fitted")
        except BaseException as error:
            out.append(error)

    thread = threading.Thread(target=run, name="fit")
    thread.start()
    return thread, out


def test_a_ctrl_c_a_python_prompt_catches_leaves_a_running_fit():
    """``code.interact``: a Ctrl-C discards a typed line (its ``except
    KeyboardInterrupt`` writes "KeyboardInterrupt") while a fit the user
    started in a thread looks at the main thread's interrupts: the fit runs to
    its end.  It stopped (``Interrupted``) on the merged code."""
    inside, looked = threading.Event(), threading.Event()
    thread, out = _in_a_thread(_Looking(inside, looked))
    keys = iter([KeyboardInterrupt, EOFError])  # (Ctrl-C, then Ctrl-D)

    class Console(code.InteractiveConsole):
        def raw_input(self, prompt=""):
            raise next(keys)

        def write(self, data):
            if "KeyboardInterrupt" in data:  # (in the prompt's ``except``)
                inside.set()
                assert looked.wait(60)

    Console().interact(banner="", exitmsg="")
    thread.join(60)
    assert out == ["fitted"], out


def test_an_interrupt_handled_while_the_main_thread_waits_stops_the_fit():
    """The route kept: the main thread handles a ``KeyboardInterrupt`` and
    waits for the fit in its ``except`` (joblib's threading backend, a
    ``ThreadPoolExecutor``'s ``with``): the fit stops at the next look."""
    began = threading.Event()

    class Began(_Looking):
        @all_or_nothing
        def fit(self):
            began.set()
            return _Looking.fit.__wrapped__(self)

    thread, out = _in_a_thread(Began())
    assert began.wait(60)
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        thread.join(60)
    assert isinstance(out[0], _threads.Interrupted), out


def test_a_future_a_pool_starts_after_the_ctrl_c_stops():
    """A ``ThreadPoolExecutor``'s ``with`` left by a Ctrl-C waits for its
    futures, starting those still queued: their fits stop too (they ran to
    their end on the merged code, the program waiting for them).  A fallback
    fitted by a pool in the ``except`` (its ``with`` left normally) runs."""
    from concurrent.futures import ThreadPoolExecutor

    try:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(time.sleep, 2 * _threads._LOOK_EVERY)
            queued = pool.submit(_Looking().fit)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(time.sleep, 2 * _threads._LOOK_EVERY)
            fallback = pool.submit(_Looking().fit)
    assert isinstance(queued.exception(60), _threads.Interrupted), queued.exception()
    assert fallback.exception(60) is None, fallback.exception()
