"""Signing in to the course hub (NativeAuthenticator) over HTTP, as a browser does: the
form's `_xsrf` field, then the form posted, with a cookie jar. Standard library only:
`docker/hub/hub.sh up` runs it with the host's python3 to make the admin's account.

    python3 -m rdtlab.hub.signin URL ADMIN PASSWORD

waits up to 60 s for the hub to answer, then signs the admin in, or up the first time
(NativeAuthenticator approves the admin at once); anything else is one line and exit 1.
"""

from __future__ import annotations

import http.cookiejar
import re
import sys
import time
import urllib.parse
import urllib.request


def session() -> tuple[urllib.request.OpenerDirector, http.cookiejar.CookieJar]:
    """An opener that keeps the hub's cookies, and its jar."""
    jar = http.cookiejar.CookieJar()
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)), jar


def _post_form(opener, url: str, fields: dict, timeout: float = 30):
    """GET the form at `url`, then POST `fields` with its `_xsrf`: the answer."""
    form = opener.open(url, timeout=10).read().decode()
    found = re.search(r'name="_xsrf" value="([^"]+)"', form)
    if found is None:
        raise OSError(f"{url}: no _xsrf field in the form (is this a JupyterHub?)")
    return opener.open(url, urllib.parse.urlencode({"_xsrf": found.group(1), **fields}).encode(), timeout=timeout)


def log_in(opener, url: str, user: str, password: str) -> bool:
    """Whether `user` signed in with `password` (the hub sent the browser on)."""
    page = _post_form(opener, f"{url}/hub/login", {"username": user, "password": password})
    return "/hub/login" not in page.geturl()


def sign_up(opener, url: str, user: str, password: str) -> str | None:
    """None if the hub took the sign-up, else what its page said (tags stripped)."""
    fields = {"username": user, "signup_password": password, "signup_password_confirmation": password}
    answer = _post_form(opener, f"{url}/hub/signup", fields).read().decode()
    return None if "signup was successful" in answer else re.sub(r"<[^>]+>|\s+", " ", answer)


def wait_for(url: str, seconds: float) -> None:
    """Until the hub's API answers; OSError after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{url}/hub/api", timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise OSError(f"no answer from {url} within {seconds:g} s") from None
            time.sleep(0.2)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python3 -m rdtlab.hub.signin URL ADMIN PASSWORD", file=sys.stderr)
        return 2
    url, admin, password = argv
    try:
        wait_for(url, 60)
        opener, _ = session()
        if log_in(opener, url, admin, password):
            return 0  # the admin exists and its password is ours
        why = sign_up(opener, url, admin, password)
    except OSError as e:
        print(f"hub: {e}", file=sys.stderr)
        return 1
    if why is None:
        return 0
    if "already" in why.lower():
        print(
            f"hub: the admin {admin} exists with another password than the one in secrets.env "
            "(made before it was removed?); change it at /hub/change-password, or remove the volume rdtlab-hub-data",
            file=sys.stderr,
        )
    else:
        print(f"hub: the admin's sign-up was not accepted: {why[-200:]}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
