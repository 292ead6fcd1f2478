package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/dump"
)

// tourCapture holds nine frames of real kernel rxe traffic, frames 1, 4, 5,
// 247, 427, 1511, 1512, 1911 and 1961 of the capture the packet package tests
// against: an RC SEND's first and last packets and its ACK, a UD SEND, an RDMA
// WRITE, an RDMA READ request and response, a FETCH_ADD and its atomic ACK.
// Embedding it lets the tour run from any directory.
//
//go:embed tourdata/rxe-tour.pcap
var tourCapture []byte

// runTour implements `gorxe tour`: it explains, field by field, packets two
// Linux kernels exchanged, the protocol gorxe speaks.
func runTour(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: gorxe tour")
		return exitUsage
	}
	fmt.Fprint(stdout, `A tour of RoCEv2: nine packets two Linux kernels (Soft-RoCE, rxe) exchanged,
decoded field by field as "gorxe dump -v" shows any capture.

`)
	if _, err := dump.Run(stdout, stderr, bytes.NewReader(tourCapture), dump.FormatVerbose); err != nil {
		fmt.Fprintf(stderr, "gorxe: tour capture: %v\n", err)
		return exitFailure
	}
	return exitOK
}
