package gorxe

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every verb error reads "gorxe: <verb>: <cause>" once: no internal package names, no repeats.
func TestErrorTextsSayThingsOnce(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(t, err)

	_, err = pd.RegMR(nil, AccessLocalWrite)
	require.ErrorIs(t, err, ErrEmptyRegion)
	assert.Equal(t, "gorxe: reg_mr: zero-length registration", err.Error())

	m, err := pd.RegMR(make([]byte, 64), AccessLocalWrite)
	require.NoError(t, err)
	require.NoError(t, m.Dereg())
	err = m.Dereg()
	require.ErrorIs(t, err, ErrDestroyed)
	assert.Equal(t, "gorxe: dereg_mr: object destroyed", err.Error())

	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	err = q.SendCQ().Destroy()
	require.ErrorIs(t, err, ErrInUse)
	assert.Equal(t, "gorxe: destroy_cq: object in use: 2 queue pairs still use the CQ", err.Error())

	c, err := d.CreateCQ(4, nil)
	require.NoError(t, err)
	require.NoError(t, c.Destroy())
	err = c.Destroy()
	require.ErrorIs(t, err, ErrDestroyed)
	assert.Equal(t, "gorxe: destroy_cq: object destroyed", err.Error())

	for _, e := range []error{
		q.Modify(&QPAttr{State: QPStateRTS}, QPAttrState),
		q.PostSend([]SendWR{{Opcode: WRSend}}),
	} {
		require.Error(t, e)
		msg := e.Error()
		for _, inner := range []string{": qp: ", ": mr: ", ": cq: "} {
			assert.NotContains(t, msg, inner)
		}
		assert.Equal(t, 1, strings.Count(msg, "gorxe: "), msg)
	}
}
