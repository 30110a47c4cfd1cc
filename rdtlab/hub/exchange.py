"""nbgrader's collect on the course hub: a submission is collected only if its folder in
the exchange's inbound is owned by its student's uid (users.py), so a student cannot
hand in work under another's name. nbgrader's own check (`check_owner`) only warns, and
looks the owner up in this container's passwd, which has no students.

Its release makes the course's inbound sticky as well: nbgrader's 0733 lets any student
who learns the name of another's submission rename or delete it.

nbgrader_config.py:  c.ExchangeFactory.collect = "rdtlab.hub.exchange.CheckedCollect"
                     c.ExchangeFactory.release_assignment = "rdtlab.hub.exchange.StickyRelease"
                     c.CheckedCollect.users_file = "/srv/rdtlab/users/passwd"
"""

from __future__ import annotations

import os
import stat

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from traitlets import Unicode

from rdtlab.hub import users


class CheckedCollect(ExchangeCollect):
    users_file = Unicode(
        os.environ.get("RDTLAB_HUB_USERS", "/srv/rdtlab/users/passwd"),
        help="name:x:uid:... lines of the students' uids, written by the hub",
    ).tag(config=True)

    def init_src(self):
        self._uids = users.read(self.users_file)
        self.check_owner = False  # checked here, with the hub's uids
        super().init_src()
        kept = [r for r in self.src_records if not r["refused"]]
        self.src_records = kept

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        record["refused"] = refusal(os.path.join(self.inbound_path, record["filename"]), record["username"], self._uids)
        if record["refused"]:
            self.log.error("not collected: %s", record["refused"])
        return record

    def _sort_by_timestamp(self, records):
        # a student's own newest submission first; refused ones only if nothing else
        return sorted(records, key=lambda r: (not r["refused"], r["timestamp"]), reverse=True)


class StickyRelease(ExchangeReleaseAssignment):
    def init_dest(self):
        super().init_dest()
        mode = os.stat(self.inbound_path).st_mode
        if not mode & stat.S_ISVTX:
            os.chmod(self.inbound_path, stat.S_IMODE(mode) | stat.S_ISVTX)


def refusal(path: str, student: str, uids: dict[str, int]) -> str | None:
    """Why the submission at `path`, named for `student`, is not theirs (None if it is)."""
    name = os.path.basename(path)
    owner = os.lstat(path).st_uid
    expected = uids.get(student)
    if expected is None:
        return f"{name}: {student!r} has no uid on this hub (never started a server here)"
    if owner != expected:
        by = next((n for n, u in uids.items() if u == owner), f"uid {owner}")
        return f"{name} is named for {student} (uid {expected}) but was handed in by {by} (uid {owner})"
    return None
