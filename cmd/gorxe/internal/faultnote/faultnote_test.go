package faultnote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
)

func env(v string) func(string) string {
	return func(k string) string {
		if k == netio.EnvFaults {
			return v
		}
		return ""
	}
}

func TestFromEnv(t *testing.T) {
	n, err := FromEnv(env(""))
	require.NoError(t, err)
	assert.Nil(t, n, "no faults, no note")

	n, err = FromEnv(env("seed=3"))
	require.NoError(t, err)
	assert.Nil(t, n, "a seed alone impairs nothing")

	_, err = FromEnv(env("loss=2"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GORXE_FAULTS: ")

	n, err = FromEnv(env("loss=0.2,seed=7"))
	require.NoError(t, err)
	require.NotNil(t, n)
	assert.Equal(t, "GORXE_FAULTS=loss=0.2,seed=7: this side impairs its outgoing datagrams on purpose", n.Banner())
}

func TestSummary(t *testing.T) {
	n, err := FromEnv(env("loss=0.5"))
	require.NoError(t, err)
	for _, dir := range []netio.Direction{netio.Sent, netio.Lost, netio.Received, netio.Lost, netio.Sent} {
		n.Tap(dir, &netio.Message{})
	}
	var c counter.Snapshot
	c[counter.SentPkts], c[counter.CompleterRetryErr], c[counter.DuplicateRequest] = 10, 3, 4
	c[counter.OutOfSeqRequest], c[counter.RcvdUnexpected], c[counter.RcvdICRCErr] = 5, 1, 2
	assert.Equal(t, "GORXE_FAULTS: 2 of 10 datagrams dropped by the faults; 3 retransmissions, 4 duplicate and 5 out-of-sequence requests received, 3 received packets dropped", n.Summary(c))
}
