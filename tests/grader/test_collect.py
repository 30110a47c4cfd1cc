"""Finding submissions as courses collect them (no transfers: fast)."""

import shutil
import tarfile

import pytest

from grader.collect import find_submissions, submission_digest
from harness.procs import UsageError

from tests.support.grading import STUDENT

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def test_folders_nbgrader_layout_and_archives(tmp_path):
    root = tmp_path / "in"
    shutil.copytree(STUDENT, root / "s1111111")  # a folder per student
    shutil.copytree(STUDENT, root / "bob" / "comn")  # nbgrader: <student>/<assignment>/
    (root / "carol").mkdir()  # carol/cw2.tar.gz with one dir inside
    with tarfile.open(root / "carol" / "cw2.tar.gz", "w:gz") as t:
        t.add(STUDENT, arcname="cw2")
    with tarfile.open(root / "cw2.tar.gz", "w:gz") as t:  # an anonymous archive: named by its header
        t.add(STUDENT, arcname="cw2")
    subs = find_submissions(str(root), "comn", str(tmp_path / "unpack"))
    assert [s.student for s in subs] == ["bob", "carol", "s1234567", "s1111111"]
    assert {s.name for s in subs} == {"Ada Lovelace"}
    assert len({submission_digest(s.path) for s in subs}) == 1  # same files, same seeds


def test_nbgrader_submitted_folder(tmp_path):
    shutil.copytree(STUDENT, tmp_path / "course" / "submitted" / "dan" / "comn")
    subs = find_submissions(str(tmp_path / "course"), "comn", str(tmp_path / "u"))
    assert [s.student for s in subs] == ["dan"]


@pytest.fixture(params=["python-filter", "bookworm-python"])
def tar_python(request, monkeypatch):
    """Both paths: Python's 'data' filter, and Python 3.11.2 (the images') without it."""
    if request.param == "bookworm-python":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)


def test_an_archive_escaping_its_folder_is_refused_in_one_line(tmp_path, tar_python):
    root = tmp_path / "in"
    root.mkdir()
    evil = tmp_path / "evil.txt"
    evil.write_text("x")
    with tarfile.open(root / "mallory.tar.gz", "w:gz") as t:
        t.add(evil, arcname="../../escaped.txt")
    with pytest.raises(UsageError) as e:
        find_submissions(str(root), "comn", str(tmp_path / "u"))
    assert "mallory.tar.gz: cannot unpack" in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "escaped.txt").exists()


def test_an_archive_with_a_link_is_refused_in_one_line(tmp_path, tar_python):
    root = tmp_path / "in"
    root.mkdir()
    with tarfile.open(root / "mallory.tar", "w") as t:
        link = tarfile.TarInfo("cw2/Sender1.py")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        t.addfile(link)
    with pytest.raises(UsageError) as e:
        find_submissions(str(root), "comn", str(tmp_path / "u"))
    assert "mallory.tar: cannot unpack" in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "u" / "mallory" / "cw2" / "Sender1.py").is_symlink()


def test_a_folder_without_submissions_says_so(tmp_path):
    with pytest.raises(UsageError, match="no submissions in"):
        find_submissions(str(tmp_path), "comn", str(tmp_path / "u"))
    with pytest.raises(UsageError, match="not found"):
        find_submissions(str(tmp_path / "nope"), "comn", str(tmp_path / "u"))
