"""The protocol battery, one grading step a module (the shape of nbgrader's preprocessors):

battery.py      a battery of scenarios, read from assignments/<name>/battery.toml
conventions.py  what the assignment leaves open, detected per submission
scenario.py     one scenario: the programs meet over the emulated link
checks.py       what a run must show (delivered, printed line, goodput, retransmissions)
score.py        points from the checks
symptoms.py     a failure's typed symptom (hang, storm, wrong bytes, ...)
pictures.py     a failed run's time-sequence graph beside the reference's
grade.py        one submission, every scenario
job.py          one submission as one job (any scheduler)
feedback.py     the student's page (Markdown and HTML) with replay commands
planted.py      bugs planted in a correct submission, for calibration
"""
