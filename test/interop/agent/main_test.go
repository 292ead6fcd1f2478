//go:build linux

package main

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

// fakeProcess runs until it is killed.
type fakeProcess struct{ killed chan struct{} }

func (p *fakeProcess) Wait() guestrpc.Result {
	<-p.killed
	return guestrpc.Result{ExitCode: -1}
}

func (p *fakeProcess) Kill() { close(p.killed) }

// TestKillWhileWaited: a command the suite is already waiting for can still be killed, and the
// wait then answers with its result; once answered, the command is forgotten.
func TestKillWhileWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &agent{procs: map[int]process{}}
		id := a.add(&fakeProcess{killed: make(chan struct{})})
		waited := make(chan guestrpc.Result)
		go func() {
			r, err := a.wait(guestrpc.WaitRequest{ID: id})
			assert.NoError(t, err)
			waited <- r
		}()
		synctest.Wait() // the wait is blocked on the running command
		_, err := a.kill(guestrpc.WaitRequest{ID: id})
		require.NoError(t, err)
		assert.Equal(t, guestrpc.Result{ExitCode: -1}, <-waited)
		_, err = a.kill(guestrpc.WaitRequest{ID: id})
		assert.EqualError(t, err, "no command with id 1")
	})
}
