"""The slow fit the interrupt tests run in a child Python (``tests/`` on its path).

``Slow(n).fit`` runs ``n`` column generation iterations of 10 ms (idle: the
2-core machine is shared), each ending in the interrupt check
(``check_abandoned``).  ``ends`` lists how each fit ended ("ran to its end"
or its exception's name); ``running`` is released once per fit past its first
iteration.  Used by ``test_interrupts34.py`` and ``test_user_audit100.py``
(what each child does with it stays in its test).
"""

import signal
import threading
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from kernlearn.colgen import ColumnGeneration
from kernlearn.estimators._base import all_or_nothing

running, ends = threading.Semaphore(0), []

X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2


class Slow(ClassifierMixin, BaseEstimator):
    """A fit of ``n`` idle column generation iterations (``C``: a grid to search)."""

    def __init__(self, n=3000, C=1.0):
        self.n = n
        self.C = C

    @all_or_nothing
    def fit(self, X, y):
        """Run the iterations; ``Interrupted`` when the watch stops them."""
        if threading.current_thread() is not threading.main_thread():
            # The terminal's Ctrl-C must reach the main thread: the OS hands a
            # process signal to any thread not blocking it, and a prompt waiting
            # in select() only sees it when it lands there (a loaded machine's
            # busy fit thread took it and the prompt waited on: a flaky test).
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        self.classes_ = np.unique(y)  # (set first: put back when the fit stops)

        class One(list):
            scores = [1.0]

        its = []

        def master(cand):
            if len(its) == 1:
                running.release()
            its.append(1)
            time.sleep(0.01)
            return 1.0 / len(its)

        try:
            ColumnGeneration(self.n, tol=None, warn=False).run(lambda: One([0]), master)
            ends.append("ran to its end")
        except BaseException as error:
            ends.append(type(error).__name__)
            raise
        self.fitted_ = True
        return self

    def predict(self, X):
        """Zeros (a search scores its folds)."""
        return np.zeros(len(X))
