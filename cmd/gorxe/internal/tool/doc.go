// Package tool is what every gorxe subcommand shares: the runner that turns a command line into
// an exit status (help, usage errors, Ctrl-C, one-line failures), the options common to every
// tool that opens a device (--bind, --pcap, --log-level, --metrics, --counters, GORXE_FAULTS) and
// the session that opens that device and closes it in order.
package tool
