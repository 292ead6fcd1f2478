package main

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// counters are rxe's port hardware counters (sent_pkts, rcvd_pkts, retries, ...).
type counters map[string]int64

// minus is the change from before to c.
func (c counters) minus(before counters) counters {
	d := counters{}
	for k, v := range c {
		d[k] = v - before[k]
	}
	return d
}

// String lists the counters that are not zero.
func (c counters) String() string {
	var parts []string
	for k, v := range c {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "all zero"
	}
	return strings.Join(parts, " ")
}

// rxeCounters reads rxe0's port counters in the VM.
func (v *vm) rxeCounters() (counters, error) {
	r, err := v.run([]string{"sh", "-c", "cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep -H . *"}, 20*time.Second)
	if err != nil {
		return nil, err
	}
	if r.ExitCode != 0 {
		return nil, fmt.Errorf("hw_counters: exit %d: %s", r.ExitCode, r.Output)
	}
	c := counters{}
	for _, line := range strings.Split(strings.TrimSpace(r.Output), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hw_counters: %q: %w", line, err)
		}
		c[name] = n
	}
	if _, ok := c["sent_pkts"]; !ok {
		return nil, fmt.Errorf("hw_counters has no sent_pkts:\n%s", r.Output)
	}
	return c, nil
}

// addr is the VM's address of family (ipv4, ipv6 or linkLocal).
func (v *vm) addr(family int) netip.Addr {
	if family == linkLocal {
		mac, _ := net.ParseMAC(fmt.Sprintf(guestMAC, v.n))
		return eui64LinkLocal(mac)
	}
	if family == 6 {
		return v.ip6.Addr()
	}
	return v.ip4.Addr()
}
