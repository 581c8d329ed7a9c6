{{/*
Names, labels, addresses and checks shared by the templates. Nothing here renders a resource.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "faro.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 45 | trimSuffix "-" -}}
{{- end -}}

{{/*
The base of every name: fullnameOverride, else RELEASE-NAME (just RELEASE when the release's name
already holds the chart's). At most 45 characters: "-master" or "-worker" then make 52, and a
StatefulSet's pods carry its name plus a revision hash in a label of at most 63.
*/}}
{{- define "faro.fullname" -}}
{{- $name := include "faro.name" . -}}
{{- $base := printf "%s-%s" .Release.Name $name -}}
{{- if contains $name .Release.Name -}}
{{- $base = .Release.Name -}}
{{- end -}}
{{- .Values.fullnameOverride | default $base | trunc 45 | trimSuffix "-" -}}
{{- end -}}

{{/* The masters' StatefulSet and their headless Service (one name for both). */}}
{{- define "faro.master.name" -}}
{{- printf "%s-master" (include "faro.fullname" .) -}}
{{- end -}}

{{/* The workers' StatefulSet and their headless Service. */}}
{{- define "faro.worker.name" -}}
{{- printf "%s-worker" (include "faro.fullname" .) -}}
{{- end -}}

{{/* The ConfigMap holding faro.conf. */}}
{{- define "faro.config.name" -}}
{{- printf "%s-config" (include "faro.fullname" .) -}}
{{- end -}}

{{/* The Secret with the cluster and admin secrets: the user's, or the one the chart makes. */}}
{{- define "faro.secret.name" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "faro.fullname" .)) -}}
{{- end -}}

