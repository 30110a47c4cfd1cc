"""The students' uids on the course hub, in a passwd-style file the hub writes (before a
student's server starts) and the grader account reads (at collect): `name:x:uid:gid::`.

Standalone (standard library only): the hub image runs it without the kit.
"""

from __future__ import annotations

import os
import tempfile


def read(path: str) -> dict[str, int]:
    """name -> uid; an absent file is an empty map."""
    users: dict[str, int] = {}
    try:
        with open(path) as f:
            for line in f:
                fields = line.rstrip("\n").split(":")
                if len(fields) >= 4 and fields[2].isdigit():
                    users[fields[0]] = int(fields[2])
    except FileNotFoundError:
        pass
    return users


def record(path: str, name: str, uid: int, gid: int) -> None:
    """Add or keep `name`'s line (written whole: a reader never sees half a file).
    A name a passwd line cannot hold is refused with one line."""
    if not name or any(ch in name for ch in ":\n/") or name.startswith(("-", ".")):
        raise ValueError(
            f"the user name {name!r} cannot be a course account (no ':', '/', newline, leading '-' or '.')"
        )
    users = read(path)
    if users.get(name) == uid:
        return
    for other, other_uid in users.items():
        if other_uid == uid and other != name:
            raise ValueError(f"uid {uid} of {name!r} is already {other!r}'s in {path}")
    users[name] = uid
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".passwd-")
    with os.fdopen(fd, "w") as f:
        for n, u in sorted(users.items(), key=lambda item: item[1]):
            f.write(f"{n}:x:{u}:{gid}::/home/jovyan:/bin/bash\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
