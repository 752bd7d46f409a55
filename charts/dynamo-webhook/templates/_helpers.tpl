{{/*
Shared pieces of the dynamo-webhook templates. Object names are fixed, as in deploy/: the RBAC names
the two webhook configurations, the operator shares Secret webhook-server-cert, and the CRDs name
the Service; only the namespace follows the release.
*/}}

{{/* Labels of every object: deploy/'s three, plus Helm's bookkeeping. */}}
{{- define "dynamo-webhook.labels" -}}
app.kubernetes.io/name: dynamo-webhook
app.kubernetes.io/component: webhook
app.kubernetes.io/part-of: dynamo-operator
{{ include "dynamo-webhook.helmLabels" . }}
{{- end }}

{{- define "dynamo-webhook.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* An image reference: repository@digest when a digest is given, else repository:tag ("image", "tag"). */}}
{{- define "dynamo-webhook.imageRef" -}}
{{- if .image.digest -}}
{{ .image.repository }}@{{ .image.digest }}
{{- else -}}
{{ .image.repository }}:{{ .tag }}
{{- end -}}
{{- end }}

{{- define "dynamo-webhook.image" -}}
{{ include "dynamo-webhook.imageRef" (dict "image" .Values.image "tag" (.Values.image.tag | default .Chart.AppVersion)) }}
{{- end }}

{{/* The kubectl image of the hook Jobs and the test Pod. */}}
{{- define "dynamo-webhook.kubectlImage" -}}
{{ include "dynamo-webhook.imageRef" (dict "image" .Values.crdConversion.image "tag" .Values.crdConversion.image.tag) }}
{{- end }}

{{/* imagePullSecrets of a pod spec, when any are given. */}}
{{- define "dynamo-webhook.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- end }}

{{/* The pod-level securityContext every pod of the chart runs with (non-root, seccomp). */}}
{{- define "dynamo-webhook.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{/* The container-level securityContext of the hook and test containers. */}}
{{- define "dynamo-webhook.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
{{- end }}

{{/*
Whether a monitoring object is rendered ("enabled": true, false or null; "api": its
group/version/kind): null renders it only where the cluster serves that API.
*/}}
{{- define "dynamo-webhook.monitoringOn" -}}
{{- if kindIs "invalid" .enabled -}}
{{- if .root.Capabilities.APIVersions.Has .api }}true{{ end -}}
{{- else if .enabled }}true{{ end -}}
{{- end }}

{{/* The fewest webhook pods: autoscaling.minReplicas under the autoscaler, else replicas. */}}
{{- define "dynamo-webhook.fewestReplicas" -}}
{{ ternary .Values.autoscaling.minReplicas .Values.replicas .Values.autoscaling.enabled }}
{{- end }}

{{/*
Whether the PodDisruptionBudget is rendered: enabled, and unable to block a node drain
(maxUnavailable set, or minAvailable below the fewest replicas).
*/}}
{{- define "dynamo-webhook.pdbOn" -}}
{{- $pdb := .Values.podDisruptionBudget -}}
{{- $fewest := include "dynamo-webhook.fewestReplicas" . | int -}}
{{- if $pdb.enabled -}}
{{- if not (kindIs "invalid" $pdb.maxUnavailable) }}true
{{- else if lt (int $pdb.minAvailable) $fewest }}true
{{- end -}}
{{- end -}}
{{- end }}

{{/*
An admission webhook's selectors: its own ("namespaceSelector", "objectSelector", dicts or
nil) merged with the values' webhooks.namespaceSelector / objectSelector (matchLabels merged,
matchExpressions appended); nothing when both are empty.
*/}}
{{- define "dynamo-webhook.selectors" -}}
{{- range $field := list "namespaceSelector" "objectSelector" }}
{{- $own := get $ $field | default dict -}}
{{- $extra := get $.root.Values.webhooks $field | default dict -}}
{{- $labels := merge (deepCopy ($own.matchLabels | default dict)) ($extra.matchLabels | default dict) -}}
{{- $expressions := concat ($own.matchExpressions | default list) ($extra.matchExpressions | default list) -}}
{{- $selector := dict -}}
{{- if $labels }}{{ $_ := set $selector "matchLabels" $labels }}{{ end -}}
{{- if $expressions }}{{ $_ := set $selector "matchExpressions" $expressions }}{{ end -}}
{{- if $selector }}
{{ $field }}:
{{- toYaml $selector | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{- define "dynamo-webhook.certManager" -}}
{{- if eq .Values.certMode "certManager" }}true{{ end }}
{{- end }}

{{/* The serving Certificate the cert-manager CA injector reads the CA from. */}}
{{- define "dynamo-webhook.injectCaFrom" -}}
{{ .Release.Namespace }}/dynamo-webhook-serving-cert
{{- end }}

{{/* A webhook's clientConfig: the Service, port 443, at the given path ("path" and "root"). */}}
{{- define "dynamo-webhook.clientConfig" -}}
clientConfig:
  service:
    name: {{ .root.Values.serviceName }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end }}

{{/* The four convertible CRDs (the registry's convertible kinds). */}}
{{- define "dynamo-webhook.convertibleCrds" -}}
- dynamographdeploymentrequests.nvidia.com
- dynamographdeployments.nvidia.com
- dynamocomponentdeployments.nvidia.com
- dynamographdeploymentscalingadapters.nvidia.com
{{- end }}

{{/* The merge patch that points a convertible CRD's conversion webhook at the Service (JSON). */}}
{{- define "dynamo-webhook.crdConversionPatch" -}}
{{- $service := dict "name" .Values.serviceName "namespace" .Release.Namespace "path" "/convert" "port" 443 -}}
{{- $webhook := dict "conversionReviewVersions" (list "v1") "clientConfig" (dict "service" $service) -}}
{{- $patch := dict "spec" (dict "conversion" (dict "strategy" "Webhook" "webhook" $webhook)) -}}
{{- if include "dynamo-webhook.certManager" . -}}
{{- $_ := set $patch "metadata" (dict "annotations" (dict "cert-manager.io/inject-ca-from" (include "dynamo-webhook.injectCaFrom" .))) -}}
{{- end -}}
{{ toJson $patch }}
{{- end }}

{{/*
The environment variables the chart sets on the webhook container itself (values such as
features.*, logLevel and operatorPrincipal set the DYNAMO_WEBHOOK_* ones): extraEnv may not name
them, since a second entry of one name would silently win or lose.
*/}}
{{- define "dynamo-webhook.chartEnv" -}}
{{- list "DYNAMO_WEBHOOK_NAMESPACE" "POD_NAME" "POD_NAMESPACE" "POD_SERVICE_ACCOUNT" "DYNAMO_WEBHOOK_SERVICE_NAME" "DYNAMO_WEBHOOK_SECRET_NAME" "DYNAMO_WEBHOOK_CERT_DIR" "DYNAMO_WEBHOOK_PORT" "DYNAMO_WEBHOOK_METRICS_PORT" "DYNAMO_WEBHOOK_PRINT_CURL" "DYNAMO_WEBHOOK_DRAIN_SECONDS" "DYNAMO_WEBHOOK_CERT_MODE" "DYNAMO_WEBHOOK_FEATURE_GROVE" "DYNAMO_WEBHOOK_FEATURE_CHECKPOINT" "DYNAMO_WEBHOOK_FEATURE_GPU_DISCOVERY" "DYNAMO_WEBHOOK_OPERATOR_PRINCIPAL" "DYNAMO_WEBHOOK_PLANNER_SERVICE_ACCOUNT" "DYNAMO_WEBHOOK_LOG_LEVEL" | toJson -}}
{{- end }}

{{- define "dynamo-webhook.checkExtraEnv" -}}
{{- $reserved := include "dynamo-webhook.chartEnv" . | fromJsonArray -}}
{{- range .Values.extraEnv }}
{{- if has .name $reserved }}
{{- fail (printf "extraEnv: %s is set by the chart; use its value (values.yaml) instead" .name) }}
{{- end }}
{{- end }}
{{- end }}
