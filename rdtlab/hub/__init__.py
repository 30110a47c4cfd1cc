"""The course on JupyterHub (docker/hub/): what the kit adds to nbgrader there.

- users.py      the students' uids, as the hub gives them (a passwd-style file)
- exchange.py   nbgrader's collect that refuses a submission its student does not own
- feedback.py   the protocol feedback (with its pictures) put into the notebook's feedback
- grade.py      `rdtlab-hub-grade ASSIGNMENT`: collect, grade in the grading container,
                feedback released through the exchange (the grader account runs it)
- signin.py     signing in (or up) to the hub over HTTP: the admin's account that
                docker/hub/hub.sh makes, the token bench.hub_spawn asks for
"""
