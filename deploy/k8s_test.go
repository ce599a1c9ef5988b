package deploy

import (
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// workload is a pod template with the name of what owns it.
type workload struct {
	kind, name string
	tmpl       corev1.PodTemplateSpec
	selector   *metav1.LabelSelector
}

func (c *cluster) workloads() []workload {
	var ws []workload
	for n, d := range c.Deployments {
		ws = append(ws, workload{"Deployment", n, d.Spec.Template, d.Spec.Selector})
	}
	for n, s := range c.StatefulSets {
		ws = append(ws, workload{"StatefulSet", n, s.Spec.Template, s.Spec.Selector})
	}
	return ws
}

func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(labels.Set(podLabels))
}

// containerPort resolves a probe's or Service's target port (a number or a
// port name) against the container's declared ports.
func containerPort(ctr corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range ctr.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// show prints an optional number for a test message.
func show[T int32 | int64](p *T) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatInt(int64(*p), 10)
}

func envValue(ctr corev1.Container, name string) (string, bool) {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// surveyorEnv returns the ConfigMap every Surveyor Deployment loads with
// envFrom, failing unless they all load the same, rendered one.
func surveyorEnv(t *testing.T, c *cluster) *corev1.ConfigMap {
	t.Helper()
	var name string
	for svc := range binaries(t) {
		d, ok := c.Deployments[svc]
		if !ok {
			t.Fatalf("no Deployment %q", svc)
		}
		refs := d.Spec.Template.Spec.Containers[0].EnvFrom
		if len(refs) != 1 || refs[0].ConfigMapRef == nil {
			t.Fatalf("%s: want envFrom one ConfigMap, got %+v", svc, refs)
		}
		if name != "" && refs[0].ConfigMapRef.Name != name {
			t.Fatalf("%s loads ConfigMap %q, others %q", svc, refs[0].ConfigMapRef.Name, name)
		}
		name = refs[0].ConfigMapRef.Name
	}
	cm, ok := c.ConfigMaps[name]
	if !ok {
		t.Fatalf("Deployments load ConfigMap %q, which is not rendered", name)
	}
	return cm
}

func TestEveryObjectInTheNamespace(t *testing.T) {
	c := mustRender(t)
	if len(c.Namespaces) != 1 {
		t.Fatalf("want one Namespace, got %d", len(c.Namespaces))
	}
	for name, ns := range c.Namespaces {
		// Pod Security Admission then rejects any pod that is not restricted.
		if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Errorf("Namespace %s does not enforce the restricted pod security level", name)
		}
		for _, o := range c.Namespaced {
			if o.Namespace != name {
				t.Errorf("%s %s is in namespace %q, want %q", o.Kind, o.Name, o.Namespace, name)
			}
		}
	}
}

func TestPodsProbedLimitedAndLockedDown(t *testing.T) {
	c := mustRender(t)
	if bs := binaries(t); len(c.Deployments) != len(bs) {
		t.Errorf("want a Deployment for each of %v, got %d", slices.Sorted(maps.Keys(bs)), len(c.Deployments))
	}
	for _, w := range c.workloads() {
		spec := w.tmpl.Spec
		if len(spec.Containers) == 0 {
			t.Errorf("%s %s: no containers", w.kind, w.name)
		}
		for _, ctr := range spec.Containers {
			where := w.kind + " " + w.name + " container " + ctr.Name
			for kind, p := range map[string]*corev1.Probe{"readiness": ctr.ReadinessProbe, "liveness": ctr.LivenessProbe} {
				if p == nil || p.HTTPGet == nil {
					t.Errorf("%s: no HTTP %s probe", where, kind)
					continue
				}
				if _, ok := containerPort(ctr, p.HTTPGet.Port); !ok {
					t.Errorf("%s: %s probe port %s is not a container port", where, kind, p.HTTPGet.Port.String())
				}
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := ctr.Resources.Requests[r]
				lim, hasLim := ctr.Resources.Limits[r]
				if !hasReq || !hasLim {
					t.Errorf("%s: %s needs both a request and a limit", where, r)
				} else if req.Cmp(lim) > 0 {
					t.Errorf("%s: %s request %s above limit %s", where, r, req.String(), lim.String())
				}
			}
			checkRestricted(t, where, spec.SecurityContext, ctr.SecurityContext)
			if tag := imageTag(ctr.Image); tag == "" || tag == "latest" {
				t.Errorf("%s: image %q needs a fixed tag", where, ctr.Image)
			}
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s %s: mounts a service account token it does not need", w.kind, w.name)
		}
	}
}

