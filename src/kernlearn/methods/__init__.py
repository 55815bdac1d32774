"""One module per paper, named for it: each holds that paper's algorithm.

A method wires the shared parts (losses, penalties, families, solvers and the
column-generation driver) into the paper's algorithm: the state it keeps, its
pricing and master steps and its stopping rules.  Estimators validate input,
build the parts and call a method; solvers never import a method.
"""
