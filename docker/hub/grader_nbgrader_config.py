"""nbgrader for the grader account on the course hub (the course's own nbgrader_config.py,
in the course folder, is read after this): the shared exchange, and a collect that
refuses a submission not owned by its student's uid (rdtlab/hub/exchange.py)."""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.Exchange.root = "/srv/nbgrader/exchange"
c.CourseDirectory.course_id = os.environ.get("RDTLAB_COURSE_ID", "rdtlab")
c.CourseDirectory.root = "/home/grader/course"
c.ExchangeFactory.collect = "rdtlab.hub.exchange.CheckedCollect"
c.ExchangeFactory.release_assignment = "rdtlab.hub.exchange.StickyRelease"
