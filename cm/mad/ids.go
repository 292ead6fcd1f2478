package mad

import "encoding/binary"

// Every connected-mode CM message after the REQ starts with the sender's
// and the receiver's communication IDs; commID reads them for any of those
// views.
const (
	idLocal  = 0
	idRemote = 4
)

func localCommID(b []byte) uint32  { return binary.BigEndian.Uint32(b[idLocal:]) }
func remoteCommID(b []byte) uint32 { return binary.BigEndian.Uint32(b[idRemote:]) }

func putCommIDs(b []byte, local, remote uint32) {
	binary.BigEndian.PutUint32(b[idLocal:], local)
	binary.BigEndian.PutUint32(b[idRemote:], remote)
}
