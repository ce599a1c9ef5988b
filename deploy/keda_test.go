package deploy

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScaledObject is KEDA's keda.sh/v1alpha1 ScaledObject, written out from its
// CRD because KEDA's own module is far too heavy to import for one type.
// Objects are decoded strictly, so a field used in k8s/ but missing here
// fails the test rather than being ignored: add it only if KEDA has it.
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScaledObjectSpec `json:"spec"`
}

type ScaledObjectSpec struct {
	ScaleTargetRef        ScaleTarget    `json:"scaleTargetRef"`
	PollingInterval       *int32         `json:"pollingInterval,omitempty"`
	InitialCooldownPeriod *int32         `json:"initialCooldownPeriod,omitempty"`
	CooldownPeriod        *int32         `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount      *int32         `json:"idleReplicaCount,omitempty"`
	MinReplicaCount       *int32         `json:"minReplicaCount,omitempty"`
	MaxReplicaCount       *int32         `json:"maxReplicaCount,omitempty"`
	Fallback              *Fallback      `json:"fallback,omitempty"`
	Advanced              *Advanced      `json:"advanced,omitempty"`
	Triggers              []ScaleTrigger `json:"triggers"`
}

// ScaleTarget defaults to an apps/v1 Deployment when kind is empty.
type ScaleTarget struct {
	APIVersion             string `json:"apiVersion,omitempty"`
	Kind                   string `json:"kind,omitempty"`
	Name                   string `json:"name"`
	EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
}

type Fallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

type Advanced struct {
	RestoreToOriginalReplicaCount bool       `json:"restoreToOriginalReplicaCount,omitempty"`
	HorizontalPodAutoscalerConfig *HPAConfig `json:"horizontalPodAutoscalerConfig,omitempty"`
}

type HPAConfig struct {
	Name     string                                         `json:"name,omitempty"`
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// ScaleTrigger's metadata values are all strings in KEDA's CRD, numbers
// included; a bare YAML number there is rejected by the decoder, as by KEDA.
type ScaleTrigger struct {
	Type              string                         `json:"type"`
	Name              string                         `json:"name,omitempty"`
	Metadata          map[string]string              `json:"metadata"`
	AuthenticationRef *AuthenticationRef             `json:"authenticationRef,omitempty"`
	MetricType        autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
	UseCachedMetrics  bool                           `json:"useCachedMetrics,omitempty"`
}

type AuthenticationRef struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}
