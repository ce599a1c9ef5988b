package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// cluster is the kustomization in k8s/, rendered and decoded into the
// Kubernetes API types, each kind keyed by object name.
type cluster struct {
	Namespaces    map[string]*corev1.Namespace
	ConfigMaps    map[string]*corev1.ConfigMap
	Secrets       map[string]*corev1.Secret
	Services      map[string]*corev1.Service
	Deployments   map[string]*appsv1.Deployment
	StatefulSets  map[string]*appsv1.StatefulSet
	HPAs          map[string]*autoscalingv2.HorizontalPodAutoscaler
	PDBs          map[string]*policyv1.PodDisruptionBudget
	ScaledObjects map[string]*ScaledObject
	// Namespaced lists every object but the Namespaces, for checks on all.
	Namespaced []namespaced
}

type namespaced struct {
	Kind, Name, Namespace string
}

// decodeStrict fills obj from one YAML document the way the API server
// would receive it from kubectl: converted to JSON without looking at the Go
// type (so `value: 8080` stays a number and fails a string field), then
// decoded with unknown fields as errors (a typo, a field from another API
// version or at the wrong level) and duplicate keys refused. Plain YAML
// decoding would drop such fields silently and something else would run.
func decodeStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(obj)
}

// add decodes one rendered object into the type its apiVersion and kind name.
func (c *cluster) add(apiVersion, kind string, doc []byte) error {
	var obj metav1.Object
	var keep func()
	switch apiVersion + " " + kind {
	case "v1 Namespace":
		o := new(corev1.Namespace)
		obj, keep = o, func() { c.Namespaces[o.Name] = o }
	case "v1 ConfigMap":
		o := new(corev1.ConfigMap)
		obj, keep = o, func() { c.ConfigMaps[o.Name] = o }
	case "v1 Secret":
		o := new(corev1.Secret)
		obj, keep = o, func() { c.Secrets[o.Name] = o }
	case "v1 Service":
		o := new(corev1.Service)
		obj, keep = o, func() { c.Services[o.Name] = o }
	case "apps/v1 Deployment":
		o := new(appsv1.Deployment)
		obj, keep = o, func() { c.Deployments[o.Name] = o }
	case "apps/v1 StatefulSet":
		o := new(appsv1.StatefulSet)
		obj, keep = o, func() { c.StatefulSets[o.Name] = o }
	case "autoscaling/v2 HorizontalPodAutoscaler":
		o := new(autoscalingv2.HorizontalPodAutoscaler)
		obj, keep = o, func() { c.HPAs[o.Name] = o }
	case "policy/v1 PodDisruptionBudget":
		o := new(policyv1.PodDisruptionBudget)
		obj, keep = o, func() { c.PDBs[o.Name] = o }
	case "keda.sh/v1alpha1 ScaledObject":
		o := new(ScaledObject)
		obj, keep = o, func() { c.ScaledObjects[o.Name] = o }
	default:
		return fmt.Errorf("%s %s: no Go type to check it against; add one to cluster.add", apiVersion, kind)
	}
	if err := decodeStrict(doc, obj); err != nil {
		return err
	}
	keep()
	if kind != "Namespace" {
		c.Namespaced = append(c.Namespaced, namespaced{kind, obj.GetName(), obj.GetNamespace()})
	}
	return nil
}

// render runs kustomize on k8s/ once per test binary.
var render = sync.OnceValues(func() (*cluster, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "k8s")
	if err != nil {
		return nil, fmt.Errorf("kustomize build k8s: %w", err)
	}
	c := &cluster{
		Namespaces:    map[string]*corev1.Namespace{},
		ConfigMaps:    map[string]*corev1.ConfigMap{},
		Secrets:       map[string]*corev1.Secret{},
		Services:      map[string]*corev1.Service{},
		Deployments:   map[string]*appsv1.Deployment{},
		StatefulSets:  map[string]*appsv1.StatefulSet{},
		HPAs:          map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		PDBs:          map[string]*policyv1.PodDisruptionBudget{},
		ScaledObjects: map[string]*ScaledObject{},
	}
	for _, r := range resources.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, err
		}
		if err := c.add(r.GetApiVersion(), r.GetKind(), doc); err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err)
		}
	}
	return c, nil
})

func mustRender(t *testing.T) *cluster {
	t.Helper()
	c, err := render()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The checks below mean little if decoding quietly accepted mistakes.
func TestDecodeIsStrict(t *testing.T) {
	c := &cluster{Deployments: map[string]*appsv1.Deployment{}, ScaledObjects: map[string]*ScaledObject{}}
	const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n"
	const scaledObject = "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: x}\nspec:\n  scaleTargetRef: {name: x}\n"
	bad := []struct{ why, apiVersion, kind, doc string }{
		{"unknown field", "apps/v1", "Deployment", deployment + "  replica: 3\n"},
		{"duplicate field", "apps/v1", "Deployment", deployment + "  replicas: 3\n  replicas: 4\n"},
		{"number for a string", "apps/v1", "Deployment", deployment +
			"  template:\n    spec:\n      containers: [{name: x, env: [{name: PORT, value: 8080}]}]\n"},
		{"unknown KEDA field", "keda.sh/v1alpha1", "ScaledObject", scaledObject + "  minReplicas: 1\n"},
		{"unquoted KEDA metadata", "keda.sh/v1alpha1", "ScaledObject", scaledObject + "  triggers: [{type: cpu, metadata: {value: 50}}]\n"},
		{"kind without a Go type", "v1", "Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"},
	}
	for _, b := range bad {
		if err := c.add(b.apiVersion, b.kind, []byte(b.doc)); err == nil {
			t.Errorf("%s accepted:\n%s", b.why, b.doc)
		}
	}
	if err := c.add("apps/v1", "Deployment", []byte(deployment+"  replicas: 3\n")); err != nil {
		t.Errorf("valid Deployment rejected: %v", err)
	}
}
