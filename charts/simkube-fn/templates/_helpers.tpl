{{/*
Hand-written: what turns the values into the builders' options, as the CLI's flags do for `simkube-fn
manifests` (the base name, the path secret, the scaling knobs, the checks). The objects themselves are in the
other templates, generated from the builders (knative/*.ts) by `npm run gen:chart`, which name these helpers.
*/}}

{{/* Base of every name (--name): <release>-simkube-fn, or the release name when it contains simkube-fn. */}}
{{- define "simkube-fn.fullname" -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- $full := "" -}}
{{- if .Values.fullnameOverride -}}
{{- $full = .Values.fullnameOverride -}}
{{- else if contains $name .Release.Name -}}
{{- $full = .Release.Name -}}
{{- else -}}
{{- $full = printf "%s-%s" .Release.Name $name -}}
{{- end -}}
{{- /* <full>-reschedule-delete-00001 (Knative's first revision) must be a DNS-1035 label. */ -}}
{{- if or (gt (len $full) 39) (not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $full)) -}}
{{- fail (printf "name %q gives %q, which must be a DNS-1035 label of at most 57 characters: use a shorter release name or fullnameOverride" $full (printf "%s-reschedule-delete" $full)) -}}
{{- end -}}
{{- $full -}}
{{- end -}}

{{/* reschedule-delete and its DELETE webhook: rendered unless reschedule is false (--no-reschedule). */}}
{{- define "simkube-fn.reschedule" -}}
{{- if ne .Values.reschedule false -}}true{{- end -}}
{{- end -}}

{{/* Which functions are deployed: reschedule-delete unless rescheduling is turned off. */}}
{{- define "simkube-fn.functions" -}}
{{- if include "simkube-fn.reschedule" . -}}["mutate-create","reschedule-delete"]{{- else -}}["mutate-create"]{{- end -}}
{{- end -}}

{{- define "simkube-fn.gatewayRoute" -}}
{{- if has .Values.platform (list "kind" "k3s") -}}true{{- end -}}
{{- end -}}

{{- define "simkube-fn.image" -}}
{{- default (printf "dev.local/simkube-fn:%s" .Chart.AppVersion) .Values.image -}}
{{- end -}}

{{- define "simkube-fn.celString" -}}
'{{ . | replace "\\" "\\\\" | replace "'" "\\'" }}'
{{- end -}}

{{/* The Secret the functions read the path secret from. */}}
{{- define "simkube-fn.pathSecretName" -}}
{{- default (printf "%s-webhook-path" (include "simkube-fn.fullname" .)) .Values.pathSecret.existingSecret -}}
{{- end -}}

{{/*
The path secret, decided once per render and kept in .Values (every template sees the same one): the value
given; else what the Secret already holds (lookup: an upgrade keeps it); else, installing the chart's own
Secret into a cluster, 64 random hex characters (lowercase, as service-mode paths require), made once and read
back by every later upgrade. Without a cluster to read from (`helm template`, what Argo CD runs) nothing is
generated: the same values must render the same YAML, so the render fails and asks for pathSecret.value or
pathSecret.existingSecret. Empty for an existing Secret that cannot be read.
*/}}
{{- define "simkube-fn.pathSecret" -}}
{{- if not (hasKey .Values "__pathSecret") -}}
{{- $value := .Values.pathSecret.value -}}
{{- if not $value -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "simkube-fn.pathSecretName" .) -}}
{{- if and $existing $existing.data (hasKey $existing.data "path-secret") -}}
{{- $value = index $existing.data "path-secret" | b64dec -}}
{{- else if not .Values.pathSecret.existingSecret -}}
{{- if not (lookup "v1" "Namespace" "" "kube-system") -}}
{{- fail "no cluster to read the path secret from (helm template): give pathSecret.value (e.g. openssl rand -hex 32, kept with your values) or pathSecret.existingSecret (a Secret with key path-secret), so every render is the same" -}}
{{- end -}}
{{- $value = randAlphaNum 64 | sha256sum -}}
{{- end -}}
{{- end -}}
{{- if and $value (not (regexMatch "^[A-Za-z0-9_-]{24,256}$" $value)) -}}
{{- fail "pathSecret must be 24 to 256 characters of A-Z a-z 0-9 _ - (it is one URL path segment)" -}}
{{- end -}}
{{- if and $value (include "simkube-fn.serviceMode" .) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $value)) -}}
{{- fail "pathSecret in service mode must be lowercase letters, digits and - (the API server takes only RFC 1123 path segments for a Service): e.g. openssl rand -hex 32" -}}
{{- end -}}
{{- $_ := set .Values "__pathSecret" $value -}}
{{- end -}}
{{- .Values.__pathSecret -}}
{{- end -}}

