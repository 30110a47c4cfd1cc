"""The feedback page of a failure no picture can show: a run too large to trace (the
wrap's 64 MiB) says so where the picture would be, in the HTML, the Markdown and
Gradescope's output, and points to the replay line."""

import pytest

from grader.export_gradescope import gradescope_results
from grader.protocol.feedback import markdown, to_html
from grader.protocol.pictures import MAX_BYTES, too_big

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)


def result(pictures: dict | None) -> dict:
    failed = {
        "name": "p4-wrap-reference-sender",
        "part": 4,
        "what": "past sequence number 65535",
        "passed": False,
        "score": 0.0,
        "max_score": 2.0,
        "public": False,
        "reason": "delivered: the sender ended before the whole file had arrived",
        "replay": "rdtlab run --seed 7 ...",
        "runs": [],
        "symptom": {"kind": "sender-left", "title": "the sender ended before the whole file had arrived"},
        "pictures": pictures,
    }
    return {"student": "ada", "name": "Ada", "battery": "comn", "score": 0.0, "max_score": 2.0, "scenarios": [failed]}


def test_a_run_too_big_to_trace_says_why_it_has_no_picture(tmp_path):
    why = too_big(64 << 20)
    assert why.startswith("No picture of this run: it carried 64 MiB") and f"{MAX_BYTES >> 20} MiB" in why
    page = to_html(result({"none": why}), str(tmp_path))
    assert f"<p class='nopicture'>{why}</p>" in page and "<img" not in page
    assert why in markdown(result({"none": why}))
    [test] = gradescope_results(result({"none": why}), str(tmp_path))["tests"]
    assert why in test["output"] and "Replay it: rdtlab run --seed 7" in test["output"]
    # a failure with nothing to say of pictures (e.g. not run) shows neither
    assert "nopicture" not in to_html(result(None), str(tmp_path))
