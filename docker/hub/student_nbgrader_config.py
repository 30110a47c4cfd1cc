"""nbgrader for a student on the course hub: the exchange shared with the grader account."""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.Exchange.root = "/srv/nbgrader/exchange"
c.CourseDirectory.course_id = os.environ.get("RDTLAB_COURSE_ID", "rdtlab")
