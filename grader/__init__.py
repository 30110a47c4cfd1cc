"""rdtlab's grader: two pipelines over one jail, with one rule for a disturbed machine.

protocol/     the protocol battery: a submission's programs against the battery's
              scenarios over the emulated link, points, symptoms, feedback with pictures
notebook/     the notebook autograde: nbgrader's own autograde with each kernel jailed,
              the re-measured cells decided outside the kernel, scores into the gradebook
jail/         what both run students' code in: bubblewrap under a uid of its own, a
              control group, limits, the build of a submission's programs
disturbance.py  the policy both call: a run the machine disturbed is no grade (graded
              again, or said as not graded), and when the pool may start another
collect.py    the submissions: folders, nbgrader's submitted/, archives
parallel.py, dask_executor.py   a class at once, on this machine or a Dask cluster
compare.py    a regrade against an earlier output: whose verdicts moved and why
export_csv.py, export_class.py, export_gradescope.py, export_gradescope_package.py
              grades.csv, the class view, Gradescope's results and autograder package
cli.py        `rdtlab grade` and `rdtlab check`
"""