// checkRestricted asserts the container's effective security context: its
// own settings, falling back to the pod's where Kubernetes does.
func checkRestricted(t *testing.T, where string, pod *corev1.PodSecurityContext, ctr *corev1.SecurityContext) {
	t.Helper()
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if ctr == nil {
		t.Errorf("%s: no securityContext", where)
		return
	}
	nonRoot := ctr.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = pod.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		t.Errorf("%s: runAsNonRoot is not true", where)
	}
	if ctr.ReadOnlyRootFilesystem == nil || !*ctr.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem is not true", where)
	}
	if ctr.AllowPrivilegeEscalation == nil || *ctr.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", where)
	}
	if ctr.Capabilities == nil || !slices.Equal(ctr.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(ctr.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities must drop ALL and add none, got %+v", where, ctr.Capabilities)
	}
	seccomp := ctr.SeccompProfile
	if seccomp == nil {
		seccomp = pod.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile is not RuntimeDefault", where)
	}
}

func imageTag(image string) string {
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return ""
}

// Kubernetes' own Pod Security Admission code, at the "restricted" level the
// namespace enforces: what the API server will check when pods are created.
func TestPodsPassRestrictedPodSecurity(t *testing.T) {
	c := mustRender(t)
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	level := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	for _, w := range c.workloads() {
		for _, r := range eval.EvaluatePod(level, &w.tmpl.ObjectMeta, &w.tmpl.Spec) {
			if !r.Allowed {
				t.Errorf("%s %s: %s: %s", w.kind, w.name, r.ForbiddenReason, r.ForbiddenDetail)
			}
		}
	}
}

func TestServicesListenWhereProbed(t *testing.T) {
	c := mustRender(t)
	for svc, b := range binaries(t) {
		addrVar := b.Listen
		ctr := c.Deployments[svc].Spec.Template.Spec.Containers[0]
		// Any registry, but the image built with SERVICE=<svc>.
		if repo := strings.TrimSuffix(ctr.Image, ":"+imageTag(ctr.Image)); path.Base(repo) != svc {
			t.Errorf("%s runs image %q, not one built for %s", svc, ctr.Image, svc)
		}
		addr, ok := envValue(ctr, addrVar)
		if !ok {
			t.Errorf("%s: %s not set; the default listens on loopback only", svc, addrVar)
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil || (host != "0.0.0.0" && host != "") {
			t.Errorf("%s: %s=%q must listen on all interfaces of the pod", svc, addrVar, addr)
			continue
		}
		if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet == nil {
			t.Errorf("%s: no HTTP readiness probe", svc)
			continue
		}
		// ingest listens only after the streams exist, which can take as
		// long as the NATS cluster takes to form.
		if svc == "ingest" && ctr.StartupProbe == nil {
			t.Error("ingest needs a startup probe, or liveness kills it while NATS starts")
		}
		probed, _ := containerPort(ctr, ctr.ReadinessProbe.HTTPGet.Port)
		if strconv.Itoa(int(probed)) != port {
			t.Errorf("%s listens on %s but is probed on %d", svc, port, probed)
		}
		ann := c.Deployments[svc].Spec.Template.Annotations
		if ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
			t.Errorf("%s: scrape annotations %v do not point at %s/metrics", svc, ann, port)
		}
	}
}

