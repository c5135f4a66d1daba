{{- define "tollgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tollgate.fullname" -}}
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

{{- define "tollgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tollgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "tollgate.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tollgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "tollgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tollgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tollgate.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
tollgate.validate fails the render on values that cannot work: more than one replica
on SQLite (each pod would keep its own ledger and limits), or without Redis.
*/}}
{{- define "tollgate.validate" -}}
{{- $multi := or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}
{{- if not (has .Values.database.type (list "sqlite" "postgres")) }}
{{- fail (printf "database.type must be sqlite or postgres, not %q" .Values.database.type) }}
{{- end }}
{{- if and $multi (eq .Values.database.type "sqlite") }}
{{- fail "more than one replica (replicaCount > 1 or autoscaling.enabled) needs database.type=postgres: on SQLite each replica would keep a ledger and virtual keys of its own" }}
{{- end }}
{{- if and $multi (not .Values.redis.enabled) }}
{{- fail "more than one replica (replicaCount > 1 or autoscaling.enabled) needs redis.enabled=true with redis.url or redis.existingSecret: without Redis each replica would count rate limits and budgets on its own" }}
{{- end }}
{{- if and (eq .Values.database.type "postgres") (not (or .Values.database.url .Values.database.existingSecret)) }}
{{- fail "database.type=postgres needs database.url or database.existingSecret" }}
{{- end }}
{{- if and .Values.redis.enabled (not (or .Values.redis.url .Values.redis.existingSecret)) }}
{{- fail "redis.enabled needs redis.url or redis.existingSecret" }}
{{- end }}
{{- if and .Values.terminationGracePeriodSeconds (le (int .Values.terminationGracePeriodSeconds) (add .Values.drainTimeoutSeconds .Values.preStopSleepSeconds | int)) }}
{{- fail "terminationGracePeriodSeconds must be longer than drainTimeoutSeconds + preStopSleepSeconds, or in-flight requests are cut off" }}
{{- end }}
{{- end }}

{{- define "tollgate.terminationGracePeriodSeconds" -}}
{{- .Values.terminationGracePeriodSeconds | default (add .Values.drainTimeoutSeconds .Values.preStopSleepSeconds 10) }}
{{- end }}

{{/* tollgate.config is tollgate.yaml: the values' config with what the chart sets. */}}
{{- define "tollgate.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- $server := get $cfg "server" | default dict }}
{{- $_ := set $server "addr" (printf "0.0.0.0:%d" (int .Values.service.port)) }}
{{- $_ := set $server "drain_timeout" (printf "%ds" (int .Values.drainTimeoutSeconds)) }}
{{- $_ := set $cfg "server" $server }}
{{- $metrics := get $cfg "metrics" | default dict }}
{{- $_ := set $metrics "addr" (printf "0.0.0.0:%d" (int .Values.metrics.port)) }}
{{- $_ := set $cfg "metrics" $metrics }}
{{- $db := get $cfg "database" | default dict }}
{{- if eq .Values.database.type "postgres" }}
{{- $_ := set $db "url" "${TOLLGATE_DATABASE_URL}" }}
{{- else }}
{{- $_ := set $db "url" "sqlite:///data/tollgate.db" }}
{{- end }}
{{- $_ := set $db "spill_path" "/data/tollgate-ledger.spill" }}
{{- $_ := set $cfg "database" $db }}
{{- if .Values.redis.enabled }}
{{- $redis := get $cfg "redis" | default dict }}
{{- $_ := set $redis "url" "${TOLLGATE_REDIS_URL}" }}
{{- $_ := set $cfg "redis" $redis }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* tollgate.env is the container's environment: secrets from Secrets, for ${VAR} in the config. */}}
{{- define "tollgate.env" -}}
- name: TOLLGATE_MASTER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.masterKey.existingSecret | default (include "tollgate.fullname" .) }}
      key: {{ .Values.masterKey.existingSecretKey }}
{{- include "tollgate.storeEnv" (dict "ctx" . "secret" (include "tollgate.fullname" .)) }}
{{- range $name, $ref := .Values.secretEnv }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "secretEnv.%s.secretName" $name) $ref.secretName }}
      key: {{ required (printf "secretEnv.%s.key" $name) $ref.key }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{/* tollgate.storeEnv: the database and Redis URLs, from the user's Secrets or from "secret" (the chart's). */}}
{{- define "tollgate.storeEnv" -}}
{{- $v := .ctx.Values }}
{{- if eq $v.database.type "postgres" }}
- name: TOLLGATE_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $v.database.existingSecret | default .secret }}
      key: {{ $v.database.existingSecretKey }}
{{- end }}
{{- if $v.redis.enabled }}
- name: TOLLGATE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $v.redis.existingSecret | default .secret }}
      key: {{ $v.redis.existingSecretKey }}
{{- end }}
{{- end }}

{{/* tollgate.storeSecretData: the URLs given as values, for a Secret's stringData. */}}
{{- define "tollgate.storeSecretData" -}}
{{- if and (eq .Values.database.type "postgres") .Values.database.url (not .Values.database.existingSecret) }}
{{ .Values.database.existingSecretKey }}: {{ .Values.database.url | quote }}
{{- end }}
{{- if and .Values.redis.enabled .Values.redis.url (not .Values.redis.existingSecret) }}
{{ .Values.redis.existingSecretKey }}: {{ .Values.redis.url | quote }}
{{- end }}
{{- end }}
