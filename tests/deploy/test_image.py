"""The Dockerfile and the Deployment agree: the non-root UID, the ports, the cert dir, the
entrypoint; and lint-level rules for the image (no ``latest``, no root, no compilers at run time).
Reads deploy/base/deployment.yaml directly, so these run without kubectl."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from tests.deploy.manifests import DEPLOY
from tests.test_dockerfile import instructions, stages

Obj = dict[str, Any]


def deployment() -> Obj:
    data: Obj = yaml.safe_load((DEPLOY / "base" / "deployment.yaml").read_text())
    return data


def final(word: str) -> list[str]:
    return [arg for w, arg in stages()[-1] if w == word]


def test_user_is_the_pods_non_root_uid() -> None:
    user = final("USER")[-1]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0 and gid.isdigit() and int(gid) > 0, user
    pod = deployment()["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(uid)
    assert pod["securityContext"]["runAsGroup"] == int(gid)
    assert pod["securityContext"]["fsGroup"] == int(gid)  # can read the group-readable Secret files


def test_entrypoint_serves_and_the_deployment_does_not_override_it() -> None:
    assert json.loads(final("ENTRYPOINT")[-1]) == ["dynamo-webhook", "serve"]
    assert not final("CMD")
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    assert "command" not in container and "args" not in container


def test_exposed_ports_are_the_container_ports() -> None:
    exposed = {int(p) for arg in final("EXPOSE") for p in arg.split()}
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    assert exposed == {p["containerPort"] for p in container["ports"]} == {9443, 8080}


def test_cert_dir_is_the_secret_mount() -> None:
    env_lines = " ".join(final("ENV"))
    image_dir = re.search(r"DYNAMO_WEBHOOK_CERT_DIR=(\S+)", env_lines)
    assert image_dir is not None
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    env = {v["name"]: v.get("value") for v in container["env"]}
    assert image_dir.group(1) == env["DYNAMO_WEBHOOK_CERT_DIR"] == mounts["serving-cert"]
    # Nothing is written at run time outside /tmp (read-only root filesystem).
    assert "PYTHONDONTWRITEBYTECODE=1" in env_lines


def test_no_latest_tags_anywhere() -> None:
    text = (DEPLOY.parent / "Dockerfile").read_text()
    assert not re.search(r":latest\b", text)
    args = dict(arg.split("=", 1) for w, arg in instructions() if w == "ARG" and "=" in arg)
    stage_names = {a.split()[2] for w, a in instructions() if w == "FROM" and len(a.split()) == 3}
    for w, arg in instructions():
        if w != "FROM":
            continue
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], arg.split()[0])
        if image in stage_names:
            continue
        assert re.fullmatch(r"[\w./-]+:[\w.-]+(@sha256:[0-9a-f]{64})?", image), image
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    assert not container["image"].endswith(":latest") and ":" in container["image"]


def test_final_stage_installs_only_the_built_wheels() -> None:
    run = " ".join(final("RUN"))
    assert "--no-index" in run and "/wheels" in run
    assert "apt-get install" not in run
