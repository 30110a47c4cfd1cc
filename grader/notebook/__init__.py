"""The notebook autograde: nbgrader's autograde, each kernel in a jail.

autograde.py       `rdtlab grade --gradebook`: a class's notebooks, then the re-measured cells
notebook_jail.py   the jailed kernel (its uid, network namespace, private copy, the kit it sees)
nbgrader_child.py  nbgrader forked per student from a server that imported it once
remeasure.py       the re-measured cells decided outside the kernel, from fresh runs
restorecells.py    what students do to a notebook (deleted cells, changed ids) put back
gradebook.py       the protocol's scores into nbgrader's gradebook
schema_once.py     nbformat's schema compiled once per process
"""
