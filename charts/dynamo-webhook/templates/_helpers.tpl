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
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "dynamo-webhook.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
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
