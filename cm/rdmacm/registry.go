package rdmacm

import (
	"fmt"
	"sync"

	"github.com/gorxe/gorxe"
)

// registry holds the agent of each device.
var registry = struct {
	sync.Mutex
	agents map[*gorxe.Device]*agent
}{agents: make(map[*gorxe.Device]*agent)}

// Agent is a handle on a device's connection manager: QP1, the protocol state machine and the
// goroutines that drive them, shared by every user of the device.
type Agent struct {
	a    *agent
	once sync.Once
}

// withAgent runs f on a handle on the device's agent, opened with the default Config and closed
// when f returns: what f creates (a connection, a listener) holds the agent on its own. It is
// what the package-level Dial, Listen, DialUD and ListenUD do.
func withAgent[T any](dev *gorxe.Device, f func(*Agent) (T, error)) (T, error) {
	a, err := Open(dev, Config{})
	if err != nil {
		var none T
		return none, err
	}
	defer a.Close()
	return f(a)
}

// Open returns a handle on the device's agent, starting the agent with cfg if the device has none
// (cfg is ignored otherwise). Close the handle when done with it; listeners and connections keep
// the agent running on their own.
func Open(dev *gorxe.Device, cfg Config) (*Agent, error) {
	select {
	case <-dev.Done():
		return nil, fmt.Errorf("rdmacm: open %s: %w", dev.Name(), gorxe.ErrDeviceClosed)
	default:
	}
	for {
		registry.Lock()
		a := registry.agents[dev]
		if a == nil {
			a, err := start(dev, cfg)
			if err != nil {
				registry.Unlock()
				return nil, err
			}
			a.refs = 1
			registry.agents[dev] = a
			registry.Unlock()
			return &Agent{a: a}, nil
		}
		if a.refs > 0 {
			a.refs++
			registry.Unlock()
			return &Agent{a: a}, nil
		}
		// The last handle is gone and the agent is stopping: wait for QP1 to be free.
		registry.Unlock()
		<-a.gone
	}
}

// Device returns the device the agent serves.
func (h *Agent) Device() *gorxe.Device { return h.a.dev }

// Close releases the handle; the agent stops once its listeners and connections are gone too.
// Further calls do nothing.
func (h *Agent) Close() error {
	h.once.Do(h.a.release)
	return nil
}

// acquire takes a reference for a new listener or connection.
func (a *agent) acquire() error {
	registry.Lock()
	defer registry.Unlock()
	if a.refs == 0 {
		return ErrClosed
	}
	a.refs++
	return nil
}

// release drops a reference and stops the agent after the last one. It must not run on the run
// loop's goroutine, which stop waits for.
func (a *agent) release() {
	registry.Lock()
	a.refs--
	last := a.refs == 0
	registry.Unlock()
	if !last {
		return
	}
	a.cancel(ErrClosed)
	a.wg.Wait()
	a.q.close()
	registry.Lock()
	delete(registry.agents, a.dev)
	registry.Unlock()
	close(a.gone)
}
