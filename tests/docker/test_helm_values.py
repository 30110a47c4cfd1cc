"""The course's hub on Kubernetes (docker/hub/helm/): the values file passes the schema
written from the Zero to JupyterHub chart 4.4.0's reference, the schema refuses what it
should, the settings are the compose hub's, and the hub.extraConfig snippets give each
student a uid of their own, no capability beyond the runtime's defaults, and a group.
Pure: no cluster, no Docker, no socket (the chart was never installed here)."""

import copy
import json
import re
import sys
import tomllib
import types

import jsonschema
import pytest
import yaml
from traitlets.config import Config

from tests.support import REPO

pytestmark = pytest.mark.unit  # pure code: no root, no network, seconds (tests/conftest.py)

HELM = REPO / "docker" / "hub" / "helm"
COMPOSE_SETTINGS = REPO / "docker" / "hub" / "settings.toml"
# The settings (docker/hub/settings.toml) the Helm values must agree with.
SETTINGS = (
    "cpu_limit",
    "mem_limit",
    "pids_limit",
    "cull_timeout",
    "cull_every",
    "uid_base",
    "gid",
    "admin",
    "course_id",
    "start_capabilities",
)
# The container runtime's default capabilities (Docker's and containerd's alike): the
# most a student's container may list under capabilities.add.
RUNTIME_DEFAULT_CAPS = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "NET_RAW",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
LTI_ROLES = "https://purl.imsglobal.org/spec/lti/claim/roles"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"


@pytest.fixture(scope="module")
def values():
    return yaml.safe_load((HELM / "values.yaml").read_text())


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((HELM / "values.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def compose_settings() -> dict:
    settings = tomllib.loads(COMPOSE_SETTINGS.read_text())
    tables = [settings, *(v for v in settings.values() if isinstance(v, dict))]
    found = {}
    for key in SETTINGS:  # at the top or in one table
        hits = [t[key] for t in tables if key in t]
        assert hits, f"{COMPOSE_SETTINGS} has no {key}"
        found[key] = hits[0]
    return found


def to_bytes(size) -> int:
    """JupyterHub's and Docker's sizes alike: a number of bytes, or K/M/G/T in powers of 1024."""
    if isinstance(size, (int, float)):
        return int(size)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)b?", size.strip().lower())
    assert m, f"not a size: {size!r}"
    return int(float(m[1]) * 1024 ** " kmgt".index(m[2] or " "))


@pytest.fixture(autouse=True)
def nativeauthenticator(monkeypatch):
    """The hub image's NativeAuthenticator, as far as the snippets use it (its folder)."""
    monkeypatch.setitem(
        sys.modules, "nativeauthenticator", types.SimpleNamespace(__file__="/site/nativeauthenticator/__init__.py")
    )


def hub_config(values, authenticator_class=None) -> Config:
    """Configuration as the chart's jupyterhub_config.py makes it from these values (the
    parts the snippets touch), then the hub.extraConfig snippets in key order."""
    c = Config()
    c.KubeSpawner.environment = dict(values["singleuser"].get("extraEnv", {}))
    c.JupyterHub.template_paths = []
    for section, settings in values["hub"]["config"].items():
        c[section].update(copy.deepcopy(settings))
    if authenticator_class:
        c.JupyterHub.authenticator_class = authenticator_class
    for name, code in sorted(values["hub"]["extraConfig"].items()):
        exec(compile(code, name, "exec"), {"c": c})
    return c


def spawner(user_id, name):
    return types.SimpleNamespace(user=types.SimpleNamespace(id=user_id, name=name))


def test_the_values_pass_the_schema_written_from_the_charts_reference(values, validator):
    assert "4.4.0" in validator.schema["title"]
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(values)]
    assert not errors, errors


def _misspell(v):
    v["singleuser"]["memory"]["limt"] = v["singleuser"]["memory"].pop("limit")


def _set(path, value):
    def change(v):
        *parents, last = path
        for key in parents:
            v = v[key]
        v[last] = value

    return change


