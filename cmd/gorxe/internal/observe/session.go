package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/metrics"
)

// Session is what Start set up for one run; End finishes it.
type Session struct {
	o    Options
	devs []*gorxe.Device
	srv  *http.Server
	addr net.Addr
	done sync.WaitGroup
}

// Start begins observing devs as o asks: with a metrics address it listens there at once (so a
// taken port fails the run before any traffic) and says where on notices, then serves /metrics
// until End.
func (o Options) Start(notices io.Writer, devs ...*gorxe.Device) (*Session, error) {
	s := &Session{o: o, devs: devs}
	if o.MetricsAddr == "" {
		return s, nil
	}
	l, err := net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := metrics.Register(reg, devs...); err != nil {
		l.Close()
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.addr = l.Addr()
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		_ = s.srv.Serve(l) // ends with ErrServerClosed at End
	}()
	fmt.Fprintf(notices, "metrics: http://%s/metrics\n", s.addr)
	return s, nil
}

// MetricsAddr is the address /metrics is served on, nil without --metrics.
func (s *Session) MetricsAddr() net.Addr { return s.addr }

// End stops serving metrics (a scrape in progress may finish) and, with --counters, prints the
// devices' counters to w.
func (s *Session) End(w io.Writer) {
	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			s.srv.Close()
		}
		cancel()
		s.done.Wait()
	}
	if s.o.Counters {
		for _, d := range s.devs {
			PrintCounters(w, d.Name(), d.Counters())
		}
	}
}
