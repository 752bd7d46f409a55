"""Helm post-renderer of the chart's end-to-end test: the rendered manifests from stdin to stdout,
with every admission webhook's ``clientConfig`` changed from the Service to
``url: <base URL><path>`` (there is no Service routing on loopback), as ``cluster.py`` changes
deploy/'s. Nothing else is touched. Run as ``python helm_post_render.py <base URL>``."""

from __future__ import annotations

import sys
from typing import Any

import yaml

WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def to_url(doc: dict[str, Any], base: str) -> dict[str, Any]:
    if doc.get("kind") in WEBHOOK_KINDS:
        for hook in doc["webhooks"]:
            hook["clientConfig"] = {"url": base + hook["clientConfig"]["service"]["path"]}
    return doc


def main(argv: list[str]) -> int:
    (base,) = argv
    docs = [to_url(d, base) for d in yaml.safe_load_all(sys.stdin) if d]
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
