// Package getopt parses command lines the way glibc's getopt_long does, so gorxe's tools accept
// exactly the options of the rdma-core and perftest tools they stand in for.
package getopt
