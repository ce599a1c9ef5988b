package deploy

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// stage is one FROM ... section of a Dockerfile.
type stage struct {
	from         *parser.Node
	instructions []*parser.Node
}

// args returns an instruction's arguments as written.
func args(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

// parseDockerfile reads the Dockerfile with BuildKit's own parser, which
// keeps instruction names as written.
func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	var stages []stage
	for _, n := range res.AST.Children {
		switch {
		case strings.EqualFold(n.Value, "from"):
			stages = append(stages, stage{from: n})
		case len(stages) > 0:
			stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, n)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a final one", len(stages))
	}
	return stages
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	build, final := stages[0], stages[len(stages)-1]

	var buildArgs, env, runs []string
	for _, n := range build.instructions {
		switch strings.ToLower(n.Value) {
		case "arg":
			buildArgs = append(buildArgs, args(n)...)
		case "env":
			// BuildKit gives ENV's arguments as (name, value, separator).
			a := args(n)
			for i := 0; i+1 < len(a); i += 3 {
				env = append(env, a[i]+"="+a[i+1])
			}
		case "run":
			runs = append(runs, strings.Join(args(n), " "))
		}
	}
	if !slices.Contains(buildArgs, "SERVICE") {
		t.Error("build stage does not take ARG SERVICE")
	}
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Errorf("build stage ENV %v does not set CGO_ENABLED=0: binaries must be static for a distroless image", env)
	}
	built := strings.Join(runs, "\n")
	for _, want := range []string{"go build -trimpath", "./services/${SERVICE}", "./cmd/httpcheck"} {
		if !strings.Contains(built, want) {
			t.Errorf("build stage never runs %q", want)
		}
	}

	image := args(final.from)[0]
	if !strings.HasPrefix(image, "gcr.io/distroless/static") || !strings.HasSuffix(image, ":nonroot") {
		t.Errorf("final image %s, want distroless static nonroot", image)
	}
	var user string
	var entrypoint *parser.Node
	var copied []string
	for _, n := range final.instructions {
		switch strings.ToLower(n.Value) {
		case "run":
			t.Errorf("final stage runs %q, but the image has no shell", n.Original)
		case "user":
			user = args(n)[0]
		case "entrypoint":
			entrypoint = n
		case "copy":
			if a := args(n); len(a) > 0 {
				copied = append(copied, a[len(a)-1])
			}
		}
	}
	// Kubernetes' runAsNonRoot can only verify a numeric user.
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final USER %q, want a numeric non-root uid", user)
	}
	if entrypoint == nil || !entrypoint.Attributes["json"] {
		t.Error("final stage needs an exec-form (JSON) ENTRYPOINT: there is no shell to run a string")
	}
	// compose.yaml's health checks run the probe from this path.
	if !slices.Contains(copied, "/usr/local/bin/httpcheck") {
		t.Errorf("final stage copies %v, not /usr/local/bin/httpcheck", copied)
	}
}

// The build context is the repository root, filtered by the ignore file
// next to the Dockerfile; BuildKit's own matcher decides what is sent.
func TestDockerIgnore(t *testing.T) {
	f, err := os.Open("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	for path, wantSent := range map[string]bool{
		"go.mod":                                true,
		"go.sum":                                true,
		"services/ingest/main.go":               true,
		"pkg/job/job.go":                        true,
		"pkg/fingerprint/data/categories.json":  true,
		"deploy/go.mod":                         true,
		"deploy/go.sum":                         true,
		"deploy/cmd/httpcheck/main.go":          true,
		".git/HEAD":                             false,
		"bin/ingest":                            false,
		"data/jetstream/_js_/meta.inf":          false,
		"deploy/k8s/nats.yaml":                  false,
		"deploy/compose.yaml":                   false,
		"services/scanner/scanner_test.go":      false,
		"pkg/fingerprint/data/technologies/a.j": true,
	} {
		excluded, err := pm.MatchesOrParentMatches(path)
		if err != nil {
			t.Fatal(err)
		}
		if excluded == wantSent {
			t.Errorf("%s: sent to the build = %v, want %v", path, !excluded, wantSent)
		}
	}
}
