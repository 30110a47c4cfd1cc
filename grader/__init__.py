"""rdtlab's protocol autograder.

One small module per grading step (the shape of nbgrader's preprocessors):
  battery.py          a battery of scenarios, read from assignments/<name>/battery.toml
  collect.py          find the submissions (folders, nbgrader's submitted/, archives)
  build.py            build a submission with its Makefile; find its programs
  sandbox.py          the command prefix that jails a student's program (bubblewrap)
  scenario.py         run one scenario: the programs meet over the emulated link
  checks.py           what a run must show (delivered, printed line, goodput, retransmissions)
  score.py            points from the checks
  grade.py            one submission, every scenario: the job a scheduler runs
  feedback.py         the student's page (Markdown and HTML) with replay commands
  export_gradescope.py, export_csv.py, gradebook.py   the outputs
  parallel.py, dask_executor.py   many submissions at once
  cli.py              `rdtlab grade` and `rdtlab check`
"""
