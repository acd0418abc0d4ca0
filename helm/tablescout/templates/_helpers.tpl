{{/* Names, labels and the pod parts every tablescout component shares. */}}

{{- define "tablescout.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tablescout.fullname" -}}
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

{{/* A component's resource name: <fullname>-<component>. */}}
{{- define "tablescout.componentName" -}}
{{- printf "%s-%s" (include "tablescout.fullname" .root | trunc 50 | trimSuffix "-") .component }}
{{- end }}

{{- define "tablescout.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tablescout.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: tablescout
{{- end }}

{{- define "tablescout.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tablescout.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one component; call with (dict "root" $ "component" "worker"). */}}
{{- define "tablescout.componentLabels" -}}
{{ include "tablescout.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "tablescout.componentSelectorLabels" -}}
{{ include "tablescout.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "tablescout.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tablescout.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tablescout.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret whose keys become every pod's environment. */}}
{{- define "tablescout.secretName" -}}
{{- default (include "tablescout.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{- define "tablescout.configName" -}}
{{- include "tablescout.fullname" . }}
{{- end }}

{{/* The configuration file: the `config` values as YAML (core/config/file.py validates it when tablescout starts). */}}
{{- define "tablescout.configFile" -}}
{{- $config := dict "sources" .Values.config.sources "roles" .Values.config.roles "groups" .Values.config.groups }}
{{- if .Values.config.default_role }}
{{- $_ := set $config "default_role" .Values.config.default_role }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/*
The key of `hash` column masks, which every pod must share (each pod's data directory is its own): the value in
secret.values.TABLESCOUT_MASK_KEY, else the one the release's Secret already holds (so an upgrade keeps every hash
as it was), else a new random one. It is kept in .Values.secret.values for the rest of the render, so the migration
job's copy of the Secret and the release's Secret hold the same key.
*/}}
{{- define "tablescout.ensureMaskKey" -}}
{{- if not .Values.secret.values.TABLESCOUT_MASK_KEY }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "tablescout.secretName" .) }}
{{- $kept := "" }}
{{- if and $existing $existing.data }}
{{- $kept = index $existing.data "TABLESCOUT_MASK_KEY" | default "" | b64dec }}
{{- end }}
{{- $_ := set .Values.secret.values "TABLESCOUT_MASK_KEY" ($kept | default (randAlphaNum 64)) }}
{{- end }}
{{- end }}

{{/*
The Secret's data: the secret.values that are set, and the mask key (`tablescout.ensureMaskKey`). The store and
broker URLs are always there, empty when not set, so that tablescout stops with "TABLESCOUT_DATABASE_URL is not a
database URL" (the migration job fails the install) rather than a pod starting an embedded store of its own.
*/}}
{{- define "tablescout.secretData" -}}
{{- include "tablescout.ensureMaskKey" . }}
{{- range $key := list "TABLESCOUT_DATABASE_URL" "TABLESCOUT_REDIS_URL" }}
{{ $key }}: {{ index $.Values.secret.values $key | default "" | toString | b64enc | quote }}
{{- end }}
{{- range $key, $value := .Values.secret.values }}
{{- if and $value (not (has $key (list "TABLESCOUT_DATABASE_URL" "TABLESCOUT_REDIS_URL"))) }}
{{ $key }}: {{ $value | toString | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "tablescout.podSecurity" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The environment of every tablescout container: the non-secret settings (env), the state directory and the mounted
configuration file, then every key of the Secret. The store and broker URLs are also named one by one, so a Secret
that lacks them stops the pod instead of letting tablescout fall back to an embedded store inside it.
Call with (dict "root" $ "configName" NAME "secretName" NAME).
*/}}
{{- define "tablescout.env" -}}
env:
  - name: TABLESCOUT_HOME
    value: /var/lib/tablescout
  - name: TABLESCOUT_CONFIG
    value: /etc/tablescout/tablescout.yaml
  - name: TABLESCOUT_DATABASE_URL
    valueFrom:
      secretKeyRef:
        name: {{ .secretName }}
        key: TABLESCOUT_DATABASE_URL
  - name: TABLESCOUT_REDIS_URL
    valueFrom:
      secretKeyRef:
        name: {{ .secretName }}
        key: TABLESCOUT_REDIS_URL
  {{- with .root.Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
envFrom:
  - configMapRef:
      name: {{ printf "%s-env" .configName }}
  - secretRef:
      name: {{ .secretName }}
{{- end }}

{{- define "tablescout.volumeMounts" -}}
volumeMounts:
  - name: config
    mountPath: /etc/tablescout
    readOnly: true
  - name: home
    mountPath: /var/lib/tablescout
  - name: tmp
    mountPath: /tmp
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* Call with (dict "root" $ "configName" NAME). */}}
{{- define "tablescout.volumes" -}}
volumes:
  - name: config
    configMap:
      name: {{ .configName }}
      items:
        - key: tablescout.yaml
          path: tablescout.yaml
  - name: home
    emptyDir: {}
  - name: tmp
    emptyDir: {}
  {{- with .root.Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* Pod template annotations: a changed configuration or chart-made Secret rolls the pods. */}}
{{- define "tablescout.podAnnotations" -}}
checksum/config: {{ include "tablescout.configFile" . | sha256sum }}
checksum/env: {{ toYaml .Values.env | sha256sum }}
{{- if not .Values.secret.existingSecret }}
checksum/secret: {{ include "tablescout.secretData" . | sha256sum }}
{{- end }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}
