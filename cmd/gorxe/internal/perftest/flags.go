package perftest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// ErrVersion is -V: the caller prints the version and exits successfully.
var ErrVersion = errors.New("version requested")

// ParseArgs parses a perftest command line for test t (without the program name) into the
// parameters of a run, with perftest's option names, defaults and adjustments.
func ParseArgs(t Test, args []string) (*Params, error) {
	p := defaults(t)
	var durationSet, help, version bool
	lat, bw := t.Kind == Lat, t.Kind == BW
	send, atomic, readOrAtomic := t.Verb == VerbSend, t.Verb == VerbAtomic, t.Verb == VerbRead || t.Verb == VerbAtomic

	flag := getopt.FlagOption
	only := func(ok bool, what string, set func(string) error) func(string) error {
		return func(v string) error {
			if !ok {
				return fmt.Errorf("is only available in %s tests", what)
			}
			return set(v)
		}
	}
	// An option gorxe does not implement fails after parsing, so that the message can name it.
	var unsupportedErr error
	unsupported := func(opt, why string) func(string) error {
		return func(string) error {
			if unsupportedErr == nil {
				unsupportedErr = usageError("%s is not supported by gorxe: %s", opt, why)
			}
			return nil
		}
	}
	intIn := func(q *int, lo, hi int) func(string) error { return getopt.IntOption(q, lo, hi) }

	opts := []getopt.Option{
		{Short: 'p', Long: "port", Arg: true, Set: intIn(&p.Port, 1, 65535)},
		{Short: 'd', Long: "ib-dev", Arg: true, Set: getopt.StringOption(&p.Device)},
		{Short: 'i', Long: "ib-port", Arg: true, Set: intIn(&p.IBPort, 1, 255)},
		{Short: 'm', Long: "mtu", Arg: true, Set: intIn(&p.MTU, 1, 1<<16)},
		{Short: 's', Long: "size", Arg: true, Set: func(v string) error {
			n, err := parseSize(v)
			if err != nil {
				return err
			}
			p.Size, p.sizeSet = n, true
			return nil
		}},
		{Short: 'n', Long: "iters", Arg: true, Set: intIn(&p.Iters, minIters, maxIters)},
		{Short: 't', Long: "tx-depth", Arg: true, Set: only(bw, "BW", intIn(&p.TxDepth, 1, maxTx))},
		{Short: 'r', Long: "rx-depth", Arg: true, Set: only(send, "SEND", intIn(&p.RxDepth, 1, maxRx))},
		{Short: 'u', Long: "qp-timeout", Arg: true, Set: intIn(&p.QPTimeout, 0, 31)},
		{Short: 'S', Long: "sl", Arg: true, Set: intIn(&p.SL, 0, 15)},
		{Short: 'x', Long: "gid-index", Arg: true, Set: intIn(&p.GIDIndex, 0, 1023)},
		{Short: 'a', Long: "all", Set: flag(&p.All)},
		{Short: 'F', Long: "CPU-freq", Set: flag(new(bool))},
		{Short: 'c', Long: "connection", Arg: true, Set: func(v string) error { return p.setConn(v) }},
		{Short: 'q', Long: "qp", Arg: true, Set: only(bw, "BW", intIn(&p.NumQPs, 1, maxQPs))},
		{Short: 'e', Long: "events", Set: flag(&p.Events)},
		{Short: 'I', Long: "inline_size", Arg: true, Set: only(!readOrAtomic, "SEND and WRITE", intIn(&p.Inline, 0, maxInline))},
		{Short: 'o', Long: "outs", Arg: true, Set: only(readOrAtomic, "READ and ATOMIC", intIn(&p.OutReads, 1, 1<<16-1))},
		{Short: 'A', Long: "atomic_type", Arg: true, Set: only(atomic, "ATOMIC", func(v string) error { return p.setAtomic(v) })},
		{Short: 'Q', Long: "cq-mod", Arg: true, Set: only(bw, "BW", func(v string) error {
			p.cqModSet = true
			return intIn(&p.CQMod, 1, maxCQMod)(v)
		})},
		{Short: 'l', Long: "post_list", Arg: true, Set: only(bw, "BW", intIn(&p.PostList, 1, maxTx))},
		{Short: 'D', Long: "duration", Arg: true, Set: func(v string) error {
			durationSet = true
			return intIn(&p.Duration, 1, 1<<20)(v)
		}},
		{Short: 'f', Long: "margin", Arg: true, Set: intIn(&p.Margin, 0, 1<<20)},
		{Short: 'N', Long: "noPeak", Set: only(bw, "BW", flag(&p.NoPeak))},
		{Short: 'C', Long: "report-cycles", Set: only(lat, "LAT", unsupported("-C/--report-cycles", "gorxe measures time, not CPU cycles"))},
		{Short: 'H', Long: "report-histogrm", Set: only(lat, "LAT", flag(&p.Histogram))},
		{Short: 'U', Long: "report-unsorted", Set: only(lat, "LAT", flag(&p.Unsorted))},
		{Short: 'w', Long: "limit_bw", Arg: true, Set: only(bw, "BW", floatOption(&p.LimitBW))},
		{Short: 'y', Long: "limit_msgrate", Arg: true, Set: only(bw, "BW", floatOption(&p.LimitMsgRate))},
		{Long: "report_gbits", Set: only(bw, "BW", flag(&p.ReportGbits))},
		{Long: "ipv6", Set: flag(&p.IPv6)},
		{Long: "tclass", Arg: true, Set: intIn(&p.TClass, 0, 255)},
		{Long: "output", Arg: true, Set: getopt.StringOption(&p.Output)},
		{Long: "dont_xchg_versions", Set: flag(&p.DontXchgVersions)},
		{Long: "out_json", Set: flag(&p.OutJSON)},
		{Long: "out_json_file", Arg: true, Set: getopt.StringOption(&p.OutJSONFile)},
		{Long: "use_hugepages", Set: flag(&p.HugePages)},
		{Long: "latency_gap", Arg: true, Set: intIn(&p.LatencyGap, 0, 1<<30)},
		{Long: "timeout", Arg: true, Set: getopt.DurationOption(&p.Timeout)},
		{Long: "force-link", Arg: true, Set: func(v string) error {
			if !strings.EqualFold(v, "Ethernet") {
				return fmt.Errorf("a gorxe port's link layer is Ethernet")
			}
			return nil
		}},
		{Short: 'h', Long: "help", Set: flag(&help)},
		{Short: 'V', Long: "version", Set: flag(&version)},

		{Short: 'R', Long: "rdma_cm", Set: flag(&p.RDMACM)},
		{Short: 'z', Long: "comm_rdma_cm", Set: flag(&p.CommRDMACM)},
		{Short: 'T', Long: "tos", Arg: true, Set: intIn(&p.TOS, 0, 255)},
		{Long: "retry_count", Arg: true, Set: intIn(&p.RetryCount, 0, 255)},
		{Short: 'b', Long: "bidirectional", Set: unsupported("-b/--bidirectional", "bidirectional tests")},
		{Short: 'O', Long: "dualport", Set: unsupported("-O/--dualport", "a gorxe device has one port")},
		{Short: 'g', Long: "mcg", Set: unsupported("-g/--mcg", "multicast tests")},
		{Short: 'M', Long: "MGID", Arg: true, Set: unsupported("-M/--MGID", "multicast tests")},
		{Short: 'L', Long: "hop_limit", Arg: true, Set: unsupported("-L/--hop_limit", "the hop limit is for raw Ethernet QPs")},
		{Short: 'W', Long: "report-counters", Arg: true, Set: unsupported("-W/--report-counters", "performance counters; --counters prints the device's")},
		{Long: "run_infinitely", Set: unsupported("--run_infinitely", "use -D with a long duration")},
		{Long: "reversed", Set: unsupported("--reversed", "reversed traffic")},
		{Long: "report-both", Set: unsupported("--report-both", "bidirectional tests")},
		{Long: "report-per-port", Set: unsupported("--report-per-port", "a gorxe device has one port")},
		{Long: "use-srq", Set: unsupported("--use-srq", "SRQ tests")},
		{Long: "mr_per_qp", Set: unsupported("--mr_per_qp", "one region serves every QP")},
		{Long: "odp", Set: unsupported("--odp", "on-demand paging")},
		{Long: "cpu_util", Set: unsupported("--cpu_util", "CPU utilization")},
		{Long: "perform_warm_up", Set: unsupported("--perform_warm_up", "warm-up iterations")},
		{Long: "inline_recv", Arg: true, Set: unsupported("--inline_recv", "inline receive")},
		{Long: "flow_label", Arg: true, Set: unsupported("--flow_label", "gorxe derives the flow label from the QPNs")},
		{Long: "payload_file_path", Arg: true, Set: unsupported("--payload_file_path", "payloads from a file")},

		// Accepted, changing nothing on gorxe (Usage says so): the wire and the results are the
		// same with and without them.
		{Short: 'X', Long: "vector", Arg: true, Set: intIn(new(int), 0, 0)},
		{Long: "pkey_index", Arg: true, Set: intIn(new(int), 0, 0)},
		{Long: "recv_post_list", Arg: true, Set: intIn(new(int), 1, maxRx)},
		{Long: "dlid", Arg: true, Set: intIn(new(int), 0, 0xffff)},
		{Long: "use_old_post_send", Set: flag(new(bool))},
		{Long: "disable_pcie_relaxed", Set: flag(new(bool))},

		// Implemented: --source_ip is the device's address (as --bind, which wins) and
		// --wait_destroy waits before the resources are destroyed.
		{Long: "source_ip", Arg: true, Set: getopt.StringOption(&p.SourceIP)},
		{Long: "wait_destroy", Arg: true, Set: getopt.DurationOption(&p.WaitDestroy)},
	}
	// perftest's raw Ethernet, rate limiting, GPU memory, crypto and DC options.
	for _, u := range []struct {
		short     byte
		long, why string
		arg       bool
	}{
		{'B', "source_mac", "raw Ethernet QPs", true}, {'E', "dest_mac", "raw Ethernet QPs", true},
		{'J', "dest_ip", "raw Ethernet QPs", true}, {'j', "", "raw Ethernet QPs", true},
		{'K', "dest_port", "raw Ethernet QPs", true}, {'k', "source_port", "raw Ethernet QPs", true},
		{'Y', "ethertype", "raw Ethernet QPs", true}, {'Z', "server", "raw Ethernet QPs", false},
		{'P', "client", "raw Ethernet QPs", false}, {'v', "mac_fwd", "raw Ethernet QPs", false},
		{'G', "use_rss", "raw Ethernet QPs", false},
		{0, "remote_mac", "raw Ethernet QPs", true}, {0, "local_mac", "raw Ethernet QPs", true},
		{0, "remote_ip", "raw Ethernet QPs", true}, {0, "local_ip", "raw Ethernet QPs", true},
		{0, "remote_port", "raw Ethernet QPs", true}, {0, "local_port", "raw Ethernet QPs", true},
		{0, "tcp", "raw Ethernet QPs", false}, {0, "promiscuous", "raw Ethernet QPs", false},
		{0, "sniffer", "raw Ethernet QPs", false}, {0, "raw_mcast", "raw Ethernet QPs", false},
		{0, "raw_ipv6", "raw Ethernet QPs", false}, {0, "vlan_en", "raw Ethernet QPs", false},
		{0, "vlan_pcp", "raw Ethernet QPs", true}, {0, "flows", "raw Ethernet QPs", true},
		{0, "flows_burst", "raw Ethernet QPs", true}, {0, "reply_every", "raw Ethernet QPs", true},
		{0, "burst_size", "rate limiting", true}, {0, "typical_pkt_size", "rate limiting", true},
		{0, "rate_limit", "rate limiting", true}, {0, "rate_limit_type", "rate limiting", true},
		{0, "rate_units", "rate limiting", true},
		{0, "mmap", "memory mapped from a file", true}, {0, "mmap-offset", "memory mapped from a file", true},
		{0, "use_cuda", "GPU memory", true}, {0, "use_cuda_bus_id", "GPU memory", true},
		{0, "use_cuda_dmabuf", "GPU memory", false}, {0, "use_rocm", "GPU memory", true},
		{0, "aes_xts", "crypto offload", false}, {0, "encrypt_on_tx", "crypto offload", false},
		{0, "sig_before", "crypto offload", false}, {0, "aes_block_size", "crypto offload", true},
		{0, "kek_path", "crypto offload", true}, {0, "credentials_path", "crypto offload", true},
		{0, "data_enc_keys_number", "crypto offload", true}, {0, "data_enc_key_app_path", "crypto offload", true},
		{0, "log_dci_streams", "DC transport", true}, {0, "log_active_dci_streams", "DC transport", true},
		{0, "use_ooo", "out-of-order placement", false},
	} {
		name := "--" + u.long
		switch {
		case u.long == "":
			name = "-" + string(u.short)
		case u.short != 0:
			name = "-" + string(u.short) + "/" + name
		}
		opts = append(opts, getopt.Option{Short: u.short, Long: u.long, Arg: u.arg, Set: unsupported(name, u.why)})
	}
	opts = append(opts, p.Common.Getopt()...)
	operands, err := getopt.Parse(args, opts)
	switch {
	case err != nil:
		return nil, err
	case unsupportedErr != nil:
		return nil, unsupportedErr
	case help:
		return nil, tool.ErrHelp
	case version:
		return nil, ErrVersion
	case len(operands) > 1:
		return nil, usageError("too many arguments %q: give at most the server's host", operands)
	case len(operands) == 1:
		p.Server = operands[0]
	}
	if err := p.finish(durationSet); err != nil {
		return nil, err
	}
	return &p, nil
}

