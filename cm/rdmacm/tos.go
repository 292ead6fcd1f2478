package rdmacm

import "github.com/gorxe/gorxe/cm"

// tosPath sets the traffic class of an active side's path, as RDMA-CM's route resolution does
// with the TOS of rdma_set_option: it goes in the REQ's primary path, from which the passive side
// takes it for its QP, and in our QP's address. The service level stays 0, as RDMA-CM derives it
// from the TOS only through a VLAN's or a traffic-class device's priority map, which gorxe's
// interfaces do not have.
func tosPath(p cm.Path, tos uint8) cm.Path {
	p.TrafficClass = tos
	return p
}
