// Package udaddy is gorxe's peer of librdmacm's udaddy: it resolves UD endpoints through the
// connection manager (SIDR in RDMA-CM's UDP port space), has the client SEND a burst of messages
// with its QPN as immediate data and the server answer each to that QPN, printing the C tool's
// progress lines. Messages are counted, not checked.
package udaddy
