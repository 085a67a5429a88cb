"""The deployment files under ``deploy/`` (Dockerfile, Kubernetes manifests) cannot be run here:
parse them and cross-check ports, names and config keys with each other and with the code."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
import yaml

import flott
from flott.configuration import DEFAULTS, flatten

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "kubernetes"
JM_SERVICE = "flott-jobmanager"
CONFIG_PATH = "/opt/flott/conf/config.yaml"
LABELS = {"app": "flott"}


def _load_all() -> dict[str, dict]:
    docs: dict[str, dict] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return docs


MANIFESTS = _load_all()


def _of_kind(kind: str) -> list[dict]:
    return [d for d in MANIFESTS.values() if d["kind"] == kind]


def _deployment(component: str) -> dict:
    found = [
        d for d in _of_kind("Deployment") if d["spec"]["selector"]["matchLabels"]["component"] == component
    ]
    assert len(found) == 1, f"exactly one {component} Deployment expected"
    return found[0]


def _container(deployment: dict) -> dict:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _config() -> dict[str, str]:
    (cm,) = _of_kind("ConfigMap")
    return flatten(yaml.safe_load(cm["data"]["config.yaml"]))


def _port_values() -> dict[str, int]:
    cfg = _config()
    return {
        "rpc": int(cfg["jobmanager.rpc.port"]),
        "blob-server": int(cfg["blob.server.port"]),
        "webui": int(cfg["rest.port"]),
        "rest": int(cfg["rest.port"]),
    }


def _flott_sources() -> str:
    return "\n".join(p.read_text() for p in Path(flott.__file__).parent.rglob("*.py"))


def test_every_manifest_parses_with_expected_kinds() -> None:
    files = sorted(p.name for p in K8S.glob("*.yaml"))
    assert {
        "flott-configuration-configmap.yaml",
        "jobmanager-service.yaml",
        "jobmanager-rest-service.yaml",
        "jobmanager-deployment.yaml",
        "taskmanager-deployment.yaml",
    } <= set(files)
    kinds = sorted(d["kind"] for d in MANIFESTS.values())
    assert kinds.count("Deployment") == 2
    assert kinds.count("ConfigMap") == 1
    assert kinds.count("Service") == 2
    for doc in MANIFESTS.values():
        assert doc["apiVersion"] == ("apps/v1" if doc["kind"] == "Deployment" else "v1")
        assert doc["metadata"]["labels"]["app"] == "flott"


@pytest.mark.parametrize("component", ["jobmanager", "taskmanager"])
def test_deployment_selectors_match_pod_labels(component: str) -> None:
    dep = _deployment(component)
    selector = dep["spec"]["selector"]["matchLabels"]
    assert selector == {**LABELS, "component": component}
    assert dep["spec"]["template"]["metadata"]["labels"] == selector
    assert dep["metadata"]["name"] == f"flott-{component}"


def test_services_select_the_jobmanager_pods() -> None:
    jm_labels = _deployment("jobmanager")["spec"]["template"]["metadata"]["labels"]
    services = {d["metadata"]["name"]: d for d in _of_kind("Service")}
    assert services[JM_SERVICE]["spec"]["type"] == "ClusterIP"
    assert services["flott-jobmanager-rest"]["spec"]["type"] == "NodePort"
    for svc in services.values():
        selector = svc["spec"]["selector"]
        assert selector.items() <= jm_labels.items(), svc["metadata"]["name"]
        assert selector["component"] == "jobmanager"


def test_service_ports_equal_the_config() -> None:
    values = _port_values()
    svc = MANIFESTS[f"Service/{JM_SERVICE}"]
    ports = {p["name"]: p for p in svc["spec"]["ports"]}
    assert set(ports) == {"rpc", "blob-server", "webui"}
    for svc in _of_kind("Service"):
        for p in svc["spec"]["ports"]:
            assert p["port"] == values[p["name"]], (svc["metadata"]["name"], p)
            assert p.get("targetPort", p["port"]) == values[p["name"]]


def test_container_ports_equal_the_config_and_the_service() -> None:
    values = _port_values()
    jm = _container(_deployment("jobmanager"))
    ports = {p["name"]: p["containerPort"] for p in jm["ports"]}
    assert ports == {"rpc": values["rpc"], "blob-server": values["blob-server"], "webui": values["webui"]}
    svc_ports = {p["name"]: p["port"] for p in MANIFESTS[f"Service/{JM_SERVICE}"]["spec"]["ports"]}
    assert ports == svc_ports
    for component in ("jobmanager", "taskmanager"):
        for p in _container(_deployment(component)).get("ports", []):
            assert p["containerPort"] == values[p["name"]]


def test_jobmanager_liveness_probe_uses_rest_overview() -> None:
    probe = _container(_deployment("jobmanager"))["livenessProbe"]["httpGet"]
    assert probe["path"] == "/overview"
    assert probe["port"] == _port_values()["webui"]
    assert '"/overview"' in _flott_sources()


def test_config_values_fit_the_cluster() -> None:
    cfg = _config()
    assert cfg["rest.port"] == "8081"
    assert cfg["jobmanager.rpc.port"] == "6123"
    assert cfg["blob.server.port"] == "6124"
    assert cfg["jobmanager.rpc.address"] == JM_SERVICE
    assert cfg["rest.address"] == JM_SERVICE
    for key in ("rest.bind-address", "jobmanager.bind-host", "taskmanager.bind-host"):
        assert cfg[key] == "0.0.0.0", key
    assert cfg["taskmanager.numberOfTaskSlots"] == "1"
    assert int(cfg["parallelism.default"]) >= 1
    assert cfg["high-availability.type"] == "zookeeper"
    for key in (
        "high-availability.zookeeper.quorum",
        "high-availability.cluster-id",
        "high-availability.storageDir",
    ):
        assert cfg[key], key


def test_every_config_key_is_read_by_flott() -> None:
    sources = _flott_sources()
    unknown = [k for k in _config() if k not in DEFAULTS and f'"{k}"' not in sources]
    assert not unknown, f"config keys flott never reads: {unknown}"


def test_taskmanager_args_point_at_the_jobmanager_service() -> None:
    cfg = _config()
    tm = _container(_deployment("taskmanager"))
    args = tm["args"]
    assert args[:2] == ["taskmanager", "start"]
    assert args[args.index("-m") + 1] == f"{JM_SERVICE}:{cfg['jobmanager.rpc.port']}"
    assert f'{args[args.index("--configDir") + 1]}/config.yaml' == CONFIG_PATH
    dynamic = [args[i + 1] for i, a in enumerate(args) if a == "-D"]
    assert "taskmanager.host=$(POD_IP)" in dynamic
    env = {e["name"]: e for e in tm["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert f"Service/{JM_SERVICE}" in MANIFESTS


def test_jobmanager_args_and_config_mounts() -> None:
    jm = _container(_deployment("jobmanager"))
    assert jm["args"] == ["jobmanager", "start", "--configDir", str(Path(CONFIG_PATH).parent)]
    (cm,) = _of_kind("ConfigMap")
    for component in ("jobmanager", "taskmanager"):
        pod = _deployment(component)["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["name"]: m["mountPath"] for m in _container(_deployment(component))["volumeMounts"]}
        cm_name = cm["metadata"]["name"]
        config_volumes = [n for n, v in volumes.items() if v.get("configMap", {}).get("name") == cm_name]
        assert len(config_volumes) == 1
        items = volumes[config_volumes[0]]["configMap"]["items"]
        assert items == [{"key": "config.yaml", "path": "config.yaml"}]
        assert f"{mounts[config_volumes[0]]}/config.yaml" == CONFIG_PATH
        for name, vol in volumes.items():
            claim = vol.get("persistentVolumeClaim")
            if claim:
                assert f"PersistentVolumeClaim/{claim['claimName']}" in MANIFESTS, name


def test_ha_storage_dir_is_mounted_on_the_jobmanager() -> None:
    storage = _config()["high-availability.storageDir"]
    if not storage.startswith("file://"):
        return
    path = storage.removeprefix("file://")
    mounts = [m["mountPath"] for m in _container(_deployment("jobmanager"))["volumeMounts"]]
    assert any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts), (path, mounts)


def _dockerfile() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instr, _, rest = line.partition(" ")
            out.append((instr.upper(), rest.strip()))
    return out


def test_dockerfile_exposes_the_config_ports() -> None:
    instructions = _dockerfile()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    exposed = {int(p.split("/")[0]) for i, rest in instructions if i == "EXPOSE" for p in rest.split()}
    values = _port_values()
    assert exposed == {values["webui"], values["rpc"], values["blob-server"]}


def test_dockerfile_installs_flott_and_runs_its_console_script_as_non_root() -> None:
    instructions = _dockerfile()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (entry,) = [rest for i, rest in instructions if i == "ENTRYPOINT"]
    assert entry.startswith("["), "exec form, so Kubernetes args are appended"
    assert yaml.safe_load(entry) == ["flott"]
    assert "flott" in scripts
    assert any(i == "RUN" and re.search(r"\bpip install \.(\s|$)", rest) for i, rest in instructions)
    (user,) = [rest for i, rest in instructions if i == "USER"]
    assert user not in ("root", "0")
    uid = _deployment("jobmanager")["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    useradd = next(rest for i, rest in instructions if i == "RUN" and "useradd" in rest)
    assert f"--uid {uid}" in useradd
    for i, rest in instructions:
        if i == "COPY":
            for src in shlex.split(rest)[:-1]:
                assert (ROOT / src).exists(), src
