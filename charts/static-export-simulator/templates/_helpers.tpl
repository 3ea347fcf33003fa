{{/* Name of the chart's objects: the release name, with the chart name unless it already contains it. */}}
{{- define "simulator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "simulator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "simulator.labels" -}}
{{ include "simulator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: static-export-operator
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "simulator.testLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
An image reference: repository@digest when a digest is given (pinning, air-gapped mirrors), else
repository:tag. global.imageRegistry replaces the repository's registry host and keeps its path, as
`skopeo copy` to that registry keeps it (docker.io/nginxinc/nginx-unprivileged becomes
REGISTRY/nginxinc/nginx-unprivileged). The same definition is in each of the project's charts.
*/}}
{{- define "simulator.imageRef" -}}
{{- $repository := .image.repository -}}
{{- $registry := dig "imageRegistry" "" (.global | default dict) -}}
{{- if $registry -}}
{{- $parts := splitList "/" $repository -}}
{{- $host := first $parts -}}
{{- /* A first part with a dot or port, or localhost, is a registry host (Docker's rule); else the path starts there. */}}
{{- if and (gt (len $parts) 1) (or (contains "." $host) (contains ":" $host) (eq $host "localhost")) -}}
{{- $repository = rest $parts | join "/" -}}
{{- end -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" $registry) $repository -}}
{{- end -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (.image.tag | default .default | toString) -}}
{{- end -}}
{{- end -}}

{{/* The Service's address inside the cluster: what the operator calls the admin API at. */}}
{{- define "simulator.serviceUrl" -}}
{{- $port := int .Values.service.port -}}
{{- printf "http://%s.%s.svc%s" (include "simulator.fullname" .) .Release.Namespace (eq $port 80 | ternary "" (printf ":%d" $port)) -}}
{{- end -}}

{{/* Where bundle links point: the site's pods download from there. */}}
{{- define "simulator.publicUrl" -}}
{{- .Values.publicUrl | default (include "simulator.serviceUrl" .) | trimSuffix "/" -}}
{{- end -}}

{{/*
The admin key: the value given, else the one an earlier install generated (lookup: kept across
upgrades), else a new one. `helm template` has no cluster, so it generates one each time.
*/}}
{{- define "simulator.adminKey" -}}
{{- if .Values.adminKey -}}
{{- .Values.adminKey -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "simulator.fullname" .) -}}
{{- $kept := get (($existing).data | default dict) "adminKey" | default "" | b64dec -}}
{{- $kept | default (printf "mint_%s" (randAlphaNum 40)) -}}
{{- end -}}
{{- end -}}
