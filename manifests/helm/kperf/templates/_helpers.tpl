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
source), with what the values change: the namespaces "kperf" and "kperf-host" (objects,
subjects, the namespaces the ClusterRole may read, the admission policy's binding; no
"kperf-host" when hostNamespace.name is ""), the agent image repository the policy admits, the ServiceAccount, the baseline ConfigMap the Role may read (no such
rule with a PVC baseline), the history ConfigMaps it may write (not when history.configMap is ""), the namespace's Pod Security level ("" = restricted with a host namespace, else privileged),
commonLabels.
Argument: dict "root" $ "file" "files/NAME.yaml". */}}
{{- define "kperf.fromFile" -}}
{{- $v := .root.Values }}
{{- $ns := $v.namespace.name }}
{{- $sa := $v.serviceAccount.name }}
{{- $hostNs := $v.hostNamespace.name }}
{{- $psa := $v.namespace.podSecurityEnforce | default (ternary "restricted" "privileged" (ne $hostNs "")) }}
{{- $agentRepo := $v.agentImage.repository }}
{{- if $v.agentImage.registry }}{{ $agentRepo = printf "%s/%s" $v.agentImage.registry $v.agentImage.repository }}{{ end }}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.root.Files.Get .file) -1 }}
{{- $o := fromYaml $doc }}
{{- if hasKey $o "Error" }}
{{- fail (printf "%s: %s" $.file $o.Error) }}
{{- end }}
{{- if $o }}
{{- $md := $o.metadata }}
{{- if and (eq $o.kind "Namespace") (eq $md.name "kperf-host") }}
{{- $_ := set $md "name" $hostNs }}
{{- else if eq $o.kind "Namespace" }}
{{- $_ := set $md "name" $ns }}
{{- $_ := set $md.labels "pod-security.kubernetes.io/enforce" $psa }}
{{- end }}
{{- if eq ($md.namespace | default "") "kperf" }}
{{- $_ := set $md "namespace" $ns }}
{{- else if eq ($md.namespace | default "") "kperf-host" }}
{{- $_ := set $md "namespace" $hostNs }}
{{- end }}
{{- if eq $o.kind "ValidatingAdmissionPolicy" }}
{{- range $var := $o.spec.variables }}
{{- if eq $var.name "repository" }}
{{- $_ := set $var "expression" (squote $agentRepo) }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq $o.kind "ValidatingAdmissionPolicyBinding" }}
{{- $_ := set $o.spec.matchResources.namespaceSelector.matchLabels "kubernetes.io/metadata.name" $hostNs }}
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
{{- /* "kperf" becomes the chart's namespace, "kperf-host" hostNamespace.name (or goes) */ -}}
{{- $renamed := list }}
{{- range $n := $names }}
{{- if eq $n "kperf" }}
{{- $renamed = append $renamed $ns }}
{{- else if ne $n "kperf-host" }}
{{- $renamed = append $renamed $n }}
{{- else if $hostNs }}
{{- $renamed = append $renamed $hostNs }}
{{- end }}
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
