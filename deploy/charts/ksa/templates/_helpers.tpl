{{/* ksa.image is the image reference: repository, then @digest or :tag (default: appVersion). */}}
{{- define "ksa.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* ksa.labels are the labels of every object; pass (dict "root" $ "component" NAME). */}}
{{- define "ksa.labels" -}}
app.kubernetes.io/name: ksa
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* ksa.selector selects a component's pods; pass (dict "root" $ "component" NAME). */}}
{{- define "ksa.selector" -}}
app.kubernetes.io/name: ksa
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* ksa.name is a component's object name: the release's, then the component. */}}
{{- define "ksa.name" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* ksa.affinity is the pods' affinity: the value given, else replicas spread over nodes. */}}
{{- define "ksa.affinity" -}}
{{- if .values.affinity -}}
{{ toYaml .values.affinity }}
{{- else -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "ksa.selector" . | nindent 12 }}
{{- end -}}
{{- end -}}

{{/* ksa.podcertRBACName is the ClusterRole's name as "ksa podcert rbac" prints it. */}}
{{- define "ksa.podcertRBACName" -}}
ksa-podcert-signer:{{ replace "/" ":" .Values.podcert.signerName }}
{{- end -}}

{{/* ksa.trustBundle is the ClusterTrustBundle's name. */}}
{{- define "ksa.trustBundle" -}}
{{- .Values.podcert.trustBundle | default (printf "%s:primary-bundle" (replace "/" ":" .Values.podcert.signerName)) -}}
{{- end -}}

{{/* ksa.webhookNamespaceSelector is the webhooks' namespaceSelector. */}}
{{- define "ksa.webhookNamespaceSelector" -}}
{{- if .Values.webhook.namespaceSelector -}}
{{ toYaml .Values.webhook.namespaceSelector }}
{{- else -}}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: [{{ .Release.Namespace | quote }}]
{{- end -}}
{{- end -}}

{{/* ksa.webhookClient is a webhook's clientConfig; pass (dict "name" "ns" "path" "caBundle"). */}}
{{- define "ksa.webhookClient" -}}
service:
  name: {{ .name }}
  namespace: {{ .ns }}
  path: {{ .path }}
  port: 443
{{- with .caBundle }}
caBundle: {{ . }}
{{- end }}
{{- end }}

{{/* ksa.webhookRules are a webhook's rules: pods for .ops, and ephemeral containers. */}}
{{- define "ksa.webhookRules" -}}
- apiGroups: [""]
  apiVersions: [v1]
  operations: {{ .ops }}
  resources: [pods]
  scope: Namespaced
# Ephemeral containers arrive as updates of this subresource.
- apiGroups: [""]
  apiVersions: [v1]
  operations: [UPDATE]
  resources: [pods/ephemeralcontainers]
  scope: Namespaced
{{- end }}
