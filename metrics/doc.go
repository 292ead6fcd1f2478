// Package metrics exports the counters of gorxe devices and their QPs as Prometheus metrics.
//
// A Collector reads Device.Counters and Device.QPCounters when it is scraped, so exporting costs
// the traffic nothing between scrapes. Every counter of package counter becomes two metric
// families with its help text:
//
//	gorxe_<name>_total{device="..."}              the device's totals (its live QPs, the QPs
//	                                              destroyed on it, and its own drops)
//	gorxe_qp_<name>_total{device="...",qpn="17"}  one QP's counters, qpn in decimal as
//	                                              rdma statistic prints it
//
// plus gorxe_qps{device} (live QPs) and gorxe_qps_unexported{device} (live QPs without series of
// their own). Per-QP and device families have different names, so summing a family never counts a
// QP twice.
//
// Cardinality is bounded: per device, only QPs that sent or received a packet get series, and of
// those at most Collector.MaxQPs (DefaultMaxQPs unless set), the busiest by packets sent and
// received (ties to the lower QPN). The others are still counted in the device series, which
// always cover every QP; gorxe_qps_unexported says how many were left out.
//
// A CMCollector (RegisterCM) exports the counters of connection manager agents (cm/rdmacm) as
// gorxe_cm_<name>_total{device,...}: the MADs received, sent and retransmitted by message, the
// MADs dropped by reason, failed sends, REJs the manager sent itself and timeouts.
//
// The package stays out of the root package so that programs embedding gorxe without Prometheus
// do not link the client library; Register hooks devices into any prometheus.Registerer.
package metrics
