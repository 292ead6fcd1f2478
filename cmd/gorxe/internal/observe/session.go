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
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/metrics"
)

// Session is what Start set up for one run; End finishes it.
type Session struct {
	o      Options
	devs   []*gorxe.Device
	agents []*rdmacm.Agent // the connection managers observed, closed by End
	srv    *http.Server
	addr   net.Addr
	done   sync.WaitGroup
}

// Start begins observing devs as o asks: with a metrics address it listens there at once (so a
// taken port fails the run before any traffic) and says where on notices, then serves /metrics
// until End.
func (o Options) Start(notices io.Writer, devs ...*gorxe.Device) (*Session, error) {
	return o.start(notices, devs, nil)
}

// StartCM is Start for a tool that connects through RDMA-CM on dev: it observes the device's
// connection manager agent too, as the gorxe_cm_* metrics and, with --counters, the agent's
// non-zero counters after the device's. It holds a handle on the agent (started as Dial and
// Listen start it) until End, so that the counters outlive the tool's last connection.
func (o Options) StartCM(notices io.Writer, dev *gorxe.Device) (*Session, error) {
	if o.MetricsAddr == "" && !o.Counters {
		return &Session{o: o}, nil
	}
	a, err := rdmacm.Open(dev, rdmacm.Config{})
	if err != nil {
		return nil, err
	}
	s, err := o.start(notices, []*gorxe.Device{dev}, []*rdmacm.Agent{a})
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	return s, nil
}

func (o Options) start(notices io.Writer, devs []*gorxe.Device, agents []*rdmacm.Agent) (*Session, error) {
	s := &Session{o: o, devs: devs, agents: agents}
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
	if len(agents) > 0 {
		if _, err := metrics.RegisterCM(reg, agents...); err != nil {
			l.Close()
			return nil, fmt.Errorf("--metrics: %w", err)
		}
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
// devices' counters to w, then the connection managers'; it closes the agents StartCM opened.
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
	for _, a := range s.agents {
		if s.o.Counters {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := a.Stats(ctx)
			cancel()
			if err != nil {
				fmt.Fprintf(w, "cm counters of %s: %v\n", a.Device().Name(), err)
			} else {
				PrintCMCounters(w, a.Device().Name(), st)
			}
		}
		a.Close()
	}
}
