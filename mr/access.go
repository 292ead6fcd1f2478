package mr

import (
	"strconv"
	"strings"
)

// Access is a set of memory access rights, bit-compatible with libibverbs enum ibv_access_flags.
type Access uint32

// Access rights, with the values libibverbs uses.
const (
	AccessLocalWrite      Access = 1 << 0  // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite     Access = 1 << 1  // IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead      Access = 1 << 2  // IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic    Access = 1 << 3  // IBV_ACCESS_REMOTE_ATOMIC
	AccessMWBind          Access = 1 << 4  // IBV_ACCESS_MW_BIND
	AccessZeroBased       Access = 1 << 5  // IBV_ACCESS_ZERO_BASED
	AccessOnDemand        Access = 1 << 6  // IBV_ACCESS_ON_DEMAND
	AccessHugeTLB         Access = 1 << 7  // IBV_ACCESS_HUGETLB
	AccessFlushGlobal     Access = 1 << 8  // IBV_ACCESS_FLUSH_GLOBAL
	AccessFlushPersistent Access = 1 << 9  // IBV_ACCESS_FLUSH_PERSISTENT
	AccessRelaxedOrdering Access = 1 << 20 // IBV_ACCESS_RELAXED_ORDERING (first optional flag)
)

// accessKnown is every flag this package understands. ON_DEMAND, HUGETLB and RELAXED_ORDERING are
// accepted as hints: software memory is always present and copies are always ordered.
const accessKnown = AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic |
	AccessMWBind | AccessZeroBased | AccessOnDemand | AccessHugeTLB | AccessFlushGlobal |
	AccessFlushPersistent | AccessRelaxedOrdering

// accessRemote is every right a remote peer can exercise through an rkey.
const accessRemote = AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic |
	AccessFlushGlobal | AccessFlushPersistent

// accessMWBindable is what a window bind may carry: remote rights plus zero-based addressing, and
// LOCAL_WRITE, which grants nothing through a window (it is reached by rkey only) but which
// rxe and mlx5 accept and rdma-core's own tests bind with, so it is accepted and ignored.
const accessMWBindable = accessRemote | AccessZeroBased | AccessLocalWrite

var accessNames = [...]struct {
	a    Access
	name string
}{
	{AccessLocalWrite, "LOCAL_WRITE"},
	{AccessRemoteWrite, "REMOTE_WRITE"},
	{AccessRemoteRead, "REMOTE_READ"},
	{AccessRemoteAtomic, "REMOTE_ATOMIC"},
	{AccessMWBind, "MW_BIND"},
	{AccessZeroBased, "ZERO_BASED"},
	{AccessOnDemand, "ON_DEMAND"},
	{AccessHugeTLB, "HUGETLB"},
	{AccessFlushGlobal, "FLUSH_GLOBAL"},
	{AccessFlushPersistent, "FLUSH_PERSISTENT"},
	{AccessRelaxedOrdering, "RELAXED_ORDERING"},
}

// String lists the flags with their libibverbs names (without the IBV_ACCESS_ prefix), joined by
// "|"; unknown bits are shown in hex.
func (a Access) String() string {
	if a == 0 {
		return "0"
	}
	var b strings.Builder
	rest := a
	for _, n := range accessNames {
		if a&n.a == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(n.name)
		rest &^= n.a
	}
	if rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString("0x")
		b.WriteString(strconv.FormatUint(uint64(rest), 16))
	}
	return b.String()
}

// Has reports whether a contains every flag of want.
func (a Access) Has(want Access) bool { return a&want == want }

// validRegAccess checks flags for a memory registration: only known bits, and remote write or
// remote atomic require local write, as verbs demands (the responder would otherwise write into
// memory the owner itself declared read-only).
func validRegAccess(a Access) error {
	if a&^accessKnown != 0 {
		return ErrAccessFlags
	}
	if a&(AccessRemoteWrite|AccessRemoteAtomic) != 0 && a&AccessLocalWrite == 0 {
		return ErrAccessFlags
	}
	return nil
}
