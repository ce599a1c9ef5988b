package obs

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Admin serves a worker's /healthz, /readyz and /metrics. Ready is asked on
// every /readyz; nil means ready.
type Admin struct {
	Addr     string
	Ready    func() error
	Registry *Registry
}

// Serve listens until ctx ends. It returns the bound address through
// started (useful with port 0) once listening.
func (a *Admin) Serve(ctx context.Context, started func(addr string)) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := a.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", a.Registry.Handler())
	ln, err := net.Listen("tcp", a.Addr)
	if err != nil {
		return err
	}
	if started != nil {
		started(ln.Addr().String())
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