REFUSED = {
    "a misspelt key": (_misspell, ["singleuser", "memory"], "additionalProperties"),
    "cpu.limit as a list": (_set(["singleuser", "cpu", "limit"], [1]), ["singleuser", "cpu", "limit"], "type"),
    "an unknown top-level key": (_set(["singleusers"], {}), [], "additionalProperties"),
    "Kubernetes' Gi for JupyterHub's memory": (
        _set(["singleuser", "memory", "limit"], "2Gi"),
        ["singleuser", "memory", "limit"],
        "pattern",
    ),
    "a hub.config section not a class": (_set(["hub", "config", "loadRoles"], {}), ["hub", "config"], "pattern"),
    "a role's misspelt key": (
        _set(["hub", "loadRoles", "grader-rdtlab-access", "group"], ["instructors"]),
        ["hub", "loadRoles", "grader-rdtlab-access"],
        "additionalProperties",
    ),
    "a service type not Kubernetes'": (
        _set(["proxy", "service", "type"], "Loadbalancer"),
        ["proxy", "service", "type"],
        "enum",
    ),
    "a removed key (hub.fsGid)": (_set(["hub", "fsGid"], 1000), ["hub"], "additionalProperties"),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_the_schema_refuses(case, values, validator):
    change, where, rule = REFUSED[case]
    wrong = copy.deepcopy(values)
    change(wrong)
    found = [(list(e.absolute_path), e.validator) for e in validator.iter_errors(wrong)]
    assert (where, rule) in found, found


def test_the_settings_are_the_compose_hubs(values):
    settings = compose_settings()
    student = values["singleuser"]
    assert float(student["cpu"]["limit"]) == float(settings["cpu_limit"])
    assert to_bytes(student["memory"]["limit"]) == to_bytes(settings["mem_limit"])
    # pids are the kubelet's (podPidsLimit), so the values file says the number in a comment
    pids = re.findall(r"podPidsLimit:\s*(\d+)", (HELM / "values.yaml").read_text())
    assert pids and {int(p) for p in pids} == {int(settings["pids_limit"])}
    assert values["cull"]["enabled"] and values["cull"]["timeout"] == int(settings["cull_timeout"])
    assert values["cull"]["every"] == int(settings["cull_every"])
    env = hub_config(values).KubeSpawner.environment
    assert env["NB_UID"](spawner(7, "alice")) == str(int(settings["uid_base"]) + 7)
    assert env["NB_GID"] == str(settings["gid"]) and values["singleuser"]["fsGid"] == int(settings["gid"])
    assert env["RDTLAB_COURSE_ID"] == settings["course_id"]
    assert values["hub"]["config"]["Authenticator"]["admin_users"] == [settings["admin"]]
    # the start's capabilities: a student's pod, and the compose hub's grader container
    # (compose.yaml cannot read settings.toml)
    context = hub_config(values).KubeSpawner.container_security_context
    assert context["capabilities"]["add"] == settings["start_capabilities"]
    compose = yaml.safe_load((REPO / "docker" / "hub" / "compose.yaml").read_text())
    assert compose["services"]["grader"]["cap_add"] == settings["start_capabilities"]


def test_each_student_runs_under_a_uid_of_their_own_with_nothing_beyond_the_defaults(values):
    """The image's start (rdtlab-hub-start, its entry point) begins as root, as under
    DockerSpawner, and drops to NB_UID: the chart keeps the entry point and passes the
    server's command as arguments."""
    c = hub_config(values)
    env = c.KubeSpawner.environment
    alice, bob = spawner(1, "alice"), spawner(2, "bob")
    assert env["NB_UID"](alice) != env["NB_UID"](bob) and env["NB_USER"](alice) == "alice"
    student = values["singleuser"]
    assert student["uid"] == 0 and student["cmd"] == "jupyterhub-singleuser"
    assert student["allowPrivilegeEscalation"] is False and c.KubeSpawner.privileged is False
    context = c.KubeSpawner.container_security_context
    assert context["allowPrivilegeEscalation"] is False and "privileged" not in context
    assert context["capabilities"]["drop"] == ["ALL"]
    assert set(context["capabilities"]["add"]) <= RUNTIME_DEFAULT_CAPS
    assert c.KubeSpawner.port == 8888
    # no internet from a student's pod: the hub, the proxy and DNS (the chart's rules)
    rules = student["networkPolicy"]["egressAllowRules"]
    assert rules["nonPrivateIPs"] is False and not rules.get("privateIPs")


def test_native_sign_up_waits_for_approval_and_the_admin_is_an_instructor(values):
    c = hub_config(values)
    assert c.JupyterHub.authenticator_class == "native" and c.Authenticator.allow_all is True
    assert c.NativeAuthenticator.enable_signup is True and c.NativeAuthenticator.open_signup is False
    assert c.JupyterHub.template_paths == ["/site/nativeauthenticator/templates"]
    assert c.JupyterHub.load_groups == {"instructors": {"users": ["instructor"]}, "students": {"users": []}}
    assert "post_auth_hook" not in c.Authenticator and "manage_groups" not in c.Authenticator


@pytest.mark.parametrize(
    "roles, group",
    [
        ([f"{MEMBERSHIP}#Instructor"], "instructors"),
        ([f"{MEMBERSHIP}/Instructor#TeachingAssistant"], "instructors"),
        (["Instructor"], "instructors"),
        ([f"{MEMBERSHIP}#Learner", "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], "students"),
        ([], "students"),
    ],
)
def test_lti_logins_take_their_group_from_the_courses_roles(values, roles, group):
    c = hub_config(values, authenticator_class="ltiauthenticator.lti13.auth.LTI13Authenticator")
    assert c.JupyterHub.template_paths == []  # NativeAuthenticator's pages only for it
    # JupyterHub refuses load_groups beside groups an authenticator manages
    assert c.Authenticator.manage_groups is True and c.JupyterHub.load_groups == {}
    login = {"name": "x@example.edu", "admin": None, "auth_state": {"sub": "x", LTI_ROLES: roles}}
    assert c.Authenticator.post_auth_hook(None, None, login)["groups"] == [group]


def test_every_student_mounts_the_exchange_and_instructors_reach_the_grader(values):
    claim = yaml.safe_load_all((HELM / "exchange-pvc.yaml").read_text())
    pvc = next(d for d in claim if d["kind"] == "PersistentVolumeClaim")
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    storage = values["singleuser"]["storage"]
    assert storage["type"] == "dynamic" and storage["homeMountPath"] == "/home/jovyan/work"
    volume = {v["name"]: v for v in storage["extraVolumes"].values()}
    mount = next(m for m in storage["extraVolumeMounts"].values() if m["mountPath"] == "/srv/nbgrader/exchange")
    assert volume[mount["name"]]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"] == "rdtlab-exchange"
    assert values["hub"]["services"]["grader-rdtlab"]["url"] == "http://grader-rdtlab:8888"
    role = values["hub"]["loadRoles"]["grader-rdtlab-access"]
    assert role["groups"] == ["instructors"] and role["scopes"] == ["access:services!service=grader-rdtlab"]
