package cm

import (
	"math/rand/v2"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// Defaults, the values Linux's rdma_cm and rxe use on RoCE.
const (
	// DefaultCMResponseTimeout is CMA_CM_RESPONSE_TIMEOUT (2^20 × 4.096 µs ≈ 4.3 s).
	DefaultCMResponseTimeout = 20
	// DefaultMaxCMRetries is CMA_MAX_CM_RETRIES.
	DefaultMaxCMRetries = 15
	// DefaultPacketLifeTime is CMA_IBOE_PACKET_LIFETIME in current kernels.
	DefaultPacketLifeTime = 16
	// DefaultCAAckDelay is rxe's local_ca_ack_delay, sent as the REP's
	// Target ACK Delay.
	DefaultCAAckDelay = 15
	// DefaultMRAServiceTimeout is the service timeout of CMA_CM_MRA_SETTING
	// (2^24 × 4.096 µs ≈ 69 s): how long an MRA asks the peer to wait.
	DefaultMRAServiceTimeout = 24
	// DefaultMaxConns bounds the connections (timewait included) a manager
	// keeps, so a flood of REQs cannot grow it without limit.
	DefaultMaxConns = 4096
)

// Config configures a [Manager]. Zero fields take the defaults above.
type Config struct {
	// CAGUID is the port's CA GUID, sent as "Local CA GUID" (rxe derives it
	// from the netdev's MAC address).
	CAGUID uint64
	// TIDHigh is the upper half of the transaction IDs this manager forms
	// (the MAD agent's hi_tid in Linux); the lower half comes from the
	// originating connection's local ID.
	TIDHigh uint32
	// CMResponseTimeout is the 5-bit exponent sent as both CM response
	// timeouts of a REQ: how long each side may take to answer.
	CMResponseTimeout uint8
	// MaxCMRetries is sent in REQs (4 bits): how often each side retransmits.
	MaxCMRetries uint8
	// PacketLifeTime is the path's packet lifetime exponent; RoCE has no
	// subnet administrator to ask, so rdma_cm uses a constant.
	PacketLifeTime uint8
	// CAAckDelay is the local CA's ACK delay exponent.
	CAAckDelay uint8
	// MRAServiceTimeout is the service timeout of the MRAs this manager sends.
	MRAServiceTimeout uint8
	// MaxConns bounds the number of connections; see DefaultMaxConns.
	MaxConns int
	// Rand returns random numbers for communication IDs and starting PSNs;
	// nil uses math/rand/v2. Tests pass a seeded source.
	Rand func() uint32
}

func (c *Config) setDefaults() {
	if c.CMResponseTimeout == 0 {
		c.CMResponseTimeout = DefaultCMResponseTimeout
	}
	if c.MaxCMRetries == 0 {
		c.MaxCMRetries = DefaultMaxCMRetries
	}
	if c.PacketLifeTime == 0 {
		c.PacketLifeTime = DefaultPacketLifeTime
	}
	if c.CAAckDelay == 0 {
		c.CAAckDelay = DefaultCAAckDelay
	}
	if c.MRAServiceTimeout == 0 {
		c.MRAServiceTimeout = DefaultMRAServiceTimeout
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.Rand == nil {
		c.Rand = rand.Uint32
	}
	c.CMResponseTimeout &= 31
	c.MaxCMRetries &= 15
	c.PacketLifeTime &= 31
	c.CAAckDelay &= 31
	c.MRAServiceTimeout &= 31
}

// roundTrip is two packet lifetimes: the time a message and its answer
// spend on the wire, added to every response timeout.
func (c *Config) roundTrip() time.Duration { return 2 * mad.Timeout(c.PacketLifeTime) }

// responseTimeout is how long to wait for an answer from a peer that may
// take 4.096 µs × 2^exp to produce it.
func (c *Config) responseTimeout(exp uint8) time.Duration {
	return c.roundTrip() + mad.Timeout(exp)
}
