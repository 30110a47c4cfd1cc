"""The hub's pure pieces (rdtlab/hub/): the students' uid file and the feedback merge."""

from __future__ import annotations

import os

import pytest

from rdtlab.hub import feedback, users

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def test_uid_file_records_reads_and_keeps_each_name_to_one_uid(tmp_path):
    path = str(tmp_path / "users" / "passwd")
    assert users.read(path) == {}
    users.record(path, "alice", 10002, 100)
    users.record(path, "bob", 10003, 100)
    users.record(path, "alice", 10002, 100)  # a second spawn: nothing changes
    assert users.read(path) == {"alice": 10002, "bob": 10003}
    assert open(path).read().splitlines()[0] == "alice:x:10002:100::/home/jovyan:/bin/bash"
    with pytest.raises(ValueError, match="already 'alice'"):
        users.record(path, "mallory", 10002, 100)
    for bad in ("a:b", "../x", "-rf", ""):
        with pytest.raises(ValueError, match="cannot be a course account"):
            users.record(path, bad, 10009, 100)
    assert users.read(path) == {"alice": 10002, "bob": 10003}
    assert not [n for n in os.listdir(os.path.dirname(path)) if n.startswith(".passwd-")]


NOTEBOOK = "<html><head><style>.nb{}</style></head><body><h1>results_sheet</h1></body></html>"
PROTOCOL = (
    "<!DOCTYPE html><html><head><style>.fail{color:red}</style></head>"
    "<body><h1>Sender2: 8/10</h1><img src='data:image/png;base64,AAAA'></body></html>"
)


def test_feedback_merge_appends_the_programs_once():
    once = feedback.merged(NOTEBOOK, PROTOCOL)
    assert once.index("<h1>results_sheet</h1>") < once.index("Sender2: 8/10") < once.rindex("</body>")
    assert ".fail{color:red}" in once and "data:image/png;base64,AAAA" in once
    twice = feedback.merged(once, PROTOCOL.replace("8/10", "9/10"))
    assert twice.count(feedback.MARK) == 1 and "9/10" in twice and "8/10" not in twice


def test_feedback_merge_over_a_class(tmp_path):
    course, graded = tmp_path / "course", tmp_path / "graded"
    for student in ("alice", "bob"):
        (course / "feedback" / student / "comn").mkdir(parents=True)
        (course / "feedback" / student / "comn" / "results_sheet.html").write_text(NOTEBOOK)
    (graded / "alice").mkdir(parents=True)
    (graded / "alice" / "feedback.html").write_text(PROTOCOL)
    pages = feedback.merge_class(str(course), "comn", str(graded))
    assert pages == [str(course / "feedback" / "alice" / "comn" / "results_sheet.html")]
    assert "Sender2" in open(pages[0]).read()
    assert "Sender2" not in (course / "feedback" / "bob" / "comn" / "results_sheet.html").read_text()
