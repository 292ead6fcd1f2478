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

type agent struct {
	mu     sync.Mutex
	nextID int
	procs  map[int]*guestrpc.Process
}

func (a *agent) start(req guestrpc.StartRequest) (guestrpc.StartResponse, error) {
	timeout := defaultTimeout
	if req.TimeoutSec > 0 {
		timeout = time.Duration(req.TimeoutSec * float64(time.Second))
	}
	p := guestrpc.Start(req.Argv, nil, timeout)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	a.procs[a.nextID] = p
	return guestrpc.StartResponse{ID: a.nextID}, nil
}

func (a *agent) lookup(id int, forget bool) (*guestrpc.Process, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.procs[id]
	if !ok {
		return nil, fmt.Errorf("no command with id %d", id)
	}
	if forget {
		delete(a.procs, id)
	}
	return p, nil
}

func (a *agent) wait(req guestrpc.WaitRequest) (guestrpc.Result, error) {
	p, err := a.lookup(req.ID, true)
	if err != nil {
		return guestrpc.Result{}, err
	}
	return p.Wait(), nil
}

func (a *agent) kill(req guestrpc.WaitRequest) (struct{}, error) {
	p, err := a.lookup(req.ID, false)
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
	a := &agent{procs: make(map[int]*guestrpc.Process)}
	mux := http.NewServeMux()
	mux.HandleFunc(guestrpc.PathStart, handle(a.start))
	mux.HandleFunc(guestrpc.PathWait, handle(a.wait))
	mux.HandleFunc(guestrpc.PathKill, handle(a.kill))
	mux.HandleFunc(guestrpc.PathListening, handle(listening))
	mux.HandleFunc(guestrpc.PathPoweroff, handle(poweroff))
	fmt.Fprintf(os.Stderr, "agent: listening on tcp port %d\n", guestrpc.Port)
	log.Fatal(http.ListenAndServe(fmt.Sprintf(":%d", guestrpc.Port), mux))
}
