"""The jail both pipelines run students' code in.

sandbox.py    the command prefix that jails a program (bubblewrap), for the grader's side
launcher.py   what runs inside that prefix: namespaces, the read-only kit, limits
cgroups.py    a jail's control group: all its processes capped together
limits.py     the per-process limits and the no-progress window
build.py      a submission's programs built in its jail (harness/resolver.py's rules)
"""
