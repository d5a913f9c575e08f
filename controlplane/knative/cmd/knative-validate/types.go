package main

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"knative.dev/pkg/webhook/json"
	"knative.dev/pkg/webhook/resourcesemantics"

	net "knative.dev/networking/pkg/apis/networking/v1alpha1"
	autoscalingv1alpha1 "knative.dev/serving/pkg/apis/autoscaling/v1alpha1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	servingv1beta1 "knative.dev/serving/pkg/apis/serving/v1beta1"
)

// webhookTypes are the kinds Knative Serving's webhook defaults and validates (its cmd/webhook/main.go);
// anything else is left to the API server and the CRD schemas.
var webhookTypes = map[schema.GroupVersionKind]resourcesemantics.GenericCRD{
	servingv1.SchemeGroupVersion.WithKind("Revision"):      &servingv1.Revision{},
	servingv1.SchemeGroupVersion.WithKind("Configuration"): &servingv1.Configuration{},
	servingv1.SchemeGroupVersion.WithKind("Route"):         &servingv1.Route{},
	servingv1.SchemeGroupVersion.WithKind("Service"):       &servingv1.Service{},

	autoscalingv1alpha1.SchemeGroupVersion.WithKind("PodAutoscaler"): &autoscalingv1alpha1.PodAutoscaler{},
	autoscalingv1alpha1.SchemeGroupVersion.WithKind("Metric"):        &autoscalingv1alpha1.Metric{},

	net.SchemeGroupVersion.WithKind("Certificate"):       &net.Certificate{},
	net.SchemeGroupVersion.WithKind("Ingress"):           &net.Ingress{},
	net.SchemeGroupVersion.WithKind("ServerlessService"): &net.ServerlessService{},

	servingv1beta1.SchemeGroupVersion.WithKind("DomainMapping"): &servingv1beta1.DomainMapping{},
}

// decode reads the object as the webhook does (unknown fields allowed, since the CRD schema prunes them),
// and separately names the first field the Go type does not know.
func decode(handler resourcesemantics.GenericCRD, raw []byte) (resourcesemantics.GenericCRD, string, error) {
	obj := handler.DeepCopyObject().(resourcesemantics.GenericCRD)
	if err := json.Decode(raw, obj, false); err != nil {
		return nil, "", err
	}
	unknown := ""
	strict := handler.DeepCopyObject().(resourcesemantics.GenericCRD)
	if err := json.Decode(raw, strict, true); err != nil {
		unknown = err.Error()
	}
	return obj, unknown, nil
}
