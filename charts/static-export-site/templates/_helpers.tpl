{{/* Name of the chart's objects: the release name, with the chart name unless it already contains it. */}}
{{- define "site.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "site.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "site.labels" -}}
{{ include "site.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The `helm test` pod's labels: not the site's selector labels, or its Service, PodDisruptionBudget
(which refuses every eviction while it selects a pod no controller owns) and spread would count it. */}}
{{- define "site.testLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret the pods read the link from: the operator's (existingSecret) or the chart's own. */}}
{{- define "site.secretName" -}}
{{- .Values.staticExport.existingSecret | default (include "site.fullname" .) -}}
{{- end -}}

{{- define "site.secretKey" -}}
{{- if .Values.staticExport.existingSecret -}}
{{- .Values.staticExport.existingSecretKeys.bundleUrl -}}
{{- else -}}
bundleUrl
{{- end -}}
{{- end -}}

{{/*
An image reference: repository@digest when a digest is given (pinning, air-gapped mirrors), else
repository:tag. global.imageRegistry replaces the repository's registry host and keeps its path, as
`skopeo copy` to that registry keeps it (docker.io/nginxinc/nginx-unprivileged becomes
REGISTRY/nginxinc/nginx-unprivileged). The same definition is in each of the project's charts.
*/}}
{{- define "site.imageRef" -}}
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

{{/* What nginx serves: the fetched tree, or with the sync sidecar the symlink it swaps atomically. */}}
{{- define "site.siteDir" -}}
{{- if .Values.staticExport.sync.enabled -}}
{{- printf "%s/current" (.Values.siteMountPath | trimSuffix "/") -}}
{{- else -}}
{{- printf "%s/site" (.Values.siteMountPath | trimSuffix "/") -}}
{{- end -}}
{{- end -}}

{{/* The content sync sidecar's ServiceAccount: it reads the one values Secret through the API. */}}
{{- define "site.syncServiceAccount" -}}
{{- printf "%s-sync" (include "site.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Its admission policy: cluster-scoped, so the namespace is in the name. */}}
{{- define "site.syncPolicyName" -}}
{{- printf "%s-%s" .Release.Namespace (include "site.syncServiceAccount" .) -}}
{{- end -}}

{{/* Where the nginx config (the ConfigMap) is mounted; its includes are relative to it. */}}
{{- define "site.nginxConfDir" -}}
/etc/nginx/static-export
{{- end -}}

{{/* nginx's prefix: pid and temp paths are relative to it, so they land in the writable /tmp. */}}
{{- define "site.nginxArgs" -}}
- -p
- /tmp/
- -e
- stderr
- -c
- {{ include "site.nginxConfDir" . }}/nginx.conf
{{- end -}}

{{/*
Content-Security-Policy by deployment kind. Exported pages ship their scripts and styles (some
inline, as static site generators emit them), so scripts, styles, images and fonts come from the
site itself. connect-src decides what the browser may reach outside it:
  cloud        any https origin (the platform's own services);
  clientHosted only the hosts of the features turned on;
  airGapped    nothing outside the site, except a configured playground host.
*/}}
{{- define "site.csp" -}}
{{- $f := .Values.features -}}
{{- $kind := .Values.deploymentKind -}}
{{- $connect := list "'self'" -}}
{{- $img := list "'self'" "data:" -}}
{{- if eq $kind "cloud" -}}
{{- $connect = append $connect "https:" -}}
{{- $img = append $img "https:" -}}
{{- else -}}
{{- $names := list "search" "assistant" "analytics" "playground" -}}
{{- if eq $kind "airGapped" -}}{{- $names = list "playground" -}}{{- end -}}
{{- range $names -}}
{{- $feature := get $f . -}}
{{- if and $feature.enabled $feature.host -}}
{{- $connect = append $connect $feature.host -}}
{{- end -}}
{{- end -}}
{{- end -}}
default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src {{ $img | uniq | join " " }}; font-src 'self' data:; connect-src {{ $connect | uniq | join " " }}; frame-src 'self'; frame-ancestors 'self'; base-uri 'self'; form-action 'self'; object-src 'none'
{{- end -}}

{{/* The content checks `fetch` and `sync` share: registry login, signature, CA, retries, site check, deadline. */}}
{{- define "site.fetchChecks" -}}
{{- $oci := .Values.staticExport.oci -}}
{{- $fetch := .Values.staticExport.fetch -}}
{{- if $oci.credentialsSecret }}
- --authfile
- /var/run/static-export/registry/config.json
{{- end }}
{{- if $oci.publicKeySecret }}
- --verify-key
- /var/run/static-export/verify/{{ $oci.publicKeySecretKey }}
{{- end }}
{{- if $oci.caSecret }}
- --ca-file
- /var/run/static-export/registry-ca/{{ $oci.caSecretKey }}
{{- end }}
- --retries
- {{ $fetch.retries | quote }}
- --min-pages
- {{ $fetch.minPages | quote }}
- --timeout
- {{ printf "%ds" ($fetch.timeoutSeconds | int64) | quote }}
{{- end -}}

{{/* `static-export sync`: the versions under the site volume, the Secret it follows, then the checks. */}}
{{- define "site.syncArgs" -}}
{{- $se := .Values.staticExport -}}
- --root
- {{ .Values.siteMountPath | trimSuffix "/" }}
- --secret
- {{ include "site.secretName" . }}
- --bundle-url-key
- {{ include "site.secretKey" . }}
{{- if $se.existingSecret }}
- --version-key
- {{ $se.existingSecretKeys.version }}
- --oci-reference-key
- {{ $se.existingSecretKeys.ociReference }}
{{- end }}
- --keep
- {{ $se.sync.keep | quote }}
{{ include "site.fetchChecks" . | trim }}
{{- end -}}

{{/* Who the sync container is: it reports the version it serves in its own pod's status. */}}
{{- define "site.syncEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{/* What the containers that download mount: the site volume, /tmp, the registry's files and, for sync, the API token. */}}
{{- define "site.fetchMounts" -}}
{{- $oci := .Values.staticExport.oci -}}
- name: site
  mountPath: {{ .Values.siteMountPath }}
- name: tmp
  mountPath: /tmp
{{- if $oci.credentialsSecret }}
- name: registry-login
  mountPath: /var/run/static-export/registry
  readOnly: true
{{- end }}
{{- if $oci.publicKeySecret }}
- name: verify-key
  mountPath: /var/run/static-export/verify
  readOnly: true
{{- end }}
{{- if $oci.caSecret }}
- name: registry-ca
  mountPath: /var/run/static-export/registry-ca
  readOnly: true
{{- end }}
{{- if .Values.staticExport.sync.enabled }}
# Only the sync containers get a token (the pod mounts none): nginx never reaches the API.
- name: kube-api-access
  mountPath: /var/run/secrets/kubernetes.io/serviceaccount
  readOnly: true
{{- end }}
{{- end -}}

{{/*
nginx worker processes: one per core of nginx's CPU limit (or, without one, its request), rounded
up. `auto` starts one per core of the node, each with its own buffers, inside a memory limit sized
for a few; it is left only when neither is set.
*/}}
{{- define "site.nginxWorkers" -}}
{{- $cpu := dig "limits" "cpu" "" .Values.resources | default (dig "requests" "cpu" "" .Values.resources) | toString -}}
{{- if not $cpu -}}
auto
{{- else if hasSuffix "m" $cpu -}}
{{- max 1 (div (add (trimSuffix "m" $cpu | atoi) 999) 1000) -}}
{{- else -}}
{{- max 1 (ceil (float64 $cpu) | int) -}}
{{- end -}}
{{- end -}}

{{/* The pods' spread: across nodes, softly (ScheduleAnyway), with spreadAcrossNodes; then the user's own constraints. */}}
{{- define "site.topologySpread" -}}
{{- $constraints := list -}}
{{- if .Values.spreadAcrossNodes -}}
{{- $constraints = append $constraints (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" (dict "matchLabels" (include "site.selectorLabels" . | fromYaml))) -}}
{{- end -}}
{{- toYaml (concat $constraints .Values.topologySpreadConstraints) -}}
{{- end -}}
