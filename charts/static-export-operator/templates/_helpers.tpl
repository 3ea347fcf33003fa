{{/* Name of the chart's objects: the release name, with the chart name unless it already contains it. */}}
{{- define "operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "operator.labels" -}}
{{ include "operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: static-export-operator
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "operator.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "operator.fullname" .) -}}
{{- end -}}

{{- define "operator.subject" -}}
- kind: ServiceAccount
  name: {{ include "operator.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/*
An image reference: repository@digest when a digest is given (pinning, air-gapped mirrors), else
repository:tag. global.imageRegistry replaces the repository's registry host and keeps its path, as
`skopeo copy` to that registry keeps it (docker.io/nginxinc/nginx-unprivileged becomes
REGISTRY/nginxinc/nginx-unprivileged). The same definition is in each of the project's charts.
*/}}
{{- define "operator.imageRef" -}}
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

{{/*
What the operator does in the namespaces it watches, and nothing more (README.md, "RBAC", says
which code path needs each rule; the chart's RBAC test measures it on a real API server).
*/}}
{{- define "operator.rules" -}}
# Its two kinds: informers list and watch them; a reconcile reads one from that cache, and with
# get when the cache cannot show it current (deleted meanwhile).
- apiGroups: [staticexport.dev]
  resources: [staticexportreleases, agentjobs]
  verbs: [get, list, watch]
{{- if .Values.trigger.enabled }}
# The trigger receiver sets the staticexport.dev/requested-at annotation (merge patch).
- apiGroups: [staticexport.dev]
  resources: [staticexportreleases]
  verbs: [patch]
{{- end }}
# Conditions and progress, through the /status subresource (server-side apply).
- apiGroups: [staticexport.dev]
  resources: [staticexportreleases/status, agentjobs/status]
  verbs: [patch]
# The values Secret it writes names its release as owner with blockOwnerDeletion, which the
# OwnerReferencesPermissionEnforcement admission plugin allows only with this.
- apiGroups: [staticexport.dev]
  resources: [staticexportreleases/finalizers]
  verbs: [update]
# Secrets: metadata informer (list, watch), key Secrets read with get (again only once the
# informer shows them changed); values Secrets created and then server-side applied.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, patch]
# events.k8s.io Events about its resources; repeats update the series count.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# The site workloads it re-rolls: listed by the values-secret label or read by name, and only
# their pod template annotations applied; the labelled ones watched (metadata), to roll a chart
# installed after a publish at once.
- apiGroups: [apps]
  resources: [deployments, statefulsets]
  verbs: [get, list, watch, patch]
# spec.rollout.onNewContent Sync: the pods of those workloads, listed while a new version syncs to
# read what each serves (the content sync sidecar's staticexport.dev/ContentServed condition).
- apiGroups: [""]
  resources: [pods]
  verbs: [list]
{{- if .Values.rbac.fluxHelmReleases }}
# spec.target.fluxHelmRelease: the version ConfigMap (created, then server-side applied) and the
# HelmRelease, read and given the reconcile.fluxcd.io/requestedAt annotation (never its spec).
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, create, patch]
- apiGroups: [helm.toolkit.fluxcd.io]
  resources: [helmreleases]
  verbs: [get, patch]
{{- end }}
{{- if .Values.rbac.argoApplications }}
# spec.target.argoApplication: the Application, read and its staticExport.version Helm parameter set.
- apiGroups: [argoproj.io]
  resources: [applications]
  verbs: [get, patch]
{{- end }}
{{- end -}}

{{/* The operator's username, as admission sees its ServiceAccount token. */}}
{{- define "operator.username" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "operator.serviceAccountName" . }}
{{- end -}}

{{/*
CEL: the maps (or objects) `a` and `b` agree on every key but those of `except` (a CEL list): each
key of one is in the other with an equal value. Map keys have no order in CEL, so both directions.
*/}}
{{- define "operator.celSameExcept" -}}
dyn({{ .a }}).all(k, k in {{ .except }} || (k in dyn({{ .b }}) && dyn({{ .a }})[k] == dyn({{ .b }})[k])) && dyn({{ .b }}).all(k, k in {{ .except }} || k in dyn({{ .a }}))
{{- end -}}

{{/* The `helm test` objects' labels: not the operator's selector labels (its NetworkPolicy and PDB select those). */}}
{{- define "operator.testLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* With openshift the cluster assigns user and group ids (OpenShift's restricted SCC refuses ids outside the namespace's range). */}}
{{- define "operator.podSecurityContext" -}}
{{- if .Values.openshift -}}
{{- toYaml (omit .Values.podSecurityContext "runAsUser" "runAsGroup" "fsGroup") -}}
{{- else -}}
{{- toYaml .Values.podSecurityContext -}}
{{- end -}}
{{- end -}}

{{- define "operator.securityContext" -}}
{{- if .Values.openshift -}}
{{- toYaml (omit .Values.securityContext "runAsUser" "runAsGroup") -}}
{{- else -}}
{{- toYaml .Values.securityContext -}}
{{- end -}}
{{- end -}}

{{/* The replicas' spread: across nodes, softly (ScheduleAnyway), with spreadAcrossNodes; then the user's own constraints. */}}
{{- define "operator.topologySpread" -}}
{{- $constraints := list -}}
{{- if .Values.spreadAcrossNodes -}}
{{- $constraints = append $constraints (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" (dict "matchLabels" (include "operator.selectorLabels" . | fromYaml))) -}}
{{- end -}}
{{- toYaml (concat $constraints .Values.topologySpreadConstraints) -}}
{{- end -}}
