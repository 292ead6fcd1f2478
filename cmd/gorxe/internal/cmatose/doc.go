// Package cmatose is gorxe's peer of librdmacm's ucmatose (cmatose): it opens RDMA-CM connections,
// has the server SEND a burst of messages on each and the client SEND as many back, then
// disconnects, printing the C tool's progress lines. Messages are counted, not checked.
package cmatose
