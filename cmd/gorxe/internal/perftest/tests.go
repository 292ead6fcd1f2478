package perftest

// Verb is the operation a test measures (perftest's VerbType).
type Verb int

// Verbs.
const (
	VerbSend Verb = iota
	VerbWrite
	VerbRead
	VerbAtomic
)

// title is how perftest names the verb in its report header.
func (v Verb) title() string {
	return [...]string{"Send", "RDMA_Write", "RDMA_Read", "Atomic"}[v]
}

// Kind says whether a test measures bandwidth or latency.
type Kind int

// Kinds.
const (
	BW Kind = iota
	Lat
)

// Test is one of the eight benchmarks.
type Test struct {
	Verb Verb
	Kind Kind
}

// Tests lists the benchmarks in the order perftest documents them.
var Tests = []Test{
	{VerbWrite, BW}, {VerbRead, BW}, {VerbSend, BW}, {VerbAtomic, BW},
	{VerbWrite, Lat}, {VerbRead, Lat}, {VerbSend, Lat}, {VerbAtomic, Lat},
}

// Name is the gorxe subcommand of the test: write_bw, send_lat, ...
func (t Test) Name() string {
	v := [...]string{"send", "write", "read", "atomic"}[t.Verb]
	if t.Kind == BW {
		return v + "_bw"
	}
	return v + "_lat"
}

// ConnType is the QP transport of a test (perftest's -c).
type ConnType int

// Connection types gorxe offers (perftest also knows XRC, DC, SRD and raw Ethernet).
const (
	RC ConnType = iota
	UC
	UD
)

func (c ConnType) String() string { return [...]string{"RC", "UC", "UD"}[c] }

// AtomicType is the atomic operation of the atomic tests (perftest's -A).
type AtomicType int

// Atomic operations.
const (
	CmpAndSwap AtomicType = iota
	FetchAndAdd
)

func (a AtomicType) String() string { return [...]string{"CMP_AND_SWAP", "FETCH_AND_ADD"}[a] }

// Values the atomic tests operate with, as perftest's (the data is not checked).
const (
	atomicAddValue  = 1
	atomicSwapValue = 0
)