// Kubernetes kills a pod terminationGracePeriodSeconds after SIGTERM; a
// worker must have handed its jobs back by then.
func TestWorkersStopInTime(t *testing.T) {
	c := mustRender(t)
	for w, b := range workers(t) {
		grace := surveyorEnv(t, c).Data["WORKER_GRACE"]
		if grace == "" {
			grace, _ = b.defaultOf("WORKER_GRACE")
		}
		d, err := time.ParseDuration(grace)
		if err != nil {
			t.Fatalf("%s: WORKER_GRACE=%q: %v", w, grace, err)
		}
		spec := c.Deployments[w].Spec.Template.Spec
		if spec.TerminationGracePeriodSeconds == nil || time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second < d+10*time.Second {
			t.Errorf("%s: terminationGracePeriodSeconds %s leaves under 10s after WORKER_GRACE=%s", w, show(spec.TerminationGracePeriodSeconds), grace)
		}
	}
}

func TestSharedEnvironment(t *testing.T) {
	c := mustRender(t)
	cm := surveyorEnv(t, c)
	if got := cm.Data["STREAM_REPLICAS"]; got != "3" {
		t.Errorf("STREAM_REPLICAS=%q, want 3: one copy of every stream on each NATS node", got)
	}
	if _, ok := cm.Data["TECHNOLOGIES_API_TOKENS"]; ok {
		t.Error("TECHNOLOGIES_API_TOKENS belongs in a Secret, not in the ConfigMap")
	}
	// Every Deployment loads the whole ConfigMap, so a name in it need only
	// be read by some binary; a Deployment's own env must be read by its
	// binary.
	for k := range cm.Data {
		if !readByAny(t, k) {
			t.Errorf("ConfigMap sets %s, which no Surveyor service reads", k)
		}
	}
	for svc, b := range binaries(t) {
		for _, e := range c.Deployments[svc].Spec.Template.Spec.Containers[0].Env {
			if !b.reads(e.Name) && !goRuntimeEnv[e.Name] {
				t.Errorf("%s sets %s, which %s does not read", svc, e.Name, svc)
			}
		}
	}
	concurrency := []string{"SMTP_PORT"}
	for _, b := range workers(t) {
		concurrency = append(concurrency, b.Worker.Concurrency)
	}
	for _, v := range concurrency {
		if n, err := strconv.Atoi(cm.Data[v]); err != nil || n < 1 {
			t.Errorf("%s=%q is not a positive number", v, cm.Data[v])
		}
	}

	// NATS_URL must name the client Service of the cluster rendered here.
	u, err := url.Parse(cm.Data["NATS_URL"])
	if err != nil || u.Scheme != "nats" {
		t.Fatalf("NATS_URL=%q is not a nats:// URL", cm.Data["NATS_URL"])
	}
	svc, ok := c.Services[u.Hostname()]
	if !ok {
		t.Fatalf("NATS_URL host %q is not a Service", u.Hostname())
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Errorf("NATS_URL names headless Service %s; clients should use the load-balanced one", svc.Name)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == u.Port() }) {
		t.Errorf("Service %s has no port %s", svc.Name, u.Port())
	}
}

