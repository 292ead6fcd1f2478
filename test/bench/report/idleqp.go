//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gorxe/gorxe"
)

// idleTally is what the idle-QP process reports: its resident set and Go heap before and after
// creating and connecting its QPs.
type idleTally struct {
	QPs        int    `json:"qps"` // on each of the two devices
	RSSBefore  uint64 `json:"rss_before"`
	RSSAfter   uint64 `json:"rss_after"`
	HeapBefore uint64 `json:"heap_before"`
	HeapAfter  uint64 `json:"heap_after"`
}

// perQP is the resident memory each QP added.
func (t idleTally) perQP() float64 {
	if t.QPs == 0 || t.RSSAfter < t.RSSBefore {
		return 0
	}
	return float64(t.RSSAfter-t.RSSBefore) / float64(2*t.QPs)
}

// idleRow measures the memory of idle QPs in a fresh process: this program re-executed.
func (r *runner) idleRow(ctx context.Context, self string, n int) Row {
	row := Row{ID: "idle-qp-rss", Unit: unitBytes,
		Label: fmt.Sprintf("resident memory per idle RC QP (%d connected pairs)", n)}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	c, err := startChild(ctx, "idle-QP process", nil, self, "-internal-idle-qps", strconv.Itoa(n),
		"-client", r.client.String(), "-server", r.server.String(), "-udp-port", strconv.Itoa(r.udpPort))
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer r.keepLog(row.ID, c)
	if err := c.wait(r.timeout); err != nil {
		row.Error = err.Error()
		return row
	}
	var t idleTally
	if err := json.Unmarshal([]byte(c.out.String()), &t); err != nil {
		row.Error = fmt.Sprintf("idle QP tally: %v", err)
		return row
	}
	row.Value = t.perQP()
	if t.HeapAfter > t.HeapBefore {
		row.Label += fmt.Sprintf(", of which Go heap %.1f KiB", float64(t.HeapAfter-t.HeapBefore)/float64(2*n)/1024)
	}
	return row
}

// runIdleQPs is the re-executed process: two devices, n RC QPs on each connected pairwise to
// RTS and left idle; it prints its tally as JSON.
func runIdleQPs(n int, client, server netip.Addr, port int) error {
	a, err := newIdleSide(client, port, n)
	if err != nil {
		return err
	}
	defer a.dev.Close()
	b, err := newIdleSide(server, port, n)
	if err != nil {
		return err
	}
	defer b.dev.Close()
	t := idleTally{QPs: n}
	t.RSSBefore, t.HeapBefore = settledMemory()
	if err := a.createQPs(n); err != nil {
		return err
	}
	if err := b.createQPs(n); err != nil {
		return err
	}
	for i := range n {
		if err := connect(a.qps[i], b.qps[i], b.gid); err != nil {
			return err
		}
		if err := connect(b.qps[i], a.qps[i], a.gid); err != nil {
			return err
		}
	}
	t.RSSAfter, t.HeapAfter = settledMemory()
	return json.NewEncoder(os.Stdout).Encode(t)
}

// idleSide is one device with the objects its QPs share, created before the first reading.
type idleSide struct {
	dev *gorxe.Device
	pd  *gorxe.PD
	cq  *gorxe.CQ
	gid gorxe.GID
	qps []*gorxe.QP
}

func newIdleSide(addr netip.Addr, port, n int) (*idleSide, error) {
	dev, err := gorxe.Open(gorxe.Config{Addr: addr, Port: uint16(port)})
	if err != nil {
		return nil, err
	}
	s := &idleSide{dev: dev}
	if s.pd, err = dev.AllocPD(); err == nil {
		s.cq, err = dev.CreateCQ(min(2*n, 1<<16), nil)
	}
	if err == nil {
		s.gid, err = dev.QueryGID(1)
	}
	if err != nil {
		dev.Close()
		return nil, err
	}
	return s, nil
}

// createQPs makes n RC QPs with perftest's default queue depths.
func (s *idleSide) createQPs(n int) error {
	for range n {
		q, err := s.dev.CreateQP(s.pd, &gorxe.QPInitAttr{SendCQ: s.cq, RecvCQ: s.cq, QPType: gorxe.QPTypeRC,
			Cap: gorxe.QPCap{MaxSendWR: 128, MaxRecvWR: 512, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			return err
		}
		s.qps = append(s.qps, q)
	}
	return nil
}

// connect takes q through INIT and RTR to RTS towards peer.
func connect(q, peer *gorxe.QP, peerGID gorxe.GID) error {
	steps := []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, AccessFlags: gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead},
			gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrAccessFlags},
		{gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU4096, DestQPNum: peer.QPN(), MaxDestRdAtomic: 16, MinRNRTimer: 12,
			AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: peerGID, SGIDIndex: 1, HopLimit: 64}}},
			gorxe.QPAttrState | gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN |
				gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer},
		{gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 16},
			gorxe.QPAttrState | gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry |
				gorxe.QPAttrSQPSN | gorxe.QPAttrMaxQPRdAtomic},
	}
	for _, s := range steps {
		if err := q.Modify(&s.attr, s.mask); err != nil {
			return fmt.Errorf("QP %#x to %v: %w", q.QPN(), s.attr.State, err)
		}
	}
	return nil
}

// settledMemory collects garbage, lets the devices' goroutines go quiet, and reads the resident
// set (from /proc) and the live Go heap, in bytes.
func settledMemory() (rss, heap uint64) {
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return residentBytes(), ms.HeapAlloc
}

func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}
