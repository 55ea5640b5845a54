{{/* Names. fullname is the release name when it already contains the chart name ("argo-why"), else
release-chart, cut to 63 characters (a DNS label, as Service names must be). */}}
{{- define "argo-why.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "argo-why.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Cluster-scoped objects (ClusterRole, ClusterRoleBinding) carry the namespace too: two releases of the same
name in two namespaces must not take over each other's objects. */}}
{{- define "argo-why.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "argo-why.fullname" .) | trunc 253 | trimSuffix "-" }}
{{- end }}

{{- define "argo-why.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "argo-why.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "argo-why.selectorLabels" -}}
app.kubernetes.io/name: {{ include "argo-why.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "argo-why.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: argo-why
{{- end }}

{{/* The bot's objects. Its selector (name, instance) is the one of chart 0.1, so upgrades keep the Deployment. */}}
{{- define "argo-why.labels" -}}
{{ include "argo-why.commonLabels" . }}
{{ include "argo-why.selectorLabels" . }}
app.kubernetes.io/component: bot
{{- end }}

{{/* The in-chart Redis has a name of its own, so that no selector of the bot ever matches its pods. */}}
{{- define "argo-why.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "argo-why.name" . }}-redis
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "argo-why.redisLabels" -}}
{{ include "argo-why.commonLabels" . }}
{{ include "argo-why.redisSelectorLabels" . }}
app.kubernetes.io/component: redis
{{- end }}

{{/* repository:tag, or repository@digest when a digest is given (the tag is then only informative). */}}
{{- define "argo-why.image" -}}
{{- $img := .image -}}
{{- if $img.digest -}}
{{ $img.repository }}@{{ $img.digest }}
{{- else -}}
{{ $img.repository }}:{{ $img.tag | default .default }}
{{- end -}}
{{- end }}

{{- define "argo-why.redisHost" -}}
{{ include "argo-why.fullname" . }}-redis
{{- end }}

{{/* Checks that no schema can express; each failure is one line naming the values to change. */}}
{{- define "argo-why.validate" -}}
{{- $v := .Values -}}
{{- if not $v.slack.channel }}
{{- fail "slack.channel is required: the ID (C...) of the channel for alerts, e.g. --set slack.channel=C0123456789" }}
{{- end }}
{{- if and (not $v.argocd.publicUrl) (regexMatch "^https?://([^/:.]+|[^/:]+[.]svc|[^/:]+[.]cluster[.]local)(:[0-9]+)?(/.*)?$" $v.argocd.url) }}
{{- fail (printf "argocd.publicUrl is required: Slack's links to Argo CD would point at %s, which only the cluster reaches; set the URL people open in a browser, e.g. --set argocd.publicUrl=https://argocd.example.com" $v.argocd.url) }}
{{- end }}
{{- if $v.git.provider }}
{{- $_ := include "argo-why.gitTokenSecret" . }}
{{- end }}
{{- $redisWays := 0 }}
{{- if $v.redis.enabled }}{{ $redisWays = add1 $redisWays }}{{ end }}
{{- if $v.externalRedis.url }}{{ $redisWays = add1 $redisWays }}{{ end }}
{{- if $v.externalRedis.existingSecret }}{{ $redisWays = add1 $redisWays }}{{ end }}
{{- if gt $redisWays 1 }}
{{- fail "Redis: set only one of redis.enabled (in-chart Redis), externalRedis.url, externalRedis.existingSecret" }}
{{- end }}
{{- if and (eq $redisWays 0) (gt (int $v.replicaCount) 1) }}
{{- fail "Redis: without redis.enabled or externalRedis, the bot keeps its state in memory and must run alone (replicaCount: 1)" }}
{{- end }}
{{- if and $v.slack.socketMode (gt (int $v.replicaCount) 1) }}
{{- fail "slack.socketMode: Slack sends each event to one random connection, so Socket Mode needs replicaCount: 1" }}
{{- end }}
{{- if and $v.argocd.tls.caConfigMap $v.argocd.tls.caSecret }}
{{- fail "argocd.tls: set caConfigMap or caSecret, not both" }}
{{- end }}
{{- if and $v.argocd.clusterContexts (not $v.kubeconfig.secret) }}
{{- fail "argocd.clusterContexts names kube contexts: mount the kubeconfig that defines them with kubeconfig.secret" }}
{{- end }}
{{- if and $v.view.enabled (not $v.view.baseUrl) (not (and $v.ingress.enabled $v.ingress.host)) }}
{{- fail "view.enabled: the links need the bot's public URL: set view.baseUrl, or ingress.enabled and ingress.host" }}
{{- end }}
{{- /* SHUTDOWN_GRACE_SECONDS as the bot will read it (its default 20 when unset), against the pod's grace period */}}
{{- $grace := 20.0 }}
{{- if hasKey $v.env "SHUTDOWN_GRACE_SECONDS" }}{{ $grace = float64 (index $v.env "SHUTDOWN_GRACE_SECONDS") }}{{ end }}
{{- range $v.extraEnv }}{{ if and (eq .name "SHUTDOWN_GRACE_SECONDS") (hasKey . "value") }}{{ $grace = float64 .value }}{{ end }}{{ end }}
{{- if gt (addf $grace 5) (float64 $v.terminationGracePeriodSeconds) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be at least 5 s over SHUTDOWN_GRACE_SECONDS (%v): the bot finishes or hands back its jobs within that, then flushes the digest, and Kubernetes kills the pod when terminationGracePeriodSeconds runs out" $v.terminationGracePeriodSeconds $grace) }}
{{- end }}
{{- $secretNames := list "REDIS_URL" "REDIS_PASSWORD" "SLACK_BOT_TOKEN" "SLACK_SIGNING_SECRET" "SLACK_APP_TOKEN" "ARGOCD_TOKEN" "WEBHOOK_TOKEN" "GIT_TOKEN" "VIEW_LINK_KEY" }}
{{- $chartNames := list "PORT" "METRICS_PORT" "SLACK_CHANNEL" "ARGOCD_URL" "ARGOCD_INSECURE" "ARGOCD_CA_FILE" "ARGOCD_APP_NAMESPACE" "ARGOCD_CM_DEFINITION" "ARGOCD_CLUSTER_CONTEXTS" "KUBECONFIG" "GIT_PROVIDER" "GIT_API_URL" "APPROVERS" "APPROVALS_REQUIRED" "VIEW_LINK_TTL" "VIEW_BASE_URL" "CHANNEL_ROUTES" "APPROVER_ROUTES" "FLEET_MIN_APPS" "DAILY_SUMMARY_AT" "WEEKLY_REPORT_AT" }}
{{- $names := keys $v.env }}
{{- range $v.extraEnv }}{{ $names = append $names .name }}{{ end }}
{{- range $name := $names }}
{{- if has $name $secretNames }}
{{- fail (printf "env.%s: a literal here would silently win over the Secret; %s" $name (ternary "use redis.* or externalRedis.* (deploy/README.md, step 4)" "keep it in existingSecret" (eq $name "REDIS_URL"))) }}
{{- end }}
{{- if has $name $chartNames }}
{{- fail (printf "env.%s is set by the chart from its own values (see values.yaml); set those instead" $name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* REDIS_URL, from exactly one place: the in-chart Redis (with its password through $(REDIS_PASSWORD), which
Kubernetes expands from the entry before it), externalRedis.url, or a key of externalRedis.existingSecret. Never a
literal next to a Secret that also holds it. */}}
{{- define "argo-why.redisEnv" -}}
{{- $v := .Values -}}
{{- if $v.redis.enabled }}
{{- if $v.redis.auth.existingSecret }}
- name: REDIS_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ $v.redis.auth.existingSecret }}, key: {{ $v.redis.auth.passwordKey }}}}
- {name: REDIS_URL, value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:6379/0" (include "argo-why.redisHost" .) | quote }}}
{{- else }}
- {name: REDIS_URL, value: {{ printf "redis://%s:6379/0" (include "argo-why.redisHost" .) | quote }}}
{{- end }}
{{- else if $v.externalRedis.url }}
- {name: REDIS_URL, value: {{ $v.externalRedis.url | quote }}}
{{- else if $v.externalRedis.existingSecret }}
- name: REDIS_URL
  valueFrom: {secretKeyRef: {name: {{ $v.externalRedis.existingSecret }}, key: {{ $v.externalRedis.existingSecretKey }}}}
{{- end }}
{{- end }}

{{/* The base of the "Full diff" links: view.baseUrl, else the Ingress host (https:// with TLS). */}}
{{- define "argo-why.viewBaseUrl" -}}
{{- if .Values.view.baseUrl -}}
{{ .Values.view.baseUrl }}
{{- else -}}
{{ ternary "https" "http" .Values.ingress.tls.enabled }}://{{ .Values.ingress.host }}
{{- end -}}
{{- end }}

{{/* The Secret holding GIT_TOKEN. Required with git.provider: the chart cannot see inside Secrets, and a
secretKeyRef to a key the Secret lacks keeps the pod in CreateContainerConfigError without a word at install. */}}
{{- define "argo-why.gitTokenSecret" -}}
{{- required (printf "git.tokenSecret is required with git.provider=%s: pull requests need a token; add the key %s to the Secret (deploy/README.md, step 3) and name that Secret, e.g. --set git.tokenSecret=%s" .Values.git.provider .Values.git.tokenKey .Values.existingSecret) .Values.git.tokenSecret }}
{{- end }}

{{/*
A route list ([{project, channel}] or [{project, approvers}]) as the bot reads CHANNEL_ROUTES and APPROVER_ROUTES:
project=value entries separated by ";", in the order given (first match wins; a map would lose the order).
*/}}
{{- define "argo-why.routes" -}}
{{- $out := list -}}
{{- range .routes -}}
{{- $value := index . $.key -}}
{{- if kindIs "slice" $value }}{{ $value = join " " $value }}{{ end -}}
{{- $out = append $out (printf "%s=%s" .project $value) -}}
{{- end -}}
{{- join ";" $out -}}
{{- end -}}
