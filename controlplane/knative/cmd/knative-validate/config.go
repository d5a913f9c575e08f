package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	apisconfig "knative.dev/serving/pkg/apis/config"
	asconfig "knative.dev/serving/pkg/autoscaler/config"
	sigyaml "sigs.k8s.io/yaml"
)

// contextConfig is what the webhook's config store attaches to every admission's context.
type contextConfig struct {
	cfg *apisconfig.Config
}

func (c contextConfig) toContext(ctx context.Context) context.Context {
	return apisconfig.ToContext(ctx, c.cfg.DeepCopy())
}

// loadConfig starts from Knative's defaults (the ConfigMaps as shipped, whose data is only an _example)
// and applies the ConfigMaps in file, if given, through the same constructors the webhook's store uses.
func loadConfig(file string) (contextConfig, error) {
	cfg := apisconfig.FromContextOrDefaults(context.Background())
	if file == "" {
		return contextConfig{cfg}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return contextConfig{}, fmt.Errorf("-config: %w", err)
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return contextConfig{cfg}, nil
		}
		if err != nil {
			return contextConfig{}, fmt.Errorf("-config %s: %w", file, err)
		}
		var cm corev1.ConfigMap
		if err := sigyaml.Unmarshal(raw, &cm); err != nil {
			return contextConfig{}, fmt.Errorf("-config %s: %w", file, err)
		}
		if err := applyConfigMap(cfg, &cm); err != nil {
			return contextConfig{}, fmt.Errorf("-config %s: ConfigMap %s: %w", file, cm.Name, err)
		}
	}
}

func applyConfigMap(cfg *apisconfig.Config, cm *corev1.ConfigMap) error {
	var err error
	switch cm.Name {
	case "":
		return nil // an empty document
	case apisconfig.DefaultsConfigName:
		cfg.Defaults, err = apisconfig.NewDefaultsConfigFromConfigMap(cm)
	case apisconfig.FeaturesConfigName:
		cfg.Features, err = apisconfig.NewFeaturesConfigFromConfigMap(cm)
	case asconfig.ConfigName:
		cfg.Autoscaler, err = asconfig.NewConfigFromConfigMap(cm)
	default:
		return fmt.Errorf("not one of %s, %s, %s", apisconfig.DefaultsConfigName, apisconfig.FeaturesConfigName, asconfig.ConfigName)
	}
	return err
}
