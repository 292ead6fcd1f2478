package cm

import "net/netip"

func addrOf(gid [16]byte) netip.Addr { return netip.AddrFrom16(gid).Unmap() }
