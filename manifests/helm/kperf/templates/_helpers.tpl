{{/* Labels of every object: app.kubernetes.io/name plus commonLabels. */}}
{{- define "kperf.labels" -}}
app.kubernetes.io/name: kperf
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* An image reference from a dict with registry, repository, tag (default appVersion). */}}
{{- define "kperf.image" -}}
{{- $tag := .img.tag | default .root.Chart.AppVersion -}}
{{- if .img.registry -}}
{{ .img.registry }}/{{ .img.repository }}:{{ $tag }}
{{- else -}}
{{ .img.repository }}:{{ $tag }}
{{- end -}}
{{- end }}

{{/* The subject every binding names: the job's ServiceAccount. */}}
{{- define "kperf.subjects" -}}
- kind: ServiceAccount
  name: {{ .Values.serviceAccount.name }}
  namespace: {{ .Values.namespace.name }}
{{- end }}

{{/* Rules on the agents' objects in the run's namespace (rbac.yaml's Role, rbac-namespaces.yaml). */}}
{{- define "kperf.agentRules" -}}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "delete"]
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["services", "secrets", "serviceaccounts"]
  verbs: ["get", "list", "create", "delete"]
- apiGroups: ["apps"]
  resources: ["daemonsets"]
  verbs: ["get", "list", "watch", "create", "delete"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "delete"]
{{- end }}
