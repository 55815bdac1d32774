"""One module per paper: each holds its algorithm on top of the shared parts.

``grfl.py`` (paper 000, learning with infinitely many features),
``obscure.py`` (paper 001, p-norm MKL by online-batch optimisation),
``slkl.py`` (paper 003, stochastic low-rank kernel learning); FGM (002) and
multitask MKL (004) have their own modules.  A module keeps the state its
algorithm needs, wires pricing and master (through
:class:`~kernlearn.colgen.ColumnGeneration` where the method grows an active
set) and owns its stopping rules; estimators only validate input and call it.
"""
