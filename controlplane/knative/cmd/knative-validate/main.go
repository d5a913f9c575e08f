// knative-validate runs Knative Serving's own admission logic over the objects in a YAML stream: for each
// object Knative's webhook handles, the defaulting webhook's SetDefaults and then the validating webhook's
// Validate, both in a create context carrying the config-defaults / config-features / config-autoscaler
// the webhook would load (knative.dev/serving cmd/webhook/main.go wires the same types and the same store).
//
// Usage: knative-validate [-config FILE] < manifests.yaml
//
// One JSON line per document on stdout. Exit 0 when Knative accepts every object it handles, 1 when it
// rejects one, 2 when the input or -config cannot be read.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"knative.dev/pkg/apis"
	"knative.dev/pkg/webhook/resourcesemantics"
	sigyaml "sigs.k8s.io/yaml"
)

// verdict is one output line.
type verdict struct {
	Doc        int      `json:"doc"`
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Name       string   `json:"name"`
	// accept, reject, or ignored (not a kind Knative's webhook admits).
	Result   string   `json:"result"`
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Fields Knative's Go types do not know: the webhook decodes leniently and the CRD schema prunes them,
	// so the object is accepted but the setting is silently lost.
	UnknownFields string `json:"unknownFields,omitempty"`
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func main() {
	configFile := flag.String("config", "", "YAML file of Knative ConfigMaps (config-defaults, config-features, config-autoscaler) to validate against; default: Knative's defaults")
	flag.Parse()
	// DomainMapping validation refuses names under the cluster domain; without this it reads /etc/resolv.conf.
	if os.Getenv("CLUSTER_DOMAIN") == "" {
		_ = os.Setenv("CLUSTER_DOMAIN", "cluster.local")
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		fail(err)
	}
	rejected, err := run(os.Stdin, os.Stdout, cfg)
	if err != nil {
		fail(err)
	}
	if rejected {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "knative-validate: %v\n", err)
	os.Exit(2)
}

// run checks every document of in and writes one line per object; it reports whether any was rejected.
func run(in io.Reader, out io.Writer, cfg contextConfig) (bool, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	rejected := false
	for doc := 0; ; {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return rejected, nil
		}
		if err != nil {
			return rejected, fmt.Errorf("reading document %d: %w", doc, err)
		}
		jsonBytes, err := sigyaml.YAMLToJSON(raw)
		if err != nil {
			return rejected, fmt.Errorf("document %d is not YAML: %w", doc, err)
		}
		if string(jsonBytes) == "null" {
			continue // an empty document (comments only, or a trailing ---)
		}
		v, err := check(doc, jsonBytes, cfg)
		if err != nil {
			return rejected, err
		}
		rejected = rejected || v.Result == "reject"
		if err := enc.Encode(v); err != nil {
			return rejected, err
		}
		doc++
	}
}

func check(doc int, jsonBytes []byte, cfg contextConfig) (verdict, error) {
	var h header
	if err := json.Unmarshal(jsonBytes, &h); err != nil {
		return verdict{}, fmt.Errorf("document %d is not an object: %w", doc, err)
	}
	v := verdict{Doc: doc, APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Metadata.Namespace, Name: h.Metadata.Name}
	gvk := schema.FromAPIVersionAndKind(h.APIVersion, h.Kind)
	handler, ok := webhookTypes[gvk]
	if !ok {
		v.Result = "ignored"
		return v, nil
	}
	obj, unknown, err := decode(handler, jsonBytes)
	if err != nil {
		v.Result = "reject"
		v.Error = "decoding request failed: " + err.Error()
		return v, nil
	}
	v.UnknownFields = unknown
	errs := admit(cfg, obj)
	if warnings := errs.Filter(apis.WarningLevel); warnings != nil {
		for _, w := range warnings.WrappedErrors() {
			v.Warnings = append(v.Warnings, w.Error())
		}
	}
	if failed := errs.Filter(apis.ErrorLevel); failed != nil {
		v.Result = "reject"
		v.Error = "validation failed: " + failed.Error()
	} else {
		v.Result = "accept"
	}
	return v, nil
}

// admit is what a CREATE goes through: the defaulting webhook's SetDefaults, then the validating
// webhook's Validate on the defaulted object, each in a create context with the config attached
// (knative.dev/pkg webhook/resourcesemantics defaulting and validation).
func admit(cfg contextConfig, obj resourcesemantics.GenericCRD) *apis.FieldError {
	user := &authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}
	ctx := apis.WithUserInfo(apis.WithinCreate(cfg.toContext(context.Background())), user)
	obj.SetDefaults(ctx)
	return obj.Validate(ctx)
}
