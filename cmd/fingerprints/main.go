// Command fingerprints installs the community Wappalyzer database into
// FINGERPRINTS_DIR (make fingerprints runs it). Each setting is an
// environment variable, as the services read theirs, and a flag that
// overrides it; the work is pkg/fpfetch's.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fpfetch"
	"github.com/surveyor/surveyor/pkg/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], config.Environ, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(os.Stderr, "fingerprints:", err)
		}
		os.Exit(1)
	}
}

// run fetches with the settings of lookup and args, and says what it
// installed on out.
func run(ctx context.Context, args []string, lookup config.Lookup, out, errOut io.Writer) error {
	var o fpfetch.Options
	cfg := config.RegisterFunc(func(s *config.Set) {
		service.FingerprintsDirVar(s, &o.Dir)
		o.Register(s)
	})
	if err := config.Load(lookup, cfg); err != nil {
		return err
	}
	fs := flag.NewFlagSet("fingerprints", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&o.Dir, "dir", o.Dir, "directory to install into (FINGERPRINTS_DIR); replaced whole")
	fs.StringVar(&o.URL, "url", o.URL, "archive URL, {rev} standing for the revision (FINGERPRINTS_URL)")
	fs.StringVar(&o.Revision, "rev", o.Revision, "revision: commit, tag or branch (FINGERPRINTS_REVISION)")
	fs.StringVar(&o.SHA256, "sha256", o.SHA256, "expected SHA-256 of the archive, hex (FINGERPRINTS_SHA256)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "time the download may take (FINGERPRINTS_TIMEOUT)")
	fs.Usage = func() {
		fmt.Fprintln(errOut, "Usage: fingerprints [flags]\n\nInstalls the community Wappalyzer database into FINGERPRINTS_DIR.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	res, err := fpfetch.Fetch(ctx, o)
	if err != nil && o.Dir != "" {
		return fmt.Errorf("%w (%s is unchanged)", err, o.Dir)
	}
	if err != nil {
		return err
	}
	r := res.Report
	fmt.Fprintf(out, "installed %s (sha256 %s) into %s: %d technologies, %d categories, %d problems (the scanner logs them at start)\n",
		res.URL, res.SHA256, o.Dir, r.Technologies, r.Categories, len(r.Problems))
	return nil
}
