package deploy

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/nats-io/nats-server/v2/server"
)

// loadCompose loads compose.yaml the way `docker compose` does, with the
// compose-spec library it is built on: schema validation, interpolation
// (with an empty environment, so defaults apply), merge keys and the
// consistency checks between services.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"compose.yaml"}, cli.WithWorkingDirectory("."))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return p
}

func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	want := []string{"emailcheck", "ingest", "nats", "scanner", "sitemapper"}
	if got := p.ServiceNames(); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("services %v, want %v", got, want)
	}

	nats := p.Services["nats"]
	cmd := []string(nats.Command)
	i := slices.Index(cmd, "-sd")
	if !slices.Contains(cmd, "-js") || i < 0 || i+1 >= len(cmd) {
		t.Fatalf("nats command %v does not enable JetStream with a store directory", cmd)
	}
	storeDir := cmd[i+1]
	if !slices.ContainsFunc(nats.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Type == types.VolumeTypeVolume && v.Target == storeDir
	}) {
		t.Errorf("nats stores JetStream in %s, which is not on a named volume", storeDir)
	}
	if nats.HealthCheck == nil || len(nats.HealthCheck.Test) < 2 {
		t.Error("nats has no health check, so the services cannot wait for it")
	}
	checkComposeNATSConfig(t, p)

	k8s := mustRender(t)
	for svc, b := range binaries(t) {
		addrVar := b.Listen
		s := p.Services[svc]
		if s.Build == nil || s.Build.Args["SERVICE"] == nil || *s.Build.Args["SERVICE"] != svc {
			t.Errorf("%s: not built with SERVICE=%s", svc, svc)
		} else if df := filepath.Join(s.Build.Context, s.Build.Dockerfile); !sameFile(t, df, "Dockerfile") {
			t.Errorf("%s: built from %s, not deploy/Dockerfile", svc, df)
		}
		// Every service gets the shared environment (a YAML anchor), so a
		// name need only be read by some binary.
		for name := range s.Environment {
			if !readByAny(t, name) {
				t.Errorf("%s sets %s, which no Surveyor service reads", svc, name)
			}
		}
		if v := s.Environment["NATS_URL"]; v == nil {
			t.Errorf("%s: NATS_URL not set", svc)
		} else if u, err := url.Parse(*v); err != nil || u.Hostname() != "nats" {
			t.Errorf("%s: NATS_URL=%q does not name the nats service", svc, *v)
		}
		if d, ok := s.DependsOn["nats"]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s does not wait for a healthy nats", svc)
		}
		if !s.ReadOnly || !slices.Equal(s.CapDrop, []string{"ALL"}) {
			t.Errorf("%s: want read_only and cap_drop ALL", svc)
		}

		// Same listen address as on Kubernetes, and the health check asks it.
		addr := s.Environment[addrVar]
		k8sAddr, _ := envValue(k8s.Deployments[svc].Spec.Template.Spec.Containers[0], addrVar)
		if addr == nil || *addr != k8sAddr {
			t.Errorf("%s: %s is %s here, %q on Kubernetes", svc, addrVar, quoted(addr), k8sAddr)
			continue
		}
		_, port, _ := net.SplitHostPort(*addr)
		hc := s.HealthCheck
		if hc == nil || len(hc.Test) != 3 || hc.Test[0] != "CMD" || hc.Test[1] != "/usr/local/bin/httpcheck" {
			t.Errorf("%s: health check %v, want [CMD /usr/local/bin/httpcheck URL] (the image has no shell)", svc, hc)
			continue
		}
		if u, err := url.Parse(hc.Test[2]); err != nil || u.Port() != port || u.Path != "/readyz" {
			t.Errorf("%s: health check asks %s, want /readyz on port %s", svc, hc.Test[2], port)
		}
	}

	ports := p.Services["ingest"].Ports
	if len(ports) != 1 || ports[0].Target != 8080 || ports[0].Published != "8080" {
		t.Errorf("ingest publishes %+v, want 8080 -> 8080", ports)
	}
}

// The single compose server must accept the same message size as the
// Kubernetes cluster, or a result stored there fails here.
func checkComposeNATSConfig(t *testing.T, p *types.Project) {
	t.Helper()
	nats := p.Services["nats"]
	if len(nats.Configs) != 1 {
		t.Fatalf("nats mounts %d configs, want its nats.conf", len(nats.Configs))
	}
	mounted := nats.Configs[0]
	if !slices.Contains(nats.Command, mounted.Target) {
		t.Errorf("nats command %v does not load %s", nats.Command, mounted.Target)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(p.Configs[mounted.Source].Content), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("compose nats.conf: %v", err)
	}
	if opts.MaxPayload != 8<<20 {
		t.Errorf("compose NATS max_payload %d, want 8MB as on Kubernetes", opts.MaxPayload)
	}
}

// quoted shows a compose environment value, which is nil when unset.
func quoted(v *string) string {
	if v == nil {
		return "unset"
	}
	return strconv.Quote(*v)
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}
