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

{{/* The objects of one file of manifests/ (files/ links to them: the plain YAML is the one
source), with what the values change: the namespace "kperf" (objects, subjects, the namespace
the ClusterRole may read), the ServiceAccount, the baseline ConfigMap the Role may read (no such
rule with a PVC baseline), the history ConfigMaps it may write (not when history.configMap is ""), the namespace's Pod Security level, commonLabels.
Argument: dict "root" $ "file" "files/NAME.yaml". */}}
{{- define "kperf.fromFile" -}}
{{- $v := .root.Values }}
{{- $ns := $v.namespace.name }}
{{- $sa := $v.serviceAccount.name }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.root.Files.Get .file) -1 }}
{{- $o := fromYaml $doc }}
{{- if hasKey $o "Error" }}
{{- fail (printf "%s: %s" $.file $o.Error) }}
{{- end }}
{{- if $o }}
{{- $md := $o.metadata }}
{{- if eq $o.kind "Namespace" }}
{{- $_ := set $md "name" $ns }}
{{- $_ := set $md.labels "pod-security.kubernetes.io/enforce" $v.namespace.podSecurityEnforce }}
{{- end }}
{{- if eq ($md.namespace | default "") "kperf" }}
{{- $_ := set $md "namespace" $ns }}
{{- end }}
{{- if eq $o.kind "ServiceAccount" }}
{{- $_ := set $md "name" $sa }}
{{- end }}
{{- if $v.commonLabels }}
{{- $_ := set $md "labels" (merge (dict) ($md.labels | default dict) $v.commonLabels) }}
{{- end }}
{{- range $s := $o.subjects | default list }}
{{- if eq $s.kind "ServiceAccount" }}
{{- $_ := set $s "name" $sa }}
{{- $_ := set $s "namespace" $ns }}
{{- end }}
{{- end }}
{{- if hasKey $o "rules" }}
{{- $rules := list }}
{{- range $r := $o.rules }}
{{- $names := $r.resourceNames | default list }}
{{- if and (has "namespaces" ($r.resources | default list)) (has "kperf" $names) }}
{{- /* "kperf" becomes the chart's namespace; "kperf-host" (--host-namespace) stays */ -}}
{{- $renamed := list }}
{{- range $n := $names }}
{{- $renamed = append $renamed (ternary $ns $n (eq $n "kperf")) }}
{{- end }}
{{- $_ := set $r "resourceNames" $renamed }}
{{- end }}
{{- if and (has "configmaps" ($r.resources | default list)) (has "kperf-baseline" $names) }}
{{- if not $v.baseline.existingClaim }}
{{- $_ := set $r "resourceNames" (list $v.baseline.configMap) }}
{{- $rules = append $rules $r }}
{{- end }}
{{- else if and (has "configmaps" ($r.resources | default list)) (not $names) }}
{{- if $v.history.configMap }}
{{- $rules = append $rules $r }}
{{- end }}
{{- else }}
{{- $rules = append $rules $r }}
{{- end }}
{{- end }}
{{- $_ := set $o "rules" $rules }}
{{- end }}
---
{{ toYaml $o }}
{{- end }}
{{- end }}
{{- end }}
