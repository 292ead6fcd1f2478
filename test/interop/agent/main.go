//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

const defaultTimeout = 60 * time.Second

// process is a started command as the agent keeps it (a *guestrpc.Process).
type process interface {
	Wait() guestrpc.Result
	Kill()
}

type agent struct {
	mu     sync.Mutex
	nextID int
	procs  map[int]process
}

func (a *agent) start(req guestrpc.StartRequest) (guestrpc.StartResponse, error) {
	timeout := defaultTimeout
	if req.TimeoutSec > 0 {
		timeout = time.Duration(req.TimeoutSec * float64(time.Second))
	}
	return guestrpc.StartResponse{ID: a.add(guestrpc.Start(req.Argv, nil, timeout))}, nil
}

// add registers p under the next id.
func (a *agent) add(p process) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.procs[a.nextID] = p
	return a.nextID
}

func (a *agent) lookup(id int) (process, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.procs[id]
	if !ok {
		return nil, fmt.Errorf("no command with id %d", id)
	}
	return p, nil
}

// wait answers once the command has ended, and forgets it then: until then it can still be
// killed, which is how the suite stops a server it is already waiting for.
func (a *agent) wait(req guestrpc.WaitRequest) (guestrpc.Result, error) {
	p, err := a.lookup(req.ID)
	if err != nil {
		return guestrpc.Result{}, err
	}
	r := p.Wait()
	a.mu.Lock()
	delete(a.procs, req.ID)
	a.mu.Unlock()
	return r, nil
}

func (a *agent) kill(req guestrpc.WaitRequest) (struct{}, error) {
	p, err := a.lookup(req.ID)
	if err == nil {
		p.Kill()
	}
	return struct{}{}, err
}

func listening(req guestrpc.ListeningRequest) (guestrpc.ListeningResponse, error) {
	deadline := time.Now().Add(time.Duration(req.TimeoutSec * float64(time.Second)))
	for {
		ok, err := guestrpc.TCPListening(req.Port)
		if err != nil || ok || time.Now().After(deadline) {
			return guestrpc.ListeningResponse{Listening: ok}, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handle decodes a JSON request, calls fn and writes its JSON answer.
func handle[Req, Resp any](fn func(Req) (Resp, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp, err := fn(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}
}

func poweroff(struct{}) (struct{}, error) {
	go func() {
		time.Sleep(100 * time.Millisecond) // let the answer leave
		syscall.Sync()
		syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	}()
	return struct{}{}, nil
}

func main() {
	a := &agent{procs: make(map[int]process)}
	mux := http.NewServeMux()
	mux.HandleFunc(guestrpc.PathStart, handle(a.start))
	mux.HandleFunc(guestrpc.PathWait, handle(a.wait))
	mux.HandleFunc(guestrpc.PathKill, handle(a.kill))
	mux.HandleFunc(guestrpc.PathListening, handle(listening))
	mux.HandleFunc(guestrpc.PathPoweroff, handle(poweroff))
	fmt.Fprintf(os.Stderr, "agent: listening on tcp port %d\n", guestrpc.Port)
	log.Fatal(http.ListenAndServe(fmt.Sprintf(":%d", guestrpc.Port), mux))
}
