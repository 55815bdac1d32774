"""One module per paper, named for it: each holds that paper's algorithm.

``fgm.py`` (paper 002, the Feature Generating Machine), ``grfl.py`` (paper 000,
learning with infinitely many features), ``obscure.py`` (paper 001, p-norm MKL
by online-batch optimisation), ``slkl.py`` (paper 003, stochastic low-rank
kernel learning), ``mtmkl.py`` (paper 004, multitask MKL).  A module keeps the
state its algorithm needs, wires pricing and master (through
:class:`~kernlearn.colgen.ColumnGeneration` where the method grows an active
set) and owns its stopping rules; estimators only validate input and call it;
solvers never import a method.
"""
