// Package rping is gorxe's peer of librdmacm's rping: an RDMA-CM client and server that verify
// RDMA READ, RDMA WRITE and SEND in a loop, interoperable with the C tool on kernel rxe.
//
// One ping, as rping does it: the client SENDs the address, R_Key and length of its source
// buffer (16 bytes: big-endian u64 address, u32 R_Key, u32 length); the server RDMA READs that
// buffer into its own and SENDs a go-ahead; the client SENDs its sink buffer's address, R_Key and
// length; the server RDMA WRITEs what it read (up to and including the first NUL) into the sink
// and SENDs another go-ahead. With -V the client checks that the sink now equals the source.
// The source holds "rdma-ping-N: " followed by a rotating run of the ASCII letters 'A' to 'z',
// starting one letter later on each ping, and a terminating NUL.
package rping