// setConn handles -c, with perftest's rules for which verb allows which transport.
func (p *Params) setConn(v string) error {
	switch v {
	case "RC":
		p.Conn = RC
	case "UC":
		if p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic {
			return usageError("UC connection not possible in READ/ATOMIC verbs")
		}
		p.Conn = UC
	case "UD":
		if p.Test.Verb != VerbSend {
			return usageError("UD connection only possible in SEND verb")
		}
		p.Conn = UD
	case "XRC", "DC", "SRD", "RawEth":
		return fmt.Errorf("not supported by gorxe: it offers RC, UC and UD, like rxe")
	default:
		return usageError("Invalid Connection type. Please choose from {RC,UC,UD}")
	}
	return nil
}

// setAtomic handles -A.
func (p *Params) setAtomic(v string) error {
	switch v {
	case "CMP_AND_SWAP":
		p.AtomicType = CmpAndSwap
	case "FETCH_AND_ADD":
		p.AtomicType = FetchAndAdd
	default:
		return usageError("Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}")
	}
	return nil
}

// parseSize reads -s: a number with an optional K, M or G suffix (powers of 1024), as perftest.
func parseSize(v string) (int, error) {
	mult := int64(1)
	if n := len(v); n > 1 {
		switch v[n-1] {
		case 'K', 'k':
			mult, v = 1<<10, v[:n-1]
		case 'M', 'm':
			mult, v = 1<<20, v[:n-1]
		case 'G', 'g':
			mult, v = 1<<30, v[:n-1]
		}
	}
	n, err := getopt.ParseInt(v)
	if err != nil {
		return 0, err
	}
	n *= mult
	if n < 1 || n > maxMsgSize {
		return 0, fmt.Errorf("out of range (1..%d)", int64(maxMsgSize))
	}
	return int(n), nil
}

func floatOption(f *float64) func(string) error {
	return func(v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return fmt.Errorf("not a non-negative number")
		}
		*f = x
		return nil
	}
}