{{- define "simkube-fn.serviceMode" -}}
{{- if has .Values.platform (list "kind" "k3s" "kubernetes") -}}true{{- end -}}
{{- end -}}

{{/* The webhook configuration is rendered only for one Simulation, unless turned off. */}}
{{- define "simkube-fn.webhookConfiguration" -}}
{{- if and .Values.simName .Values.webhook.enabled -}}true{{- end -}}
{{- end -}}

{{/* One function's scaling knobs (knative/tuning.ts, knative/scale-bounds.ts), checked as the CLI checks them. */}}
{{- define "simkube-fn.tuning" -}}
{{- $v := .root.Values -}}
{{- $t := index $v.functions .fn -}}
{{- $min := int (ternary $t.minScale $v.minScale (not (kindIs "invalid" $t.minScale))) -}}
{{- $max := int $t.maxScale -}}
{{- if and (ne $max 0) (lt $max (max $min 1 | int)) -}}
{{- fail (printf "functions.%s.maxScale %d is below its min-scale %d: the replicas kept warm must fit under the upper bound" .fn $max $min) -}}
{{- end -}}
{{- $default := ternary 1 2 (eq .fn "mutate-create") -}}
{{- $activation := 1 -}}
{{- if not (kindIs "invalid" $t.activationScale) -}}
{{- $activation = int $t.activationScale -}}
{{- if lt $activation $min -}}
{{- fail (printf "functions.%s.activationScale %d is below its min-scale %d: Knative requires min-scale <= activation-scale <= max-scale" .fn $activation $min) -}}
{{- end -}}
{{- if and (ne $max 0) (gt $activation $max) -}}
{{- fail (printf "functions.%s.activationScale %d is above its max-scale %d: Knative requires min-scale <= activation-scale <= max-scale" .fn $activation $max) -}}
{{- end -}}
{{- else -}}
{{- $derived := ternary $default (min $default $max) (eq $max 0) | int -}}
{{- $activation = ternary 1 $derived (or (lt $derived 2) (lt $derived $min)) | int -}}
{{- end -}}
{{- toYaml (dict "minScale" $min "maxScale" $max "activationScale" $activation "timeoutSeconds" (int $t.timeoutSeconds) "scaleDownDelay" $t.scaleDownDelay "replicas" (max $min 1)) -}}
{{- end -}}

{{- define "simkube-fn.caBundle" -}}
{{- if .Values.caBundle -}}
{{- if not (contains "-----BEGIN CERTIFICATE-----" .Values.caBundle) -}}
{{- fail "caBundle holds no PEM certificate (-----BEGIN CERTIFICATE-----)" -}}
{{- end -}}
{{- printf "%s\n" (trim .Values.caBundle) | b64enc -}}
{{- end -}}
{{- end -}}

