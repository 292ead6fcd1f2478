package metrics_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/metrics"
	"github.com/gorxe/gorxe/netio"
)

// BenchmarkGather measures one scrape's collection (without HTTP and text encoding) of a device
// with qps QPs, busy of which had traffic: what each scrape costs the exporting process.
func BenchmarkGather(b *testing.B) {
	for _, tc := range []struct{ qps, busy int }{{1, 1}, {1000, 10}, {1000, 500}} {
		b.Run(fmt.Sprintf("qps=%d/busy=%d", tc.qps, tc.busy), func(b *testing.B) {
			fab := netio.NewFabric(netio.FabricConfig{})
			defer fab.Close()
			a := fabrictest.Open(b, fab, "gorxe_a", "10.0.0.1")
			peer := fabrictest.Open(b, fab, "gorxe_b", "10.0.0.2")
			dst := peer.UDQP(b)
			peer.PostRecvs(b, dst, tc.busy)
			for i := range tc.qps {
				q := a.UDQP(b)
				if i < tc.busy {
					a.Send(b, q, peer, dst.QPN(), 8)
				}
			}
			reg := prometheus.NewRegistry()
			_, err := metrics.Register(reg, a.Dev)
			require.NoError(b, err)
			b.ResetTimer()
			for b.Loop() {
				fams, err := reg.Gather()
				if err != nil || len(fams) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
