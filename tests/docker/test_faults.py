"""The lab's faults, each one clear line: no NET_ADMIN (the local backend, said once),
the port taken, a work folder the notebook user cannot write."""

import json
import os
import socket

import pytest

from bench._ports import free_port
from tests.support.containers import DOCKER, LAB, leftovers, run, wait_for_line
from test_lab import hand_in, lab_env

pytestmark = [pytest.mark.netns, pytest.mark.timeout(1800)]


def test_without_net_admin_the_lab_says_once_it_uses_the_local_backend_and_does(images):
    name = f"rdtlab-test-nocaps-{os.getpid()}"
    run("docker", "run", "-d", "--rm", "--name", name, "--label", "rdtlab-test", LAB)
    try:
        logs = wait_for_line(name, "JupyterLab is ready")
        notes = [line for line in logs.splitlines() if "local backend" in line]
        assert len(notes) == 1 and notes[0].startswith("rdtlab-lab: no NET_ADMIN"), logs[-1500:]
        assert "--cap-add NET_ADMIN --cap-add SYS_ADMIN --device /dev/net/tun" in notes[0]
        # the notebook says it too, in its set-up cell's output (the Lab's description)
        lab = run(
            "docker",
            "exec",
            "-u",
            "1000:100",
            "-w",
            "/home/jovyan/work/comn",
            name,
            "python3",
            "-c",
            "from harness import notebook as nb; print(repr(nb.Lab('tiny', 'comn')))",
        ).stdout
        said = next(line for line in lab.splitlines() if line.startswith("Backend: "))
        assert said.startswith(
            "Backend: local (UDP on loopback through the engine: no TCP or "
            "iperf3), because the netns backend needs CAP_NET_ADMIN"
        ), lab
        hand_in(name, "Sender2.py", "Receiver2.py")
        done = run(
            "docker",
            "exec",
            "-u",
            "1000:100",
            "-w",
            "/home/jovyan/work/comn",
            name,
            "rdtlab",
            "run",
            "--sender",
            "python3 /home/jovyan/work/comn/Sender2.py {receiver_host} {receiver_port} {file} 40",
            "--receiver",
            "python3 /home/jovyan/work/comn/Receiver2.py {listen_port} {output}",
            "--link",
            "delay 5ms loss 5% rate 10mbit",
            "--shared-queue",
            "--size",
            "20KiB",
            "--seed",
            "1",
            "--json",
            timeout=300,
            check=False,
        )
        result = json.loads(done.stdout)
        assert result["backend"] == "local" and result["ok"], result.get("error")
    finally:
        run("docker", "rm", "-f", "-v", name, check=False)


def test_port_taken_is_one_line_and_starts_nothing(images):
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        before = leftovers()
        done = run(DOCKER / "lab.sh", "up", env=lab_env(port), timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"lab: port {port} is taken by another program; choose a free one, e.g. RDTLAB_PORT={port + 1} make docker-lab"
    ), done.stderr
    assert leftovers() == before


def test_work_folder_of_another_user_is_one_line(images, tmp_path):
    work = tmp_path / "work"
    work.mkdir(mode=0o755)
    os.chown(work, 4242, 4242)
    done = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        "-v",
        f"{work}:/home/jovyan/work",
        LAB,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and "not writable by jovyan" in lines[0] and "CHOWN_WORK=yes" in lines[0], lines
    # ... and CHOWN_WORK=yes hands it over (the first step of a normal start)
    done = run(
        "docker",
        "run",
        "--rm",
        "--label",
        "rdtlab-test",
        "-e",
        "CHOWN_WORK=yes",
        "-v",
        f"{work}:/home/jovyan/work",
        "--entrypoint",
        "sh",
        LAB,
        "-c",
        "rdtlab-lab-start --version >/dev/null 2>&1; stat -c %u /home/jovyan/work",
        timeout=120,
        check=False,
    )
    assert done.stdout.split()[-1] == "1000"