{{/* Checks the platform's own needs, as knative/platforms.ts does. */}}
{{- define "simkube-fn.checkPlatform" -}}
{{- if and (eq .Values.ingress "traefik") (not (include "simkube-fn.gatewayRoute" .)) -}}
{{- fail "ingress traefik applies to platform kind or k3s" -}}
{{- end -}}
{{- if and (eq .Values.platform "kubernetes") (not .Values.caBundle) (not .Values.caInjectFrom) -}}
{{- fail "platform kubernetes needs caBundle (the CA that signed each function's TLS Secret <name>-<function>-tls) or caInjectFrom NS/CERTIFICATE" -}}
{{- end -}}
{{- if and (eq .Values.platform "managed") (not .Values.domain) -}}
{{- fail "platform managed needs domain: Knative's domain, so the webhooks call https://<service>.<namespace>.DOMAIN/" -}}
{{- end -}}
{{- if and (eq .Values.platform "managed") (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$" (lower (trim .Values.domain)))) -}}
{{- fail (printf "domain %q is not a DNS name (e.g. fn.example.com)" .Values.domain) -}}
{{- end -}}
{{- if and (eq .Values.platform "openfaas") (not (hasPrefix "https://" .Values.openfaas.webhookGatewayUrl)) -}}
{{- fail "platform openfaas needs openfaas.webhookGatewayUrl https://GATEWAY: the gateway behind your TLS ingress, as the API server reaches it" -}}
{{- end -}}
{{- if hasPrefix (printf "%s-" .Values.virtualNsPrefix) .Release.Namespace -}}
{{- fail (printf "namespace %q starts with the virtual namespace prefix \"%s-\"" .Release.Namespace .Values.virtualNsPrefix) -}}
{{- end -}}
{{- include "simkube-fn.checkMonitors" . -}}
{{- if and .Values.pathSecret.existingSecret (include "simkube-fn.webhookConfiguration" .) (not (include "simkube-fn.pathSecret" .)) -}}
{{- fail (printf "pathSecret.existingSecret %s: the webhook configuration's paths end in the secret itself, and it cannot be read (no such Secret, or no cluster: helm template); give it as pathSecret.value too" .Values.pathSecret.existingSecret) -}}
{{- end -}}
{{- end -}}

{{/* A list of strings as CEL string literals, comma-separated (the inside of a CEL list). */}}
{{- define "simkube-fn.celList" -}}
{{- $quoted := list -}}
{{- range . -}}{{- $quoted = append $quoted (include "simkube-fn.celString" .) -}}{{- end -}}
{{- join ", " $quoted -}}
{{- end -}}

{{/* Knative: label the Services cluster-local; null: in service mode (kind, k3s, kubernetes). */}}
{{- define "simkube-fn.clusterLocal" -}}
{{- if ternary (include "simkube-fn.serviceMode" . | eq "true") .Values.clusterLocal (kindIs "invalid" .Values.clusterLocal) -}}true{{- end -}}
{{- end -}}

{{/* traefikInternalService NAME[:PORT]: the port, 80 when none is given. */}}
{{- define "simkube-fn.traefikPort" -}}
{{- $parts := splitList ":" .Values.traefikInternalService -}}
{{- if eq (len $parts) 2 -}}{{ index $parts 1 }}{{- else -}}80{{- end -}}
{{- end -}}

{{/* ownerResources RESOURCE.GROUP as mutate-create's extra ClusterRole rules (get), as --owner-resource gives them. */}}
{{- define "simkube-fn.ownerRules" -}}
{{- $rules := list -}}
{{- range $entry := .Values.ownerResources -}}
{{- $parts := splitn "." 2 $entry -}}
{{- if or (not $parts._0) (not $parts._1) -}}
{{- fail (printf "ownerResources takes RESOURCE.GROUP (e.g. widgets.example.com), got %q" $entry) -}}
{{- end -}}
{{- $rules = append $rules (dict "apiGroups" (list $parts._1) "resources" (list $parts._0) "verbs" (list "get")) -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end -}}

{{/* The monitors a platform can have, as knative/monitor-options.ts checks them. */}}
{{- define "simkube-fn.checkMonitors" -}}
{{- $m := .Values.metrics -}}
{{- $pod := $m.podMonitor.enabled -}}
{{- $service := $m.serviceMonitor.enabled -}}
{{- if and (not $pod) (not $service) $m.labels -}}
{{- fail "metrics.labels needs metrics.podMonitor.enabled or metrics.serviceMonitor.enabled" -}}
{{- end -}}
{{- if and (or $pod $service) (eq .Values.platform "openfaas") -}}
{{- fail "metrics.podMonitor and metrics.serviceMonitor need Knative or plain Kubernetes: on OpenFaaS the template sends every path to the handler, so no function serves /metrics (the gateway's own metrics are scraped by OpenFaaS's Prometheus)" -}}
{{- end -}}
{{- if and $service (ne .Values.platform "kubernetes") -}}
{{- fail "metrics.serviceMonitor needs platform kubernetes: on Knative the Services lead to queue-proxy, not to the functions' /metrics; use metrics.podMonitor" -}}
{{- end -}}
{{- end -}}
