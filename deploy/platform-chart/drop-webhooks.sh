#!/bin/sh
# Helm post-renderer for the Dynamo platform chart when dynamo-webhook serves admission:
# reads the rendered manifests on stdin and writes them without the chart's
# ValidatingWebhookConfiguration and MutatingWebhookConfiguration (which would keep calling the
# operator). Needs kubectl (kustomize) on PATH.
#   helm upgrade --install ... --post-renderer deploy/platform-chart/drop-webhooks.sh
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/chart.yaml"
cat > "$dir/kustomization.yaml" <<'KUSTOMIZATION'
resources: [chart.yaml]
patches:
- target: {group: admissionregistration.k8s.io, kind: ValidatingWebhookConfiguration}
  patch: '{"$patch": "delete", "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "any"}}'
- target: {group: admissionregistration.k8s.io, kind: MutatingWebhookConfiguration}
  patch: '{"$patch": "delete", "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration", "metadata": {"name": "any"}}'
KUSTOMIZATION
kubectl kustomize "$dir"
