package perftest

import "context"

// cmConnect is perftest's create_rdma_cm_connection (-R): a barrier, the RDMA-CM connections of
// every QP, a barrier. Both barriers carry a key message of zeros, since perftest has not filled
// its addresses yet; the addresses follow in the exchanges the test always makes.
//
// The server listens on the test's port before its first barrier (perftest listens only after
// it), so a client's request cannot arrive before the listener; a perftest server may still be
// late for a gorxe client, which retries as perftest's client does.
func (f *flow) cmConnect(ctx context.Context) ([]Dest, error) {
	var zero Dest
	if _, err := f.x.handShake(&zero); err != nil {
		return nil, err
	}
	local, err := f.pl.cmConnect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := f.x.handShake(&zero); err != nil {
		return nil, err
	}
	return local, nil
}