{{/* Labels that pick one role's pods: dict "ctx" $ "component" "master"|"worker". */}}
{{- define "faro.selectorLabels" -}}
app.kubernetes.io/name: {{ include "faro.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of everything the chart makes: dict "ctx" $ and, for a role's objects, "component". */}}
{{- define "faro.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "faro.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: faro
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/* The image of both roles. */}}
{{- define "faro.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The domain every pod's stable name ends with: SERVICE.NAMESPACE.svc.DOMAIN. */}}
{{- define "faro.serviceDomain" -}}
{{- printf "%s.%s.svc.%s" .service .ctx.Release.Namespace .ctx.Values.clusterDomain -}}
{{- end -}}

{{/* The stable DNS name of master number .ordinal: dict "ctx" $ "ordinal" N. */}}
{{- define "faro.master.host" -}}
{{- $master := include "faro.master.name" .ctx -}}
{{- printf "%s-%d.%s" $master (int .ordinal) (include "faro.serviceDomain" (dict "ctx" .ctx "service" $master)) -}}
{{- end -}}

{{/* faro.master.endpoints: every master's RPC endpoint, by its stable name. */}}
{{- define "faro.master.endpoints" -}}
{{- $endpoints := list -}}
{{- range $i := until (int .Values.master.replicas) -}}
{{- $endpoints = append $endpoints (printf "%s:%d" (include "faro.master.host" (dict "ctx" $ "ordinal" $i)) (int $.Values.master.ports.rpc)) -}}
{{- end -}}
{{- join "," $endpoints -}}
{{- end -}}

{{/*
faro.master.raft.peers: id@host:raftPort/rpcPort for every master, the id being "m" and the pod's
ordinal (pod RELEASE-faro-master-2 is m2), as each master's command sets faro.master.id.
*/}}
{{- define "faro.master.raftPeers" -}}
{{- $peers := list -}}
{{- range $i := until (int .Values.master.replicas) -}}
{{- $peers = append $peers (printf "m%d@%s:%d/%d" $i (include "faro.master.host" (dict "ctx" $ "ordinal" $i)) (int $.Values.master.ports.raft) (int $.Values.master.ports.rpc)) -}}
{{- end -}}
{{- join "," $peers -}}
{{- end -}}

{{/* faro.worker.dirs: DIR:TIER[:CAPACITY] per disk, DIR being the disk's mountPath/faro. */}}
{{- define "faro.worker.dirs" -}}
{{- $dirs := list -}}
{{- range .Values.worker.disks -}}
{{- $dir := printf "%s/faro:%s" (trimSuffix "/" .mountPath) .tier -}}
{{- if .capacity -}}
{{- $dir = printf "%s:%s" $dir .capacity -}}
{{- end -}}
{{- $dirs = append $dirs $dir -}}
{{- end -}}
{{- join "," $dirs -}}
{{- end -}}

{{/*
The workers' terminationGracePeriodSeconds: worker.terminationGracePeriodSeconds, or the graceful
timeout plus the stop margin. Fails the render when it leaves the JVM less than 10 s beyond the
graceful timeout, which Kubernetes would cut short with SIGKILL.
*/}}
{{- define "faro.worker.grace" -}}
{{- $timeout := int .Values.worker.gracefulTimeoutSeconds -}}
{{- $grace := add $timeout (int .Values.worker.stopMarginSeconds) -}}
{{- if not (kindIs "invalid" .Values.worker.terminationGracePeriodSeconds) -}}
{{- $grace = int .Values.worker.terminationGracePeriodSeconds -}}
{{- end -}}
{{- if lt $grace (add $timeout 10) -}}
{{- fail (printf "worker.terminationGracePeriodSeconds (%d) must be at least worker.gracefulTimeoutSeconds (%d) + 10: Kubernetes kills a worker still sealing its files after that many seconds. Raise it, or lower worker.gracefulTimeoutSeconds." $grace $timeout) -}}
{{- end -}}
{{- $grace -}}
{{- end -}}

{{/*
The storageClassName line of a volume claim: none for "" (the cluster's default class), an
empty one for "-" (no dynamic provisioning), else the class.
*/}}
{{- define "faro.storageClass" -}}
{{- if eq . "-" -}}
storageClassName: ""
{{- else if . -}}
storageClassName: {{ . | quote }}
{{- end -}}
{{- end -}}

{{/* A setting's value as faro.conf wants it: whole numbers without an exponent. */}}
{{- define "faro.settingValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) -}}
{{- int64 . -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/* Keys of faro.conf and of the pods' --set flags that come from the chart's own values. */}}
{{- define "faro.managedKeys" -}}
{{- list "faro.master.endpoints" "faro.master.host" "faro.master.port" "faro.master.raft.port" "faro.master.http.port" "faro.master.ratis.dir" "faro.master.raft.peers" "faro.master.id" "faro.master.advertised.host" "faro.worker.bind.host" "faro.worker.rpc.port" "faro.worker.push.port" "faro.worker.fetch.port" "faro.worker.http.port" "faro.worker.dirs" "faro.worker.meta.dir" "faro.worker.graceful.timeout" "faro.worker.id" "faro.worker.host" "faro.auth.enabled" "faro.auth.cluster.secret.file" "faro.auth.admin.secret.file" | toJson -}}
{{- end -}}

{{/* Fails the render when settings names a key the chart sets from its values. */}}
{{- define "faro.checkSettings" -}}
{{- $managed := include "faro.managedKeys" . | fromJsonArray -}}
{{- range $key, $value := .Values.settings -}}
{{- if has $key $managed -}}
{{- fail (printf "settings.%s: the chart sets this key from its values (master.*, worker.*, auth.*): set it there, not in settings" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Pod-level parts both roles share: dict "ctx" $ "component" ROLE. */}}
{{- define "faro.podCommon" -}}
{{- $values := index .ctx.Values .component -}}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
securityContext:
  {{- toYaml .ctx.Values.podSecurityContext | nindent 2 }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if $values.affinity }}
  {{- toYaml $values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "faro.selectorLabels" . | nindent 14 }}
{{- end }}
{{- end -}}

{{/* Volumes both roles share: the settings, the secrets, /tmp. */}}
{{- define "faro.commonVolumes" -}}
- name: config
  configMap:
    name: {{ include "faro.config.name" . }}
{{- if .Values.auth.enabled }}
- name: secrets
  secret:
    secretName: {{ include "faro.secret.name" . }}
    # 0440: the files' group is the pod's fsGroup, the faro user's.
    defaultMode: 288
    items:
      - key: {{ .Values.auth.clusterSecretKey | quote }}
        path: cluster.secret
      - key: {{ .Values.auth.adminSecretKey | quote }}
        path: admin.secret
{{- end }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmp.sizeLimit }}
{{- end -}}

{{/* Mounts of those volumes. */}}
{{- define "faro.commonMounts" -}}
- name: config
  mountPath: /etc/faro/conf
  readOnly: true
{{- if .Values.auth.enabled }}
- name: secrets
  mountPath: /etc/faro/secrets
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The environment both roles share: the pod's name and its stable DNS name. */}}
{{- define "faro.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_FQDN
  value: {{ printf "$(POD_NAME).%s" (include "faro.serviceDomain" (dict "ctx" .ctx "service" .service)) | quote }}
{{- end -}}

{{/* A probe of the HTTP port: dict "path" PATH "timing" (periodSeconds...). */}}
{{- define "faro.httpProbe" -}}
httpGet:
  path: {{ .path }}
  port: http
{{- toYaml .timing | nindent 0 }}
{{- end -}}

{{/* Fails the render when two disks share a name or a path, or take one the chart uses. */}}
{{- define "faro.checkDisks" -}}
{{- $names := list "config" "secrets" "tmp" "meta" -}}
{{- $paths := list "/etc/faro/conf" "/etc/faro/secrets" "/tmp" "/var/lib/faro" -}}
{{- range .Values.worker.disks -}}
{{- if has .name $names -}}
{{- fail (printf "worker.disks: the name %s is taken (the chart's volumes are config, secrets, tmp and meta, and each disk needs its own)" .name) -}}
{{- end -}}
{{- $path := trimSuffix "/" .mountPath -}}
{{- if has $path $paths -}}
{{- fail (printf "worker.disks: the mountPath %s is taken (the chart mounts /etc/faro/conf, /etc/faro/secrets, /tmp and /var/lib/faro, and each disk needs its own)" .mountPath) -}}
{{- end -}}
{{- $names = append $names .name -}}
{{- $paths = append $paths $path -}}
{{- end -}}
{{- end -}}