// Without the Secret, ingest starts with the /technologies area off; with
// it, ingest must find the token list under the key the template uses.
func TestTechnologiesSecretTemplate(t *testing.T) {
	c := mustRender(t)
	doc, err := os.ReadFile(filepath.Join("k8s", "technologies-secret.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := decodeStrict(doc, &secret); err != nil {
		t.Fatalf("technologies-secret.example.yaml: %v", err)
	}
	ns := slices.Collect(maps.Keys(c.Namespaces))
	if len(ns) != 1 || secret.Namespace != ns[0] {
		t.Errorf("Secret template is for namespace %q, the kustomization uses %v", secret.Namespace, ns)
	}
	var ref *corev1.SecretKeySelector
	for _, e := range c.Deployments["ingest"].Spec.Template.Spec.Containers[0].Env {
		if e.Name == "TECHNOLOGIES_API_TOKENS" && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil {
		t.Fatal("ingest does not take TECHNOLOGIES_API_TOKENS from a Secret")
	}
	if ref.Optional == nil || !*ref.Optional {
		t.Error("the Secret reference must be optional, or ingest cannot start before someone creates it")
	}
	if ref.Name != secret.Name {
		t.Errorf("ingest reads Secret %q, the template creates %q", ref.Name, secret.Name)
	}
	if _, ok := secret.StringData[ref.Key]; !ok {
		t.Errorf("Secret template has no key %q", ref.Key)
	}
	for name := range c.Secrets {
		t.Errorf("Secret %s is rendered; placeholder tokens must never be applied", name)
	}
}

func TestNATSCluster(t *testing.T) {
	c := mustRender(t)
	sts, ok := c.StatefulSets["nats"]
	if !ok {
		t.Fatal("no StatefulSet nats")
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Fatalf("nats replicas %s, want 3", show(sts.Spec.Replicas))
	}
	headless, ok := c.Services[sts.Spec.ServiceName]
	if !ok || headless.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("serviceName %q is not a headless Service", sts.Spec.ServiceName)
	}
	if !headless.Spec.PublishNotReadyAddresses {
		t.Error("headless Service must publish not-ready nodes, or routes cannot form the cluster")
	}
	ctr := sts.Spec.Template.Spec.Containers[0]
	port := func(name string) int {
		p, ok := containerPort(ctr, intstr.FromString(name))
		if !ok {
			t.Fatalf("nats container has no port %q", name)
		}
		return int(p)
	}
	mounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}

	// The volume claim is what makes the file store survive a pod restart.
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("want one volumeClaimTemplate, got %d", len(sts.Spec.VolumeClaimTemplates))
	}
	pvc := sts.Spec.VolumeClaimTemplates[0]
	dataDir, ok := mounts[pvc.Name]
	if !ok {
		t.Fatalf("volume claim %q is not mounted", pvc.Name)
	}
	volumeSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage]

	// Load the rendered nats.conf with nats-server's own parser, as node 1.
	var confMap string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && mounts[v.Name] != "" {
			confMap = v.ConfigMap.Name
			if !slices.Contains(ctr.Command, filepath.Join(mounts[v.Name], "nats.conf")) {
				t.Errorf("nats command %v does not load the mounted nats.conf", ctr.Command)
			}
		}
	}
	cm, ok := c.ConfigMaps[confMap]
	if !ok {
		t.Fatalf("nats mounts ConfigMap %q, which is not rendered", confMap)
	}
	confPath := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(confPath, []byte(cm.Data["nats.conf"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := envValue(ctr, "POD_NAME"); !ok {
		t.Error("nats container does not set POD_NAME, which nats.conf reads")
	}
	t.Setenv("POD_NAME", sts.Name+"-1")
	opts, err := server.ProcessConfigFile(confPath)
	if err != nil {
		t.Fatalf("nats.conf: %v", err)
	}
	if !opts.JetStream {
		t.Error("JetStream is not enabled")
	}
	if opts.StoreDir != dataDir {
		t.Errorf("JetStream stores in %q, the volume is mounted at %q", opts.StoreDir, dataDir)
	}
	if opts.JetStreamMaxStore <= 0 || opts.JetStreamMaxStore >= volumeSize.Value() {
		t.Errorf("max_file_store %d must be set below the volume's %s", opts.JetStreamMaxStore, volumeSize.String())
	}
	if opts.MaxPayload != 8<<20 {
		t.Errorf("max_payload %d, want 8MB", opts.MaxPayload)
	}
	if opts.ServerName != sts.Name+"-1" {
		t.Errorf("server_name %q, want the pod name", opts.ServerName)
	}
	if opts.Port != port("client") || opts.HTTPPort != port("monitor") || opts.Cluster.Port != port("cluster") {
		t.Errorf("nats.conf ports client %d, monitor %d, cluster %d differ from the container's", opts.Port, opts.HTTPPort, opts.Cluster.Port)
	}
	if opts.Cluster.Name == "" {
		t.Error("cluster has no name")
	}
	var routes []string
	for _, r := range opts.Routes {
		routes = append(routes, r.Host)
	}
	var want []string
	for i := range int(*sts.Spec.Replicas) {
		want = append(want, net.JoinHostPort(sts.Name+"-"+strconv.Itoa(i)+"."+headless.Name, strconv.Itoa(port("cluster"))))
	}
	slices.Sort(routes)
	if !slices.Equal(routes, want) {
		t.Errorf("cluster routes %v, want one per StatefulSet pod %v", routes, want)
	}
	if ctr.StartupProbe == nil {
		t.Error("nats needs a startup probe: catching up on JetStream state can outlast a liveness probe")
	}
}

func TestAutoscaling(t *testing.T) {
	c := mustRender(t)
	scaled := map[string]string{} // Deployment -> what scales it
	for name, h := range c.HPAs {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || c.Deployments[ref.Name] == nil {
			t.Errorf("HPA %s targets %s %s %q, not a rendered Deployment", name, ref.APIVersion, ref.Kind, ref.Name)
		}
		scaled[ref.Name] = "HPA " + name
	}
	h, ok := c.HPAs["ingest"]
	if !ok || h.Spec.ScaleTargetRef.Name != "ingest" {
		t.Fatal("no HPA for the ingest Deployment")
	}
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 || h.Spec.MaxReplicas <= *h.Spec.MinReplicas {
		t.Errorf("ingest HPA min %s max %d: want at least 2 and room to grow", show(h.Spec.MinReplicas), h.Spec.MaxReplicas)
	}

	cm := surveyorEnv(t, c)
	sts := c.StatefulSets["nats"]
	var monitor int32
	for _, p := range c.Services[sts.Spec.ServiceName].Spec.Ports {
		if p.TargetPort.StrVal == "monitor" {
			monitor = p.Port
		}
	}
	for _, o := range c.Namespaced {
		if o.Kind == "ScaledObject" {
			so := c.ScaledObjects[o.Name]
			if prev, dup := scaled[so.Spec.ScaleTargetRef.Name]; dup {
				t.Errorf("Deployment %s is scaled by both %s and ScaledObject %s", so.Spec.ScaleTargetRef.Name, prev, so.Name)
			}
			scaled[so.Spec.ScaleTargetRef.Name] = "ScaledObject " + so.Name
		}
	}
	for w, b := range workers(t) {
		want := b.Worker
		so, ok := c.ScaledObjects[w]
		if !ok {
			t.Errorf("no ScaledObject for worker %s", w)
			continue
		}
		ref := so.Spec.ScaleTargetRef
		if ref.Name != w || (ref.Kind != "" && ref.Kind != "Deployment") {
			t.Errorf("ScaledObject %s scales %s %q, want Deployment %s", w, ref.Kind, ref.Name, w)
		}
		if so.Spec.MaxReplicaCount == nil || so.Spec.MinReplicaCount == nil || *so.Spec.MaxReplicaCount <= *so.Spec.MinReplicaCount {
			t.Errorf("ScaledObject %s: replica range %s..%s leaves no room to scale", w, show(so.Spec.MinReplicaCount), show(so.Spec.MaxReplicaCount))
		}
		if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "nats-jetstream" {
			t.Errorf("ScaledObject %s: want one nats-jetstream trigger, got %+v", w, so.Spec.Triggers)
			continue
		}
		md := so.Spec.Triggers[0].Metadata
		if md["stream"] != "JOBS" || md["consumer"] != want.Consumer || md["account"] != "$G" {
			t.Errorf("ScaledObject %s watches %s/%s in account %q, want JOBS/%s in $G", w, md["stream"], md["consumer"], md["account"], want.Consumer)
		}
		// KEDA runs in its own namespace and reaches each node as
		// <pod>.<headless service>, so the name must be fully qualified.
		wantEndpoint := net.JoinHostPort(sts.Spec.ServiceName+"."+sts.Namespace+".svc.cluster.local", strconv.Itoa(int(monitor)))
		if md["natsServerMonitoringEndpoint"] != wantEndpoint {
			t.Errorf("ScaledObject %s reads %q, want the headless Service %s", w, md["natsServerMonitoringEndpoint"], wantEndpoint)
		}
		// The lag KEDA counts includes jobs in hand; at or below one pod's
		// concurrency, a busy but keeping-up worker would scale out.
		lag, err := strconv.Atoi(md["lagThreshold"])
		conc, _ := strconv.Atoi(cm.Data[want.Concurrency])
		if err != nil || lag <= conc {
			t.Errorf("ScaledObject %s lagThreshold %q must exceed %s=%d", w, md["lagThreshold"], want.Concurrency, conc)
		}
		if so.Spec.MaxReplicaCount != nil && int(*so.Spec.MaxReplicaCount)*conc > want.MaxAckPending {
			t.Errorf("ScaledObject %s: %d pods x %d jobs exceeds the consumer's MaxAckPending %d; the extra pods would idle",
				w, *so.Spec.MaxReplicaCount, conc, want.MaxAckPending)
		}
	}
	for name, d := range c.Deployments {
		who, ok := scaled[name]
		if !ok {
			t.Errorf("Deployment %s has no autoscaler", name)
		}
		if d.Spec.Replicas != nil {
			t.Errorf("Deployment %s sets replicas, which every apply would force over %s", name, who)
		}
	}
}

// fewestReplicas is the smallest number of pods w may run with: the
// minimum of whatever autoscales it, or its fixed replica count.
func (c *cluster) fewestReplicas(w workload) int {
	for _, h := range c.HPAs {
		if ref := h.Spec.ScaleTargetRef; ref.Kind == w.kind && ref.Name == w.name {
			if h.Spec.MinReplicas == nil {
				return 1 // the HPA default
			}
			return int(*h.Spec.MinReplicas)
		}
	}
	for _, so := range c.ScaledObjects {
		if ref := so.Spec.ScaleTargetRef; (ref.Kind == w.kind || ref.Kind == "" && w.kind == "Deployment") && ref.Name == w.name {
			if so.Spec.MinReplicaCount == nil {
				return 0 // KEDA's default: scale to zero
			}
			return int(*so.Spec.MinReplicaCount)
		}
	}
	if s, ok := c.StatefulSets[w.name]; ok && w.kind == "StatefulSet" && s.Spec.Replicas != nil {
		return int(*s.Spec.Replicas)
	}
	if d, ok := c.Deployments[w.name]; ok && w.kind == "Deployment" && d.Spec.Replicas != nil {
		return int(*d.Spec.Replicas)
	}
	return 1 // Kubernetes' default replicas
}

func TestDisruptionBudgets(t *testing.T) {
	c := mustRender(t)
	for _, w := range c.workloads() {
		var budgets []string
		for name, pdb := range c.PDBs {
			if selects(t, pdb.Spec.Selector, w.tmpl.Labels) {
				budgets = append(budgets, name)
				if (pdb.Spec.MinAvailable == nil) == (pdb.Spec.MaxUnavailable == nil) {
					t.Errorf("PDB %s: set exactly one of minAvailable and maxUnavailable", name)
				}
				if least := c.fewestReplicas(w); pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.IntValue() >= least {
					t.Errorf("PDB %s minAvailable %s blocks every drain of %s at %d replicas", name, pdb.Spec.MinAvailable.String(), w.name, least)
				}
			}
		}
		if len(budgets) != 1 {
			t.Errorf("%s %s is covered by PDBs %v, want exactly one", w.kind, w.name, budgets)
		}
		if !selects(t, w.selector, w.tmpl.Labels) {
			t.Errorf("%s %s: selector does not match its own pod labels", w.kind, w.name)
		}
	}
	// A quorum of 2 out of 3 must survive any voluntary disruption.
	if p := c.PDBs["nats"]; p == nil || p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 {
		t.Error("PDB nats must allow at most one node down")
	}
}

func TestServicesReachPods(t *testing.T) {
	c := mustRender(t)
	for name, svc := range c.Services {
		var matched []workload
		for _, w := range c.workloads() {
			if selects(t, metav1.SetAsLabelSelector(svc.Spec.Selector), w.tmpl.Labels) {
				matched = append(matched, w)
			}
		}
		if len(matched) != 1 {
			t.Errorf("Service %s selects %d workloads, want 1", name, len(matched))
			continue
		}
		for _, p := range svc.Spec.Ports {
			if _, ok := containerPort(matched[0].tmpl.Spec.Containers[0], p.TargetPort); !ok {
				t.Errorf("Service %s port %s targets %s, which %s does not expose", name, p.Name, p.TargetPort.String(), matched[0].name)
			}
		}
	}
	for _, svc := range []string{"ingest", "nats"} {
		if _, ok := c.Services[svc]; !ok {
			t.Errorf("no Service %s", svc)
		}
	}
}
