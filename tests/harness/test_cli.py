"""`rdtlab run` and `rdtlab demo`: exit status 0/1/2, one-line errors, --json fields."""

import json
import subprocess
import sys

import pytest

from harness.cli import event_arg, event_words, size_arg
from rdtlab.cli import main
from tests.support.runs import FIXTURES, REPO

SW = [
    "--sender",
    f"python3 {FIXTURES}/sw_sender.py {{receiver_host}} {{receiver_port}} {{file}} {{timeout}}",
    "--receiver",
    f"python3 {FIXTURES}/sw_receiver.py {{listen_port}} {{output}}",
    "--param",
    "timeout=50",
    "--output-format",
    "comn-sw",
    "--backend",
    "local",
]


def test_json_has_the_contract_fields(capsys):
    assert main(["run", *SW, "--link", "delay 1ms loss 10%", "--size", "10KiB", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["backend"] == "local" and out["seed"] == 3
    assert out["size_bytes"] == 10240 and out["goodput_kBps"] > 0 and out["wire_time_s"] > 0
    assert out["retransmissions"] == out["printed"]["retransmissions"]
    assert out["params"] == {"timeout": 50}


def test_human_summary_prints_the_seed_even_when_random(capsys):
    assert main(["run", *SW, "--link", "delay 1ms", "--size", "4096"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: the file arrived intact")
    assert "seed " in out and "goodput" in out and "forward" in out and "reverse" in out


def test_pcap_of_the_link(capsys, tmp_path):
    pcap = tmp_path / "link.pcap"
    assert main(["run", *SW, "--link", "delay 1ms", "--size", "3000", "--pcap", str(pcap)]) == 0
    data = pcap.read_bytes()
    assert data[:4] in (
        bytes.fromhex("d4c3b2a1"),
        bytes.fromhex("a1b2c3d4"),
        bytes.fromhex("4d3cb2a1"),
        bytes.fromhex("a1b23c4d"),
    )
    assert len(data) > 3000  # the three data messages at least


def test_failed_transfer_exits_1(capsys):
    code = main(
        [
            "run",
            "--sender",
            f"python3 {FIXTURES}/badprog.py crash",
            "--receiver",
            SW[3],
            "--backend",
            "local",
            "--size",
            "100",
            "--json",
        ]
    )
    assert code == 1
    assert json.loads(capsys.readouterr().out)["error"] == "sender failed (exit 3: badprog: crashing on purpose)"


@pytest.mark.parametrize(
    "args, says",
    [
        (["--link", "dely 5ms"], "dely"),
        (["--file", "/nonexistent/rdt"], "file to send not found: /nonexistent/rdt"),
        (["--size", "10XB"], "expected a size like"),
        (["--timeout", "-1"], "expected a positive number of seconds"),
        (["--param", "=3"], "expected KEY=VALUE"),
        (["--down", "p0:sideways@10"], "PATH:forward|reverse@MS"),
        (["--up", "p0"], "expected PATH@MS"),
    ],
)
def test_bad_usage_exits_2_with_one_line(capsys, args, says):
    with pytest.raises(SystemExit) as e:
        code = main(["run", *SW, *args])
        raise SystemExit(code)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "event",
    [
        {"cmd": "down", "path": "p1", "at_ms": 2000},
        {"cmd": "up", "path": "p0", "at_ms": 4000, "direction": "reverse"},
    ],
)
def test_a_schedule_event_reads_back_from_its_words(event):
    flag, value = event_words(event)
    assert flag == f"--{event['cmd']}" and {"cmd": event["cmd"]} | event_arg(value) == event


def test_unavailable_backend_exits_2(capsys):
    from harness.backends.kernel import unavailable_reason

    if unavailable_reason() is None:
        pytest.skip("this kernel has sch_netem")
    assert main(["run", *SW[:-2], "--backend", "kernel", "--size", "10"]) == 2
    assert capsys.readouterr().err.strip() == f"rdtlab run: {unavailable_reason()}"


def test_entry_point_never_prints_a_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "rdtlab", "run", *SW, "--link", "delay 5ms lose 3%"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("rdtlab run: bad forward link spec") and done.stderr.count("\n") == 1


def test_demo_runs_a_real_comn_transfer(capsys):
    assert main(["demo", "--backend", "local", "--size", "20KiB", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["printed"] is not None


@pytest.mark.parametrize("text, n", [("4096", 4096), ("100KiB", 102400), ("1MiB", 1 << 20), ("2MB", 2_000_000)])
def test_sizes(text, n):
    assert size_arg(text) == n


@pytest.mark.netns
def test_iperf3_through_the_cli(capsys):
    code = main(
        [
            "run",
            "--sender",
            "iperf3 -c {receiver_host} -p {receiver_port} -n 200K --json",
            "--receiver",
            "iperf3 -s -1 -p {listen_port}",
            "--link",
            "delay 2ms rate 10mbit",
            "--backend",
            "netns",
            "--no-verify",
            "--output-format",
            "iperf3-json",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["ok"] and not out["verified"]
    assert 0 < out["printed"]["throughput_kBps"] <= 1230


BLOCK = """
import sys
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name == {block!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name={missing!r})
sys.meta_path.insert(0, Missing())
from rdtlab.cli import main
sys.exit(main(["--help"]))
"""


def test_an_installation_without_the_grader_says_so_and_a_broken_part_is_loud():
    """The students' lab image has no grader: `rdtlab --help` offers no grade or check and
    says why. A grader that is there but cannot load (a dependency missing) stops `rdtlab`."""
    done = subprocess.run(
        [sys.executable, "-c", BLOCK.format(block="grader", missing="grader")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "grade, check: not in this installation" in done.stdout and "check your programs" not in done.stdout
    broken = subprocess.run(
        [sys.executable, "-c", BLOCK.format(block="grader.cli", missing="nbgrader")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert broken.returncode == 1 and "No module named 'grader.cli'" in broken.stderr, broken.stderr
